"""The ``evidex`` command: one entry point whose subcommands hand the rest of the command line to each module's
own ``main(argv)``, so ``evidex run --help`` is ``graphs.run``'s own help and ``python -m evidex.graphs.run`` (or
``python -m graphs.run`` in a checkout) still does the same as ``evidex run``.

The commands' modules are imported only when their command runs: ``evidex --help`` stays fast and needs no extra.
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from dataclasses import dataclass

PROG = "evidex"
INTERRUPTED = 130  # a command stopped by Ctrl-C or kill (128 + SIGINT)


@dataclass(frozen=True)
class Command:
    module: str  # holds main(argv) -> int
    summary: str  # one line in `evidex --help`
    example: str


COMMANDS: dict[str, Command] = {
    "run": Command("evidex.graphs.run", "run a task (claim explainers, paper QA) into runs/<run_id>/",
                   "evidex run --task mixed --limit 5"),
    "ask": Command("evidex.graphs.ask", "ask a paper store one question: the answer and its cited pages",
                   'evidex ask --db mypapers "Which dataset does the paper evaluate on?"'),
    "ingest": Command("evidex.tools.ingest.__main__", "put PDFs into a paper store; check, sync or repair a store", "evidex ingest papers/ --db mypapers"),
    "trace": Command("evidex.graphs.trace", "show the run trees of a run or a question (terminal or HTML)",
                     "evidex trace --last --item mixed-000"),
    "web": Command("evidex.graphs.web.cli", "a web page to ask questions of a paper store",
                   "evidex web --db mypapers"),
    "serve": Command("evidex.agents.serve", "serve the local model to many workers (OpenAI-compatible)",
                     "evidex serve --port 8080 --slots 2"),
    "config": Command("evidex.graphs.show_config", "every setting of a task or config and what it does",
                      "evidex config airqa"),
    "report": Command("evidex.evaluators.report", "compare run folders side by side (bootstrap deltas)",
                      "evidex report runs/A runs/B --html compare.html"),
}

EPILOG = "examples:\n" + "\n".join(f"  {c.example}" for c in COMMANDS.values()) + f"""

"{PROG} COMMAND --help" shows a command's options and more examples. Settings come from the environment and a
.env file (EVIDEX_DATA_DIR, EVIDEX_CACHE_DIR, OPENAI_API_KEY, ...); models are named with --llm: local,
openai:<model>, provider:model."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, usage=f"{PROG} COMMAND [options]",
                                description="evidex: evidence-grounded reasoning over documents with LangGraph.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = p.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        # no options of its own: everything after the command goes, untouched, to the command's main(argv)
        sub.add_parser(name, help=cmd.summary, add_help=False)
    return p


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("evidex")
    except PackageNotFoundError:  # a checkout without an install
        return "(not installed)"


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        parser.print_help()
        return 0
    first = argv[0]
    if first.startswith("-"):
        if first in ("-h", "--help", "--version"):
            parser.parse_args(argv[:1])  # prints and exits 0
        hint = f" (a run: {PROG} run {' '.join(argv)})" if first.split("=")[0] in _run_options() else ""
        return _fail(f"give a command before the options: {', '.join(COMMANDS)}{hint}; see {PROG} --help")
    if first not in COMMANDS:
        close = difflib.get_close_matches(first, list(COMMANDS), n=1)
        guess = f"did you mean {PROG} {close[0]}? " if close else ""
        return _fail(f"unknown command {first!r}; {guess}choose from {', '.join(COMMANDS)} (see {PROG} --help)")
    parser.parse_args(argv[:1])  # the command exists: argparse agrees, nothing else parsed here
    module = importlib.import_module(COMMANDS[first].module)
    try:
        code = module.main(argv[1:])
    except KeyboardInterrupt:
        print("stopped.", file=sys.stderr)
        code = INTERRUPTED
    if code == INTERRUPTED:
        # what is finished is saved; skip the interpreter's teardown, which could wait for good on a model server's
        # threads stopped mid-start (as python -m evidex.graphs.run does)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code or 0


def _run_options() -> set[str]:
    """The options people typed after the old single command (``evidex --task mixed``)."""
    return {"--task", "--config", "--list", "--list-runs", "--resume", "--repair"}


if __name__ == "__main__":
    sys.exit(main())

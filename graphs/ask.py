"""evidex ask --db NAME "question": ask a question of your own papers.

Make a store from your PDFs first (``evidex ingest papers/ --db mypapers``), then:

  evidex ask --db mypapers "Which dataset does the paper evaluate on?"
  evidex ask --db mypapers "How many layers does the model have?" --paper <pdf_id> --format "An integer."
  evidex ask --db mypapers "..." --config airqa/classic_rag --llm openai:gpt-4o-mini

Prints the answer, its citations as (paper title, page), the turns taken, and the trace file to open with
``evidex trace``. Without --paper, a paper whose whole title the question quotes ('In Table 2 of the paper
"<title>"') is the scope, else every paper of the store.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from evidex.tools.cli_help import plain_help

    p = argparse.ArgumentParser(prog="evidex ask", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--db", help="store name (made with evidex ingest ... --db NAME)")
    p.add_argument("--store-dir", type=Path, help="a store folder instead of --db")
    p.add_argument("--paper", action="append", default=[], metavar="PDF_ID",
                   help="restrict the question to this paper (repeatable; see metadata.paper_id)")
    p.add_argument("--format", default="A short answer in plain text.", help="the answer format to follow")
    p.add_argument("--config", default="airqa/airqa", help="QA config: airqa/airqa (NeuSym, default) or a baseline")
    p.add_argument("--llm", help="model spec (default: the config's, i.e. local)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--traces", type=Path, help="where to write the trace (default: runs/ask/)")
    p.add_argument("--json", action="store_true", help="print the prediction as JSON")
    return p.parse_args(argv)


def _named_papers(cfg, question: str) -> list[str]:
    """The store's papers whose title the question quotes in full (none: the whole store is in scope)."""
    from evidex.tools.paperstore import PaperStore

    try:
        named = PaperStore(cfg.store.db, cfg.store.store_dir).papers_named_in(question)
    except Exception:  # noqa: BLE001 - a store that cannot be read says so when the graph runs; keep the whole scope
        return []
    if named:
        print(f"scope: {len(named)} paper(s) the question names by title", file=sys.stderr)
    return named


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not (args.db or args.store_dir):
        print("error: give --db NAME (or --store-dir DIR) of a store made with evidex ingest", file=sys.stderr)
        return 2
    from evidex.graphs.api import build_graph
    from evidex.graphs.config import ConfigError
    from evidex.graphs.tasks import load_config
    from evidex.graphs.tracing import RunTreeTracer
    from evidex.tools.qa import PaperQuestion
    from evidex.tools.settings import get_settings

    overrides = list(args.overrides) + [f"store.db={args.db}" if args.db else f"store.store_dir={args.store_dir}"]
    if args.llm:
        overrides.append(f"model.spec={args.llm}")
    try:
        cfg = load_config(args.config, overrides)
        if not hasattr(cfg, "store"):
            raise ConfigError(f"{args.config} is not a question-answering config (use airqa/<method>)")
        graph = build_graph(cfg)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError, ImportError) as exc:  # a model, store or extra that is not there: one line
        print(f"error: {exc}", file=sys.stderr)
        return 1
    qid = time.strftime("ask-%Y%m%d-%H%M%S")
    papers = args.paper or _named_papers(cfg, args.question)
    question = PaperQuestion(id=qid, question=args.question, answer_format=args.format, pdf_ids=papers)
    traces = args.traces or Path(get_settings().runs_dir) / "ask"
    tracer = RunTreeTracer(traces, qid)
    start = time.perf_counter()
    try:
        pred = graph.invoke({"input": question}, config={"callbacks": [tracer], "run_name": cfg.name})["prediction"]
    except KeyboardInterrupt:
        print("stopped.", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - one clear line, the trace has the rest
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps(pred.model_dump(), ensure_ascii=False, indent=1))
        return 0
    _print_answer(pred, cfg, seconds, traces / f"{qid}.json")
    return 0 if pred.answer is not None else 1


def _print_answer(pred, cfg, seconds: float, trace: Path) -> None:
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.safe_text import visible_controls

    print(f"answer: {visible_controls(pred.answer) if pred.answer is not None else pred.no_answer}")
    titles: dict[str, str] = {}
    if pred.citations:
        ids = sorted({c.pdf_id for c in pred.citations})
        titles = {p.paper_id: p.title or p.paper_id for p in PaperStore(cfg.store.db, cfg.store.store_dir).papers(ids)}
    shown = set()
    for c in pred.citations:  # several passages of one page are one (title, page) to a reader
        if (c.pdf_id, c.page_number) in shown:
            continue
        shown.add((c.pdf_id, c.page_number))
        flag = "" if c.exists else "  (not a page of the store)"
        print(f"  cites: {visible_controls(titles.get(c.pdf_id, c.pdf_id))}, page {c.page_number}{flag}")
    print(f"turns: {pred.turns} ({', '.join(pred.actions)}) in {seconds:.0f} s")
    print(f"trace: {trace}  (evidex trace {trace})")


if __name__ == "__main__":
    sys.exit(main())

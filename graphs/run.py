"""evidex run --task mixed: run a task of any family into runs/<run_id>/.

Examples:
  evidex run --list
  evidex run --task mixed --limit 5
  evidex run --task selection --llm openai:gpt-4o-mini --set retrieval.k=8
  evidex run --task airqa --db corpus --data questions.jsonl --config airqa/classic_rag
  evidex run --task qasper --data qasper-dev-v0.3.json --limit 50 --config qasper/neusym
  evidex run --resume runs/20261121-120000-mixed
  evidex run --list-runs                       # every run folder: running, dead, interrupted, complete
  evidex run --repair runs/20261121-120000-mixed   # one row per item, metrics recomputed
  evidex run --task mixed --executor ray --concurrency 4 [--ray-address 127.0.0.1:6379]
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

INTERRUPTED = 130  # exit status after Ctrl-C or kill (128 + SIGINT)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="evidex run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", help="task to run (see --list)")
    p.add_argument("--config", help="config name (civic/mixed) or YAML path; default: the task's config")
    p.add_argument("--limit", type=int, help="run only the first N items of the task file (wrong_claim adds N controls)")
    p.add_argument("--offset", type=int, help="skip the first N items of the task file (= --set dataset.offset=N)")
    p.add_argument("--llm", help="model spec: local | openai:<model> | provider:model | scripted:<file>")
    p.add_argument("--data", type=Path, help="the task's data file instead of the default (= --set dataset.file=...)")
    p.add_argument("--data-dir", type=Path, metavar="DIR", help="folder holding the datasets (civic/, r4c/, ...) "
                   "for this run (= EVIDEX_DATA_DIR; also with --resume)")
    p.add_argument("--db", help="question-answering tasks: the paper store to ask (= --set store.db=NAME)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set retrieval.k=8 (repeatable)")
    p.add_argument("--resume", type=Path, metavar="RUN_DIR", help="finish an interrupted run")
    p.add_argument("--skip-ingest", action="store_true",
                   help="skip the family's preparation step and reuse what exists (qasper: the papers already in "
                        "the store; = --set run.prepare=false)")
    p.add_argument("--concurrency", type=int, help="items in flight at once (default from config: 1); with "
                   "--executor ray, the number of Ray workers")
    p.add_argument("--executor", choices=("local", "ray"), help="where items run: local (this process, default) or "
                   "ray (Ray workers, each building the graph once; results still written by this process); "
                   "also with --resume")
    p.add_argument("--ray-address", metavar="ADDR", help="--executor ray: join this Ray cluster (e.g. 127.0.0.1:6379 "
                   "from  ray start --head); default: start a Ray on loopback for this run")
    p.add_argument("--out", type=Path, help="parent folder for run folders (default: runs/)")
    p.add_argument("--list", action="store_true", help="list every task, grouped by family")
    p.add_argument("--list-runs", action="store_true", help="list the run folders under --out (default runs/) with "
                   "their state: running (and by whom), dead (its process is gone: --resume it), interrupted, failed "
                   "or complete, and items done")
    p.add_argument("--repair", type=Path, metavar="RUN_DIR", help="repair a run folder: one row per item in "
                   "results.jsonl (a torn last line and duplicate rows of older versions removed), metrics and "
                   "reports recomputed, a dead run marked interrupted; refuses a run in progress")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-v", "--verbose", action="store_true")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    _sigterm_as_interrupt()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    from evidex.graphs.config import ConfigError
    from evidex.graphs.tasks import config_for_task, load_config

    if args.data_dir is not None:
        if not args.data_dir.expanduser().is_dir():
            print(f"error: --data-dir {args.data_dir} is not a folder", file=sys.stderr)
            return 2
        _use_data_dir(args.data_dir)
    if args.list:
        return _print_task_list()
    if args.list_runs:
        return _print_runs(args.out)
    if args.repair is not None:
        return _repair(args.repair)
    for flag, value, least in (("--limit", args.limit, 1), ("--concurrency", args.concurrency, 1),
                               ("--offset", args.offset, 0)):
        if value is not None and value < least:
            print(f"error: {flag} must be at least {least} (got {value})", file=sys.stderr)
            return 2
    overrides = list(args.overrides)
    if args.limit is not None:
        overrides.append(f"dataset.limit={args.limit}")
    if args.offset is not None:
        overrides.append(f"dataset.offset={args.offset}")
    if args.llm:
        overrides.append(f"model.spec={args.llm}")
    if args.data is not None:
        overrides.append(f"dataset.file={args.data.expanduser().resolve()}")
    if args.db:
        overrides.append(f"store.db={args.db}")
    if args.concurrency is not None:
        overrides.append(f"run.concurrency={args.concurrency}")
    if args.skip_ingest and not args.resume:
        overrides.append("run.prepare=false")
    from evidex.graphs.runner import RunError, run_task

    try:
        if args.resume:
            if overrides or args.task or args.config:
                print("error: --resume continues a run with its saved config.yaml; drop --task/--config/--set/"
                      "--limit/--offset/--llm/--data/--db/--concurrency (edit the run's config.yaml if you must "
                      "change it).", file=sys.stderr)
                return 2
            cfg = None
        elif args.config:
            cfg = load_config(args.config, overrides)
        elif args.task:
            cfg = config_for_task(args.task, overrides)
        else:
            print("error: give --task T (see --list), --config FILE or --resume RUN_DIR", file=sys.stderr)
            return 2
        executor = "ray" if args.ray_address and not args.executor else args.executor
        run_dir = run_task(cfg, out_dir=args.out, resume=args.resume, progress=not args.no_progress,
                           prepare=False if args.skip_ingest else None, executor=executor,
                           ray_address=args.ray_address)
    except ConfigError as exc:
        busy = _busy_store(exc)
        if busy is not None:  # another process holds the store: not a config error
            print(f"error: {busy}", file=sys.stderr)
            return 1
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stopped: finished items are saved.", file=sys.stderr)
        return INTERRUPTED
    except (RunError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return _print_summary(run_dir)


def _print_runs(out: Path | None) -> int:
    """``--list-runs``: one line per run folder, oldest first, with its state now (a dead run told from a live one)."""
    from evidex.graphs.trace_tree import list_runs
    from evidex.tools.runfolder import run_state
    from evidex.tools.settings import get_settings

    runs_dir = Path(out or get_settings().runs_dir)
    runs = list_runs(runs_dir)
    if not runs:
        print(f"no run folders under {runs_dir}")
        return 0
    print(f"{'run':<44} {'state':<12} {'items':>9}  since / owner")
    for path in runs:
        st = run_state(path)
        items = f"{st['rows']}/{st.get('n_items', '?')}"
        when = st.get("finished") or st.get("interrupted") or st.get("failed") or st.get("resumed") or st.get("started", "")
        extra = st["owner"] if st["state"] == "running" and st.get("owner") else when
        if st["state"] == "dead":
            extra = f"{when}; its process is gone: evidex run --resume {path}"
        if st["duplicates"]:
            extra += f"; {st['duplicates']} duplicate rows (--repair)"
        print(f"{path.name:<44} {st['state']:<12} {items:>9}  {extra}")
    return 0


def _repair(run_dir: Path) -> int:
    from evidex.graphs.config import ConfigError
    from evidex.graphs.runner import RunError, repair_run

    try:
        done = repair_run(run_dir)
    except (RunError, ConfigError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{done['run']}: {done['rows']} items, {done['duplicates_removed']} duplicate rows removed; metrics and "
          f"reports recomputed; status {done['status']}")
    return 0


def _busy_store(exc: BaseException):
    """The StoreBusyError a config check met (families wrap store errors as config errors), if any."""
    from evidex.tools.store import StoreBusyError

    seen = exc
    for _ in range(8):
        if isinstance(seen, StoreBusyError):
            return seen
        seen = seen.__cause__ or seen.__context__
        if seen is None:
            return None
    return None


def _print_task_list() -> int:
    """Every task, grouped by family, with its description and default config; the family's other configs
    (variants for --config); configs that do not load, with the reason."""
    from evidex.graphs.registry import families
    from evidex.graphs.tasks import broken_configs, list_config_names, task_table

    table = task_table()
    names = list_config_names()
    for name, fam in families().items():
        entries = sorted((e for e in table.values() if e.family == name), key=lambda e: e.task)
        print(f"{name}: {fam.description}")
        for e in entries:
            print(f"  {e.task:<17} {e.description}  [{name}/{e.path.stem}]")
        defaults = {f"{name}/{e.path.stem}" for e in entries}
        variants = [n for n in names if n.startswith(f"{name}/") and n not in defaults]
        if variants:
            print(f"  {'configs':<17} {', '.join(variants)}  (--config NAME)")
        if not entries:
            print("  (no configs found)")
    for path, error in broken_configs().items():
        print(f"warning: {path} does not load: {str(error).splitlines()[0]}", file=sys.stderr)
    return 0


def _use_data_dir(path: Path) -> None:
    """--data-dir: EVIDEX_DATA_DIR for this process and whatever it starts (Ray workers read the environment)."""
    from evidex.tools.settings import get_settings

    os.environ["EVIDEX_DATA_DIR"] = str(path.expanduser().resolve())
    get_settings.cache_clear()


def _sigterm_as_interrupt() -> None:
    """`kill` gets the same clean, resumable stop as Ctrl-C."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))


def _print_summary(run_dir: Path) -> int:
    """Print the run's headline metrics; exit status 1 when every item failed."""
    import json

    from evidex.evaluators.summary import metric_rows

    summary = json.loads((run_dir / "metrics.json").read_text())
    print(f"\nrun folder: {run_dir}")
    print(f"items: {summary['n_ok']}/{summary['n_items']} ok, errors: {summary['n_errors']}; "
          f"median latency {summary['latency_s'].get('median', 'n/a')} s")
    if summary.get("n_degraded"):
        parts = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in (summary.get("degraded") or {}).items())
        print(f"warning: {summary['n_degraded']} items answered with part of the search unavailable ({parts}); "
              "see 'degraded' on their rows in results.jsonl", file=sys.stderr)
    for name, value, n, nan in metric_rows(summary["metrics"], summary.get("headline") or [])[:14]:
        print(f"  {name:<32} {value:<24} n={n}")
    from evidex.evaluators.summary import section_text

    for section in summary.get("sections") or []:
        print("\n" + section_text(section))
    if summary["n_items"] and not summary["n_ok"]:
        print(f"error: every item failed; the errors are in {run_dir / 'results.jsonl'} and {run_dir / 'report.md'}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    if code == INTERRUPTED:
        # Every finished item is already fsynced. Skip interpreter teardown: stopping llama.cpp's server threads
        # mid-start could block the exit for good.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)

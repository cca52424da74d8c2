"""Claim-explainer benchmark: run tasks on N items with the configured model and tabulate the targets.

    python -m benchmarks.explainers --tasks mixed,missing_evidence --limit 30
    python -m benchmarks.explainers --tasks selection --limit 30 --llm openai:gpt-4o-mini
    python -m benchmarks.explainers --retrieval-only            # no LLM: recall@5/10/20, dense/BM25/fused
    python -m benchmarks.explainers --from-runs runs/A runs/B   # tabulate finished run folders
    python -m benchmarks.explainers --rescore runs/A runs/B     # score finished runs again with today's metrics

Each task runs through ``graphs.runner.run_task`` (so it leaves a normal, resumable run folder) and the table
reports recovery, discard, selection, assignment, wrong_claim accuracy, explanation similarity, RAGAS
faithfulness (``--ragas``), latency per item and prompt/completion tokens per item. JSON goes to
``benchmarks/results/explainers.json`` unless ``--json`` says otherwise, one key per part holding its latest result:
``tasks`` (task runs, ``--from-runs``, ``--rescore``), ``retrieval`` (``--retrieval-only``), or the name ``--part``
gives (e.g. ``r4c``, ``decisions`` for gate-only runs).

The ``--paths`` comparison of the explanation paths (legacy, fast, grounded; parts ``paths*`` of explainers.json) was
removed with the paths it compared: grounded won (docs/results.md) and is the only one left.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

DEFAULT_JSON = Path("benchmarks/results/explainers.json")
COLUMNS = {
    "recovery P": "recovery_precision_micro", "recovery R": "recovery_recall_micro",
    "recovery F1": "recovery_f1_micro", "discard P": "discard_precision_micro", "discard R": "discard_recall_micro",
    "discard F1": "discard_f1_micro", "false discard": "false_discard_rate", "selection": "selection_accuracy",
    "assign item": "assignment_item_accuracy", "assign pair": "assignment_pair_accuracy",
    "wrong_claim": "wrong_claim_accuracy", "expl sim": "explanation_similarity",
    "expl complete": "explanation_completeness", "golden facts": "golden_fact_coverage",
    "golden ceiling": "golden_fact_coverage_ceiling", "faithful": "ragas_faithfulness",
    "cites ok": "citation_validity",
    # trust (issue 24), pooled over items: shares of whole-sentence reasons, of (sentence, cited id) pairs whose
    # stance matches the label, of cited sentences the overlap judge backs; and the share of self-contradicting
    # explanations
    "reasons whole": "reasons_item_accuracy_micro", "self-contra": "self_contradiction",
    "stance consist": "stance_pairs_item_accuracy_micro", "sent support": "supported_sentences_item_accuracy_micro",
    # reasons that are reasons (issue 54), pooled over kept items / discarded given items / labelled pairs: a kept
    # item's reason passes the check (facts from the evidence, names the claim's entity, not a copy), copies an
    # evidence sentence, is the writer's fallback, states a measured result (of the items whose evidence states
    # one); a discard reason names what the item is about instead; the stance of kept items agrees with the hand
    # labels of benchmarks/data/stance_absence_sample.jsonl, and the share of those pairs labelled "does not
    # support"
    "reason links": "reason_links_item_accuracy_micro", "reason copied": "reason_copied_item_accuracy_micro",
    "reason fallback": "reason_fallback_item_accuracy_micro", "reason measure": "reason_measure_item_accuracy_micro",
    "discard named": "discard_named_item_accuracy_micro",
    "stance sample": "stance_sample_item_accuracy_micro", "stance report": "stance_report_item_accuracy_micro",
    "sample not-sup": "stance_sample_not_supports_item_accuracy_micro",
}


def row_from_metrics(summary: dict) -> dict:
    m = summary.get("metrics", {})
    row = {"task": summary["task"], "run": summary["run_id"], "n": summary["n_items"], "errors": summary["n_errors"]}
    for label, key in COLUMNS.items():
        if key in m and m[key].get("mean") is not None:
            row[label] = round(m[key]["mean"], 3)
    row["latency median s"] = summary["latency_s"].get("median")
    row["latency mean s"] = summary["latency_s"].get("mean")
    row["prompt tok/item"] = summary["prompt_tokens"].get("mean")
    row["completion tok/item"] = summary["completion_tokens"].get("mean")
    return row


ZERO_IS_NEWS = {"self-contra", "reason copied", "reason fallback", "sample not-sup"}  # 0 self-contradicting explanations is the result, not an empty column


def _shown(value, column: str = "") -> bool:
    """Not missing or NaN, and not zero (decision-only runs fill text columns with zeros) unless zero is news."""
    return value is not None and value == value and (value != 0 or column in ZERO_IS_NEWS)


def print_rows(rows: list[dict], title: str) -> None:
    cols = ["task", "n", "errors"] + [c for c in list(COLUMNS) + ["latency median s", "latency mean s",
                                                                    "prompt tok/item", "completion tok/item"]
                                      if any(_shown(r.get(c), c) for r in rows)]  # decision-only runs: no text columns
    table = Table(title=title)
    for c in cols:
        table.add_column(c, justify="left" if c == "task" else "right", no_wrap=c == "task")
    for r in rows:
        table.add_row(*[str(r.get(c, "")) for c in cols])
    Console(width=max(160, Console().width)).print(table)


def rescore(run_dir: Path) -> dict:
    """The summary of a finished run folder scored again with today's scorer (new metrics on old predictions;
    the folder is not changed)."""
    from evidex.evaluators.summary import summarize_run
    from evidex.graphs.config import ConfigError
    from evidex.graphs.registry import Resources, get_family
    from evidex.graphs.runner import load_run_config
    from evidex.tools.claims import ClaimPrediction
    from evidex.tools.runfolder import read_results

    try:
        cfg = load_run_config(run_dir)
    except ConfigError:  # a run from before a setting was removed: its task, data and steps are what scoring needs
        import yaml

        from evidex.graphs.tasks import config_for_task

        raw = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
        today = config_for_task(raw["task"])  # settings removed since (e.g. steps.verify) are dropped
        keep = [f"{section}.{k}={v}" for section in ("dataset", "steps", "metrics")
                for k, v in (raw.get(section) or {}).items()
                if v is not None and not isinstance(v, (dict, list)) and k in type(getattr(today, section)).model_fields]
        cfg = config_for_task(raw["task"], keep)
    family = get_family(cfg.family)
    items = {it.id: it for it in family.load_items(cfg)}
    rows = read_results(run_dir / "results.jsonl")
    resources = Resources()
    for row in rows:
        if row.get("prediction") and row["id"] in items:
            pred = ClaimPrediction.model_validate(row["prediction"])
            row["metrics"] = family.score_item(cfg, items[row["id"]], pred, resources)
    return summarize_run(rows, run_id=run_dir.name, task=cfg.task, config_name=cfg.name, model=cfg.model_label,
                         family=cfg.family, aggregate=family.aggregate, headline=family.report_columns,
                         lower_is_better=sorted(family.lower_is_better))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.explainers", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", "--task", dest="tasks", default="mixed,missing_evidence,wrong_evidence,selection,assignment")
    p.add_argument("--concurrency", type=int, help="items in flight per run (= --set run.concurrency=N; the local "
                                                   "server gets as many parallel slots)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--limit", type=int, default=30, help="first N items of each file")
    p.add_argument("--llm", help="model spec (default: the task config's, i.e. local)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--ragas", action="store_true", help="also score RAGAS faithfulness/relevancy")
    p.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of the run folders")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON,
                   help=f"results file, one key per part (default {DEFAULT_JSON})")
    p.add_argument("--part", help="key of the results file to replace (default: tasks; --retrieval-only: retrieval)")
    p.add_argument("--retrieval-only", action="store_true", help="no LLM: recall@k of hidden missing evidence")
    p.add_argument("--from-runs", nargs="+", type=Path, metavar="RUN_DIR", help="tabulate finished run folders")
    p.add_argument("--rescore", nargs="+", type=Path, metavar="RUN_DIR",
                   help="tabulate finished run folders scored again with today's metrics (folders unchanged)")
    args = p.parse_args(argv)
    if args.limit < 1:
        p.error(f"--limit must be at least 1 (got {args.limit})")
    if args.concurrency is not None and args.concurrency < 1:
        p.error(f"--concurrency must be at least 1 (got {args.concurrency})")

    if args.retrieval_only:
        from benchmarks.retrieval import print_table, run_retrieval_benchmark

        result = run_retrieval_benchmark(start=0, limit=args.limit)
        print_table(result)
        write_results(args.json, result, part=args.part or "retrieval")
        return 0
    rows = []
    if args.rescore:
        for run_dir in args.rescore:
            if not (run_dir / "results.jsonl").is_file():
                p.error(f"{run_dir} holds no results.jsonl: pass finished run folders")
            rows.append(row_from_metrics(rescore(run_dir)))
    elif args.from_runs:
        for run_dir in args.from_runs:
            if not (run_dir / "metrics.json").is_file():
                p.error(f"{run_dir} holds no metrics.json: pass finished run folders")
            rows.append(row_from_metrics(json.loads((run_dir / "metrics.json").read_text())))
    else:
        from evidex.graphs.config import ConfigError
        from evidex.graphs.tasks import config_for_task
        from evidex.graphs.runner import run_task

        sets = list(args.overrides) + [f"dataset.limit={args.limit}"]
        if args.concurrency is not None:
            sets.append(f"run.concurrency={args.concurrency}")
        if args.llm:
            sets.append(f"model.spec={args.llm}")
        if args.ragas:
            sets.append("metrics.ragas=true")
        try:  # every task's config is checked before the first (possibly hour-long) run starts
            configs = [config_for_task(t.strip(), sets) for t in args.tasks.split(",") if t.strip()]
        except ConfigError as exc:
            p.error(str(exc))
        for n, cfg in enumerate(configs, start=1):
            run_dir = run_task(cfg, out_dir=args.out, progress=not args.no_progress)
            rows.append(row_from_metrics(json.loads((run_dir / "metrics.json").read_text())))
            if n < len(configs):  # running table while later tasks run; the final one follows
                print_rows(rows, f"claim explainers so far (first {args.limit} items)")
    print_rows(rows, "claim explainers")
    write_results(args.json, {"rows": rows}, part=args.part or "tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

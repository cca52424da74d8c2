"""Claim-explainer benchmark: run tasks on N items with the configured model and tabulate the targets.

    python -m benchmarks.explainers --tasks mixed,missing_evidence --limit 30
    python -m benchmarks.explainers --tasks selection --limit 30 --llm openai:gpt-4o-mini
    python -m benchmarks.explainers --retrieval-only            # no LLM: recall@5/10/20, dense/BM25/fused
    python -m benchmarks.explainers --from-runs runs/A runs/B   # tabulate finished run folders

Each task runs through ``graphs.runner.run_task`` (so it leaves a normal, resumable run folder) and the table
reports recovery, discard, selection, assignment, wrong_claim accuracy, explanation similarity, RAGAS
faithfulness (``--ragas``), latency per item and prompt/completion tokens per item. JSON goes to
``benchmarks/results/explainers.json`` unless ``--json`` says otherwise.
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


def _shown(value) -> bool:
    return value is not None and value == value and value != 0  # not missing, NaN or zero


def print_rows(rows: list[dict], title: str) -> None:
    cols = ["task", "n", "errors"] + [c for c in list(COLUMNS) + ["latency median s", "latency mean s",
                                                                    "prompt tok/item", "completion tok/item"]
                                      if any(_shown(r.get(c)) for r in rows)]  # decision-only runs: no text columns
    table = Table(title=title)
    for c in cols:
        table.add_column(c, justify="left" if c == "task" else "right", no_wrap=c == "task")
    for r in rows:
        table.add_row(*[str(r.get(c, "")) for c in cols])
    Console(width=max(160, Console().width)).print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.explainers", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default="mixed,missing_evidence,wrong_evidence,selection,assignment")
    p.add_argument("--limit", type=int, default=30, help="first N items of each file")
    p.add_argument("--llm", help="model spec (default: the task config's, i.e. local)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--ragas", action="store_true", help="also score RAGAS faithfulness/relevancy")
    p.add_argument("--out", type=Path, default=Path("runs"), help="parent folder of the run folders")
    p.add_argument("--json", type=Path, help=f"results file (default {DEFAULT_JSON}; --retrieval-only: "
                                            f"{DEFAULT_JSON.with_name('explainers_retrieval.json')})")
    p.add_argument("--retrieval-only", action="store_true", help="no LLM: recall@k of hidden missing evidence")
    p.add_argument("--from-runs", nargs="+", type=Path, metavar="RUN_DIR", help="tabulate finished run folders")
    args = p.parse_args(argv)
    if args.limit < 1:
        p.error(f"--limit must be at least 1 (got {args.limit})")

    if args.retrieval_only:
        from benchmarks.retrieval import print_table, run_retrieval_benchmark

        result = run_retrieval_benchmark(start=0, limit=args.limit)
        print_table(result)
        write_results(args.json or DEFAULT_JSON.with_name("explainers_retrieval.json"), result)
        return 0
    rows = []
    if args.from_runs:
        for run_dir in args.from_runs:
            if not (run_dir / "metrics.json").is_file():
                p.error(f"{run_dir} holds no metrics.json: pass finished run folders")
            rows.append(row_from_metrics(json.loads((run_dir / "metrics.json").read_text())))
    else:
        from evidex.graphs.config import ConfigError
        from evidex.graphs.tasks import config_for_task
        from evidex.graphs.runner import run_task

        sets = list(args.overrides) + [f"dataset.limit={args.limit}"]
        if args.llm:
            sets.append(f"model.spec={args.llm}")
        if args.ragas:
            sets.append("metrics.ragas=true")
        try:  # every task's config is checked before the first (possibly hour-long) run starts
            configs = [config_for_task(t.strip(), sets) for t in args.tasks.split(",") if t.strip()]
        except ConfigError as exc:
            p.error(str(exc))
        for n, cfg in enumerate(configs, start=1):
            run_dir = run_task(cfg, out_dir=args.out)
            rows.append(row_from_metrics(json.loads((run_dir / "metrics.json").read_text())))
            if n < len(configs):  # running table while later tasks run; the final one follows
                print_rows(rows, f"claim explainers so far (first {args.limit} items)")
    print_rows(rows, "claim explainers")
    write_results(args.json or DEFAULT_JSON, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

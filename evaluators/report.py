"""Run summaries: aggregate per-item rows into ``metrics.json`` and a Markdown report."""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evidex.evaluators.explainers import aggregate

HEADLINE = ("recovery_precision_micro", "recovery_recall_micro", "recovery_f1_micro", "discard_precision_micro",
            "discard_recall_micro", "discard_f1_micro", "false_discard_rate", "selection_accuracy",
            "assignment_item_accuracy", "assignment_pair_accuracy", "wrong_claim_accuracy",
            "explanation_similarity", "explanation_completeness", "citation_validity", "golden_fact_coverage",
            "ragas_faithfulness", "ragas_response_relevancy")


def _dist(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    arr = np.asarray(values, dtype=float)
    return {"n": int(arr.size), "mean": round(float(arr.mean()), 3), "median": round(float(np.median(arr)), 3),
            "p90": round(float(np.percentile(arr, 90)), 3), "max": round(float(arr.max()), 3)}


def summarize_run(rows: list[dict[str, Any]], *, run_id: str, task: str, config_name: str,
                  model: str) -> dict[str, Any]:
    ok = [r for r in rows if r.get("error") is None and r.get("prediction") is not None]
    by_tag: dict[str, list[dict]] = {}
    for r in ok:
        for tag in r.get("tags", []):
            by_tag.setdefault(tag, []).append(r["metrics"])
    return {
        "run_id": run_id, "task": task, "config": config_name, "model": model,
        "n_items": len(rows), "n_ok": len(ok), "n_errors": len(rows) - len(ok),
        "errors": [{"id": r["id"], "error": r.get("error")} for r in rows if r.get("error")],
        "metrics": aggregate([r["metrics"] for r in ok]) if ok else {},
        "by_tag": {t: aggregate(m) for t, m in sorted(by_tag.items()) if len(by_tag) > 1},
        "latency_s": _dist([r["latency_s"] for r in rows if "latency_s" in r]),
        "prompt_tokens": _dist([r.get("tokens", {}).get("prompt", 0) for r in rows]),
        "completion_tokens": _dist([r.get("tokens", {}).get("completion", 0) for r in rows]),
    }


def fmt(summary: dict[str, Any] | None) -> str:
    if not summary or summary.get("mean") is None or (isinstance(summary["mean"], float) and math.isnan(summary["mean"])):
        return "n/a"
    lo, hi = summary.get("ci_low"), summary.get("ci_high")
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and not math.isnan(lo) else ""
    return f"{summary['mean']:.3f}{ci}"


def metric_rows(metrics: dict[str, dict]) -> list[tuple[str, str, int, int]]:
    names = [m for m in HEADLINE if m in metrics] + sorted(m for m in metrics if m not in HEADLINE)
    return [(m, fmt(metrics[m]), metrics[m].get("n", 0), metrics[m].get("n_nan", 0)) for m in names]


def write_markdown_report(path: Path, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    lines = [f"# Run {summary['run_id']}", "",
             f"Task `{summary['task']}` · config `{summary['config']}` · model `{summary['model']}` · "
             f"{summary['n_ok']}/{summary['n_items']} items ok, {summary['n_errors']} errors", "",
             "## Metrics (mean [95% bootstrap CI])", "", "| metric | value | n | NaN |", "|---|---|---|---|"]
    lines += [f"| {m} | {v} | {n} | {nan} |" for m, v, n, nan in metric_rows(summary["metrics"])]
    lat, pt, ct = summary["latency_s"], summary["prompt_tokens"], summary["completion_tokens"]
    lines += ["", "## Cost per item", "", "| | mean | median | p90 |", "|---|---|---|---|"]
    for name, d in (("latency (s)", lat), ("prompt tokens", pt), ("completion tokens", ct)):
        if d.get("n"):
            lines.append(f"| {name} | {d['mean']} | {d['median']} | {d['p90']} |")
    if summary["errors"]:
        lines += ["", "## Errors", ""] + [f"- `{e['id']}`: {e['error']}" for e in summary["errors"]]
    lines += ["", "## Items", "", "| id | latency s | key metrics | error |", "|---|---|---|---|"]
    for r in rows:
        m = r.get("metrics", {})
        keys = [k for k in HEADLINE if k.removesuffix("_micro") in m][:4]
        shown = ", ".join(f"{k.removesuffix('_micro')}={m[k.removesuffix('_micro')]:.2f}" for k in keys)
        lines.append(f"| {r['id']} | {r.get('latency_s', '')} | {shown} | {r.get('error') or ''} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """``python -m evaluators.report RUN_A [RUN_B ...] [--html OUT]``: compare runs (see evaluators/compare.py)."""
    from evidex.evaluators.compare import main as compare_main

    return compare_main(argv, prog="python -m evaluators.report")


if __name__ == "__main__":
    raise SystemExit(main())

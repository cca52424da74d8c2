"""Run summaries, generic over task families: per-item rows -> ``metrics.json``, and how metrics are listed.

The family a run belongs to decides which metrics lead (``headline``, its report columns) and which are better
when lower (``lower_is_better``); both are written into the summary, so reports and comparisons read them from
``metrics.json`` without knowing the family.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from evidex.evaluators.stats import COUNT_SUFFIXES



def _dist(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    arr = np.asarray(values, dtype=float)
    return {"n": int(arr.size), "mean": round(float(arr.mean()), 3), "median": round(float(np.median(arr)), 3),
            "p90": round(float(np.percentile(arr, 90)), 3), "max": round(float(arr.max()), 3)}


def summarize_run(rows: list[dict[str, Any]], *, run_id: str, task: str, config_name: str, model: str,
                  family: str | None = None, aggregate: Callable | None = None, headline: Sequence[str] = (),
                  lower_is_better: Sequence[str] = ()) -> dict[str, Any]:
    """The run's summary: item counts, errors, every metric aggregated (also per tag), latency and tokens."""
    if aggregate is None:
        from evidex.evaluators.stats import aggregate_metrics as aggregate  # the conventions every family follows
    ok = [r for r in rows if r.get("error") is None and r.get("prediction") is not None]
    by_tag: dict[str, list[dict]] = {}
    for r in ok:
        for tag in r.get("tags", []):
            by_tag.setdefault(tag, []).append(r["metrics"])
    return {
        "run_id": run_id, "family": family, "task": task, "config": config_name, "model": model,
        "headline": list(headline), "lower_is_better": list(lower_is_better),
        "n_items": len(rows), "n_ok": len(ok), "n_errors": len(rows) - len(ok),
        "errors": [{"id": r["id"], "error": r.get("error")} for r in rows if r.get("error")],
        "metrics": aggregate([r["metrics"] for r in ok]) if ok else {},
        "by_tag": {t: aggregate(m) for t, m in sorted(by_tag.items()) if len(by_tag) > 1},
        "latency_s": _dist([r["latency_s"] for r in rows if "latency_s" in r]),
        "prompt_tokens": _dist([r.get("tokens", {}).get("prompt", 0) for r in rows]),
        "completion_tokens": _dist([r.get("tokens", {}).get("completion", 0) for r in rows]),
        "cached_prompt_tokens": _dist([r.get("tokens", {}).get("cached", 0) for r in rows]),
        "model_calls": _dist([r["tokens"]["calls"] for r in rows if "calls" in r.get("tokens", {})]),
        "rss_mb": _dist([r["rss_mb"] for r in rows if "rss_mb" in r]),
        "memory": _memory(rows),
    }


def _memory(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Resident memory after the 5th item, after the last and at most (MiB, in the order items finished): flat
    memory means the last is close to the 5th."""
    rss = [r["rss_mb"] for r in rows if "rss_mb" in r]
    if not rss:
        return {}
    return {"after_item_5": rss[min(4, len(rss) - 1)], "after_last_item": rss[-1], "max_after_item": max(rss)}


COST_ROWS = (("latency (s)", "latency_s"), ("model calls", "model_calls"), ("prompt tokens", "prompt_tokens"),
             ("cached prompt tokens", "cached_prompt_tokens"), ("completion tokens", "completion_tokens"),
             ("resident memory after item (MiB)", "rss_mb"))


def cost_rows(summary: dict[str, Any]) -> list[tuple[str, dict]]:
    """(label, distribution) of the per-item costs the summary holds (older summaries lack some)."""
    return [(label, summary.get(key) or {}) for label, key in COST_ROWS]


def fmt(summary: dict[str, Any] | None) -> str:
    if not summary or summary.get("mean") is None or (isinstance(summary["mean"], float) and math.isnan(summary["mean"])):
        return "n/a"
    lo, hi = summary.get("ci_low"), summary.get("ci_high")
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and not math.isnan(lo) else ""
    return f"{summary['mean']:.3f}{ci}"


def ordered_metrics(metrics: dict[str, Any], headline: Sequence[str] = ()) -> list[str]:
    """Metric names to show: the headline ones in their order, then the rest alphabetically (counts hidden)."""
    names = [m for m in headline if m in metrics] + sorted(m for m in metrics if m not in headline)
    return [m for m in names if not m.endswith(COUNT_SUFFIXES)]


def metric_rows(metrics: dict[str, dict], headline: Sequence[str] = ()) -> list[tuple[str, str, int, int]]:
    """(name, "mean [CI]", n, NaN count) for every metric, in :func:`ordered_metrics` order."""
    return [(m, fmt(metrics[m]), metrics[m].get("n", 0), metrics[m].get("n_nan", 0))
            for m in ordered_metrics(metrics, headline)]


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not (isinstance(x, float) and math.isnan(x))


def section_cell(value: Any) -> str:
    """A report-section cell as text: numbers with two decimals, ``None`` as n/a."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def section_text(section: dict[str, Any]) -> str:
    """A family's report section (``summary["sections"]``) as an aligned plain-text table for the console."""
    head = [str(c) for c in section.get("columns") or []]
    body = [[section_cell(v) for v in row] for row in section.get("rows") or []]
    table = [head, *body]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in table) for i in range(len(head))]
    lines = [str(section.get("title", ""))]
    for n, row in enumerate(table):
        lines.append("  " + "  ".join((c.ljust(w) if i == 0 else c.rjust(w)) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)

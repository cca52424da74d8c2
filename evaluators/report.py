"""``report.md`` for a run folder, and ``evidex report`` (compare runs, see :mod:`evaluators.compare`).

The summary it renders comes from :func:`evaluators.summary.summarize_run`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from evidex.evaluators.summary import cost_rows, metric_rows, section_cell
from evidex.tools.safe_text import md_text


def run_state(summary: dict[str, Any], status: dict[str, Any] | None) -> str:
    """The run's status line: ``complete (finished …)``, ``running``, ``interrupted (…)``, from ``run.json``."""
    status = status or {}
    state = status.get("status")
    if not state:
        return ""
    when = status.get("finished") if state == "complete" else status.get(state)
    extra = [f"finished {when}" if state == "complete" and when else (f"at {when}" if when else "")]
    if status.get("resumed"):
        extra.append(f"resumed {status['resumed']}")
    extra = [e for e in extra if e]
    return state + (f" ({'; '.join(extra)})" if extra else "")


def write_markdown_report(path: Path, summary: dict[str, Any], rows: list[dict[str, Any]],
                          status: dict[str, Any] | None = None) -> None:
    """Every value that comes from data or a model (ids, names, errors) goes through :func:`md_text`, so the report
    renders as text in any Markdown viewer: no live HTML, link or image, and no hidden characters."""
    t = md_text
    lines = [f"# Run {t(summary['run_id'])}", "",
             f"Task {t(summary['task'])} · config {t(summary['config'])} · model {t(summary['model'])} · "
             f"{summary['n_ok']}/{summary['n_items']} items ok, {summary['n_errors']} errors", ""]
    state = run_state(summary, status)
    if state:
        lines += [f"Status: {t(state)}", ""]
    lines += ["## Metrics (mean [95% bootstrap CI])", "", "| metric | value | n | NaN |", "|---|---|---|---|"]
    headline = summary.get("headline") or []
    lines += [f"| {t(m)} | {v} | {n} | {nan} |" for m, v, n, nan in metric_rows(summary["metrics"], headline)]
    for section in summary.get("sections") or []:
        cols = section.get("columns") or []
        lines += ["", f"## {t(section.get('title', ''))}", "", "| " + " | ".join(t(str(c)) for c in cols) + " |",
                  "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(t(section_cell(v)) for v in row) + " |" for row in section.get("rows") or []]
        if section.get("note"):
            lines += ["", t(section["note"])]
    lines += ["", "## Cost per item", "", "| | mean | median | p90 |", "|---|---|---|---|"]
    for name, d in cost_rows(summary):
        if d.get("n"):
            lines.append(f"| {name} | {d['mean']} | {d['median']} | {d['p90']} |")
    if summary["errors"]:
        lines += ["", "## Errors", ""] + [f"- {t(e['id'], 200)}: {t(e['error'])}" for e in summary["errors"]]
    lines += ["", "## Items", "", "| id | latency s | key metrics | error |", "|---|---|---|---|"]
    for r in rows:
        m = r.get("metrics", {})
        keys = [k for k in headline if k.removesuffix("_micro") in m][:4]
        shown = ", ".join(f"{k.removesuffix('_micro')}={m[k.removesuffix('_micro')]:.2f}" for k in keys)
        lines.append(f"| {t(r['id'], 200)} | {r.get('latency_s', '')} | {t(shown)} | {t(r.get('error') or '', 300)} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """``evidex report RUN_A [RUN_B ...] [--html OUT]``: compare runs (see evaluators/compare.py)."""
    from evidex.evaluators.compare import main as compare_main

    return compare_main(argv, prog="evidex report")


if __name__ == "__main__":
    raise SystemExit(main())

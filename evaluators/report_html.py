"""``report.html`` for a run folder: tables and matplotlib plots (inline base64 PNG, Agg), no network needed.

    from evidex.evaluators.report_html import write_html_report
    write_html_report("runs/20261122-002021-mixed")          # -> runs/.../report.html

Sections: run facts; metrics table (mean, 95% bootstrap CI, n, NaN) and a plot of the means with CI error bars;
the same per tag (table and grouped plot); cost (latency histogram, prompt/completion tokens per item, tokens
vs latency); errors; one row per item; the resolved config. ``summary``/``rows`` may be passed in when the
caller already has them (``graphs.runner.finalize_run``); otherwise they are read from ``metrics.json`` and
``results.jsonl`` (``metrics.json`` is recomputed from the rows when missing).
"""
from __future__ import annotations

import base64
import io
import json
import logging
from pathlib import Path
from collections.abc import Collection, Sequence
from typing import Any

from evidex.evaluators.summary import cost_rows, finite, fmt, ordered_metrics, section_cell
from evidex.tools.runfolder import read_rows, read_status
from evidex.tools.safe_text import csp_meta, html_text

log = logging.getLogger(__name__)

PALETTE = ("#2563eb", "#f59e0b", "#16a34a", "#dc2626", "#9333ea", "#0e7490", "#db2777", "#65a30d", "#7c3aed",
           "#ea580c")


def esc(value: Any) -> str:
    return html_text(value)


# -- loading ------------------------------------------------------------------------------------------------
def load_run(run_dir: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary, rows) of a run folder; the summary is recomputed from the rows when metrics.json is absent."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder (pass runs/<run_id>)")
    rows = read_rows(run_dir / "results.jsonl")
    path = run_dir / "metrics.json"
    if path.is_file():
        summary = json.loads(path.read_text(encoding="utf-8"))
    elif rows or (run_dir / "config.yaml").is_file():
        summary = _summarize(run_dir, rows)
    else:
        raise FileNotFoundError(f"{run_dir} is not a run folder (no metrics.json, results.jsonl or config.yaml)")
    return summary, rows


def _summarize(run_dir: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from evidex.evaluators.summary import summarize_run

    task = config = model = "?"
    cfg_path = run_dir / "config.yaml"
    if cfg_path.is_file():
        import yaml

        raw = yaml.safe_load(cfg_path.read_text(encoding="utf-8")) or {}
        task, config = raw.get("task", "?"), raw.get("name", "?")
        model = (raw.get("model") or {}).get("spec", "?")
    return summarize_run(rows, run_id=run_dir.name, task=task, config_name=config, model=model)


# -- plots --------------------------------------------------------------------------------------------------
def new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def figure_data_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def img(fig, alt: str) -> str:
    return f'<img class="plot" alt="{esc(alt)}" src="{figure_data_uri(fig)}">'


def _ci_err(summaries: list[dict[str, Any]]) -> tuple[list[float], list[float], list[list[float]]]:
    means, lows, highs = [], [], []
    for s in summaries:
        m = float(s["mean"])
        lo, hi = s.get("ci_low"), s.get("ci_high")
        means.append(m)
        lows.append(max(m - float(lo), 0.0) if finite(lo) else 0.0)
        highs.append(max(float(hi) - m, 0.0) if finite(hi) else 0.0)
    return means, lows, [lows, highs]


def plot_metrics(metrics: dict[str, dict[str, Any]], headline: Sequence[str] = (),
                 title: str = "Metrics (mean, 95% bootstrap CI)"):
    names = [m for m in ordered_metrics(metrics, headline) if finite(metrics[m].get("mean"))]
    if not names:
        return None
    fig = new_figure(8, 0.34 * len(names) + 1.0)
    ax = fig.add_subplot(111)
    means, _, err = _ci_err([metrics[m] for m in names])
    y = list(range(len(names)))[::-1]
    ax.barh(y, means, xerr=err, color=PALETTE[0], alpha=0.85, capsize=3, error_kw={"elinewidth": 1})
    ax.set_yticks(y, labels=names, fontsize=8)
    for yi, m, hi in zip(y, means, err[1]):
        ax.text(m + hi, yi, f"  {m:.3f}", va="center", fontsize=7)
    if all(0 <= v <= 1.0001 for v in means):
        ax.set_xlim(0, 1.12)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_grouped(groups: dict[str, dict[str, dict[str, Any]]], names: list[str], title: str):
    """One horizontal bar per (metric, group) with CI error bars; groups are tags or runs."""
    names = [m for m in names if any(finite((g.get(m) or {}).get("mean")) for g in groups.values())]
    if not names or not groups:
        return None
    k = len(groups)
    height = 1.0 / (k + 1)
    fig = new_figure(8, max(2.0, (0.22 * k + 0.2) * len(names) + 1.2))
    ax = fig.add_subplot(111)
    base = list(range(len(names)))[::-1]
    all_vals = []
    for gi, (label, metrics) in enumerate(groups.items()):
        ys, means, lo, hi = [], [], [], []
        for yi, m in zip(base, names):
            s = metrics.get(m) or {}
            if not finite(s.get("mean")):
                continue
            (mean,), _, ((l_err,), (h_err,)) = _ci_err([s])
            ys.append(yi + (k - 1 - gi - (k - 1) / 2) * height)
            means.append(mean)
            lo.append(l_err)
            hi.append(h_err)
        all_vals += means
        ax.barh(ys, means, height=height * 0.9, xerr=[lo, hi], color=PALETTE[gi % len(PALETTE)], alpha=0.85,
                capsize=2, error_kw={"elinewidth": 0.8}, label=str(label))
    ax.set_yticks(base, labels=names, fontsize=8)
    if all_vals and all(0 <= v <= 1.0001 for v in all_vals):
        ax.set_xlim(0, 1.05)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.06 - 0.4 / max(len(names), 1)),
              ncol=min(k, 3), framealpha=0.8)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_latency(rows: list[dict[str, Any]]):
    lat = [float(r["latency_s"]) for r in rows if finite(r.get("latency_s"))]
    if not lat:
        return None
    fig = new_figure(5.2, 3.0)
    ax = fig.add_subplot(111)
    ax.hist(lat, bins=min(30, max(5, len(lat) // 2)), color=PALETTE[5], alpha=0.85)
    mean = sum(lat) / len(lat)
    ax.axvline(mean, color="#111", linestyle="--", linewidth=1, label=f"mean {mean:.2f} s")
    ax.set_xlabel("latency per item (s)", fontsize=8)
    ax.set_ylabel("items", fontsize=8)
    ax.legend(fontsize=7)
    ax.set_title("Latency", fontsize=10)
    return fig


def plot_tokens(rows: list[dict[str, Any]]):
    pts = [(int((r.get("tokens") or {}).get("prompt", 0) or 0), int((r.get("tokens") or {}).get("completion", 0) or 0),
            r.get("latency_s")) for r in rows]
    if not pts or not any(p + c for p, c, _ in pts):
        return None
    fig = new_figure(8, 3.0)
    ax1, ax2 = fig.add_subplot(121), fig.add_subplot(122)
    bins = min(30, max(5, len(pts) // 2))
    ax1.hist([p for p, _, _ in pts], bins=bins, alpha=0.7, color=PALETTE[0], label="prompt")
    ax1.hist([c for _, c, _ in pts], bins=bins, alpha=0.7, color=PALETTE[1], label="completion")
    ax1.set_xlabel("tokens per item", fontsize=8)
    ax1.set_ylabel("items", fontsize=8)
    ax1.legend(fontsize=7)
    ax1.set_title("Tokens", fontsize=10)
    xs = [p + c for p, c, lat in pts if finite(lat)]
    ys = [float(lat) for p, c, lat in pts if finite(lat)]
    ax2.scatter(xs, ys, s=12, color=PALETTE[4], alpha=0.7)
    ax2.set_xlabel("total tokens", fontsize=8)
    ax2.set_ylabel("latency (s)", fontsize=8)
    ax2.set_title("Tokens vs latency", fontsize=10)
    fig.tight_layout()
    return fig


def plot_section_chart(chart: dict[str, Any]):
    """A family section's grouped bar chart: categories on x, one bar per series, values labelled."""
    cats = list(chart.get("categories") or [])
    series = {k: v for k, v in (chart.get("series") or {}).items() if any(finite(x) for x in v)}
    if not cats or not series:
        return None
    k = len(series)
    width = 0.8 / k
    fig = new_figure(max(6.0, 1.1 * len(cats) + 1.5), 3.6)
    ax = fig.add_subplot(111)
    for si, (label, values) in enumerate(series.items()):
        xs = [i + (si - (k - 1) / 2) * width for i in range(len(cats))]
        pts = [(x, float(v)) for x, v in zip(xs, values) if finite(v)]
        bars = ax.bar([x for x, _ in pts], [v for _, v in pts], width=width * 0.92, label=str(label),
                      color=PALETTE[si % len(PALETTE)], alpha=0.88)
        for bar, (_, v) in zip(bars, pts):
            ax.text(bar.get_x() + bar.get_width() / 2, v, f"{v:.1f}", ha="center", va="bottom", fontsize=6)
    ax.set_xticks(range(len(cats)), labels=cats, fontsize=8)
    if finite(chart.get("max_value")):
        ax.set_ylim(0, float(chart["max_value"]) * 1.08)
    ax.legend(fontsize=7, ncol=min(k, 4), loc="upper center", bbox_to_anchor=(0.5, -0.1), framealpha=0.8)
    ax.set_title(str(chart.get("title", "")), fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return fig


def section_html(section: dict[str, Any]) -> str:
    """A family's report section (``summary["sections"]``): its table, its chart and its note."""
    cols = section.get("columns") or []
    head = "<tr>" + "".join(f"<th>{esc(c)}</th>" for c in cols) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td class='{'' if i == 0 else 'num'}'>{esc(section_cell(v))}</td>"
                                    for i, v in enumerate(row)) + "</tr>" for row in section.get("rows") or [])
    chart = section.get("chart")
    plot = safe_plot(plot_section_chart, chart, alt=str(chart.get("title", "chart"))) if chart else ""
    note = f'<p class="note">{esc(section["note"])}</p>' if section.get("note") else ""
    sid = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in str(section.get("id", "section")))
    return (f'<section id="{sid}"><h2>{esc(section.get("title", ""))}</h2><table class="metrics">{head}{body}'
            f"</table>{plot}{note}</section>")


def safe_plot(fn, *args, alt: str, **kwargs) -> str:
    """The plot as an <img>, '' when there is nothing to plot, or a note if matplotlib failed."""
    try:
        fig = fn(*args, **kwargs)
        return img(fig, alt) if fig is not None else ""
    except Exception as exc:  # noqa: BLE001 - a broken plot must not lose the report
        log.warning("plot %s failed: %s", alt, exc)
        return f'<p class="note">plot "{esc(alt)}" failed: {esc(type(exc).__name__)}: {esc(exc)}</p>'


# -- tables -------------------------------------------------------------------------------------------------
def _num(x: Any, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if finite(x) else "n/a"


def metrics_table(metrics: dict[str, dict[str, Any]], headline: Sequence[str] = (),
                  lower_is_better: Collection[str] = ()) -> str:
    head = "<tr><th>metric</th><th>mean</th><th>95% CI</th><th>n</th><th>NaN</th><th class='barcol'></th></tr>"
    body = []
    for m in ordered_metrics(metrics, headline):
        s = metrics[m]
        mean = s.get("mean")
        ci = f"[{_num(s.get('ci_low'))}, {_num(s.get('ci_high'))}]" if finite(s.get("ci_low")) else ""
        bar = ""
        if finite(mean) and 0 <= mean <= 1.0001:
            lo = s.get("ci_low") if finite(s.get("ci_low")) else mean
            hi = s.get("ci_high") if finite(s.get("ci_high")) else mean
            bar = (f'<div class="bar"><span class="fill" style="width:{mean * 100:.1f}%"></span>'
                   f'<span class="ci" style="left:{lo * 100:.1f}%;width:{max(hi - lo, 0) * 100:.1f}%"></span></div>')
        body.append(f"<tr><td>{esc(m)}{' ↓' if m in lower_is_better else ''}</td><td class='num'>{_num(mean)}</td>"
                    f"<td class='num'>{ci}</td><td class='num'>{s.get('n', '')}</td>"
                    f"<td class='num'>{s.get('n_nan', '')}</td><td>{bar}</td></tr>")
    return f'<table class="metrics">{head}{"".join(body)}</table>'


def by_tag_table(by_tag: dict[str, dict[str, dict[str, Any]]], headline: Sequence[str] = ()) -> str:
    tags = list(by_tag)
    names = ordered_metrics({m: 1 for t in tags for m in by_tag[t]}, headline)
    head = "<tr><th>metric</th>" + "".join(f"<th>{esc(t)}</th>" for t in tags) + "</tr>"
    body = "".join("<tr><td>" + esc(m) + "</td>" + "".join(
        f"<td class='num'>{esc(fmt(by_tag[t].get(m)))}</td>" for t in tags) + "</tr>" for m in names)
    return f'<table class="metrics">{head}{body}</table>'


def cost_table(summary: dict[str, Any]) -> str:
    head = "<tr><th></th><th>n</th><th>mean</th><th>median</th><th>p90</th><th>max</th></tr>"
    body = []
    for label, d in cost_rows(summary):
        if d.get("n"):
            body.append(f"<tr><td>{label}</td>" + "".join(f"<td class='num'>{esc(d.get(k, ''))}</td>"
                                                          for k in ("n", "mean", "median", "p90", "max")) + "</tr>")
    return f'<table class="metrics">{head}{"".join(body)}</table>' if body else ""


def items_table(rows: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    key_metrics = [m.removesuffix("_micro") for m in ordered_metrics(summary.get("metrics") or {},
                                                                     summary.get("headline") or [])]
    seen: list[str] = []
    for m in key_metrics:
        if m not in seen and any(m in (r.get("metrics") or {}) for r in rows):
            seen.append(m)
    cols = seen[:6]
    head = ("<tr><th>item</th><th>tags</th><th>latency s</th><th>tokens</th>"
            + "".join(f"<th>{esc(c)}</th>" for c in cols) + "<th>error</th></tr>")
    body = []
    for r in rows:
        m = r.get("metrics") or {}
        tok = r.get("tokens") or {}
        err = r.get("error")
        body.append(f"<tr class='{'err' if err else ''}'><td>{'✗ ' if err else ''}{esc(r.get('id', ''))}</td>"
                    f"<td>{esc(', '.join(r.get('tags', [])))}</td><td class='num'>{esc(r.get('latency_s', ''))}</td>"
                    f"<td class='num'>{tok.get('prompt', 0)}→{tok.get('completion', 0)}</td>"
                    + "".join(f"<td class='num'>{_num(m.get(c), 2)}</td>" for c in cols)
                    + f"<td class='errtext'>{esc(err or '')}</td></tr>")
    return f'<div class="scroll"><table class="items">{head}{"".join(body)}</table></div>'


# -- page ---------------------------------------------------------------------------------------------------
CSS = """
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d1f23;background:#f7f7f9}
header{background:#1f2937;color:#f9fafb;padding:12px 20px}
header h1{margin:0 0 4px 0;font-size:18px}
.facts span{margin-right:16px}.facts .k{color:#9ca3af;margin-right:4px}.facts .bad{color:#fca5a5;font-weight:600}
main{padding:8px 20px 40px 20px;max-width:1200px}
section{background:#fff;border:1px solid #e3e5ea;border-radius:8px;padding:10px 16px;margin:12px 0}
h2{font-size:15px;margin:4px 0 10px 0}
table{border-collapse:collapse;font-size:13px;margin:4px 0 8px 0}
th,td{border-bottom:1px solid #eceef2;padding:3px 10px;text-align:left;vertical-align:top}
th{background:#f3f4f6;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{position:relative;width:160px;height:10px;background:#eceef2;border-radius:3px;margin-top:4px}
.bar .fill{position:absolute;left:0;top:0;bottom:0;background:#93c5fd;border-radius:3px}
.bar .ci{position:absolute;top:4px;height:2px;background:#1e3a8a}
tr.err td{background:#fdecea}.errtext{color:#c62828;max-width:420px;word-break:break-word}
.pos{color:#15803d;font-weight:600}.neg{color:#c62828;font-weight:600}.muted{color:#6b7280}
.plot{max-width:100%;height:auto;display:block;margin:6px 0}
.plots{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.note{color:#6b7280;font-size:13px}
.scroll{overflow-x:auto}
table.items td:first-child{white-space:nowrap}
pre{background:#fbfbfc;border:1px solid #e3e5ea;border-radius:6px;padding:8px;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap}
ul.errors li{color:#c62828}
details>summary{cursor:pointer}
"""


def page(title: str, header_html: str, body_html: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'{csp_meta()}<meta name="viewport" content="width=device-width,initial-scale=1"><title>{esc(title)}</title>'
            f"<style>{CSS}</style></head><body><header>{header_html}</header><main>{body_html}</main></body></html>\n")


def facts_html(pairs: list[tuple[str, Any]], bad: tuple[str, ...] = ("errors",)) -> str:
    return '<div class="facts">' + "".join(
        f'<span class="{"bad" if k in bad and v else ""}"><span class="k">{esc(k)}</span>{esc(v)}</span>'
        for k, v in pairs) + "</div>"


def render_html_report(summary: dict[str, Any], rows: list[dict[str, Any]], config_text: str = "",
                       status: dict[str, Any] | None = None) -> str:
    status = status or {}
    metrics = summary.get("metrics") or {}
    by_tag = summary.get("by_tag") or {}
    headline = summary.get("headline") or []
    facts = [("task", summary.get("task")), ("config", summary.get("config")), ("model", summary.get("model")),
             ("items", f"{summary.get('n_ok', 0)}/{summary.get('n_items', 0)} ok"),
             ("errors", summary.get("n_errors", 0))]
    if status.get("status"):
        facts.append(("status", status["status"]))
    for key in ("started", "interrupted", "resumed", "finished"):
        if status.get(key):
            facts.append((key, status[key]))
    header = f"<h1>Run {esc(summary.get('run_id', ''))}</h1>{facts_html(facts)}"
    parts = []
    if metrics:
        parts.append('<section id="metrics"><h2>Metrics (mean, 95% bootstrap CI over items; ↓ lower is better)</h2>'
                     f'{metrics_table(metrics, headline, summary.get("lower_is_better") or [])}'
                     f'{safe_plot(plot_metrics, metrics, headline, alt="metric means with CI")}'
                     "</section>")
    else:
        parts.append('<section id="metrics"><h2>Metrics</h2><p class="note">No scored items yet.</p></section>')
    parts += [section_html(sec) for sec in summary.get("sections") or []]
    if by_tag:
        names = [m for m in ordered_metrics(metrics, headline) if m in headline][:8] or ordered_metrics(metrics)[:8]
        parts.append('<section id="by-tag"><h2>By tag</h2>' + by_tag_table(by_tag, headline)
                     + safe_plot(plot_grouped, by_tag, names, "Per tag (mean, 95% CI)", alt="metrics per tag")
                     + "</section>")
    plots = safe_plot(plot_latency, rows, alt="latency histogram") + safe_plot(plot_tokens, rows, alt="tokens")
    parts.append(f'<section id="cost"><h2>Cost per item</h2>{cost_table(summary)}<div class="plots">{plots}</div>'
                 "</section>")
    errors = summary.get("errors") or []
    if errors:
        parts.append('<section id="errors"><h2>Errors (' + str(len(errors)) + ')</h2><ul class="errors">'
                     + "".join(f"<li><code>{esc(e.get('id'))}</code>: {esc(e.get('error'))}</li>" for e in errors)
                     + "</ul></section>")
    if rows:
        parts.append(f'<section id="items"><h2>Items ({len(rows)})</h2>{items_table(rows, summary)}'
                     '<p class="note">Run trees: <code>evidex trace RUN_DIR --item ID</code> or '
                     '<code>--html trace.html</code>.</p></section>')
    if config_text:
        parts.append(f'<section id="config"><details><summary><b>Resolved config</b></summary><pre>{esc(config_text)}'
                     "</pre></details></section>")
    return page(f"evidex run {summary.get('run_id', '')}", header, "".join(parts))


def write_html_report(run_dir: str | Path, out: str | Path | None = None, *, summary: dict[str, Any] | None = None,
                      rows: list[dict[str, Any]] | None = None, status: dict[str, Any] | None = None) -> Path:
    """Write ``report.html`` (or ``out``) for a run folder and return its path. ``status``: the run's status
    fields (default: read from ``run.json``); the runner passes the final status it is about to record."""
    run_dir = Path(run_dir)
    if summary is None or rows is None:
        loaded_summary, loaded_rows = load_run(run_dir)
        summary = summary if summary is not None else loaded_summary
        rows = rows if rows is not None else loaded_rows
    config_path = run_dir / "config.yaml"
    config_text = config_path.read_text(encoding="utf-8") if config_path.is_file() else ""
    if status is None:
        status = read_status(run_dir)
    out = Path(out) if out is not None else run_dir / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(render_html_report(summary, rows, config_text, status), encoding="utf-8")
    tmp.replace(out)
    return out

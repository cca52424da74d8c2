"""Compare run folders side by side: ``evidex report RUN_A RUN_B [...] [--html OUT]``
(also ``python -m evidex.evaluators.compare``).

For every metric the runs share: each run's mean with its 95% bootstrap CI (from ``metrics.json``), and for every
run after the first the delta against the first (B − A) with a 95% CI. When the runs share item ids the CI is a
*paired* bootstrap over the shared items (resample items, recompute both sides on the same sample — micro
P/R/F1 are recomputed from the resampled tp/fp/fn counts); otherwise an unpaired bootstrap (each run resampled
on its own), marked ``u``. A ``*`` marks a CI that excludes 0. Latency and tokens are compared the same way.
With one run it prints that run's metrics (and ``--html`` writes its report.html).

Examples:
  evidex report runs/20261122-002021-mixed runs/20261122-103000-mixed
  evidex report runs/A runs/B runs/C --html compare.html --metrics recovery_f1_micro,discard_f1_micro
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evidex.evaluators.report_html import PALETTE, esc, facts_html, load_run, new_figure, page, plot_grouped, safe_plot
from evidex.evaluators.summary import finite, metric_rows, ordered_metrics
from evidex.tools.cli_help import plain_help
from evidex.tools.safe_text import terminal_text as _term

COST_METRICS = ("latency_s", "total_tokens")
PRF_METRIC = re.compile(r"^(?P<prefix>.+)_(?P<which>precision|recall|f1)_micro$")
ITEM_ACCURACY_METRIC = re.compile(r"^(?P<prefix>.+)_item_accuracy_micro$")


@dataclass
class Run:
    path: Path
    label: str
    summary: dict[str, Any]
    rows: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def ok_rows(self) -> dict[str, dict[str, Any]]:
        return {str(r["id"]): r for r in self.rows if r.get("error") is None and r.get("prediction") is not None}


@dataclass
class Delta:
    delta: float
    ci_low: float
    ci_high: float
    n: int
    paired: bool

    @property
    def significant(self) -> bool:
        return finite(self.ci_low) and finite(self.ci_high) and (self.ci_low > 0 or self.ci_high < 0)


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
    import yaml

    runs, labels = [], set()
    for p in paths:
        path = Path(p)
        summary, rows = load_run(path)
        label = str(summary.get("run_id") or path.name)
        if label in labels:
            label = f"{label} ({len(runs) + 1})"
        labels.add(label)
        cfg = {}
        if (path / "config.yaml").is_file():
            cfg = yaml.safe_load((path / "config.yaml").read_text(encoding="utf-8")) or {}
        runs.append(Run(path=path, label=label, summary=summary, rows=rows, config=cfg))
    return runs


# -- per-item statistics ------------------------------------------------------------------------------------
def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _prf(which: str) -> Callable[[np.ndarray], np.ndarray]:
    def reduce(sums: np.ndarray) -> np.ndarray:  # (..., 3) tp, fp, fn summed over items
        tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
        return {"precision": _div(tp, tp + fp), "recall": _div(tp, tp + fn),
                "f1": _div(2 * tp, 2 * tp + fp + fn)}[which]
    return reduce


def metric_spec(name: str):
    """(extract(row) -> value | None, reduce(resampled values, axis) -> statistic, is_sum) for a metric."""
    prf = PRF_METRIC.match(name)
    if prf:  # micro P/R/F1, recomputed from the resampled <prefix>_tp/_fp/_fn counts
        keys = [f"{prf['prefix']}_{c}" for c in ("tp", "fp", "fn")]

        def extract(row, keys=keys):
            m = row.get("metrics") or {}
            return tuple(float(m[k]) for k in keys) if all(k in m for k in keys) else None
        return extract, _prf(prf["which"]), True
    acc = ITEM_ACCURACY_METRIC.match(name)
    if acc:  # accuracy pooled over sub-items: <prefix>_n_correct of <prefix>_n_items, as micro recall
        n_key, ok_key = f"{acc['prefix']}_n_items", f"{acc['prefix']}_n_correct"

        def extract(row):
            m = row.get("metrics") or {}
            if n_key not in m:
                return None
            n, ok = float(m[n_key]), float(m[ok_key])
            return (ok, 0.0, n - ok)
        return extract, _prf("recall"), True
    if name == "latency_s":
        def extract(row):
            v = row.get("latency_s")
            return float(v) if finite(v) else None
    elif name == "total_tokens":
        def extract(row):
            tok = row.get("tokens") or {}
            return float((tok.get("prompt") or 0) + (tok.get("completion") or 0))
    else:
        def extract(row):
            v = (row.get("metrics") or {}).get(name)
            return float(v) if finite(v) else None
    return extract, (lambda arr: np.nanmean(arr, axis=-1) if arr.size else np.nan), False


def _values(run: Run, name: str, rows: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    extract, _, _ = metric_spec(name)
    source = rows if rows is not None else (run.ok_rows if name not in COST_METRICS
                                            else {str(r["id"]): r for r in run.rows})
    out = {}
    for rid, row in source.items():
        v = extract(row)
        if v is not None:
            out[rid] = v
    return out


def _stat(values: np.ndarray, reduce, is_sum: bool) -> np.ndarray:
    """Statistic over the last item axis; ``values`` is (..., n) or (..., n, 3) for count metrics."""
    if is_sum:
        return reduce(values.sum(axis=-2))
    with np.errstate(all="ignore"):
        return reduce(values)


def _percentiles(stats: np.ndarray, alpha: float) -> tuple[float, float]:
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def compare_metric(a: Run, b: Run, name: str, *, n_boot: int = 2000, alpha: float = 0.05,
                   seed: int = 0) -> Delta | None:
    """Delta (b − a) with a bootstrap CI: paired over shared item ids (≥ 2), else unpaired."""
    _, reduce, is_sum = metric_spec(name)
    va, vb = _values(a, name), _values(b, name)
    if not va or not vb:
        return None
    rng = np.random.default_rng(seed)
    shared = sorted(set(va) & set(vb))
    if len(shared) >= 2:
        xa = np.asarray([va[i] for i in shared], dtype=float)
        xb = np.asarray([vb[i] for i in shared], dtype=float)
        point = float(_stat(xb, reduce, is_sum) - _stat(xa, reduce, is_sum))
        idx = rng.integers(0, len(shared), size=(n_boot, len(shared)))
        diffs = _stat(xb[idx], reduce, is_sum) - _stat(xa[idx], reduce, is_sum)
        lo, hi = _percentiles(np.asarray(diffs, dtype=float), alpha)
        return Delta(point, lo, hi, len(shared), True)
    xa = np.asarray(list(va.values()), dtype=float)
    xb = np.asarray(list(vb.values()), dtype=float)
    point = float(_stat(xb, reduce, is_sum) - _stat(xa, reduce, is_sum))
    ia = rng.integers(0, len(xa), size=(n_boot, len(xa)))
    ib = rng.integers(0, len(xb), size=(n_boot, len(xb)))
    diffs = _stat(xb[ib], reduce, is_sum) - _stat(xa[ia], reduce, is_sum)
    lo, hi = _percentiles(np.asarray(diffs, dtype=float), alpha)
    return Delta(point, lo, hi, min(len(xa), len(xb)), False)


def cost_summary(run: Run, name: str, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    from evidex.evaluators.stats import summarize

    vals = list(_values(run, name).values())
    return summarize(vals, n_boot=n_boot, seed=seed).model_dump() if vals else {}


def compare_runs(runs: list[Run], metrics: Sequence[str] | None = None, *, n_boot: int = 2000,
                 alpha: float = 0.05, seed: int = 0) -> dict[str, Any]:
    """{"runs": [...], "metrics": [{"name", "summaries": [per run], "deltas": [None, Delta, ...]}], "config_diff"}."""
    names = list(metrics) if metrics else _shared_metric_names(runs)
    table = []
    for name in list(names) + [c for c in COST_METRICS if not metrics]:
        if name in COST_METRICS:
            summaries = [cost_summary(r, name, n_boot, seed) for r in runs]
        else:
            summaries = [(r.summary.get("metrics") or {}).get(name) or {} for r in runs]
        deltas = [None] + [compare_metric(runs[0], r, name, n_boot=n_boot, alpha=alpha, seed=seed) for r in runs[1:]]
        table.append({"name": name, "summaries": summaries, "deltas": deltas})
    return {"runs": runs, "metrics": table, "config_diff": config_diff(runs), "lower_is_better": lower_is_better(runs)}


def _shared_metric_names(runs: list[Run]) -> list[str]:
    union: dict[str, int] = {}
    for r in runs:
        for m in (r.summary.get("metrics") or {}):
            union[m] = union.get(m, 0) + 1
    shared = {m: 1 for m, c in union.items() if c == len(runs)} or {m: 1 for m in union}
    return ordered_metrics(shared, runs[0].summary.get("headline") or [])


def lower_is_better(runs: list[Run]) -> set[str]:
    """Metrics any run's family marks lower-is-better, plus cost."""
    return {m for r in runs for m in (r.summary.get("lower_is_better") or [])} | set(COST_METRICS)


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def config_diff(runs: list[Run]) -> list[tuple[str, list[Any]]]:
    """Config keys whose values differ between the runs (name/description excluded)."""
    flats = [_flatten(r.config) for r in runs]
    keys = sorted({k for f in flats for k in f} - {"name", "description", "run.out"})
    return [(k, [f.get(k, "—") for f in flats]) for k in keys if len({repr(f.get(k, "—")) for f in flats}) > 1]


# -- terminal -----------------------------------------------------------------------------------------------
def _fmt_summary(s: dict[str, Any]) -> str:
    if not s or not finite(s.get("mean")):
        return "n/a"
    ci = f" [{s['ci_low']:.3f}, {s['ci_high']:.3f}]" if finite(s.get("ci_low")) and finite(s.get("ci_high")) else ""
    return f"{s['mean']:.3f}{ci}"


def _fmt_delta(d: Delta | None) -> str:
    if d is None or not finite(d.delta):
        return "n/a"
    ci = f" [{d.ci_low:+.3f}, {d.ci_high:+.3f}]" if finite(d.ci_low) else ""
    return f"{d.delta:+.3f}{ci}{'*' if d.significant else ''} n={d.n}{'' if d.paired else ' u'}"


def _direction(name: str, d: Delta | None, lower_better: set[str]) -> int:
    """+1 better, -1 worse, 0 not significant."""
    if d is None or not d.significant:
        return 0
    sign = 1 if d.delta > 0 else -1
    return -sign if name in lower_better else sign


def print_comparison(result: dict[str, Any], console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    runs: list[Run] = result["runs"]
    info = Table(title="Runs", title_justify="left")
    for col in ("", "run", "task", "config", "model", "items", "errors"):
        info.add_column(col)
    for i, r in enumerate(runs):
        s = r.summary
        info.add_row(chr(65 + i) if i < 26 else str(i), *[_term(v) for v in (
            r.label, s.get("task", ""), s.get("config", ""), s.get("model", ""), s.get("n_items", ""),
            s.get("n_errors", ""))])
    console.print(info)
    tasks = {r.summary.get("task") for r in runs}
    if len(tasks) > 1:
        console.print(f"[yellow]runs are of different tasks ({_term(', '.join(map(str, tasks)))}): comparing shared "
                      "metrics; item ids rarely match, so deltas are unpaired[/yellow]")
    if result["config_diff"]:
        diff = Table(title="Config differences", title_justify="left")
        diff.add_column("key")
        for i, _ in enumerate(runs):
            diff.add_column(chr(65 + i) if i < 26 else str(i))
        for key, values in result["config_diff"]:
            diff.add_row(_term(key), *[_term(v) for v in values])
        console.print(diff)
    table = Table(title="Metrics: mean [95% CI]; Δ vs A [95% CI] (* CI excludes 0, u unpaired, ↓ lower is better)",
                  title_justify="left")
    table.add_column("metric", no_wrap=True)
    for i, r in enumerate(runs):
        table.add_column(f"{chr(65 + i) if i < 26 else i}", justify="right")
        if i:
            table.add_column(f"Δ {chr(65 + i) if i < 26 else i}−A", justify="right")
    for entry in result["metrics"]:
        name = entry["name"]
        cells = []
        for i, s in enumerate(entry["summaries"]):
            cells.append(_fmt_summary(s))
            if i:
                d = entry["deltas"][i]
                text = _fmt_delta(d)
                style = {1: "green", -1: "red", 0: ""}[_direction(name, d, result["lower_is_better"])]
                cells.append(f"[{style}]{text}[/{style}]" if style else text)
        table.add_row(name + (" ↓" if name in result["lower_is_better"] else ""), *cells)
    console.print(table)


def print_single(run: Run, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    s = run.summary
    table = Table(title=_term(f"{run.label} · task {s.get('task')} · model {s.get('model')} · "
                              f"{s.get('n_ok', 0)}/{s.get('n_items', 0)} ok, {s.get('n_errors', 0)} errors"),
                  title_justify="left")
    for col in ("metric", "mean [95% CI]", "n", "NaN"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for m, v, n, nan in metric_rows(s.get("metrics") or {}, s.get("headline") or []):
        table.add_row(m, v, str(n), str(nan))
    console.print(table)


# -- HTML ---------------------------------------------------------------------------------------------------
def plot_deltas(result: dict[str, Any]):
    runs: list[Run] = result["runs"]
    entries = [e for e in result["metrics"] if e["name"] not in COST_METRICS
               and any(d is not None and finite(d.delta) for d in e["deltas"][1:])]
    if not entries or len(runs) < 2:
        return None
    k = len(runs) - 1
    fig = new_figure(8, max(2.2, 0.3 * len(entries) * max(k, 1) * 0.8 + 1.2))
    ax = fig.add_subplot(111)
    base = list(range(len(entries)))[::-1]
    for j in range(1, len(runs)):
        ys, xs, lo, hi = [], [], [], []
        for yi, e in zip(base, entries):
            d = e["deltas"][j]
            if d is None or not finite(d.delta):
                continue
            ys.append(yi + (k - j - (k - 1) / 2) * (0.7 / max(k, 1)))
            xs.append(d.delta)
            lo.append(max(d.delta - d.ci_low, 0) if finite(d.ci_low) else 0)
            hi.append(max(d.ci_high - d.delta, 0) if finite(d.ci_high) else 0)
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", color=PALETTE[j % len(PALETTE)], capsize=3, markersize=4,
                    label=f"{chr(65 + j)} − A ({runs[j].label})")
    ax.axvline(0, color="#111", linewidth=0.8)
    ax.set_yticks(base, labels=[e["name"] for e in entries], fontsize=8)
    ax.set_title("Δ vs A (95% bootstrap CI; paired on shared items when possible)", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)
    return fig


def render_comparison_html(result: dict[str, Any]) -> str:
    runs: list[Run] = result["runs"]
    lower = result["lower_is_better"]
    letters = [chr(65 + i) if i < 26 else str(i) for i in range(len(runs))]
    rows = "".join(
        f"<tr><td><b>{letters[i]}</b></td><td>{esc(r.label)}</td><td>{esc(r.summary.get('task', ''))}</td>"
        f"<td>{esc(r.summary.get('config', ''))}</td><td>{esc(r.summary.get('model', ''))}</td>"
        f"<td class='num'>{esc(r.summary.get('n_ok', ''))}/{esc(r.summary.get('n_items', ''))}</td>"
        f"<td class='num'>{esc(r.summary.get('n_errors', ''))}</td><td><code>{esc(r.path)}</code></td></tr>"
        for i, r in enumerate(runs))
    runs_html = ("<section><h2>Runs</h2><table><tr><th></th><th>run</th><th>task</th><th>config</th><th>model</th>"
                 f"<th>ok/items</th><th>errors</th><th>folder</th></tr>{rows}</table></section>")
    diff_html = ""
    if result["config_diff"]:
        drows = "".join(f"<tr><td><code>{esc(k)}</code></td>" + "".join(f"<td>{esc(v)}</td>" for v in vals) + "</tr>"
                        for k, vals in result["config_diff"])
        diff_html = ("<section><h2>Config differences</h2><table><tr><th>key</th>"
                     + "".join(f"<th>{x}</th>" for x in letters) + f"</tr>{drows}</table></section>")
    head = "<tr><th>metric</th>" + "".join(
        f"<th>{x}</th>" + (f"<th>Δ {x}−A</th>" if i else "") for i, x in enumerate(letters)) + "</tr>"
    body = []
    for e in result["metrics"]:
        cells = []
        for i, s in enumerate(e["summaries"]):
            cells.append(f"<td class='num'>{esc(_fmt_summary(s))}</td>")
            if i:
                d = e["deltas"][i]
                cls = {1: "pos", -1: "neg", 0: "muted" if d is None or not d.significant else ""}[
                    _direction(e["name"], d, lower)]
                cells.append(f"<td class='num {cls}'>{esc(_fmt_delta(d))}</td>")
        body.append(f"<tr><td>{esc(e['name'])}{' ↓' if e['name'] in lower else ''}</td>{''.join(cells)}</tr>")
    table_html = ("<section><h2>Metrics: mean [95% CI]; Δ vs A [95% CI]</h2>"
                  "<p class='note'>* CI excludes 0 · u = unpaired (no shared item ids) · n = items used · ↓ lower is "
                  "better · green/red = significantly better/worse than A</p>"
                  f"<div class='scroll'><table>{head}{''.join(body)}</table></div></section>")
    groups = {f"{letters[i]} {r.label}": (r.summary.get("metrics") or {}) for i, r in enumerate(runs)}
    names = [e["name"] for e in result["metrics"] if e["name"] not in COST_METRICS][:12]
    plots = (safe_plot(plot_grouped, groups, names, "Means per run (95% CI)", alt="means per run")
             + safe_plot(plot_deltas, result, alt="deltas vs A"))
    plots_html = f"<section><h2>Plots</h2>{plots}</section>" if plots else ""
    header = f"<h1>Comparison of {len(runs)} runs</h1>" + facts_html(
        [(letters[i], r.label) for i, r in enumerate(runs)])
    return page("evidex run comparison", header, runs_html + diff_html + table_html + plots_html)


def write_comparison_html(result: dict[str, Any], out: str | Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_comparison_html(result), encoding="utf-8")
    return out


# -- CLI ----------------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None, prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders; the first is the baseline A")
    p.add_argument("--html", type=Path, metavar="OUT.html", help="write an HTML comparison (one run: its report)")
    p.add_argument("--metrics", help="comma-separated metric names (default: every metric the runs share)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv: list[str] | None = None, prog: str = "evidex report", console=None) -> int:
    from rich.console import Console

    args = parse_args(argv, prog)
    console = console or Console()
    try:
        runs = load_runs(args.runs)
    except (FileNotFoundError, ValueError) as exc:
        from rich.markup import escape
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    if len(runs) == 1:
        print_single(runs[0], console)
        if args.html:
            from evidex.evaluators.report_html import write_html_report
            console.print(f"wrote {write_html_report(runs[0].path, args.html)}")
        return 0
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    result = compare_runs(runs, metrics, n_boot=args.n_boot, seed=args.seed)
    print_comparison(result, console)
    if args.html:
        console.print(f"wrote {write_comparison_html(result, args.html)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m evidex.evaluators.compare"))

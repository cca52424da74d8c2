"""report.html for a run folder (tables + inline matplotlib PNGs) and the run comparison
(``python -m evaluators.report RUN_A RUN_B``): paired bootstrap deltas on shared items, terminal table, HTML.
Run folders are synthetic (rows written here, summarized by ``evaluators.summary.summarize_run``)."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).is_file()), None)
EXTERNAL = re.compile(r"""<(script|link|img|iframe)[^>]+(src|href)\s*=\s*["']?(https?:)?//""", re.I)
N = 16


def _rows(shift: float, seed: int, ids: list[str], error_id: str | None = None) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i, rid in enumerate(ids):
        base = 0.4 + 0.4 * rng.random()  # the same per-item difficulty for every run with this seed
        tp = int(2 + (i % 3) + (1 if shift > 0 else 0))
        fp, fn = int(i % 2), int(2 - (i % 3 == 0))
        metrics = {"explanation_similarity": min(base + shift, 1.0), "citation_validity": 1.0 if i % 4 else 0.5,
                   "recovery_tp": float(tp), "recovery_fp": float(fp), "recovery_fn": float(fn),
                   "recovery_precision": tp / (tp + fp), "recovery_recall": tp / (tp + fn),
                   "recovery_f1": 2 * tp / (2 * tp + fp + fn)}
        row = {"id": rid, "task": "mixed", "tags": ["mixed", "has_missing" if i % 2 else "has_wrong"],
               "input": {}, "prediction": {"id": rid}, "metrics": metrics, "error": None,
               "latency_s": round(1.0 + i * 0.1 + (0.5 if shift > 0 else 0.0), 3),
               "tokens": {"prompt": 300 + 10 * i, "completion": 40 + i}}
        if rid == error_id:
            row.update(prediction=None, metrics={}, error="RuntimeError: scripted failure")
        rows.append(row)
    return rows


def make_run(root: Path, name: str, rows: list[dict], overrides: list[str] | None = None,
             model: str = "scripted") -> Path:
    from evidex.evaluators.report import write_markdown_report
    from evidex.evaluators.summary import summarize_run
    from evidex.graphs.claims.family import CLAIM_COLUMNS, LOWER_IS_BETTER
    from evidex.graphs.config import dump_config
    from evidex.graphs.tasks import config_for_task

    path = root / name
    path.mkdir(parents=True)
    cfg = config_for_task("mixed", overrides or [])
    (path / "config.yaml").write_text(dump_config(cfg), encoding="utf-8")
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary = summarize_run(rows, run_id=name, task="mixed", config_name="mixed", model=model, family="civic",
                            headline=CLAIM_COLUMNS, lower_is_better=sorted(LOWER_IS_BETTER))
    (path / "metrics.json").write_text(json.dumps(summary), encoding="utf-8")
    (path / "run.json").write_text(json.dumps({"run_id": name, "status": "complete",
                                               "started": "2026-11-22T10:00:00+00:00"}))
    write_markdown_report(path / "report.md", summary, rows)
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("report-runs")
    ids = [f"mixed-{i:03d}" for i in range(N)]
    a = make_run(root, "20261122-100000-mixed", _rows(0.0, 1, ids, error_id="mixed-005"))
    b = make_run(root, "20261122-110000-mixed", _rows(0.1, 1, ids), overrides=["retrieval.k=8"])
    c = make_run(root, "20261122-120000-mixed", _rows(0.1, 2, [f"other-{i}" for i in range(N)]))
    return a, b, c


def _console():
    from rich.console import Console

    buf = io.StringIO()
    return Console(file=buf, width=240, color_system=None), buf


def _assert_offline(text: str) -> None:
    assert not EXTERNAL.search(text), "HTML must not load anything from the network"
    assert "@import" not in text and "url(http" not in text and "<script src" not in text


# -- report.html --------------------------------------------------------------------------------------------
def test_write_html_report(runs):
    from evidex.evaluators.report_html import write_html_report

    a = runs[0]
    out = write_html_report(a)
    assert out == a / "report.html"
    text = out.read_text(encoding="utf-8")
    _assert_offline(text)
    pngs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(pngs) >= 4  # metrics, by tag, latency, tokens
    import base64
    assert all(base64.b64decode(p)[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    for needle in ("recovery_f1_micro", "explanation_similarity", "has_missing", "has_wrong", "mixed-005",
                   "RuntimeError: scripted failure", "latency (s)", "prompt tokens", "retrieval:",
                   "20261122-100000-mixed", "95% CI"):
        assert needle in text, needle


def test_report_recomputes_missing_metrics_json(runs, tmp_path):
    from evidex.evaluators.report_html import write_html_report

    copy = tmp_path / "run"
    shutil.copytree(runs[1], copy)
    (copy / "metrics.json").unlink()
    text = write_html_report(copy, out=tmp_path / "r.html").read_text(encoding="utf-8")
    assert "explanation_similarity" in text and "data:image/png;base64," in text
    with pytest.raises(FileNotFoundError, match="no such run folder"):
        write_html_report(tmp_path / "missing")


def test_report_from_finalize_run_data(runs, tmp_path):
    """What graphs.runner.finalize_run passes: the summary and rows it already has (no re-reading)."""
    from evidex.evaluators.report_html import write_html_report
    from evidex.tools.runfolder import read_rows

    copy = tmp_path / "run"
    shutil.copytree(runs[0], copy)
    summary = json.loads((copy / "metrics.json").read_text())
    rows = read_rows(copy / "results.jsonl")
    (copy / "metrics.json").unlink()
    (copy / "results.jsonl").unlink()
    text = write_html_report(copy, summary=summary, rows=rows).read_text(encoding="utf-8")
    assert "mixed-005" in text and "recovery_f1_micro" in text and not (copy / "report.html.tmp").exists()


def test_report_with_no_scored_items(tmp_path):
    from evidex.evaluators.report_html import write_html_report

    rows = [{"id": "x", "task": "mixed", "tags": ["mixed"], "prediction": None, "metrics": {},
             "error": "ValueError: boom", "latency_s": 0.5, "tokens": {"prompt": 0, "completion": 0}}]
    run = make_run(tmp_path, "20261122-000000-mixed", rows)
    text = write_html_report(run).read_text(encoding="utf-8")
    assert "No scored items yet" in text and "ValueError: boom" in text


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_report_renders_in_chromium(runs, tmp_path):
    from evidex.evaluators.report_html import write_html_report

    out = write_html_report(runs[0], out=tmp_path / "report.html")
    png = tmp_path / "report.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}", "--window-size=1280,1400",
                    out.as_uri()], capture_output=True, timeout=90)
    assert png.is_file() and png.stat().st_size > 30_000


# -- comparison ---------------------------------------------------------------------------------------------
def test_paired_delta_on_shared_items(runs):
    from evidex.evaluators.compare import compare_metric, load_runs

    a, b, c = load_runs(runs)
    d = compare_metric(a, b, "explanation_similarity")
    assert d.paired and d.n == N - 1  # the errored item of A is not paired
    assert d.delta == pytest.approx(0.1, abs=0.02)
    assert d.significant and 0 < d.ci_low <= d.delta <= d.ci_high < 0.2
    # the same runs without shared ids: unpaired, much wider CI
    u = compare_metric(a, c, "explanation_similarity")
    assert not u.paired and (u.ci_high - u.ci_low) > 3 * (d.ci_high - d.ci_low)


def test_micro_delta_recomputed_from_counts(runs):
    from evidex.evaluators.compare import compare_metric, load_runs
    from evidex.evaluators.stats import micro_prf

    a, b, _ = load_runs(runs)
    shared = sorted(set(a.ok_rows) & set(b.ok_rows))

    def micro(run):
        return micro_prf([tuple(run.ok_rows[i]["metrics"][f"recovery_{k}"] for k in ("tp", "fp", "fn"))
                          for i in shared])

    d = compare_metric(a, b, "recovery_f1_micro")
    assert d.paired and d.delta == pytest.approx(micro(b).f1 - micro(a).f1)
    assert d.ci_low <= d.delta <= d.ci_high
    lat = compare_metric(a, b, "latency_s")
    assert lat.paired and lat.n == N and lat.delta == pytest.approx(0.5)


def test_compare_cli_terminal_and_html(runs, tmp_path):
    from evidex.evaluators.compare import main

    console, buf = _console()
    out = tmp_path / "compare.html"
    assert main([str(runs[0]), str(runs[1]), "--html", str(out), "--n-boot", "500"], console=console) == 0
    text = buf.getvalue()
    for needle in ("Δ B−A", "explanation_similarity", "recovery_f1_micro", "latency_s ↓", "retrieval.k", "*",
                   "20261122-100000-mixed", "20261122-110000-mixed", f"n={N - 1}"):
        assert needle in text, needle
    html = out.read_text(encoding="utf-8")
    _assert_offline(html)
    assert html.count("data:image/png;base64,") == 2 and "Config differences" in html and "retrieval.k" in html
    assert re.search(r"class=.num pos.>\+0\.1", html)  # the significant improvement is highlighted


def test_compare_three_runs_and_single(runs, tmp_path):
    from evidex.evaluators.compare import main

    console, buf = _console()
    assert main([str(r) for r in runs] + ["--metrics", "explanation_similarity"], console=console) == 0
    text = buf.getvalue()
    assert "Δ C−A" in text and " u" in text  # C shares no item ids with A
    console, buf = _console()
    out = tmp_path / "single.html"
    assert main([str(runs[0]), "--html", str(out)], console=console) == 0
    assert "explanation_similarity" in buf.getvalue() and "data:image/png;base64," in out.read_text()
    console, buf = _console()
    assert main([str(tmp_path / "nope"), str(runs[0])], console=console) == 2
    assert "no such run folder" in buf.getvalue()


def test_module_entry_points(runs):
    proc = subprocess.run([sys.executable, "-m", "evidex.evaluators.compare", str(runs[0]), str(runs[1]), "--n-boot", "200"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Δ B−A" in proc.stdout
    import evidex.evaluators.report as report

    if not hasattr(report, "main"):
        pytest.skip("evaluators/report.py has no main() yet (lead: delegate to evaluators.compare.main)")
    proc = subprocess.run([sys.executable, "-m", "evidex.evaluators.report", str(runs[0]), str(runs[1]), "--n-boot", "200"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Δ B−A" in proc.stdout

"""Trace viewer: ``python -m graphs.trace`` (rich tree, item list, --last) and the self-contained HTML viewer,
checked in headless Chromium when it is installed. The run folder is made here with a scripted model through
``graphs.runner.run_one`` (the runner's own row/trace writer): one clean item and one whose writer call fails."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "",
                             shutil.which("google-chrome") or "") if p and Path(p).is_file()), None)
GOOD, BAD = "trace-good", "trace-bad"


class FakeEmbedder:
    """Constant vectors: every cosine is 1, so nothing needs MiniLM."""

    model_name = "fake"

    def encode(self, texts):
        return np.full((len(texts), 4), 0.5, dtype="float32")


def _item(item_id: str, claim: str):
    from evidex.tools.claims import ClaimInput, Gold, TaskItem

    inp = ClaimInput(id=item_id, task="baseline", claims={"claim": {"text": claim}}, evidence=[
        {"id": "E1", "text": "Vemurafenib improved response rates in BRAF V600E melanoma in a phase 3 trial."},
        {"id": "E2", "text": "BRAF V600E melanoma patients treated with vemurafenib had longer survival."}])
    return TaskItem(input=inp, gold=Gold(explanations={"claim": "Vemurafenib helps BRAF V600E melanoma [E1]."}))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, kit) -> Path:
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs import build_graph, config_for_task
    from evidex.graphs.config import dump_config
    from evidex.graphs.registry import Resources, get_family
    from evidex.graphs.runner import finalize_run, run_one

    bad_claim = "KRAS G12C predicts response to sotorasib"

    def hook(call):
        if call.role == "reasons" and bad_claim in call.claims.values():
            raise RuntimeError("scripted writer failure for the trace test")
        return None

    cfg = config_for_task("baseline", ["judge.strategy=llm", "metrics.similarity=false"])
    emb = FakeEmbedder()
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=kit.Responder(hook=hook)), embedder=emb)
    root = tmp_path_factory.mktemp("runs")
    older = root / "20200101-000000-old"
    older.mkdir()
    (older / "run.json").write_text(json.dumps({"run_id": older.name, "started": "2020-01-01T00:00:00+00:00"}))
    path = root / "20261122-120000-baseline"
    path.mkdir()
    (path / "config.yaml").write_text(dump_config(cfg), encoding="utf-8")
    status = {"run_id": path.name, "task": "baseline", "config": cfg.name, "status": "complete", "n_items": 2,
              "started": "2026-11-22T12:00:00+00:00", "model": "scripted"}
    (path / "run.json").write_text(json.dumps(status))
    rows = [run_one(graph, item, cfg, get_family(cfg.family), path, Resources(embedder=emb))
            for item in (_item(GOOD, "BRAF V600E predicts response to vemurafenib"), _item(BAD, bad_claim))]
    (path / "results.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in rows), encoding="utf-8")
    finalize_run(path, cfg)
    return path


def _console():
    from rich.console import Console

    buf = io.StringIO()
    return Console(file=buf, width=220, color_system=None, force_terminal=False), buf


def _run(argv):
    from evidex.graphs.trace import main

    console, buf = _console()
    code = main([str(a) for a in argv], console=console)
    return code, buf.getvalue()


def test_run_folder_has_traces(run_dir):
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [GOOD, BAD]
    assert rows[0]["error"] is None and "RuntimeError" in rows[1]["error"]
    assert (run_dir / "traces" / f"{GOOD}.json").is_file() and (run_dir / "traces" / f"{BAD}.json").is_file()


def test_lists_runs_and_last(run_dir):
    code, out = _run(["--runs-dir", run_dir.parent])
    assert code == 0 and run_dir.name in out and "20200101-000000-old" in out
    code, out = _run(["--runs-dir", run_dir.parent, "--last"])
    assert code == 0
    assert GOOD in out and BAD in out and "✗" in out and "RuntimeError" in out
    assert "baseline" in out  # task in the title


def test_prints_item_tree(run_dir):
    code, out = _run([run_dir, "--item", GOOD])
    assert code == 0
    for name in ("baseline", "judge_given", "judge_given[E1]", "findings", "write", "write_reasons[claim]",
                 "finalize"):
        assert name in out, name
    assert "llm" in out and "chain" in out and "→" in out and " tok" in out
    assert "✗" not in out
    code, out = _run([run_dir, "--item", BAD, "--io"])
    assert code == 0
    assert "✗ write" in out and "RuntimeError: scripted writer failure" in out
    assert "in:" in out and "out:" in out


def test_errors_are_clear(run_dir, tmp_path):
    code, out = _run([run_dir, "--item", "nope"])
    assert code == 2 and "No item 'nope'" in out and GOOD in out
    code, out = _run([tmp_path])
    assert code == 2 and "not a run folder" in out
    code, out = _run(["--runs-dir", tmp_path / "missing", "--last"])
    assert code == 2 and "No run folders" in out


def test_single_trace_file_and_depth(run_dir):
    code, out = _run([run_dir / "traces" / f"{GOOD}.json", "--depth", "1"])
    assert code == 0 and "judge_given" in out and "judge_given[E1]" not in out and "child runs" in out


EXTERNAL = re.compile(r"""<(script|link|img|iframe)[^>]+(src|href)\s*=\s*["']?(https?:)?//""", re.I)


def _html(run_dir: Path, tmp_path: Path, *extra) -> tuple[Path, str]:
    out = tmp_path / "trace.html"
    code, _ = _run([run_dir, "--html", out, *extra])
    assert code == 0 and out.is_file()
    return out, out.read_text(encoding="utf-8")


def test_html_is_self_contained(run_dir, tmp_path):
    out, text = _html(run_dir, tmp_path)
    assert not EXTERNAL.search(text), "HTML must not load anything from the network"
    assert "@import" not in text and "url(http" not in text
    for name in ("judge_given[E1]", "write_reasons[claim]", "finalize", GOOD, BAD, 'id="search"'):
        assert name in text, name
    assert 'class="node rt-chain err"' in text and "scripted writer failure" in text
    # LLM prompts are shown as role-tagged messages, not only as JSON
    assert 'class="msg system"' in text and 'class="msg human"' in text and 'class="msg ai"' in text
    _, one = _html(run_dir, tmp_path, "--item", GOOD)
    assert GOOD in one and BAD not in one


def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium) — "
                                              "browser rendering of the trace viewer not checked")
def test_html_renders_in_chromium(run_dir, tmp_path):
    out, _ = _html(run_dir, tmp_path)
    dom = _chromium(["--dump-dom", out.as_uri()], tmp_path).stdout
    assert "<input" in dom and 'id="search"' in dom
    for name in ("judge_given[E1]", "write_reasons[claim]", "findings", "finalize", BAD):
        assert name in dom, name
    assert "✗" in dom and "scripted writer failure" in dom
    total = re.search(r'id="count">(\d+) nodes<', dom)
    assert total and int(total.group(1)) > 10, "the script ran and counted the nodes"

    # the search box filters nodes (prefilled through ?q=, as a user typing would)
    dom = _chromium(["--dump-dom", out.as_uri() + "?q=judge_given%5BE2%5D"], tmp_path).stdout
    m = re.search(r'id="count">(\d+) of (\d+) nodes match', dom)
    assert m and int(m.group(1)) == 2 and int(m.group(2)) > 10, m and m.group(0)
    assert 'class="node rt-chain hidden"' in dom  # e.g. findings and write are filtered out
    dom = _chromium(["--dump-dom", out.as_uri() + "?errors=1"], tmp_path).stdout
    assert re.search(r'id="count">\d+ of \d+ nodes match, in 1 item', dom)

    png = tmp_path / "trace.png"
    _chromium([f"--screenshot={png}", "--window-size=1280,900", out.as_uri()], tmp_path)
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 20_000, "a blank page would compress to a few KB"


def test_module_entry_point(run_dir, tmp_path):
    out = tmp_path / "cli.html"
    proc = subprocess.run([sys.executable, "-m", "evidex.graphs.trace", str(run_dir), "--item", BAD, "--html", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "✗" in proc.stdout and "write" in proc.stdout and out.is_file()

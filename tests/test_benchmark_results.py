"""Benchmark result files name runs by run id and data by relative names, never by a machine's absolute paths;
``benchmarks/results`` keeps one file per benchmark family (one key per part), so it stays small."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import absolute_paths, write_results

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
MAX_FILES = 15


def test_results_folder_holds_at_most_15_files():
    # the latest result of each benchmark, one key per part (git holds the history): a new part goes into its
    # family's file with write_results(path, data, part=...), not into a file of its own
    files = sorted(p.name for p in RESULTS.iterdir())
    assert len(files) <= MAX_FILES, f"{len(files)} files in benchmarks/results: {files}"


@pytest.mark.parametrize("module, parts", [
    ("benchmarks.ingest", {"corpus"}), ("benchmarks.ingest_executors", {"executors"}),
    ("benchmarks.scale", {"sizes"}), ("benchmarks.scale_out", {"scale_out"}),
    ("benchmarks.explainers", {"tasks", "decisions", "r4c", "retrieval", "paths", "paths_c2", "paths_0-21"})])
def test_benchmarks_write_parts_of_the_committed_files(module, parts):
    import importlib

    mod = importlib.import_module(module)
    assert mod.DEFAULT_JSON.parent == Path("benchmarks/results")
    held = json.loads((RESULTS / mod.DEFAULT_JSON.name).read_text())
    assert parts <= set(held) and getattr(mod, "PART", next(iter(parts))) in held


def test_airqa_splits_share_one_file():
    assert {"dev", "test", "holdout", "pool_dev"} <= set(json.loads((RESULTS / "airqa.json").read_text()))


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_committed_results_hold_no_machine_paths(path):
    assert absolute_paths(json.loads(path.read_text())) == []


def test_write_results_refuses_machine_paths(tmp_path):
    with pytest.raises(ValueError, match=r"\.rows\[0\]\.run: /tmp/runs/x"):
        write_results(tmp_path / "r.json", {"rows": [{"run": "/tmp/runs/x"}]})
    write_results(tmp_path / "r.json", {"rows": [{"run": "20261125-mixed", "ratio": "1/2"}]})
    assert json.loads((tmp_path / "r.json").read_text())["rows"][0]["run"] == "20261125-mixed"


def test_write_results_replaces_only_its_part(tmp_path):
    path = tmp_path / "b.json"
    write_results(path, {"score": 1}, part="dev")
    write_results(path, {"score": 2}, part="test")
    write_results(path, {"score": 3}, part="dev")
    assert json.loads(path.read_text()) == {"dev": {"score": 3}, "test": {"score": 2}}
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="one key per part"):
        write_results(path, {"score": 4}, part="dev")
    assert path.read_text() == "[1, 2]"  # nothing lost

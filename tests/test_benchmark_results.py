"""Benchmark result files name runs by run id and data by relative names, never by a machine's absolute paths."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import absolute_paths, write_results

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


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

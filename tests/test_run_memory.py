"""benchmarks.run_memory: the flat-memory figures read from a run folder."""
import json

import pytest

from benchmarks.run_memory import main, run_memory


def _run(tmp_path, rss):
    run = tmp_path / "20261125-000000-mixed"
    run.mkdir()
    rows = [{"id": f"i{i}", "latency_s": 10.0 + i, "rss_mb": v} for i, v in enumerate(rss)]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "run.json").write_text(json.dumps({"run_id": run.name, "task": "mixed", "started": "2026-11-25T10:00:00+00:00",
                                              "finished": "2026-11-25T10:12:30+00:00",
                                              "memory": {"peak_rss_mb": 2600.0}}))
    return run


def test_fifth_and_last_item_and_peak(tmp_path, capsys):
    run = _run(tmp_path, [2000, 2100, 2200, 2250, 2300, 2400, 2530])
    row = run_memory(run)
    assert row["rss after item 5 MiB"] == 2300 and row["rss after last MiB"] == 2530
    assert row["last / fifth"] == 1.1 and row["max after an item MiB"] == 2530
    assert row["peak MiB"] == 2600.0 and row["wall min"] == 12.5 and row["item latency median s"] == 13.0
    out = tmp_path / "r.json"
    assert main([str(run), "--label", "a", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["rows"][0]["label"] == "a"
    assert "last / fifth" in capsys.readouterr().out


def test_a_run_without_memory_rows_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="fewer than 5 items"):
        run_memory(_run(tmp_path, [1000, 1100]))

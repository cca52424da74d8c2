"""benchmarks.explainers writes its results into parts of one file (benchmarks/results/explainers.json)."""
from __future__ import annotations

import json

from benchmarks.explainers import main


def test_results_go_to_one_part_of_the_file(tmp_path):
    """Task rows go under ``tasks`` (or ``--part``) of explainers.json; the other parts stay as they were."""
    run = tmp_path / "20261128-000000-r4c"
    run.mkdir()
    (run / "metrics.json").write_text(json.dumps({
        "task": "r4c", "run_id": run.name, "n_items": 2, "n_errors": 0,
        "metrics": {"explanation_similarity": {"mean": 0.7}}, "latency_s": {"median": 1.0, "mean": 1.5},
        "prompt_tokens": {"mean": 10.0}, "completion_tokens": {"mean": 5.0}}))
    out = tmp_path / "explainers.json"
    out.write_text(json.dumps({"paths": {"limit": 2}}))
    assert main(["--from-runs", str(run), "--json", str(out)]) == 0
    assert main(["--from-runs", str(run), "--json", str(out), "--part", "r4c"]) == 0
    held = json.loads(out.read_text())
    assert held["paths"] == {"limit": 2}
    assert held["tasks"] == held["r4c"] == {"rows": [{
        "task": "r4c", "run": run.name, "n": 2, "errors": 0, "expl sim": 0.7, "latency median s": 1.0,
        "latency mean s": 1.5, "prompt tok/item": 10.0, "completion tok/item": 5.0}]}


def test_a_run_from_before_a_setting_was_removed_is_scored_again(tmp_path, kit):
    """--rescore reads an old run whose config.yaml holds a setting removed since (steps.verify): the removed key
    is dropped, the predictions are scored with today's metrics."""
    from benchmarks.explainers import rescore

    kit.require_task_data("mixed")
    run = tmp_path / "20261128-000000-mixed"
    run.mkdir()
    (run / "config.yaml").write_text("task: mixed\ndataset:\n  limit: 1\nsteps:\n  verify: true\n  write: true\n")
    (run / "results.jsonl").write_text(json.dumps({
        "id": "mixed-000", "task": "mixed", "tags": ["mixed"], "error": None, "latency_s": 1.0,
        "tokens": {"prompt": 1, "completion": 1},
        "prediction": {"id": "mixed-000", "task": "mixed", "kept_ids": [], "explanations": {}}}) + "\n")
    summary = rescore(run)
    assert summary["n_items"] == 1 and "discard_f1_micro" in summary["metrics"]

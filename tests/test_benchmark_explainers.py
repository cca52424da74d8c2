"""benchmarks.explainers --paths: the legacy and fast paths side by side on a few real items with a scripted
model (the plumbing, not the numbers): cost and quality per path, stance agreement, JSON without machine
paths, and --resume after an interrupt."""
from __future__ import annotations

import json

import pytest

from benchmarks import absolute_paths, write_results
from benchmarks.explainer_paths import MANIFEST, plan, stance_agreement
from benchmarks.explainers import compare_paths, main, print_paths
from evidex.agents.scripted import ScriptedChatModel


def _compare(tmp_path, responder, embedder, kb_index, **kw):
    # one item in flight (civic's default is two), so the interruption lands on a known item
    kw.setdefault("concurrency", 1)
    return compare_paths(["mixed"], ["legacy", "fast"], limit=2, out=tmp_path / "runs",
                         sets=["steps.verify=false", "judge.llm_stance=true"], llm=ScriptedChatModel(responses=responder), embedder=embedder,
                         index=kb_index, progress=False, **kw)


def test_paths_side_by_side_and_resume(tmp_path, kit, embedder, kb_index, capsys):
    kit.require_task_data("mixed")
    calls = {"n": 0}

    def interrupt_fast_second_item(call):  # the fast run (batched stance) stops on its second item
        if call.role == "stances":
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt
        return None

    with pytest.raises(KeyboardInterrupt):
        _compare(tmp_path, kit.Responder(hook=interrupt_fast_second_item), embedder, kb_index)
    manifest = json.loads((tmp_path / "runs" / MANIFEST).read_text())
    assert sorted(e["path"] for e in manifest.values()) == ["fast", "legacy"]  # the interrupted run is recorded
    fast_dir = tmp_path / "runs" / next(e["run"] for e in manifest.values() if e["path"] == "fast")
    assert json.loads((fast_dir / "run.json").read_text())["status"] == "interrupted"

    r2 = kit.Responder()
    result = _compare(tmp_path, r2, embedder, kb_index, resume=True)
    assert {c.role for c in r2.calls} == {"stances", "writer"}  # legacy reused; fast finished (its 2nd item only)
    assert len([c for c in r2.calls if c.role == "writer"]) == 1
    assert json.loads((fast_dir / "run.json").read_text())["status"] == "complete"

    paths = result["tasks"]["mixed"]["paths"]
    legacy, fast = paths["legacy"], paths["fast"]
    for row in (legacy, fast):
        assert row["n"] == 2 and row["errors"] == 0
        for key in ("s/item median", "s/item p90", "calls/item", "prompt tok/item", "completion tok/item",
                    "run min", "discard P", "expl sim", "expl complete", "cites ok"):
            assert row.get(key) is not None, key
    assert fast["calls/item"] < legacy["calls/item"]  # one batched stance call instead of one per kept item
    agreement = result["tasks"]["mixed"]["stance_agreement"]["legacy vs fast"]
    assert agreement["items"] == 2 and agreement["kept_items"] > 0 and agreement["agreement"] == 1.0
    assert agreement["kept_differs"] == 0
    assert set(result["tasks"]["mixed"]["speedup"]["legacy / fast"]) == {"s/item median", "s/item p90", "run min"}

    print_paths(result)
    out = capsys.readouterr().out
    assert "legacy" in out and "fast" in out and "agreement" in out
    write_results(tmp_path / "explainers.json", result, part="paths")  # run ids only, no machine paths
    assert absolute_paths(json.loads((tmp_path / "explainers.json").read_text())["paths"]) == []


def test_stance_agreement_counts_label_changes_on_items_kept_by_both():
    def row(item, decisions):
        return {"id": item, "prediction": {"decisions": [{"id": i, "kept": k, "label": lab} for i, k, lab in decisions]}}

    a = [row("x", [("1", True, "supports"), ("2", True, "supports"), ("3", False, "irrelevant")]),
         row("y", [("4", True, "contradicts")]), {"id": "z", "prediction": None}]
    b = [row("x", [("1", True, "supports"), ("2", True, "contradicts"), ("3", True, "supports")]),
         row("y", [("4", True, "contradicts")]), row("z", [("5", True, "supports")])]
    got = stance_agreement(a, b)
    assert got["items"] == 2 and got["kept_items"] == 3 and got["agree"] == 2
    assert got["agreement"] == round(2 / 3, 4) and got["kept_differs"] == 1
    assert got["changes"] == {"supports->contradicts": 1} and got["items_with_changes"] == ["x"]


def test_plan_and_cli_reject_unknown_paths(capsys):
    runs = plan(["mixed"], ["legacy", "fast"], limit=66, concurrency=2)
    assert [(r.task, r.path) for r in runs] == [("mixed", "legacy"), ("mixed", "fast")]
    assert "run.concurrency=2" in runs[1].sets and runs[1].sets[-1] == "speed.path=fast"
    assert runs[0].key != runs[1].key
    with pytest.raises(SystemExit):
        main(["--paths", "legacy,turbo", "--task", "mixed", "--limit", "2"])
    assert "unknown path(s) turbo" in capsys.readouterr().err


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

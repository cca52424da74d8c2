"""``benchmarks.recovery_losses``: each hidden missing item gets a kind and the decision that left it out."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from evidex.agents.civic.variants import names_own_variant
from benchmarks.recovery_losses import kind_of, main, outcome_of


def test_names_own_variant():
    assert names_own_variant("VHL R167Q (c.500G>A)", "The p.Arg167Gln mutation segregated with disease.") is True
    assert names_own_variant("VHL R167Q (c.500G>A)", "This missense mutation was found in 3 families.") is False
    assert names_own_variant("ALK Fusion", "EML4-ALK positive lung cancer") is None  # no specific variant


def test_kind_of():
    owners = Counter({"1": 2, "2": 1})
    assert kind_of("1", "the R167Q mutation", "VHL R167Q", owners) == "several claims"
    assert kind_of("2", "This missense mutation ...", "VHL R167Q", owners) == "variant not named"
    assert kind_of("2", "the R167Q mutation", "VHL R167Q", owners) == "other"
    assert kind_of("3", "crizotinib in EML4-ALK", "ALK Fusion", owners) == "other"


@pytest.mark.parametrize("reason, outcome", [
    ('retrieved at rank 5 but ranks #1 in the KB for another known claim ("X") but only #5 for this one', "competing claim"),
    ("retrieved at rank 6 but only 25% of the best score (gate 50%)", "score ratio"),
    ("retrieved at rank 3 but names ITD 2 times and the claim's FLT3 D835 only 1: evidence about another variant",
     "another variant"),
    ("retrieved at rank 4 but repeats kept item [6121] (58% of its 5-grams; gate 50%): the same study", "near-copy"),
    ("retrieved at rank 2 but names 0% of the claim's therapy (needs 50%)", "facets"),
])
def test_outcome_of_names_the_check(reason, outcome):
    prediction = {"added_ids": ["9"], "decisions": [{"id": "1", "reason": reason}]}
    assert outcome_of("1", prediction) == outcome
    assert outcome_of("9", prediction) == "added"
    assert outcome_of("2", prediction) == "not retrieved"


@pytest.mark.shared_data
def test_losses_of_a_gate_only_run_add_up(tmp_path, kit):
    """A real gate-only mixed run: every hidden item is counted once and the added ones match the run's recall."""
    from evidex.graphs.tasks import config_for_task
    from evidex.graphs.runner import run_task

    kit.require_task_data("mixed")
    cfg = config_for_task("mixed", ["dataset.limit=8", "judge.llm_stance=false", "steps.write=false"])
    run = run_task(cfg, out_dir=tmp_path / "runs", progress=False)
    out = tmp_path / "losses.json"
    assert main([str(run), "--json", str(out)]) == 0
    [res] = json.loads(out.read_text())["recovery_losses"]  # beside benchmarks.retrieval's windows
    from evidex.tools.claim_data import load_task

    assert res["items"] == 8 and res["missing"] == sum(len(it.gold.missing_ids) for it in load_task("mixed", limit=8))
    assert res["missing"] == sum(sum(c.values()) for c in res["by_kind"].values())
    assert res["added"] == sum(c.get("added", 0) for c in res["by_kind"].values())
    recall = json.loads((run / "metrics.json").read_text())["metrics"]["recovery_recall_micro"]["mean"]
    assert res["recall"] == pytest.approx(recall, abs=1e-3)


def test_a_folder_that_is_not_a_run_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path)])
    assert info.value.code == 2 and "not a run folder" in capsys.readouterr().err

"""Competing claims (``agents.claim_catalog``): the loader reads claims only, and on the real CIViC KB a
retrieved item that belongs to another known claim is not added, with that claim named in the reason."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evidex.tools.claims import Claim

from evidex.tools.claim_data import load_claim_catalog

SECRET = "HIDDEN-EVIDENCE-SENTINEL"


def test_loader_reads_claim_sentences_and_context_only(tmp_path):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([
        {"claim": "BRAF V600E melanoma is sensitive to vemurafenib", "context": {"Disease": "Melanoma", "x": None},
         "evidence": [{"evidence_id": 1, "description": SECRET}],
         "missing_evidence": [{"evidence_id": 2, "description": SECRET}], "explanation": SECRET},
        {"claim_A": "Claim A", "context_A": {"Disease": "Lung"}, "claim_B": "Claim B",
         "evidence_A": [{"evidence_id": 3, "description": SECRET}], "explanation_A": SECRET},
    ]))
    claims = load_claim_catalog(str(path))
    assert [c.text for c in claims] == ["BRAF V600E melanoma is sensitive to vemurafenib", "Claim A", "Claim B"]
    assert claims[0].context == {"Disease": "Melanoma"}
    assert SECRET not in json.dumps([c.model_dump() for c in claims])


def test_loader_names_the_setting_when_a_file_holds_no_claims(tmp_path):
    path = tmp_path / "kb.json"
    path.write_text(json.dumps([{"evidence_id": 1, "description": "a KB file, not a claims file"}]))
    with pytest.raises(ValueError, match="gate.claim_catalog"):
        load_claim_catalog(str(path))


def test_config_default_and_off_switch():
    from evidex.graphs.tasks import config_for_task

    assert config_for_task("mixed").gate.claim_catalog == "ibe/CIVIC/baseline.json"
    assert config_for_task("r4c").gate.name == "given_rank"  # no KB, no claims competing for it
    off = config_for_task("mixed", ["gate.claim_catalog=null"])
    assert off.gate.claim_catalog is None
    # the default catalog belongs to the CIViC KB: another KB turns it off unless it is set explicitly
    assert config_for_task("mixed", ["retrieval.kb=my/kb.json"]).gate.claim_catalog is None
    mine = config_for_task("mixed", ["retrieval.kb=my/kb.json", "gate.claim_catalog=my/claims.json"])
    assert mine.gate.claim_catalog == "my/claims.json"


# -- real CIViC knowledge base -------------------------------------------------------------------------------------
def _civic_present() -> bool:
    root = os.environ.get("EVIDEX_DATA_DIR")
    return bool(root) and all((Path(root) / f).is_file()
                              for f in ("ibe/CIVIC/baseline.json", "ibe/CIVIC/evidence_kb.json"))


civic = pytest.mark.skipif(not _civic_present(), reason="EVIDEX_DATA_DIR lacks the CIViC files")

COLORECTAL = Claim(text="BRAF V600E indicates poor prognosis in advanced colorectal cancer",
                   context={"Molecular Profile": "BRAF V600E", "Disease": "Colorectal Cancer"})
COMBI = "BRAF V600E mutant melanoma is sensitive to dabrafenib and trametinib combination therapy"


@pytest.fixture(scope="module")
def catalog():
    from benchmarks.retrieval import civic_catalog

    return civic_catalog()


@pytest.mark.shared_data
@civic
def test_an_item_of_another_claim_names_that_claim(catalog):
    from evidex.agents.civic.query_planner import relevance_ranks
    from evidex.tools.claims import Evidence

    assert len(catalog.claims) == 65  # 66 baseline rows, one claim sentence twice
    # 6938 (COMBI-d, dabrafenib + trametinib in V600E melanoma) is filed under the melanoma claim
    rival = catalog.rival(COLORECTAL, "6938")
    assert rival is not None and rival.claim.text == COMBI and rival.rank < rival.own_rank
    assert "another known claim" in rival.reason() and COMBI[:60] in rival.reason()
    # gate.candidate_claim_margin: the rival must rank more than `margin` times better
    assert catalog.rival(COLORECTAL, "6938", margin=rival.own_rank / rival.rank - 0.5) is not None
    assert catalog.rival(COLORECTAL, "6938", margin=rival.own_rank / rival.rank) is None
    # the same rank as the given-item gate computes
    text = catalog.index.docs[catalog.index.position["6938"]].text
    assert relevance_ranks(catalog.index, COLORECTAL, [Evidence(id="6938", text=text)])["6938"] == rival.own_rank
    # for its own claim nothing ranks it higher, and a claim never competes with itself
    own = next(c for c in catalog.claims if c.text == COMBI)
    assert catalog.rival(own, "6938") is None
    assert catalog.rival(COLORECTAL, "not-in-the-kb") is None


@pytest.mark.shared_data
@civic
def test_gate_rejects_another_claims_item_only_with_a_catalog(catalog):
    from evidex.agents.civic.candidate_gate import CandidateChecks, gate_candidates
    from evidex.tools.kb_index import SearchHit

    text = catalog.index.docs[catalog.index.position["6938"]].text
    hits = [SearchHit(id="6938", text=text, score=1.0)]
    with_catalog = gate_candidates(hits, CandidateChecks(), claim=COLORECTAL, catalog=catalog)
    assert not with_catalog[0].passed and "another known claim" in with_catalog[0].reason
    assert gate_candidates(hits, CandidateChecks(), claim=COLORECTAL)[0].passed


@pytest.mark.shared_data
@civic
def test_given_item_of_another_claim_is_discarded_only_by_a_clear_margin(catalog):
    from evidex.agents.civic.relevance_gate import GivenClaimCheck, gate_given
    from evidex.tools.claims import Evidence

    index = catalog.index
    given = [Evidence(id=i, text=index.docs[index.position[i]].text) for i in ("6938",)]
    rival = catalog.rival(COLORECTAL, "6938")  # #1 for the melanoma claim, #9 for the colorectal one
    plain = gate_given(index, COLORECTAL, given, keep_rank=30)
    assert plain[0].passed  # rank 9 is well inside the plain cut
    strict = gate_given(index, COLORECTAL, given, 30, catalog=catalog, check=GivenClaimCheck(margin=4, floor=5))
    assert not strict[0].passed and "another known claim" in strict[0].reason
    # inside the claim's own top `floor`, or without a large enough margin, it stays
    assert gate_given(index, COLORECTAL, given, 30, catalog=catalog,
                      check=GivenClaimCheck(margin=4, floor=rival.own_rank))[0].passed
    assert gate_given(index, COLORECTAL, given, 30, catalog=catalog,
                      check=GivenClaimCheck(margin=rival.own_rank / rival.rank + 1, floor=5))[0].passed


@pytest.mark.shared_data
@civic
def test_assignment_sends_a_third_claims_item_to_neither(catalog):
    from evidex.agents.civic.relevance_gate import GivenClaimCheck, assign_by_relevance
    from evidex.tools.claims import Evidence

    index = catalog.index
    vhl = next(c for c in catalog.claims if "Von Hippel" in c.text)
    claims = {"A": COLORECTAL, "B": vhl}
    given = [Evidence(id="6938", text=index.docs[index.position["6938"]].text)]
    assert assign_by_relevance(index, claims, given, keep_rank=30)["6938"][0] == "A"  # rank 9 for A
    label, reason = assign_by_relevance(index, claims, given, 30, catalog=catalog,
                                        check=GivenClaimCheck(margin=4, floor=5))["6938"]
    assert label == "neither" and COMBI[:60] in reason

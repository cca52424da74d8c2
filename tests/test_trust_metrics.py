"""Trust metrics (evaluators.trust): hand cases for every function, and the hand-labelled sentence-support sample.

No model: stance and completeness are text rules, sentence support is checked with a fake judge and with the
word-overlap baseline. Expected values are worked out in the comments.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evidex.tools.cited_text import parse_citations
from evidex.evaluators.trust import (
    content_words, is_complete_sentence, judge_agreement, overlap_judge, reason_complete, self_contradiction,
    sentence_stance, sentence_support, split_sentences, stance_consistency, strip_citations, trust_scores,
)
from evidex.tools.claims import ClaimPrediction, EvidenceDecision

SAMPLE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "sentence_support_sample.jsonl"


# -- sentences ------------------------------------------------------------------------------------------------
def test_split_keeps_citations_with_their_sentence():
    text = "Trastuzumab improved survival [529, 1122]. HERA was a Phase III trial [1122]. 12 patients responded [7]."
    assert split_sentences(text) == ["Trastuzumab improved survival [529, 1122].",
                                     "HERA was a Phase III trial [1122].", "12 patients responded [7]."]
    # a citation written after the full stop belongs to the sentence before it
    assert split_sentences("Responses were seen. [529] The trial was small [528].") == [
        "Responses were seen. [529]", "The trial was small [528]."]


def test_split_ignores_abbreviations_decimals_and_lowercase_continuations():
    text = ("Some drugs, e.g. Afatinib, were tested (IC50 0.7nM vs. 60nM) as in Fig. 2 of the paper [2629]. "
            "An event of disease [4858]. progression occurred in 41% [4858].")
    assert split_sentences(text) == [
        "Some drugs, e.g. Afatinib, were tested (IC50 0.7nM vs. 60nM) as in Fig. 2 of the paper [2629].",
        "An event of disease [4858]. progression occurred in 41% [4858]."]
    assert split_sentences("") == [] and split_sentences("No full stop") == ["No full stop"]


@pytest.mark.parametrize("text,sentences", [
    ("The film was directed by M. Night Shyamalan. It stars Olivia DeJonge.",
     ["The film was directed by M. Night Shyamalan.", "It stars Olivia DeJonge."]),
    ("Every Secret Thing is a film by Amy J. Berg. It was released.",
     ["Every Secret Thing is a film by Amy J. Berg.", "It was released."]),
    ("J. P. Nagar is a suburb. It is large.", ["J. P. Nagar is a suburb.", "It is large."]),
    # a one-letter word that ends a sentence
    ("Patients had hepatitis B. The study ended.", ["Patients had hepatitis B.", "The study ended."]),
    ("Levels of vitamin C. Patients improved.", ["Levels of vitamin C.", "Patients improved."]),
    ("It was Plan B. Then he left.", ["It was Plan B.", "Then he left."]),
    ("He fought in World War I. Peace came.", ["He fought in World War I.", "Peace came."]),
])
def test_a_names_initial_ends_no_sentence(text, sentences):
    assert split_sentences(text) == sentences


def test_strip_citations_uses_the_writers_parser():
    assert strip_citations("PFS improved [528, 529].") == "PFS improved."
    assert strip_citations("A […] gap [1122]") == "A […] gap"  # no id in "[…]", so it is prose


# -- completeness ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "The response rate to crizotinib treatment was higher in",      # cut: no full stop, dangling "in"
    "response to trastuzumab in HER2-receptor Positive Breast",     # a phrase: lower-case start, no full stop
    "The response rate to crizotinib treatment was higher in.",     # full stop after a dangling "in"
    "Improved overall survival, response rate, response time,",     # ends in a comma
    "It activated BMP signaling and enhanced …",                    # cut mark
    "It activated BMP signaling and enhanced....",
    "off topic: ranks 97/285 for the claim's subject (gate 60).",   # lower-case start
    " ".join(["Word"] * 26) + ".",                                  # 26 words > 25
    "",
    "( [529].",
])
def test_incomplete_sentences(text):
    assert not is_complete_sentence(text)


@pytest.mark.parametrize("text", [
    "Trastuzumab improved survival in HER2-positive breast cancer.",
    "The fusion was absent from normal tissue [405].",              # citation before the full stop
    "Was the response durable?",
    '"Responses were durable."',                                    # closing quote after the full stop
    "(Responses were durable.)",
    "66% of patients responded to afatinib!",                       # digit start
    "p53 loss was common in the resistant cohort.",                 # gene name starting lower-case
    "\u00c6lfgifu of Exeter bore two future kings.",                  # a capital beyond ASCII
    " ".join(["Word"] * 25) + ".",                                  # exactly 25 words
    " ".join(["HER2-positive"] * 24) + " – [1, 2].",                  # 24 words: "–" and citations not counted
])
def test_complete_sentences(text):
    assert is_complete_sentence(text)


def test_max_words_and_reason_share():
    assert not is_complete_sentence("One two three four five six.", max_words=5)
    assert reason_complete([]) is None
    reasons = ["Trastuzumab improved survival in HER2-positive breast cancer.",
               "response to trastuzumab in HER2-receptor Positive Breast",
               "The response rate to crizotinib treatment was higher in",
               "Crizotinib gave a 61% response rate [1187]."]
    assert reason_complete(reasons) == 0.5  # 2 of 4


def test_a_reason_may_end_with_the_words_of_the_claim_it_links_to():
    claim = "The Red and Assiniboine Rivers meet in the city where Shelly Hruska is from."
    reason = ("Shelly Hruska is from Winnipeg, which supports the claim that the Red and Assiniboine Rivers meet in "
              "the city where Shelly Hruska is from.")
    assert is_complete_sentence(reason, max_words=40, quoted=claim)
    assert not is_complete_sentence(reason, max_words=40)  # without the claim, "from." reads as cut
    assert not is_complete_sentence("Shelly Hruska moved away from.", max_words=40, quoted=claim)  # not its words
    assert not is_complete_sentence(reason, max_words=20, quoted=claim)  # the length still counts
    assert reason_complete([reason], [claim]) == 1.0 and reason_complete([reason]) == 0.0


# -- stance ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence,stance", [
    ("Trastuzumab improved overall survival [529].", "supports"),
    ("These results confirm sensitivity to erlotinib [4285].", "supports"),
    ("The evidence is consistent with the claim [1].", "supports"),
    ("The evidence does not support the claim [1].", "contradicts"),
    ("Patients with T790M showed resistance to erlotinib [2].", "contradicts"),
    ("There was no clinical benefit from cetuximab [3].", "contradicts"),
    ("The trial failed to meet its endpoint [4].", "contradicts"),
    ("KRAS status was not associated with response [5].", "contradicts"),  # the negation wins over "response"
    ("However, the tumours did not shrink [6].", "contradicts"),
    ("This refutes the claim [7].", "contradicts"),
    ("The study enrolled 303 patients [4858].", "neutral"),
    ("The claim states that ALK fusions are sensitive to crizotinib.", "neutral"),  # restated claim
    ("The claim states that X is sensitive to Y, but the evidence shows it is not.", "contradicts"),
    ("The claim is supported by the evidence that V600E is adverse [103].", "supports"),
    ("In the trial, median time to treatment failure was 6 months [529].", "neutral"),  # "failure" is no cue
])
def test_sentence_stance(sentence, stance):
    assert sentence_stance(sentence) == stance


def test_stance_cue_limit_double_negation():
    # a known limit, kept visible: contradicting "not sensitive" means "sensitive", the cues say contradicts
    assert sentence_stance("The evidence contradicts the claim that L858R is not sensitive to erlotinib [1].") \
        == "contradicts"


def test_a_sentence_that_negates_a_word_of_the_claim_goes_against_it():
    claim = "TFEB fusions are diagnostic for renal cell carcinoma with MiT translocations"
    assert sentence_stance("TFEB fusions are not diagnostic for renal cell carcinoma", claim) == "contradicts"
    assert sentence_stance("Fusions were never a diagnostic finding in carcinoma", claim) == "contradicts"
    # a negation of something the claim does not say is no side ("no mutations detected in 4 probands")
    assert sentence_stance("No mutations were detected in 4 probands with renal tumours", claim) == "neutral"
    # the claim's own negation is its subject, not a side
    negative = "MET amplification is not predictive of crizotinib response"
    assert sentence_stance("MET amplification was not predictive in 33 patients", negative) != "contradicts"


# -- self-contradiction and stance consistency ----------------------------------------------------------------
SELF_CONTRADICTING = ("Crizotinib improved response in ALK-positive patients [10804, 1187]. "
                      "However, patients did not respond to crizotinib [10804]. "
                      "The trial enrolled 303 patients [4858].")


def test_self_contradiction_found_from_the_text_alone():
    # [10804]: sentence 1 supports, sentence 2 contradicts; [1187] only supports; [4858] only neutral
    assert self_contradiction(SELF_CONTRADICTING) == ["10804"]


def test_self_contradiction_against_the_decision_label():
    text = "However, the tumours did not respond [1187]. Response improved [529]."
    assert self_contradiction(text) == []  # each id sits on one side only
    # [1187] was judged supports but the explanation says contradicts; [529] agrees with its label
    assert self_contradiction(text, {"1187": "supports", "529": "supports"}) == ["1187"]
    # the other direction: judged contradicts, explained as supporting
    assert self_contradiction(text, {"529": "contradicts"}) == ["529"]
    assert self_contradiction(text, {"1187": "contradicts", "529": "supports", "4858": "irrelevant"}) == []


def test_stance_consistency_counts_sentence_id_pairs():
    labels = {"10804": "supports", "1187": "supports", "4858": "supports"}
    # pairs with a side and a stance label: (s1, 10804) ok, (s1, 1187) ok, (s2, 10804) wrong; s3 is neutral
    assert stance_consistency(SELF_CONTRADICTING, labels) == (2, 3)
    # irrelevant or unknown labels make no pair
    assert stance_consistency(SELF_CONTRADICTING, {"10804": "irrelevant"}) == (0, 0)
    assert stance_consistency("No stance here [1].", {"1": "supports"}) == (0, 0)


# -- sentence support -----------------------------------------------------------------------------------------
def test_sentence_support_with_a_fake_judge():
    seen = []

    def judge(sentence, texts):
        seen.append((sentence, texts))
        return "survival" in sentence

    explanation = "Survival improved [529]. The trial was large [528, 999]. An uncited sentence."
    evidence = {"529": "A trial of 186 patients.", "528": "A trial of 469 patients."}
    assert sentence_support(explanation, evidence, judge) == (0, 2)  # "Survival" is capitalised: no match
    # citations stripped; an unknown id ([999]) adds no text; the uncited sentence is not judged
    assert seen == [("Survival improved.", ["A trial of 186 patients."]),
                    ("The trial was large.", ["A trial of 469 patients."])]
    assert sentence_support("The survival rose [1].", {}, judge) == (1, 1)


def test_overlap_judge():
    evidence = ["A randomized trial of 469 patients with HER2-positive breast cancer showed improved response."]
    # content words: randomized trial 469 patients her2 positive breast cancer -> all in the evidence
    assert content_words("The randomized trial of 469 patients") == ["randomized", "trial", "469", "patients"]
    assert overlap_judge()("The randomized trial of 469 HER2-positive breast cancer patients.", evidence)
    # 1 of 4 content words (trial) is in the evidence: 0.25 < 0.5
    assert not overlap_judge()("The trial enrolled 303 Japanese.", evidence)
    assert overlap_judge(threshold=0.25)("The trial enrolled 303 Japanese.", evidence)
    assert not overlap_judge()("The evidence shows that.", evidence)  # nothing to check
    assert not overlap_judge()("Survival improved.", [])


def test_judge_agreement_counts():
    rows = [  # the fake judge accepts sentences containing "ok"
        {"sentence": "ok [1].", "cited": ["1"], "evidence": {"1": "t"}, "label": "supported"},     # right
        {"sentence": "bad [1].", "cited": ["1"], "evidence": {"1": "t"}, "label": "unsupported"},  # flagged, right
        {"sentence": "bad [2].", "cited": ["2"], "evidence": {"2": "t"}, "label": "supported"},    # flagged, wrong
        {"sentence": "ok [3].", "cited": ["3"], "evidence": {"3": "t"}, "label": "unsupported"},   # missed
    ]
    agreement = judge_agreement(rows, lambda sentence, texts: "ok" in sentence and texts == ["t"])
    assert agreement == {"n": 4.0, "accuracy": 0.5, "unsupported_precision": 0.5, "unsupported_recall": 0.5}
    assert math.isnan(judge_agreement([rows[0]], lambda s, t: True)["unsupported_precision"])  # 0/0


# -- per item -------------------------------------------------------------------------------------------------
def _decision(id_, label, reason, kept, source="given"):
    return EvidenceDecision(id=id_, source=source, label=label, reason=reason, kept=kept)


def _prediction() -> ClaimPrediction:
    return ClaimPrediction(
        id="mixed-000", task="mixed",
        decisions=[
            _decision("10804", "supports", "Crizotinib gave durable responses in ALK-positive NSCLC.", True),
            _decision("1187", "supports", "The response rate to crizotinib treatment was higher in", True),
            _decision("4858", "contradicts", "Alectinib outperformed crizotinib in a phase 3 trial.", True),
            _decision("1643", "irrelevant", "off topic: ranks 97/285 for the claim's subject (gate 60)", False),
            _decision("7694", "irrelevant", "retrieved at rank 3 but only 18% of the best score", False, "retrieved"),
        ],
        explanations={"claim": SELF_CONTRADICTING + " Crizotinib is approved."},
        evidence_texts={"10804": "Crizotinib improved response in ALK-positive patients.",
                        "1187": "Response to crizotinib was 61%.", "4858": "The trial enrolled 303 patients."})


def test_trust_scores_per_item():
    scores = trust_scores(_prediction())
    # reasons shown: 10804, 1187, 4858 (kept) and 1643 (discarded given); 7694 is a dropped candidate.
    # complete: 10804 and 4858 -> 2/4
    assert scores["reason_complete"] == 0.5
    assert scores["self_contradiction"] == 1.0  # [10804]
    # pairs: (s1, 10804) ok, (s1, 1187) ok, (s2, 10804) wrong -> 2/3 ([4858] sits in a neutral sentence)
    assert scores["stance_consistency"] == pytest.approx(2 / 3)
    assert scores["cited_sentence_share"] == 0.75  # 3 of 4 sentences cite
    assert "sentence_support" not in scores


def test_trust_scores_with_a_judge_and_from_a_results_row():
    row = _prediction().model_dump()  # a results.jsonl "prediction" is a plain dict
    scores = trust_scores(row, judge=overlap_judge())
    # s1 "Crizotinib improved response in ALK-positive patients": all words in 10804 -> supported
    # s2 "However, patients did not respond to crizotinib": respond/crizotinib/patients 3 of 4 content words ->
    #    supported; s3 "The trial enrolled 303 patients": 4 of 4 -> supported
    assert scores["sentence_support"] == 1.0


def test_trust_scores_leave_out_what_does_not_apply():
    empty = ClaimPrediction(id="x", task="mixed")
    assert trust_scores(empty) == {}
    neutral = ClaimPrediction(id="x", task="mixed", explanations={"claim": "The trial enrolled 303 patients [1]."},
                              decisions=[_decision("1", "supports", "Crizotinib was tested.", True)])
    assert trust_scores(neutral) == {"reason_complete": 1.0, "reasons_n_items": 1.0, "reasons_n_correct": 1.0,
                                     "self_contradiction": 0.0, "cited_sentence_share": 1.0}


def test_a_contrary_cue_the_claim_itself_uses_takes_no_side():
    claim = "EGFR T790M confers resistance to erlotinib"
    sentence = "T790M was found in tumours with acquired resistance to erlotinib [4]."
    assert sentence_stance(sentence) == "contradicts"  # without the claim: "resistance" reads as against
    assert sentence_stance(sentence, claim) == "neutral"
    assert sentence_stance("Resistance to erlotinib was confirmed in T790M cells [4].", claim) == "supports"
    assert sentence_stance("Patients did not respond to erlotinib [4].", claim) == "contradicts"
    labels = {"4": "supports"}
    assert self_contradiction(sentence, labels, claim) == [] and self_contradiction(sentence, labels) == ["4"]
    scores = trust_scores(ClaimPrediction(id="x", task="mixed", explanations={"claim": sentence},
                                          decisions=[_decision("4", "supports", "It reports resistance.", True)]),
                          claims={"claim": claim})
    assert scores["self_contradiction"] == 0.0 and "stance_consistency" not in scores


# -- the hand-labelled sample ---------------------------------------------------------------------------------
def test_sentence_support_sample_is_well_formed():
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 60
    assert len({r["id"] for r in rows}) == len(rows)
    assert sum(r["label"] == "unsupported" for r in rows) >= 15
    for r in rows:
        assert set(r) == {"id", "item", "sentence", "cited", "evidence", "label", "note"}
        assert r["label"] in {"supported", "unsupported"} and r["note"]
        assert r["item"].startswith("mixed-") and r["id"].startswith(r["item"])
        assert r["cited"] == parse_citations(r["sentence"]) and set(r["cited"]) == set(r["evidence"])
        assert all(text.strip() for text in r["evidence"].values())
    agreement = judge_agreement(rows, overlap_judge())
    assert 0.0 <= agreement["accuracy"] <= 1.0 and agreement["n"] == len(rows)


def test_stance_sample_agreement_counts_the_report_half_apart():
    from evidex.evaluators.trust import in_report_half, stance_gold, stance_sample_scores

    gold = stance_gold()
    assert len(gold) == 80
    report = [k for k in gold if in_report_half(*k)]
    assert len(report) == 41 and sorted(gold[k] for k in report).count("unclear") == 4  # as the README says
    item = "mixed-036"
    pairs = [eid for (i, eid) in gold if i == item]
    decisions = [EvidenceDecision(id=eid, source="given", label="supports", reason="r", kept=True) for eid in pairs]
    scores = stance_sample_scores(ClaimPrediction(id=item, task="mixed", decisions=decisions))
    wrong = sum(gold[(item, eid)] != "supports" for eid in pairs)
    assert scores["stance_sample_n_items"] == len(pairs) and scores["stance_sample_n_correct"] == len(pairs) - wrong
    assert scores["stance_report_n_items"] == sum(in_report_half(item, eid) for eid in pairs)
    assert scores["stance_sample_not_supports_n_correct"] == 0

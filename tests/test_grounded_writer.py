"""The grounded writer (issues 24 and 54) without a real model: findings are spans of the evidence that stay
sentences; the model's reasons are checked by code and fall back to an honest short reason; a set-aside item's
reason names what it is about instead and the known claim it belongs to; the explanation opens with the verdict
the labels add up to, says what the strongest items show and how strong and consistent the evidence is, and a
sentence that contradicts a label or cites both sides is never written."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from evidex.agents.grounded_writer import (CUT, FINDINGS_SHOWN, Reason, background_of, cited, compose,
                                           dropped_reason, fact_of, kept_reason, linked, reasons_schema,
                                           sentence_problem, shown_item, verdict_of, verdict_sentences)
from evidex.agents.scripted import ScriptedChatModel
from evidex.evaluators.trust import reason_scores, self_contradiction, stance_consistency, trust_scores
from evidex.graphs import build_graph, config_for_task
from evidex.tools.cited_text import is_complete_sentence, parse_citations, split_sentences
from evidex.tools.claims import Claim, ClaimInput, ClaimPrediction, Evidence, EvidenceDecision
from evidex.tools.findings import candidate_spans, findings, shortened
from evidex.tools.reasons import kept_reason_problem

# the verdict sentence: "<claim>: all 3 kept items (...) support this [..]", "All 2 kept items contradict the claim that ...", "The evidence on the claim that ... is mixed"
VERDICT = re.compile(r"kept items? .*(support|contradict)|^The evidence on the claim that .* is mixed")


class BagOfWords:
    """A tiny deterministic embedder: word counts over a fixed vocabulary (enough to rank spans)."""

    def encode(self, texts):
        vocab: dict[str, int] = {}
        rows = []
        for t in texts:
            row: dict[int, float] = {}
            for w in t.lower().replace(",", " ").split():
                col = vocab.setdefault(w.strip(".()"), len(vocab))
                row[col] = row.get(col, 0) + 1.0
            rows.append(row)
        out = np.zeros((len(texts), max(len(vocab), 1)))
        for r, row in enumerate(rows):
            for c, v in row.items():
                out[r, c] = v
        return out


# -- findings -------------------------------------------------------------------------------------------------
def test_a_long_sentence_is_shortened_only_in_ways_that_keep_it_a_sentence():
    s = ("Crizotinib improved progression-free survival (10.9 vs 7.0 months, HR 0.45, P<0.001) in ALK-positive "
         "NSCLC, whereas chemotherapy gave shorter responses in the same cohort of patients")
    forms = shortened(s)
    assert forms[0] == s
    assert "Crizotinib improved progression-free survival in ALK-positive NSCLC" in forms
    for f in forms:
        assert f.split()[-1].lower() not in ("in", "of", "the", "with", "and") and f.count("(") == f.count(")")


def test_no_span_is_a_fragment_cut_at_any_comma():
    text = ("A randomized clinical trial of 186 patients with previously untreated, HER2-positive, metastatic breast "
            "cancer demonstrated improved overall survival, response rate, response duration and time to "
            "progression for patients who received trastuzumab in addition to chemotherapy compared to chemotherapy "
            "alone. Trastuzumab is standard of care.")
    spans = candidate_spans(text, max_words=20)
    assert spans == ["Trastuzumab is standard of care"]  # the first sentence has no clean way to fit


def test_findings_pick_the_span_closest_to_the_claim_and_never_bracket_ids():
    texts = {"1": "Methods were standard. Vemurafenib gave responses in BRAF V600E melanoma [ref 3].",
             "2": "", "3": "word " * 60}
    found = findings("vemurafenib responses in BRAF V600E melanoma", texts, BagOfWords(), max_words=20)
    assert found == {"1": "Vemurafenib gave responses in BRAF V600E melanoma (ref 3)"}
    assert not parse_citations(found["1"])


RESULT = ("In the crizotinib arm, the response rate was significantly higher (65% vs 20%; P<0.001), the "
          "progression-free survival was longer (7.7 vs 3.0 months; HR=0.49), however, overall survival did not "
          "improve (NCT00932893)")


def test_a_result_clause_keeps_its_numbers_and_no_span_ends_on_a_connective():
    spans = shortened(RESULT)
    assert "In the crizotinib arm, the response rate was significantly higher (65% vs 20%; P<0.001)" in spans
    assert not any(f.endswith(("however", "however,")) or "NCT00932893" in f for f in spans[1:])
    # a comma cut is offered only where what comes before it states a measured result
    assert "In the crizotinib arm" not in spans


def test_findings_prefer_the_span_that_states_a_measured_result(monkeypatch):
    import evidex.tools.findings as found_mod

    text = {"1": "ALK-positive patients received crizotinib in a randomized trial against chemotherapy. "
                 "ALK-positive patients on crizotinib responded in 65% of cases against 20% on chemotherapy."}
    claim = "ALK-positive patients respond to crizotinib"
    assert "65%" in findings(claim, text, BagOfWords(), max_words=20)["1"]
    monkeypatch.setattr(found_mod, "MEASURE_BONUS", 0.0)
    assert "65%" not in findings(claim, text, BagOfWords(), max_words=20)["1"]


# -- verdict and reasons --------------------------------------------------------------------------------------
@pytest.mark.parametrize("labels, verdict", [
    (["supports", "supports"], "supported"), (["contradicts"], "refuted"),
    (["supports", "contradicts"], "mixed"), ([], "not enough evidence")])
def test_verdict_of_labels(labels, verdict):
    assert verdict_of(labels) == verdict


def test_verdict_sentences_open_with_the_verdict_and_never_cite_both_sides():
    claim = "Lung adenocarcinoma with ALK fusions is sensitive to crizotinib."
    mixed = verdict_sentences(claim, ["1", "2"], ["3"])
    assert mixed[0].startswith("The evidence on the claim that lung adenocarcinoma") and "is mixed" in mixed[0]
    labels = {"1": "supports", "2": "supports", "3": "contradicts"}
    text = " ".join(mixed)
    assert self_contradiction(text, labels) == [] and stance_consistency(text, labels) == (3, 3)
    assert verdict_sentences("HER2 amplification predicts sensitivity", ["9"], [])[0] == \
        "HER2 amplification predicts sensitivity: the one kept item supports this [9]."
    assert verdict_sentences("X is Y", ["1", "2"], [], "2 clinical")[0] == \
        "X is Y: all 2 kept items (2 clinical) support this [1, 2]."
    assert verdict_sentences("X is Y", [], ["1", "2"])[0] == "All 2 kept items contradict the claim that X is Y [1, 2]."
    assert "not enough evidence" in verdict_sentences("X is Y", [], [])[0]


@pytest.mark.parametrize("claim, clause", [
    ("Patients with EGFR L858R respond to erlotinib.", "patients with EGFR L858R respond to erlotinib"),
    ("The actress who played the Duchess was born in 1946.", "the actress who played the Duchess was born in 1946"),
    ("Eenasul Fateh worked as a consultant.", "Eenasul Fateh worked as a consultant"),  # a name stays a name
    ("Art Laboe and Scout Tufankjian share Armenian ancestry.", "Art Laboe and Scout Tufankjian share Armenian ancestry"),
    ("HER2 amplification predicts sensitivity.", "HER2 amplification predicts sensitivity"),
])
def test_the_claim_as_a_clause_lowers_a_plain_first_word_but_never_a_name(claim, clause):
    assert verdict_sentences(claim, [], ["1"])[0] == f"The one kept item contradicts the claim that {clause} [1]."


# -- reasons --------------------------------------------------------------------------------------------------
ALK = Claim(text="Lung adenocarcinoma positive for ALK-FUSIONS is sensitive to crizotinib",
            context={"Therapies": "Crizotinib"})
PROFILE = ("This two arm Phase III study named PROFILE 1007 assessed crizotinib vs. chemotherapy in 347 NSCLC patients "
           "positive for ALK rearrangement. Response rates were 65% for crizotinib treatment and 20% for chemotherapy.")
KEPT = EvidenceDecision(id="1198", source="given", label="supports", reason="on topic: ranks 2/285", kept=True)


SUPPORTS_ALK = ", which supports the claim that lung adenocarcinoma positive for ALK-FUSIONS is sensitive to crizotinib."


def test_the_models_checked_fact_is_linked_to_the_claim_by_code_and_a_failing_one_falls_back_honestly():
    fact = "Phase 3 PROFILE 1007 in 347 patients: response 65% with crizotinib vs 20% with chemotherapy"
    assert kept_reason(KEPT, fact, PROFILE, ALK) == Reason(fact + SUPPORTS_ALK, "model", fact=fact + ".")
    # a link of the model's own is dropped: the link says what the decision says, nothing more
    assert kept_reason(KEPT, fact + ", so the drug works in these patients", PROFILE, ALK) == \
        Reason(fact + SUPPORTS_ALK, "model", fact=fact + ".")
    assert kept_reason_problem(fact + SUPPORTS_ALK, PROFILE, ALK.text) is None
    # a "which" clause is part of the fact, not a link
    which = "Phase 3 PROFILE 1007, which randomized 347 patients: response 65% with crizotinib"
    assert kept_reason(KEPT, which, PROFILE, ALK).text == which + SUPPORTS_ALK
    assert linked("Phase 3, 347 patients", "contradicts", ALK.text) == \
        "Phase 3, 347 patients, which goes against the claim that lung adenocarcinoma positive for ALK-FUSIONS is " \
        "sensitive to crizotinib."
    for written, problem in [
            ("Response rates were 65% for crizotinib treatment and 20% for chemotherapy", "copies"),
            ("Phase 3 trial in ALK NSCLC: response 75% with crizotinib", "states what the evidence does not: 75"),
            ("ALK fusions: 347 patients showed resistance to crizotinib", "reads as 'contradicts'"),
            (CUT + "Phase 3 PROFILE 1007 in 347 ALK-positive NSCLC patients: response 65% with", "cut"),
            (None, "no reason written")]:
        reason = kept_reason(KEPT, written, PROFILE, ALK)
        assert reason.source == "fallback" and reason.problem.startswith(problem), (written, reason)
        assert reason.text == ("Kept as supporting evidence: a phase 3 trial on the claim's subject (no reason "
                               "passed the check).")
        assert is_complete_sentence(reason.text, max_words=40)


def test_the_reasons_call_asks_the_local_model_not_to_retell_and_sends_a_hosted_model_nothing_of_llama_cpps():
    from langchain_openai import ChatOpenAI
    from openai_standin import KEY, Handler, standin_server

    from evidex.agents.grounded_writer import NO_RETELLING, safe_reasons, write_reasons
    from evidex.agents.models import LLAMA_CPP

    kept = [Evidence(id="1198", text=PROFILE)]
    with standin_server() as url:
        for metadata in ({LLAMA_CPP: True}, None):
            Handler.seen.clear()
            llm = ChatOpenAI(model="m", base_url=url, api_key=KEY, temperature=0, max_retries=0, metadata=metadata)
            # the stand-in's short text fails the schema's minimum length: the call falls back, the request is kept
            assert safe_reasons(lambda: write_reasons(llm, {"claim": ALK}, kept, words=20))[0] == {}
            assert len(Handler.seen) == 1 and Handler.seen[0]["schema"]
            assert Handler.seen[0]["dry"] == (NO_RETELLING if metadata else {})


def test_a_phrase_lifted_from_a_longer_sentence_is_a_fact_but_a_retold_sentence_is_a_copy():
    phrase = "Case report: patient found to harbor the ALK fusion by reverse transcription PCR"
    text = ("A 28 year-old patient with lung cancer that failed conventional therapy was found to harbor the ALK "
            "fusion by reverse transcription PCR and responded to crizotinib.")
    assert kept_reason_problem(phrase + ".", text, ALK.text) == "copies an evidence sentence"
    reason = kept_reason(KEPT, phrase, text, ALK)
    assert reason.source == "model" and reason.text == phrase + SUPPORTS_ALK
    assert kept_reason_problem(reason.text, text, ALK.text) is None
    whole = "Response rates were 65% for crizotinib treatment and 20% for chemotherapy"
    for written in (whole, whole + ", so it works"):
        assert kept_reason(KEPT, written, PROFILE, ALK).source == "fallback"


def test_the_worked_example_shows_the_real_calls_layout_and_every_fact_it_teaches_passes_the_check():
    """The reasons call's worked example is what the model imitates: it has the real call's layout (the claim
    without context fields, items shown by id) and each of its facts stands as a linked reason, not a fallback."""
    from evidex.agents.prompts import load_prompt
    user, reply = load_prompt("reasons_example_user"), json.loads(load_prompt("reasons_example_reply"))
    claim = Claim(text=re.search(r"^CLAIM: (.+)$", user, re.M).group(1))
    items = dict(re.findall(r"^\[(\w+)\] (.+)$", user, re.M))
    assert re.search(r"^CLAIM: .+\n\nEVIDENCE:\n", user, re.M), "the real call shows no context lines"
    assert list(reply) == list(items) and len(items) >= 3
    for item_id, fact in reply.items():
        decision = EvidenceDecision(id=item_id, source="given", label="supports", reason="", kept=True)
        reason = kept_reason(decision, fact, items[item_id], claim)
        assert reason.source == "model", (item_id, reason.problem)


def test_a_lead_that_states_a_design_or_count_the_item_does_not_is_restated_from_the_items_text():
    body = "response 65% with crizotinib vs 20% with chemotherapy"
    # "Phase 2, 10 patients" is neither the stated phase nor a stated count: the stated design replaces the lead
    assert kept_reason(KEPT, "Phase 2, 10 patients: " + body, PROFILE, ALK) == \
        Reason("Phase 3 trial: " + body + SUPPORTS_ALK, "model", fact="Phase 3 trial: " + body + ".")
    # an item that states no design: the lead is dropped
    plain = "Response was 65% with crizotinib and 20% with chemotherapy in ALK-positive NSCLC."
    assert kept_reason(KEPT, "Phase 3, 347 patients: " + body, plain, ALK).text == "Response 65% with crizotinib " \
        "vs 20% with chemotherapy" + SUPPORTS_ALK
    # a wrong fact past the lead is not mended
    wrong = kept_reason(KEPT, "Phase 2, 10 patients: response 75% with crizotinib", PROFILE, ALK)
    assert wrong.source == "fallback" and wrong.problem.startswith("states what the evidence does not")


def test_the_claims_own_summary_says_what_its_subject_is_after_the_verdict():
    context = {"Molecular Profile": "BRAF V600E", "Disease": "Melanoma", "Therapies": "Vemurafenib",
               "Molecular Profile Summary": "BRAF V600E is the most common BRAF mutation in melanoma. It activates "
                                            "MAPK signalling. It was the first target of a BRAF inhibitor."}
    about = background_of(context)
    assert about == ["BRAF V600E is the most common BRAF mutation in melanoma (molecular profile summary).",
                     "It activates MAPK signalling (molecular profile summary)."]
    assert background_of({"Disease": "Melanoma", "Therapies": "Vemurafenib, Cobimetinib"}) == []
    labels = {"2": "supports", "1": "supports"}
    reasons = {"1": Reason("Phase 3 trial of BRAF V600E melanoma: 48% responded to vemurafenib, so V600E predicts "
                           "response.", "model")}
    found = {"2": "BRAF V600E cell lines were sensitive to vemurafenib"}
    out = compose(CLAIM, labels, ["2", "1"], reasons, found, sentences=5, texts=TEXTS, background=about)
    sents = split_sentences(out.text)
    assert sents[1:3] == about and len(sents) == 5  # verdict, background, then the evidence
    assert [s["source"] for s in out.sentences] == ["verdict", "background", "background", "reason", "finding"]
    # the background only takes the room the evidence leaves, and the evidence sentences all cite
    short = compose(CLAIM, labels, ["2", "1"], reasons, found, sentences=4, texts=TEXTS, background=about)
    assert [s["source"] for s in short.sentences] == ["verdict", "background", "reason", "finding"]
    full = compose(CLAIM, labels, ["2", "1"], reasons, found, sentences=3, texts=TEXTS, background=about)
    assert [s["source"] for s in full.sentences] == ["verdict", "reason", "finding"]
    assert all(parse_citations(s) for s in split_sentences(out.text) if "summary)" not in s)
    # no kept item: no background either
    assert "summary" not in compose(CLAIM, {}, [], {}, {}, sentences=5, texts=TEXTS, background=about).text


def test_a_citation_goes_before_the_final_stop_even_after_a_quote():
    # 'a category." [3].' would split into a sentence without its citation and one of ids alone
    assert cited('It belongs to the "MiT family" category.".', ["3"]) == 'It belongs to the "MiT family" category" [3].'
    assert cited("Median PFS was 9.7 months.", ["885"]) == "Median PFS was 9.7 months [885]."
    from evidex.tools.text import split_sentences as scored_sentences  # the scorers' splitter

    quoted = cited('A new "category."', ["3"])
    assert scored_sentences(quoted + " Next one.") == ['A new "category" [3].', "Next one."]


def test_the_link_drops_the_claims_asides_before_it_runs_past_the_word_cap():
    claim = ("FLT3 tyrosine kinase domain mutations at residue D835 in relapsed / refractory acute myeloid leukemia "
             "(AML) are sensitive to Gilteritinib, a Type I FLT3 inhibitor.")
    fact = "Phase 1/2 trial, 252 patients: composite complete remission 41% with gilteritinib"
    text = linked(fact, "supports", claim)
    assert text.endswith("which supports the claim that FLT3 tyrosine kinase domain mutations at residue D835 in "
                         "relapsed / refractory acute myeloid leukemia are sensitive to Gilteritinib.")
    assert len(text.split()) <= 40
    # a fact so long that even the short claim would pass the cap is linked to "the claim" alone; it still has
    # to name the claim's entity itself to pass the check
    long_fact = ("Phase 1/2 trial of 252 relapsed or refractory patients with FLT3 D835 mutations: composite complete "
                 "remission 41% with gilteritinib and median survival 9.3 months")
    short = linked(long_fact, "supports", claim)
    assert short.endswith("9.3 months, which supports the claim.") and len(short.split()) <= 40


def test_a_set_aside_item_is_described_by_what_it_is_about_and_the_claim_it_belongs_to():
    text = "In a phase 1/2 trial, patients with relapsed AML with FLT3 D835 mutation received gilteritinib."
    owner = Claim(text="FLT3 D835 mutant AML is sensitive to gilteritinib")
    reason = dropped_reason(text, ALK, owner)
    assert reason.source == "code" and reason.text.startswith("Not about this claim: it is about ")
    assert "FLT3 D835" in reason.text and reason.text.endswith(
        ', and it fits the known claim "FLT3 D835 mutant AML is sensitive to gilteritinib" better.')
    # what the claim itself names is never given as what the item is about instead
    alone = dropped_reason("ALK fusions were found in 4% of lung adenocarcinoma treated with crizotinib.", ALK)
    assert alone.text == "Not about this claim: it ranks far from the claim among the evidence."
    assert is_complete_sentence(reason.text, max_words=40)
    # a name of several words is named whole, never as its words ("Criss, Angel and Las")
    bio = ("Christopher Nicholas Sarantakos, known by the stage name Criss Angel, is an American magician. Angel "
           "began his career in New York City, before moving to Las Vegas. Criss Angel starred in Mindfreak.")
    about = dropped_reason(bio, Claim(text="Eenasul Fateh, known by his stage name Aladin, worked as a consultant."))
    assert about.text == ("Not about this claim: it is about Criss Angel, Christopher Nicholas Sarantakos and "
                          "New York City.")


def test_the_reasons_schema_asks_one_required_key_per_id_with_capped_strings():
    schema = reasons_schema(["1", "2"], reason_chars=200)
    js = schema.model_json_schema()
    assert js["required"] == ["1", "2"]
    assert js["properties"]["1"]["maxLength"] == 200
    parsed = schema.model_validate({"1": "a reason here", "2": "another one"})
    assert parsed.k0 == "a reason here" and parsed.k1 == "another one"
    assert shown_item("1", "Response rates were 65%", PROFILE).text == "phase 3 trial: Response rates were 65%"


# -- the check ------------------------------------------------------------------------------------------------
LABELS = {"1": "supports", "2": "supports", "3": "contradicts"}
TEXTS = {"1": "A phase 3 trial: vemurafenib gave responses in 48% of BRAF V600E melanoma patients.",
         "2": "BRAF V600E cell lines were sensitive to vemurafenib.",
         "3": "A 50-year-old patient with BRAF V600E melanoma showed resistance to vemurafenib after six months."}
CLAIM = "BRAF V600E predicts response to vemurafenib in melanoma."


def test_a_sentence_against_its_label_or_on_both_sides_is_not_written():
    assert sentence_problem("Responses to vemurafenib were seen in 48% of patients.", ["1"], LABELS, CLAIM,
                            None, TEXTS) is None
    assert "reads as 'contradicts'" in sentence_problem("Patients showed resistance to vemurafenib.", ["1"],
                                                        LABELS, CLAIM, None, TEXTS)
    assert "both sides" in sentence_problem("Vemurafenib responses were seen.", ["1", "3"], LABELS, CLAIM,
                                            None, TEXTS)
    assert sentence_problem("The response rate was higher in", ["1"], LABELS, CLAIM, None, TEXTS) \
        == "not a finished sentence"
    never = lambda sentence, cited: False  # noqa: E731 - a judge that backs nothing
    assert sentence_problem("Responses were seen in 48% of patients.", ["1"], LABELS, CLAIM, never, TEXTS) \
        == "not supported by the evidence it cites"


def test_the_explanation_is_verdict_with_its_clinical_count_then_the_strongest_evidence():
    labels = {"2": "supports", "1": "supports"}
    reasons = {"1": Reason("Phase 3 trial of BRAF V600E melanoma: 48% responded to vemurafenib, so V600E predicts "
                           "response.", "model"),
               "2": Reason("Kept as supporting evidence: a cell study on the claim's subject (no reason passed the "
                           "check).", "fallback")}
    found = {"2": "BRAF V600E cell lines were sensitive to vemurafenib"}
    out = compose(CLAIM, labels, ["2", "1"], reasons, found, sentences=4, texts=TEXTS)
    sents = split_sentences(out.text)
    assert sents[0] == "BRAF V600E predicts response to vemurafenib in melanoma: all 2 kept items (1 clinical, " \
                       "1 preclinical) support this [2, 1]."
    # strongest first; the verdict has named the claim, so a supporting item's sentence is its fact alone
    assert sents[1] == "Phase 3 trial of BRAF V600E melanoma: 48% responded to vemurafenib [1]."
    assert sents[2] == "BRAF V600E cell lines were sensitive to vemurafenib [2]."  # no checked reason: its finding
    assert len(sents) == 3 and [s["source"] for s in out.sentences] == ["verdict", "reason", "finding"]
    assert all(parse_citations(s) for s in sents) and self_contradiction(out.text, labels, CLAIM) == []
    # mixed evidence: one side per verdict sentence
    mixed = compose(CLAIM, LABELS, ["1", "2", "3"], {}, {}, sentences=5, texts=TEXTS)
    assert "is mixed (" in mixed.text and mixed.verdict == "mixed"
    assert self_contradiction(mixed.text, LABELS, CLAIM) == [] and stance_consistency(mixed.text, LABELS, CLAIM)[0]
    # an item that goes against the claim keeps its link: the fact alone would not say which side it is on
    against_reason = {"3": Reason("A BRAF V600E melanoma patient resisted vemurafenib after six months, which goes "
                                  "against the claim.", "model")}
    sided = compose(CLAIM, LABELS, ["3"], against_reason, {}, sentences=5, texts=TEXTS)
    assert "which goes against the claim [3]." in sided.text
    assert fact_of("Too short, so V600E predicts response.") == "Too short, so V600E predicts response."
    # a finding worded against its item's label is not written
    against = compose(CLAIM, {"3": "supports"}, ["3"], {}, {"3": TEXTS["3"]}, sentences=4, texts=TEXTS)
    assert "resistance" not in against.text and against.sentences[1]["kept"] is False
    # two items whose sentences say the same: one sentence citing both, not the same sentence twice
    same = "BRAF V600E cell lines were sensitive to vemurafenib."
    twice = {"1": Reason(same, "model", fact=same), "2": Reason(same.lower().rstrip("."), "model")}
    texts = {**TEXTS, "1": TEXTS["2"], "4": "A phase 1 trial: 5 of 8 BRAF V600E melanoma patients responded."}
    out = compose(CLAIM, {"1": "supports", "2": "supports", "4": "supports"}, ["1", "2", "4"], twice,
                  {"4": texts["4"]}, sentences=4, texts=texts)
    assert split_sentences(out.text)[1:] == ["A phase 1 trial: 5 of 8 BRAF V600E melanoma patients responded [4].",
                                             "BRAF V600E cell lines were sensitive to vemurafenib [1, 2]."]
    assert [s.get("ids") for s in out.sentences[1:]] == [["4"], ["1", "2"]]


def test_reason_metrics_see_copies_fallbacks_and_discards_that_name_nothing():
    inp = ClaimInput(id="mixed-001", task="mixed", claims={"claim": ALK},
                     evidence=[Evidence(id="1198", text=PROFILE),
                               Evidence(id="9", text="FLT3 D835 mutant AML responded to gilteritinib.")])
    decisions = [KEPT.model_copy(update={"reason": "Supports the claim: Response rates were 65% for crizotinib "
                                                   "treatment and 20% for chemotherapy."}),
                 EvidenceDecision(id="9", source="given", label="irrelevant", kept=False,
                                  reason="Not about this claim: it is about FLT3 D835 mutant AML.")]
    pred = ClaimPrediction(id="mixed-001", task="mixed", decisions=decisions, evidence_texts={"1198": PROFILE},
                           verification={"reasons": {"1198": {"source": "model"}}})
    scores = reason_scores(pred, inp)
    assert scores["reason_links_claim"] == 0.0 and scores["reason_copied"] == 1.0
    assert (scores["reason_measure_n_items"], scores["reason_measure_n_correct"]) == (1, 1)  # "65%" stated
    assert scores["reason_fallback"] == 0.0 and scores["discard_names_other"] == 1.0
    decisions[1] = decisions[1].model_copy(update={"reason": "Not about this claim."})
    assert reason_scores(pred.model_copy(update={"decisions": decisions}), inp)["discard_names_other"] == 0.0


# -- the graph ------------------------------------------------------------------------------------------------
def _grounded(task: str = "mixed", *extra: str):
    return config_for_task(task, ["dataset.limit=3", *extra])


def _inputs(kit, cfg, n: int):
    from evidex.tools.claim_data import load_task

    kit.require_task_data(cfg.task)
    return [it.input for it in load_task(cfg.task, limit=n, shuffle=cfg.dataset.shuffle, seed=cfg.dataset.seed)]


def test_the_graph_wires_findings_stance_and_a_self_checking_writer(kit, embedder, kb_index):
    assert config_for_task("mixed").judge.llm_stance is False  # measured: the gate's "supports" beats the model
    assert config_for_task("r4c").judge.llm_stance is False
    cfg = _grounded("mixed", "judge.llm_stance=true")
    responder = kit.Responder()
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    nodes = set(graph.get_graph().nodes)
    assert {"findings", "stance", "write"} <= nodes and not {"verify", "revise"} & nodes
    default = build_graph(_grounded("mixed"), llm=ScriptedChatModel(responses=responder), embedder=embedder,
                          index=kb_index)
    assert {"findings", "write"} <= set(default.get_graph().nodes) and "stance" not in default.get_graph().nodes


@pytest.mark.shared_data
def test_grounded_run_gives_whole_reasons_and_explanations_that_cannot_contradict_themselves(kit, embedder, kb_index):
    cfg = _grounded("mixed", "judge.llm_stance=true")
    label = lambda i: "contradicts" if int(i) % 5 == 0 else "supports"  # noqa: E731 - some of each
    responder = kit.Responder(stance_label=label)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    for inp in _inputs(kit, cfg, 3):
        pred = graph.invoke({"input": inp})["prediction"]
        text = pred.explanations["claim"]
        labels = {d.id: d.label for d in pred.decisions if d.kept}
        assert VERDICT.search(split_sentences(text)[0]) or text.startswith("There is not enough"), text
        scores = trust_scores(pred)
        assert scores["reason_complete"] == 1.0 and scores["self_contradiction"] == 0.0
        assert set(parse_citations(text)) <= set(labels)
        assert all(d.basis for d in pred.decisions if d.kept or d.source == "given")
        assert pred.verification["claim"]["verdict"] in ("supported", "mixed", "refuted")
        assert set(pred.verification["reasons"]) == {d.id for d in pred.decisions if d.kept or d.source == "given"}
    asked = [c for c in responder.calls if c.role == "reasons"]
    again = [c for before, c in zip(asked, asked[1:]) if set(c.ids) <= set(before.ids)]  # only the failed items
    assert len(asked) - len(again) == 3 and len(again) <= 3 and "writer" not in responder.roles()


@pytest.mark.shared_data
def test_a_malformed_reasons_reply_still_gives_reasons_and_an_explanation(kit, embedder, kb_index):
    cfg = _grounded()
    responder = kit.Responder(hook=lambda call: "not json at all" if call.role == "reasons" else None)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    pred = graph.invoke({"input": _inputs(kit, cfg, 1)[0]})["prediction"]
    assert "reasons_failed" in pred.verification["claim"]
    kept = {d.id for d in pred.decisions if d.kept}
    assert {r["source"] for i, r in pred.verification["reasons"].items() if i in kept} == {"fallback"}
    assert VERDICT.search(split_sentences(pred.explanations["claim"])[0]) and parse_citations(pred.explanations["claim"])
    assert json.dumps(pred.verification)  # the record is plain data
    kept = [d for d in pred.decisions if d.kept]
    assert all(d.reason.startswith("Kept as supporting evidence") for d in kept)


def _unbacked_first(kit, responder_box: list, again: bool):
    """A hook: the first reasons call states a number no item has; later calls do so too when ``again``."""
    def hook(call):
        if call.role != "reasons":
            return None
        if sum(c.role == "reasons" for c in responder_box[0].calls) > 1 and not again:
            return None
        return json.dumps({i: f"Evidence on it: 98765 patients had {i}, which bears on the claim."
                           for i in kit.evidence_lines(call.prompt)})
    return hook


@pytest.mark.shared_data
def test_a_fact_that_fails_is_asked_once_more_alone_and_falls_back_only_when_it_fails_again(kit, embedder,
                                                                                              kb_index):
    cfg = _grounded()
    box: list = []
    responder = kit.Responder(hook=_unbacked_first(kit, box, again=False))
    box.append(responder)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    pred = graph.invoke({"input": _inputs(kit, cfg, 1)[0]})["prediction"]
    first, second = [c for c in responder.calls if c.role == "reasons"]
    assert second.ids == first.ids  # every fact failed, so every item is asked again, and nothing else
    records = pred.verification["reasons"]
    assert all(records[i] == {"source": "model", "retried": True} for i in first.ids)
    assert all("98765" not in d.reason for d in pred.decisions)

    box.clear()
    responder = kit.Responder(hook=_unbacked_first(kit, box, again=True))
    box.append(responder)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    pred = graph.invoke({"input": _inputs(kit, cfg, 1)[0]})["prediction"]
    assert [c.role for c in responder.calls].count("reasons") == 2  # once more, not until it passes
    assert "second_reasons_failed" not in pred.verification["claim"]
    records = pred.verification["reasons"]
    assert all(records[i]["source"] == "fallback" and records[i]["problem"].startswith("states what the evidence")
               for i in first.ids)


@pytest.mark.shared_data
def test_a_second_reasons_reply_that_never_fits_is_recorded_and_the_fallbacks_stay(kit, embedder, kb_index):
    cfg = _grounded()
    box: list = []
    first = _unbacked_first(kit, box, again=False)
    responder = kit.Responder(hook=lambda call: first(call) if sum(c.role == "reasons" for c in box[0].calls) < 2
                              else ("not json at all" if call.role == "reasons" else None))
    box.append(responder)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    pred = graph.invoke({"input": _inputs(kit, cfg, 1)[0]})["prediction"]
    assert "second_reasons_failed" in pred.verification["claim"]
    kept = [d for d in pred.decisions if d.kept]
    assert kept and all(pred.verification["reasons"][d.id]["source"] == "fallback" for d in kept)


@pytest.mark.shared_data
def test_reasons_written_by_the_model_stand_and_name_what_discards_are_about(kit, embedder, kb_index):
    cfg = _grounded()
    responder = kit.Responder()
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    inp = _inputs(kit, cfg, 1)[0]
    pred = graph.invoke({"input": inp})["prediction"]
    records = pred.verification["reasons"]
    shown = [d for d in pred.decisions if d.kept][:FINDINGS_SHOWN]
    assert all(records[d.id]["source"] == "model" for d in shown)
    scores = reason_scores(pred, inp)
    assert scores["reason_links_claim"] == 1.0 and scores["reason_copied"] == 0.0
    call = next(c for c in responder.calls if c.role == "reasons")
    dropped = [d.id for d in pred.decisions if d.source == "given" and not d.kept]
    assert dropped and not any(f"[{i}]" in call.prompt for i in dropped)  # set-aside items are named by code
    assert all(d.reason.startswith("Not about this claim: it is about") for d in pred.decisions if d.id in dropped)
    assert all(records[i]["source"] == "code" for i in dropped)
    assert scores["discard_names_other"] == 1.0


def test_the_model_as_support_judge_reads_a_boolean_and_fails_closed():
    from evidex.agents.support_check import llm_judge

    seen = []

    def reply(prompt: str) -> str:
        seen.append(prompt)
        return json.dumps({"supported": "48%" in prompt.split("SENTENCE:")[1]})

    judge = llm_judge(ScriptedChatModel(responses=reply))
    assert judge("Responses were seen in 48% of patients.", [TEXTS["1"]]) is True
    assert judge("Responses were seen in 90% of patients.", [TEXTS["1"]]) is False
    assert judge("Anything.", []) is False and len(seen) == 2  # nothing cited: no call, not supported
    broken = llm_judge(ScriptedChatModel(responses=lambda p: "no json here"))
    assert broken("Responses were seen in 48% of patients.", [TEXTS["1"]]) is False


@pytest.mark.shared_data
def test_wrong_claim_explanations_say_what_the_verdict_says(kit, embedder, kb_index):
    """wrong_claim: when too few given items are about the claim the graph answers "not supported"; the grounded
    explanation then says so, citing nothing, and a supported control opens with "supports"."""
    cfg = _grounded("wrong_claim", "dataset.limit=2")
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=kit.Responder()), embedder=embedder, index=kb_index)
    preds = [graph.invoke({"input": inp})["prediction"] for inp in _inputs(kit, cfg, 4)]
    assert {p.supported for p in preds} == {True, False}  # the check can fail both ways
    for p in preds:
        text = p.explanations["claim"]
        if p.supported:
            assert re.search(r": (all \d+ kept items|the one kept item).* supports? this \[", split_sentences(text)[0])
        else:
            assert text.startswith("The evidence does not support the claim") and not parse_citations(text)


@pytest.mark.parametrize("claim", ["Crizotinib did not improve survival in ALK-negative lung cancer",
                                   "KIT D816V confers resistance to imatinib",
                                   "EGFR T790M fails to respond to erlotinib"])
def test_a_claim_stated_first_does_not_read_as_contradicting_its_supporting_items(claim):
    text = verdict_sentences(claim, ["1", "2"], [], "2 clinical")[0]
    assert text.startswith(claim.split()[0]) and text.endswith("support this [1, 2].")
    labels = {"1": "supports", "2": "supports"}
    assert self_contradiction(text, labels, claim) == [] and stance_consistency(text, labels, claim) == (2, 2)

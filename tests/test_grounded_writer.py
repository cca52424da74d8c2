"""The grounded writer (issue 24) without a real model: findings are spans of the evidence that stay sentences,
reasons are finished sentences, the explanation opens with the verdict the labels add up to, and a model sentence
that contradicts a label, cites both sides or is not backed by what it cites is dropped, never kept."""
from __future__ import annotations

import json

import numpy as np
import pytest

from evidex.agents.grounded_writer import (CUT, compose, reason_sentence, sentence_problem, verdict_of,
                                           verdict_sentences)
from evidex.agents.scripted import ScriptedChatModel
from evidex.evaluators.trust import self_contradiction, stance_consistency, trust_scores
from evidex.graphs import build_graph, config_for_task
from evidex.tools.cited_text import is_complete_sentence, parse_citations, split_sentences
from evidex.tools.claims import EvidenceDecision
from evidex.tools.findings import candidate_spans, findings, shortened


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
        "The evidence supports the claim that HER2 amplification predicts sensitivity [9]."
    assert "not enough evidence" in verdict_sentences("X is Y", [], [])[0]


@pytest.mark.parametrize("label, kept", [("supports", True), ("contradicts", True), ("irrelevant", False)])
def test_every_reason_is_a_finished_sentence_within_25_words(label, kept):
    d = EvidenceDecision(id="7", source="given", label=label, reason="gate note", kept=kept)
    finding = " ".join(["Patients"] + ["responded"] * 20)  # a 21-word finding, the longest allowed
    for f in (finding, None, "Responses were durable."):
        assert is_complete_sentence(reason_sentence(d, f))


# -- the check ------------------------------------------------------------------------------------------------
LABELS = {"1": "supports", "2": "supports", "3": "contradicts"}
TEXTS = {"1": "Vemurafenib gave responses in 48% of BRAF V600E melanoma patients.",
         "2": "BRAF V600E cell lines were sensitive to vemurafenib.",
         "3": "Patients with BRAF V600E melanoma showed resistance to vemurafenib after six months."}
CLAIM = "BRAF V600E predicts response to vemurafenib in melanoma."


def test_a_model_sentence_against_its_label_or_on_both_sides_is_dropped():
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


def test_compose_keeps_checked_model_sentences_and_fills_with_findings():
    found = {"1": "Vemurafenib gave responses in 48% of BRAF V600E melanoma patients",
             "2": "BRAF V600E cell lines were sensitive to vemurafenib"}
    labels = {"1": "supports", "2": "supports"}
    why = [("Patients failed vemurafenib entirely", ["1"]),  # against the label: dropped
           ("Responses and sensitivity both point to benefit from vemurafenib", ["1", "2"])]
    out = compose(CLAIM, labels, ["1", "2"], found, why, sentences=4, labels_texts=TEXTS, judge=None)
    sents = split_sentences(out.text)
    assert sents[0].startswith("The evidence supports the claim that BRAF V600E")
    assert "failed" not in out.text and "point to benefit" in out.text
    assert [s["source"] for s in out.sentences if s["kept"]] == ["verdict", "model", "finding", "finding"]
    assert len(sents) == 4 and self_contradiction(out.text, labels) == []
    assert out.record()["model_sentences"] == 2 and out.record()["model_sentences_kept"] == 1
    # a sentence the grammar closed at its length cap was cut, even when its last word looks finished
    cut = compose(CLAIM, labels, ["1", "2"], found, [(CUT + "Responses were seen in the combination-thera", ["1"])],
                  sentences=4, labels_texts=TEXTS, judge=None)
    assert "thera" not in cut.text and cut.sentences[1]["problem"] == "cut at the length cap"


# -- the graph ------------------------------------------------------------------------------------------------
def _grounded(task: str = "mixed", *extra: str):
    return config_for_task(task, ["speed.path=grounded", "dataset.limit=3", *extra])


def _inputs(kit, cfg, n: int):
    from evidex.tools.claim_data import load_task

    kit.require_task_data(cfg.task)
    return [it.input for it in load_task(cfg.task, limit=n, shuffle=cfg.dataset.shuffle, seed=cfg.dataset.seed)]


def test_grounded_preset_wires_findings_stance_and_a_self_checking_writer(kit, embedder, kb_index):
    assert config_for_task("mixed").speed.path == "grounded" and config_for_task("r4c").speed.path == "grounded"
    assert config_for_task("mixed").judge.llm_stance is False  # measured: the gate's "supports" beats the model
    cfg = _grounded("mixed", "judge.llm_stance=true")
    assert cfg.explain.mode == "grounded" and cfg.prompts.style == "grounded" and cfg.judge.stance_batch
    responder = kit.Responder()
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    nodes = set(graph.get_graph().nodes)
    assert {"findings", "stance", "write"} <= nodes and not {"verify", "revise"} & nodes


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
        assert text.split(" ", 2)[:2] == ["The", "evidence"] or text.startswith("There is not enough")
        scores = trust_scores(pred)
        assert scores["reason_complete"] == 1.0 and scores["self_contradiction"] == 0.0
        assert set(parse_citations(text)) <= set(labels)
        assert all(d.basis for d in pred.decisions if d.kept or d.source == "given")
        assert pred.verification["claim"]["verdict"] in ("supported", "mixed", "refuted")
    assert "why" in responder.roles() and "writer" not in responder.roles()


@pytest.mark.shared_data
def test_a_malformed_why_reply_still_gives_an_explanation(kit, embedder, kb_index):
    cfg = _grounded()
    responder = kit.Responder(hook=lambda call: "not json at all" if call.role == "why" else None)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    pred = graph.invoke({"input": _inputs(kit, cfg, 1)[0]})["prediction"]
    record = pred.verification["claim"]
    assert "why_failed" in record and record["model_sentences"] == 0
    assert pred.explanations["claim"].startswith("The evidence") and parse_citations(pred.explanations["claim"])


@pytest.mark.shared_data
def test_no_why_sentences_means_no_model_call_for_writing(kit, embedder, kb_index):
    cfg = _grounded("mixed", "explain.why_sentences=0")
    responder = kit.Responder()
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    pred = graph.invoke({"input": _inputs(kit, cfg, 1)[0]})["prediction"]
    assert "why" not in responder.roles() and pred.explanations["claim"]
    assert json.dumps(pred.verification)  # the record is plain data


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
            assert text.startswith("The evidence supports the claim")
        else:
            assert text.startswith("The evidence does not support the claim") and not parse_citations(text)

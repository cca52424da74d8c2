"""Explainer metrics (evaluators.explainers), statistics (evaluators.stats) and RAGAS (evaluators.ragas_metrics).

Expected values are computed by hand in the comments. A bag-of-words embedder over a fixed vocabulary makes
cosines exact fractions; one test uses the real MiniLM model.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from evidex.evaluators.explainers import (
    COVERAGE_KEY, aggregate, content_tokens, fact_coverage, score_item, split_sentences,
)
from evidex.tools.claims import Claim, ClaimInput, ClaimPrediction, EvidenceDecision, Evidence, Gold
from evidex.evaluators.ragas_metrics import RagasSample, count_nan, ragas_scores
from evidex.evaluators.stats import bootstrap_ci, micro_prf, prf_from_counts, summarize

nan = float("nan")
isnan = math.isnan


# -- fixtures / builders --------------------------------------------------------------------------------------
VOCAB = ("braf mutation predicts response resistance trial enrolled patients adults does predict "
         "vemurafenib melanoma").split()


class BowEmbedder(Embeddings):
    """Counts of VOCAB words (others ignored): cosine = overlap / sqrt(|a|*|b|) for sets of distinct words."""

    def __init__(self) -> None:
        self.index = {w: i for i, w in enumerate(VOCAB)}
        self.calls = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), len(self.index)))
        for row, text in enumerate(texts):
            for tok in re.findall(r"[a-z0-9]+", text.lower()):
                if tok in self.index:
                    out[row, self.index[tok]] += 1
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()


@pytest.fixture
def bow() -> BowEmbedder:
    return BowEmbedder()


def ev(*ids: str) -> list[Evidence]:
    return [Evidence(id=i, text=f"evidence text {i}") for i in ids]


def make_input(task: str, ids: tuple[str, ...] = ("1", "2", "3", "4"), keys: tuple[str, ...] = ("claim",),
               evidence: list[Evidence] | None = None) -> ClaimInput:
    return ClaimInput(id=f"{task}-x", task=task, claims={k: Claim(text=f"claim {k}") for k in keys},
                      evidence=evidence if evidence is not None else ev(*ids))


def make_pred(task: str, **kw) -> ClaimPrediction:
    return ClaimPrediction(id=f"{task}-x", task=task, **kw)


# -- evidence recovery ----------------------------------------------------------------------------------------
def test_recovery_hand_values(bow):
    s = score_item(make_input("missing_evidence"), Gold(missing_ids=["2", "3", "4"]),
                   make_pred("missing_evidence", added_ids=["1", "2", "3"]), embedder=bow)
    # added {1,2,3} vs missing {2,3,4}: tp=2, fp=1, fn=1 -> P = R = F1 = 2/3
    assert s["recovery_precision"] == pytest.approx(2 / 3)
    assert s["recovery_recall"] == pytest.approx(2 / 3)
    assert s["recovery_f1"] == pytest.approx(2 / 3)
    assert (s["recovery_tp"], s["recovery_fp"], s["recovery_fn"]) == (2.0, 1.0, 1.0)
    assert "discard_precision" not in s and "selection_accuracy" not in s
    assert s["false_discard_rate"] == 0.0  # missing_evidence has no wrong items


def test_recovery_zero_conventions(bow):
    inp = make_input("missing_evidence")
    # nothing added, two missing: precision undefined (NaN), recall 0, F1 0 (a real miss)
    s = score_item(inp, Gold(missing_ids=["7", "8"]), make_pred("missing_evidence"), embedder=bow)
    assert isnan(s["recovery_precision"]) and s["recovery_recall"] == 0.0 and s["recovery_f1"] == 0.0
    # one added, nothing missing: precision 0, recall undefined, F1 0
    s = score_item(inp, Gold(), make_pred("missing_evidence", added_ids=["9"]), embedder=bow)
    assert s["recovery_precision"] == 0.0 and isnan(s["recovery_recall"]) and s["recovery_f1"] == 0.0
    # both empty: every ratio undefined
    s = score_item(inp, Gold(), make_pred("missing_evidence"), embedder=bow)
    assert all(isnan(s[f"recovery_{m}"]) for m in ("precision", "recall", "f1"))


def test_prf_from_counts_matches_harmonic_mean():
    prf = prf_from_counts(3, 1, 2)  # P=3/4, R=3/5, F1 = 2PR/(P+R) = 6/9
    assert (prf.precision, prf.recall) == (0.75, 0.6)
    assert prf.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35) == pytest.approx(2 / 3)
    assert isnan(micro_prf([]).f1)


def test_recovery_micro_aggregate(bow):
    inp, task = make_input("missing_evidence"), "missing_evidence"
    items = [
        score_item(inp, Gold(missing_ids=["2", "3", "4"]), make_pred(task, added_ids=["1", "2", "3"]), embedder=bow),
        score_item(inp, Gold(missing_ids=["5", "6"]), make_pred(task), embedder=bow),  # (0, 0, 2)
        score_item(inp, Gold(missing_ids=["7"]), make_pred(task, added_ids=["7"]), embedder=bow),  # (1, 0, 0)
    ]
    agg = aggregate(items, n_boot=200)
    # summed counts tp=3, fp=1, fn=3: P = 3/4, R = 3/6, F1 = 6/10
    assert agg["recovery_precision_micro"]["mean"] == pytest.approx(0.75)
    assert agg["recovery_recall_micro"]["mean"] == pytest.approx(0.5)
    assert agg["recovery_f1_micro"]["mean"] == pytest.approx(0.6)
    assert agg["recovery_f1_micro"]["ci_low"] <= 0.6 <= agg["recovery_f1_micro"]["ci_high"]
    # macro precision skips the undefined item but counts it: (2/3 + 1) / 2
    assert agg["recovery_precision"]["mean"] == pytest.approx(5 / 6)
    assert (agg["recovery_precision"]["n"], agg["recovery_precision"]["n_nan"]) == (2, 1)
    assert agg["recovery_recall"]["mean"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert "recovery_tp" not in agg  # raw counts are not averaged


# -- wrong evidence -------------------------------------------------------------------------------------------
def test_discard_hand_values(bow):
    inp = make_input("wrong_evidence", ids=("1", "2", "3", "4", "5"))
    s = score_item(inp, Gold(wrong_ids=["4", "5"]), make_pred("wrong_evidence", discarded_ids=["3", "4"]),
                   embedder=bow)
    # discarded {3,4} vs wrong {4,5}: tp=1, fp=1, fn=1
    assert (s["discard_precision"], s["discard_recall"], s["discard_f1"]) == (0.5, 0.5, 0.5)
    assert "false_discard_rate" not in s and "recovery_precision" not in s


def test_mixed_has_recovery_and_discard(bow):
    s = score_item(make_input("mixed"), Gold(missing_ids=["9"], wrong_ids=["4"]),
                   make_pred("mixed", added_ids=["9"], discarded_ids=[]), embedder=bow)
    assert s["recovery_f1"] == 1.0
    assert isnan(s["discard_precision"]) and s["discard_recall"] == 0.0 and s["discard_f1"] == 0.0


def test_false_discard_rate_baseline(bow):
    s = score_item(make_input("baseline"), Gold(), make_pred("baseline", discarded_ids=["1"]), embedder=bow)
    assert s["false_discard_rate"] == 0.25  # 1 of 4 correct items dropped
    assert not any(k.startswith(("discard_", "recovery_")) for k in s)


def test_wrong_claim_item_and_control(bow):
    inp = make_input("wrong_claim", ids=("1", "2"))
    s = score_item(inp, Gold(wrong_ids=["1", "2"], supported=False),
                   make_pred("wrong_claim", supported=False, discarded_ids=["1", "2"]), embedder=bow)
    assert s["wrong_claim_accuracy"] == 1.0 and s["discard_f1"] == 1.0
    # Control (supported) as ibe.py builds it: wrong_ids still lists its own evidence -> treated as nothing wrong.
    control = score_item(inp, Gold(wrong_ids=["1", "2"], supported=True),
                         make_pred("wrong_claim", supported=None, discarded_ids=["2"]), embedder=bow)
    assert control["wrong_claim_accuracy"] == 0.0  # None counts as wrong
    assert control["false_discard_rate"] == 0.5 and "discard_f1" not in control
    flipped = score_item(inp, Gold(supported=True), make_pred("wrong_claim", supported=False), embedder=bow)
    assert flipped["wrong_claim_accuracy"] == 0.0


# -- selection / assignment -----------------------------------------------------------------------------------
@pytest.mark.parametrize("selected, expected", [("B", 1.0), ("A", 0.0), (None, 0.0)])
def test_selection_accuracy(bow, selected, expected):
    s = score_item(make_input("selection", keys=("A", "B")), Gold(correct_claim="B"),
                   make_pred("selection", selected_claim=selected), embedder=bow)
    assert s["selection_accuracy"] == expected
    assert "assignment_item_accuracy" not in s and "wrong_claim_accuracy" not in s


ASSIGN_GOLD = Gold(assignment={"1": "A", "2": "A", "3": "B", "4": "neither"})


def test_assignment_item_and_pair(bow):
    inp = make_input("assignment", keys=("A", "B"))
    s = score_item(inp, ASSIGN_GOLD, make_pred("assignment", assignment={"1": "A", "2": "B", "3": "B",
                                                                         "4": "neither"}), embedder=bow)
    assert s["assignment_item_accuracy"] == 0.75 and s["assignment_pair_accuracy"] == 0.0
    assert s["assignment_claim_recall"] == pytest.approx(2 / 3) and s["assignment_neither_recall"] == 1.0
    perfect = score_item(inp, ASSIGN_GOLD, make_pred("assignment", assignment=dict(ASSIGN_GOLD.assignment)),
                         embedder=bow)
    assert perfect["assignment_item_accuracy"] == 1.0 and perfect["assignment_pair_accuracy"] == 1.0
    # an item without a prediction is wrong
    partial = score_item(inp, ASSIGN_GOLD, make_pred("assignment", assignment={"1": "A", "2": "A", "3": "B"}),
                         embedder=bow)
    assert partial["assignment_item_accuracy"] == 0.75 and partial["assignment_neither_recall"] == 0.0
    agg = aggregate([s, perfect, partial], n_boot=100)
    assert agg["assignment_pair_accuracy"]["mean"] == pytest.approx(1 / 3)
    assert agg["assignment_item_accuracy_micro"]["mean"] == pytest.approx(10 / 12)


def test_assignment_falls_back_to_decisions(bow):
    decisions = [EvidenceDecision(id=i, source="given", label="supports", reason="r", kept=True, claim=c)
                 for i, c in (("1", "A"), ("2", "A"), ("3", "A"), ("4", "neither"))]
    s = score_item(make_input("assignment", keys=("A", "B")), ASSIGN_GOLD,
                   make_pred("assignment", decisions=decisions), embedder=bow)
    assert s["assignment_item_accuracy"] == 0.75


# -- citations / golden facts ---------------------------------------------------------------------------------
def test_citation_validity(bow):
    s = score_item(make_input("baseline"), Gold(),
                   make_pred("baseline", kept_ids=["1", "2"], cited_ids={"claim": ["1", "3", "1"]}), embedder=bow)
    assert s["citation_validity"] == 0.5 and s["cites_any"] == 1.0  # {1, 3}: one of two kept
    s = score_item(make_input("assignment", keys=("A", "B")), Gold(),
                   make_pred("assignment", kept_ids=["1"], cited_ids={"A": ["1"], "B": ["1", "9"]}), embedder=bow)
    assert s["citation_validity"] == pytest.approx(2 / 3)
    s = score_item(make_input("baseline"), Gold(), make_pred("baseline", kept_ids=["1"]), embedder=bow)
    assert isnan(s["citation_validity"]) and s["cites_any"] == 0.0


def test_golden_fact_coverage(bow):
    evidence = [Evidence(id="p1", text="Fateh worked as a consultant in Dhaka."),
                Evidence(id="p2", text="Paris is the capital of France.")]
    inp = make_input("r4c", evidence=evidence)
    gold = Gold(golden_facts=["Eenasul Fateh was a management consultant",  # {eenasul,fateh,management,consultant}
                              "Paris is the capital of France",  # {paris, capital, france}
                              "It was the one"])  # only stopwords: cannot be checked, left out
    pred = make_pred("r4c", kept_ids=["p1"], evidence_texts={"p1": evidence[0].text})
    s = score_item(inp, gold, pred, embedder=bow)
    # fact 1: fateh+consultant = 2/4 >= 0.5 covered; fact 2: 0/3 -> coverage 1/2; all paragraphs cover both
    assert s["golden_fact_coverage"] == 0.5 and s["golden_fact_coverage_ceiling"] == 1.0
    # evidence_texts missing: fall back to the kept ids' input texts
    s = score_item(inp, gold, make_pred("r4c", kept_ids=["p2"]), embedder=bow)
    assert s["golden_fact_coverage"] == 0.5
    assert score_item(inp, gold, make_pred("r4c"), embedder=bow)["golden_fact_coverage"] == 0.0
    assert content_tokens("The BRAF-V600E is in it") == {"braf", "v600e"}
    assert isnan(fact_coverage(["of the"], ["anything"]))


# -- explanations ---------------------------------------------------------------------------------------------
def test_split_sentences():
    text = "Drugs, e.g. Vemurafenib, work in BRAF V600E. Patients improved!  Was it? yes it was.\n\nNew para"
    assert split_sentences(text) == ["Drugs, e.g. Vemurafenib, work in BRAF V600E.", "Patients improved!",
                                     "Was it? yes it was.", "New para"]
    assert split_sentences("") == [] and split_sentences("One sentence") == ["One sentence"]


GOLD_EXPL = "BRAF mutation predicts response. Trial enrolled patients."
GEN_EXPL = "BRAF mutation predicts resistance. Trial enrolled adults."


def test_explanation_similarity_and_completeness(bow):
    s = score_item(make_input("baseline"), Gold(explanations={"claim": GOLD_EXPL}),
                   make_pred("baseline", explanations={"claim": GEN_EXPL}), embedder=bow)
    # whole texts: 7 vs 7 distinct vocab words, 5 shared -> 5/7
    assert s["explanation_similarity"] == pytest.approx(5 / 7)
    # gold sentence 1 best match 3/4, gold sentence 2 best match 2/3 -> mean 17/24; only 3/4 >= 0.7
    assert s["explanation_completeness"] == pytest.approx((0.75 + 2 / 3) / 2)
    assert s[COVERAGE_KEY] == 0.5


def test_empty_explanation_scores_zero_without_embedding(bow):
    s = score_item(make_input("baseline"), Gold(explanations={"claim": GOLD_EXPL}),
                   make_pred("baseline", explanations={"claim": "  "}), embedder=bow)
    assert (s["explanation_similarity"], s["explanation_completeness"], s[COVERAGE_KEY]) == (0.0, 0.0, 0.0)
    assert bow.calls == 0


def test_explanation_mean_over_keys_and_selection_fallback(bow):
    gold = Gold(explanations={"A": GOLD_EXPL, "B": GOLD_EXPL})
    s = score_item(make_input("assignment", keys=("A", "B")), gold,
                   make_pred("assignment", explanations={"A": GOLD_EXPL, "B": ""}), embedder=bow)
    assert s["explanation_similarity"] == pytest.approx(0.5)  # (1 + 0) / 2
    assert s["explanation_completeness"] == pytest.approx(0.5) and s[COVERAGE_KEY] == pytest.approx(0.5)
    # selection: gold is keyed by the right claim; the model explained the claim it (wrongly) selected
    s = score_item(make_input("selection", keys=("A", "B")), Gold(explanations={"B": GOLD_EXPL}, correct_claim="B"),
                   make_pred("selection", selected_claim="A", explanations={"A": GEN_EXPL}), embedder=bow)
    assert s["selection_accuracy"] == 0.0 and s["explanation_similarity"] == pytest.approx(5 / 7)


def test_real_minilm_similarity():
    same = "BRAF V600E predicts sensitivity to vemurafenib in melanoma."
    other = "The recipe calls for two cups of flour and a pinch of salt."
    gold = Gold(explanations={"claim": same})
    s_same = score_item(make_input("baseline"), gold, make_pred("baseline", explanations={"claim": same}))
    s_other = score_item(make_input("baseline"), gold, make_pred("baseline", explanations={"claim": other}))
    assert s_same["explanation_similarity"] == pytest.approx(1.0, abs=1e-4)
    assert s_same[COVERAGE_KEY] == 1.0
    assert s_other["explanation_similarity"] < 0.5 and s_other[COVERAGE_KEY] == 0.0


# -- statistics -----------------------------------------------------------------------------------------------
VALUES = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2, 0.55, 0.6]


def test_bootstrap_ci_deterministic_and_contains_mean():
    low, high = bootstrap_ci(VALUES)
    assert (low, high) == bootstrap_ci(VALUES)  # same seed, same interval
    assert bootstrap_ci(VALUES, seed=1) != (low, high)
    mean = float(np.mean(VALUES))
    assert min(VALUES) <= low < mean < high <= max(VALUES)
    # a wider confidence level gives a wider interval
    low99, high99 = bootstrap_ci(VALUES, alpha=0.01)
    assert low99 <= low and high99 >= high
    assert bootstrap_ci([0.5] * 10) == (0.5, 0.5) and bootstrap_ci([0.3]) == (0.3, 0.3)
    assert all(isnan(x) for x in bootstrap_ci([nan, None]))


def test_summarize_counts_nan():
    s = summarize([1.0, nan, None, 0.0, 0.5])
    assert (s.mean, s.n, s.n_nan) == (0.5, 3, 2)
    assert s.ci_low <= 0.5 <= s.ci_high
    empty = summarize([nan])
    assert isnan(empty.mean) and (empty.n, empty.n_nan) == (0, 1)


def test_aggregate_only_counts_applicable_items(bow):
    base = score_item(make_input("baseline"), Gold(), make_pred("baseline", discarded_ids=["1", "2"]), embedder=bow)
    wrong = score_item(make_input("wrong_evidence"), Gold(wrong_ids=["4"]),
                       make_pred("wrong_evidence", discarded_ids=["4"]), embedder=bow)
    agg = aggregate([base, wrong], n_boot=100)
    assert agg["false_discard_rate"] == {"mean": 0.5, "ci_low": 0.5, "ci_high": 0.5, "n": 1, "n_nan": 0}
    assert agg["discard_f1_micro"]["mean"] == 1.0 and agg["discard_f1"]["n"] == 1
    assert agg["cites_any"]["n"] == 2 and agg["citation_validity"]["n_nan"] == 2


# -- RAGAS with fake chat models ------------------------------------------------------------------------------
STATEMENTS = ["BRAF V600E predicts response to vemurafenib.", "Melanoma patients were enrolled."]


class RoutingJudge(BaseChatModel):
    """Answers each ragas prompt with JSON chosen by the output schema named in the prompt (deps.md §4)."""

    verdicts: list[int] = [1, 1]
    question: str = "Does BRAF predict?"
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "routing-judge"

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        prompt = "\n".join(str(m.content) for m in messages)
        if '"noncommittal"' in prompt:
            payload = {"question": self.question, "noncommittal": 0}
        elif '"verdict"' in prompt and '"statements"' in prompt:  # NLI over the statements
            payload = {"statements": [{"statement": s, "reason": "stated in context", "verdict": v}
                                      for s, v in zip(STATEMENTS, self.verdicts)]}
        elif '"statements"' in prompt:  # statement generation
            payload = {"statements": STATEMENTS}
        else:
            payload = {}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=json.dumps(payload)))])


class MalformedJudge(RoutingJudge):
    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Sure! Here it is, not json."))])


SAMPLE = RagasSample(user_input="Does BRAF V600E predict response?",
                     response="BRAF V600E predicts response to vemurafenib. Melanoma patients were enrolled.",
                     retrieved_contexts=["In a trial, melanoma patients with BRAF V600E responded to vemurafenib."])


def test_ragas_fake_judge_scores(bow):
    judge = RoutingJudge()
    scores = ragas_scores([SAMPLE], judge, bow)
    assert scores[0]["faithfulness"] == 1.0
    # generated question {does, braf, predict} vs user input {does, braf, predict, response}: 3 / sqrt(3*4)
    assert scores[0]["response_relevancy"] == pytest.approx(math.sqrt(3) / 2, abs=1e-6)
    assert count_nan(scores) == {"faithfulness": 0, "response_relevancy": 0}
    assert judge.calls == 3  # statements + NLI + 1 relevancy question (strictness 1: llama.cpp allows n=1 only)


def test_ragas_partial_faithfulness_and_skipped_samples(bow):
    judge = RoutingJudge(verdicts=[1, 0])
    no_response = RagasSample(user_input="q?", response=" ", retrieved_contexts=["ctx"])
    scores = ragas_scores([SAMPLE, no_response], judge, bow, metrics=("faithfulness",))
    assert scores[0] == {"faithfulness": 0.5}
    assert isnan(scores[1]["faithfulness"])  # never sent to the judge
    assert judge.calls == 2 and count_nan(scores) == {"faithfulness": 1}


def test_ragas_malformed_output_is_nan(bow):
    judge = MalformedJudge()
    scores = ragas_scores([SAMPLE], judge, bow, metrics=("faithfulness",))
    assert isnan(scores[0]["faithfulness"])
    assert count_nan(scores) == {"faithfulness": 1}
    assert judge.calls > 1  # ragas retried through its fix-output prompt before giving up


def test_ragas_rejects_unknown_metric(bow):
    with pytest.raises(ValueError, match="Unknown RAGAS metric"):
        ragas_scores([SAMPLE], RoutingJudge(), bow, metrics=("bleu",))
    assert ragas_scores([], RoutingJudge(), bow) == []


# What the runner records per item (``grounded``, from the family's grounded_answers) and ragas_run scores.
GROUNDED = {"question": SAMPLE.user_input, "answer": SAMPLE.response, "contexts": SAMPLE.retrieved_contexts[:1]}


def test_ragas_run_resumes_after_interruption(tmp_path, monkeypatch):
    """`python -m evaluators.ragas_run` appends each item as it is scored; a rerun scores only the rest."""
    import evidex.evaluators.ragas_metrics as rm
    from evidex.evaluators.ragas_run import score_run

    rows = [{"id": f"mixed-{i:03d}", "prediction": {"explanations": {"claim": SAMPLE.response}},
             "grounded": [GROUNDED]} for i in range(3)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "metrics.json").write_text(json.dumps({"metrics": {}}))
    real, calls = rm.ragas_scores, []

    def flaky(samples, llm, **kw):
        calls.append(len(samples))
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second item is being judged
        return real(samples, llm, metrics=("faithfulness",), **kw)

    monkeypatch.setattr(rm, "ragas_scores", flaky)
    with pytest.raises(KeyboardInterrupt):
        score_run(tmp_path, RoutingJudge())
    assert [json.loads(x)["id"] for x in (tmp_path / "ragas.jsonl").read_text().splitlines()] == ["mixed-000"]
    summary = score_run(tmp_path, RoutingJudge())
    assert len(calls) == 4  # items 1 and 2 only on the rerun
    assert summary["faithfulness"]["mean"] == 1.0 and summary["faithfulness"]["n"] == 3
    assert json.loads((tmp_path / "metrics.json").read_text())["metrics"]["ragas_faithfulness"]["n"] == 3
    assert score_run(tmp_path, RoutingJudge(), restart=True)["faithfulness"]["n"] == 3 and len(calls) == 7


def test_ragas_relevancy_with_the_real_local_embeddings(embedder):
    """RAGAS logs `embeddings.model` and requires a string: LocalEmbeddings.model is the name, not the encoder."""
    assert embedder.model == "all-MiniLM-L6-v2"
    scores = ragas_scores([SAMPLE], RoutingJudge(question=SAMPLE.user_input), embedder, metrics=("response_relevancy",))
    assert scores[0]["response_relevancy"] > 0.99  # the judge's question is the user input itself


def test_no_explanation_metrics_when_nothing_was_written(bow):
    inp = make_input("missing_evidence")
    gold = Gold(missing_ids=["7"], explanations={"claim": "Gold explanation [1]."})
    written = score_item(inp, gold, make_pred("missing_evidence"), embedder=bow)
    skipped = score_item(inp, gold, make_pred("missing_evidence"), embedder=bow, explanations=False)
    assert "explanation_similarity" in written and "citation_validity" in written
    assert not {k for k in skipped if k.startswith(("explanation_", "completeness_", "citation_", "cites_"))}
    assert skipped["recovery_recall"] == written["recovery_recall"]


def test_ragas_run_adds_its_scores_to_the_report(tmp_path):
    from evidex.evaluators.ragas_run import score_run
    from evidex.evaluators.summary import summarize_run

    rows = [{"id": f"mixed-{i:03d}", "task": "mixed", "tags": ["mixed"], "error": None, "latency_s": 1.0,
             "tokens": {"prompt": 1, "completion": 1}, "metrics": {"citation_validity": 1.0},
             "prediction": {"explanations": {"claim": SAMPLE.response}}, "grounded": [GROUNDED]} for i in range(2)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = summarize_run(rows, run_id=tmp_path.name, task="mixed", config_name="mixed", model="scripted")
    (tmp_path / "metrics.json").write_text(json.dumps(summary))
    score_run(tmp_path, RoutingJudge())
    assert "ragas_faithfulness" in (tmp_path / "report.md").read_text(encoding="utf-8")

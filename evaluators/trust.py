"""Model-free signs of whether a claim explanation can be trusted (pure functions: no graph, no LLM).

A reader trusts an explanation when its reasons read as finished sentences, it never cites the same evidence
both for and against the claim, each sentence's stance matches the judged label of the evidence it cites, and
each cited sentence says only what that evidence says. The first three are checked here with text rules; the
last needs a judge (``sentence_support``), for which ``overlap_judge`` is only a word-overlap baseline.
``benchmarks/data/sentence_support_sample.jsonl`` holds hand labels for choosing a better judge
(``judge_agreement``).

Conventions follow ``evaluators.explainers``: a metric key that is absent means "not applicable".
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from evidex.tools.cited_text import (  # noqa: F401 - the text rules live in tools/, re-exported for callers
    ABBREVIATIONS, CONTRADICT_CUES, DANGLING_WORDS, SUPPORT_CUES, Stance, is_complete_sentence, parse_citations,
    sentence_stance, split_sentences, strip_citations,
)
from evidex.tools.claims import ClaimPrediction

Judge = Callable[[str, list[str]], bool]
_WORD = re.compile(r"\w+")
STANCE_LABELS = frozenset({"supports", "contradicts"})


def reason_complete(reasons: Iterable[str]) -> float | None:
    """Share of decision reasons that are complete sentences; None when there are no reasons to judge.
    A reason cut at a token limit ("The response rate ... was higher in") tells a reader nothing they can check."""
    reasons = list(reasons)
    return sum(map(is_complete_sentence, reasons)) / len(reasons) if reasons else None


def _cited_stances(explanation: str, claim: str | None = None) -> list[tuple[Stance, list[str]]]:
    return [(sentence_stance(s, claim), ids) for s in split_sentences(explanation) if (ids := parse_citations(s))]


def self_contradiction(explanation: str, labels: Mapping[str, str] | None = None,
                       claim: str | None = None) -> list[str]:
    """Ids the prediction puts on both sides of the claim: cited in a "supports" sentence and in a
    "contradicts" sentence, or (with ``labels``) cited in a sentence whose stance is the opposite of the id's
    own decision label, either way round. A reader who sees the decision table next to the explanation, or
    two sentences citing the same study, can then not tell which side the evidence is on.
    The explanation is self-contradicting when the list is not empty. With ``claim``, a contrary cue the claim
    itself uses ("resistance" in a claim about resistance) takes no side (``tools.cited_text.sentence_stance``)."""
    sides: dict[str, set[str]] = {}
    for stance, ids in _cited_stances(explanation, claim):
        if stance != "neutral":
            for i in ids:
                sides.setdefault(i, set()).add(stance)
    for i, stances in sides.items():
        if labels and labels.get(i) in STANCE_LABELS:
            stances.add(labels[i])
    return [i for i, s in sides.items() if s == STANCE_LABELS]


def stance_consistency(explanation: str, labels: Mapping[str, str], claim: str | None = None) -> tuple[int, int]:
    """(consistent, total) over (sentence, cited id) pairs where the sentence takes a side and the id was
    judged supports/contradicts: does the prose say what the judge decided?"""
    consistent = total = 0
    for stance, ids in _cited_stances(explanation, claim):
        for i in ids:
            if stance != "neutral" and labels.get(i) in STANCE_LABELS:
                total += 1
                consistent += stance == labels[i]
    return consistent, total


# -- sentence support -----------------------------------------------------------------------------------------
def sentence_support(explanation: str, evidence_texts: Mapping[str, str], judge: Judge) -> tuple[int, int]:
    """(supported, total) over the sentences that cite something. The judge sees the sentence without its
    citations and the texts of the cited ids it can find (an unknown id adds no text, so a sentence citing only
    unknown ids is judged against nothing)."""
    supported = total = 0
    for sentence in split_sentences(explanation):
        if ids := parse_citations(sentence):
            total += 1
            supported += bool(judge(strip_citations(sentence), [evidence_texts[i] for i in ids if i in evidence_texts]))
    return supported, total


# Words that carry no finding, left out of the overlap. Only function words and the explanation's own framing
# ("the evidence shows that"), so the baseline is not tuned to the hand-labelled sample.
STOPWORDS = frozenset("""
a an the and or but nor of in on at to for with by from as into than that this these those which who whom whose
is are was were be been being has have had do does did it its their there they he she we our his her not no
also both either each such so then thus while whereas however only more most less very
claim claims evidence shows show showed shown states state suggests suggest found finds
""".split())


def content_words(text: str) -> list[str]:
    """Lower-cased word tokens that carry content (numbers included: "469 patients" is a fact to check)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def overlap_judge(threshold: float = 0.5) -> Judge:
    """A baseline judge: a sentence is supported when at least ``threshold`` of its content words occur in the
    cited texts. It cannot see negation, swapped numbers or a claim restated over unrelated evidence; it exists
    to be beaten by an NLI/LLM judge on ``sentence_support_sample.jsonl``."""
    def judge(sentence: str, cited_texts: list[str]) -> bool:
        words = content_words(sentence)
        vocabulary = set(content_words(" ".join(cited_texts)))
        return bool(words) and sum(w in vocabulary for w in words) / len(words) >= threshold
    return judge


def judge_agreement(rows: Iterable[Mapping[str, Any]], judge: Judge) -> dict[str, float]:
    """How a judge agrees with hand labels (rows of ``sentence_support_sample.jsonl``): accuracy, and precision
    and recall for "unsupported", the class a trust check exists to catch. NaN when a ratio is 0/0."""
    tp = fp = fn = correct = n = 0
    for row in rows:
        cited = [row["evidence"][i] for i in row["cited"] if i in row["evidence"]]
        flagged = not judge(strip_citations(row["sentence"]), cited)
        unsupported = row["label"] == "unsupported"
        n += 1
        correct += flagged == unsupported
        tp += flagged and unsupported
        fp += flagged and not unsupported
        fn += unsupported and not flagged
    nan = float("nan")
    return {"n": float(n), "accuracy": correct / n if n else nan,
            "unsupported_precision": tp / (tp + fp) if tp + fp else nan,
            "unsupported_recall": tp / (tp + fn) if tp + fn else nan}


# -- per item -------------------------------------------------------------------------------------------------
def trust_scores(pred: ClaimPrediction | Mapping[str, Any], judge: Judge | None = None,
                 claims: Mapping[str, str] | None = None) -> dict[str, float]:
    """Per-item trust metrics over all of the item's explanations (absent key = not applicable):

    reason_complete       share of complete reasons, over kept items and discarded given items (the
                          decisions a reader sees; retrieved candidates left out were never shown)
    self_contradiction    1.0 when some id is on both sides (``self_contradiction``), else 0.0
    stance_consistency    share of consistent (sentence, id) pairs, absent when there are none
    cited_sentence_share  share of sentences that cite at least one id
    sentence_support      share of cited sentences the judge accepts (only when a judge is passed)

    and the counts behind the shares, so a run's report can pool them over items (``<prefix>_n_items`` /
    ``<prefix>_n_correct``: reasons, stance_pairs, supported_sentences). ``claims`` (explanation key -> claim
    text) makes the stance cues claim-aware. The stance checks compare sentences with the decision labels,
    which are relative to one claim: for the two-claim tasks (selection, assignment) read them with care.
    """
    pred = pred if isinstance(pred, ClaimPrediction) else ClaimPrediction.model_validate(pred)
    claims = claims or {}
    shown = [d for d in pred.decisions if d.kept or d.source == "given"]
    labels = {d.id: d.label for d in sorted(shown, key=lambda d: d.kept)}  # a kept decision wins a repeated id
    scores: dict[str, float] = {}
    if (complete := reason_complete(d.reason for d in shown)) is not None:
        scores["reason_complete"] = complete
        scores["reasons_n_items"] = float(len(shown))
        scores["reasons_n_correct"] = float(sum(is_complete_sentence(d.reason) for d in shown))
    explanations = [(k, t) for k, t in pred.explanations.items() if t and t.strip()]
    if not explanations:
        return scores
    scores["self_contradiction"] = float(any(self_contradiction(t, labels, claims.get(k)) for k, t in explanations))
    consistent = [stance_consistency(t, labels, claims.get(k)) for k, t in explanations]
    if total := sum(n for _, n in consistent):
        scores["stance_consistency"] = sum(c for c, _ in consistent) / total
        scores["stance_pairs_n_items"] = float(total)
        scores["stance_pairs_n_correct"] = float(sum(c for c, _ in consistent))
    sentences = [s for _, t in explanations for s in split_sentences(t)]
    if sentences:
        scores["cited_sentence_share"] = sum(bool(parse_citations(s)) for s in sentences) / len(sentences)
    if judge is not None:
        support = [sentence_support(t, pred.evidence_texts, judge) for _, t in explanations]
        if total := sum(n for _, n in support):
            scores["sentence_support"] = sum(s for s, _ in support) / total
            scores["supported_sentences_n_items"] = float(total)
            scores["supported_sentences_n_correct"] = float(sum(s for s, _ in support))
    return scores

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

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from evidex.tools.cited_text import (  # noqa: F401 - the text rules live in tools/, re-exported for callers
    ABBREVIATIONS, CONTRADICT_CUES, DANGLING_WORDS, SUPPORT_CUES, Stance, is_complete_sentence, parse_citations,
    sentence_stance, split_sentences, states_measure, strip_citations,
)
from evidex.tools.claims import ClaimInput, ClaimPrediction
from evidex.tools.reasons import MAX_REASON_WORDS, is_copy, kept_reason_problem, names_other

Judge = Callable[[str, list[str]], bool]
_WORD = re.compile(r"\w+")
STANCE_LABELS = frozenset({"supports", "contradicts"})


def _whole(reason: str, claims: Iterable[str] = ()) -> bool:
    return any(is_complete_sentence(reason, max_words=MAX_REASON_WORDS, quoted=c) for c in [*claims] or [""])


def reason_complete(reasons: Iterable[str], claims: Iterable[str] = ()) -> float | None:
    """Share of decision reasons that are complete sentences (of at most ``MAX_REASON_WORDS`` words: a key fact and
    how it bears on the claim); None when there are no reasons to judge. A reason cut at a token limit ("The
    response rate ... was higher in") tells a reader nothing they can check. A reason may end with the words of
    one of ``claims`` (the claim it links to), whatever word that ends with."""
    reasons, claims = list(reasons), list(claims)
    return sum(_whole(r, claims) for r in reasons) / len(reasons) if reasons else None


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


# -- reasons that are reasons --------------------------------------------------------------------------------
def reason_scores(pred: ClaimPrediction, inp: ClaimInput) -> dict[str, float]:
    """Counts behind the reason metrics of one item (pooled over a run as ``<prefix>_item_accuracy_micro``):

    reason_links      kept items whose reason passes the check of ``tools.reasons`` (facts from the evidence,
                      names the claim's entity, not a copy of an evidence sentence, a finished sentence)
    reason_copied     kept items whose reason copies one evidence sentence
    reason_fallback   kept items whose reason is the writer's fallback (its record says so)
    reason_measure    kept items whose evidence states a measured result (a percentage, n of N, a survival time,
                      a concentration, a hazard ratio: ``tools.cited_text.states_measure``) and whose reason
                      states one too (what a clinician reads first: "response 65% vs 20%")
    discard_named     discarded given items whose reason names something of the item's own (a variant, gene,
                      drug, disease or other name) that the claim does not

    A kept item is checked against the claim it was kept for (assignment: its own claim)."""
    texts = {**{e.id: e.text for e in inp.evidence}, **pred.evidence_texts}
    records = pred.verification.get("reasons") if isinstance(pred.verification.get("reasons"), dict) else {}
    single = next(iter(inp.claims.values()))
    kept = [d for d in pred.decisions if d.kept and d.id in texts]
    dropped = [d for d in pred.decisions if d.source == "given" and not d.kept and d.id in texts]
    out: dict[str, float] = {}
    if kept:
        claim_of = {d.id: inp.claims.get(d.claim or "", single) for d in kept}
        links = [kept_reason_problem(d.reason, texts[d.id], claim_of[d.id].text, claim_of[d.id].context) is None
                 for d in kept]
        copied = [is_copy(d.reason, texts[d.id]) for d in kept]
        fallback = [(records.get(d.id) or {}).get("source") == "fallback" for d in kept]
        measure = [states_measure(d.reason) for d in kept if states_measure(texts[d.id])]
        for prefix, flags in (("reason_links", links), ("reason_copied", copied), ("reason_fallback", fallback),
                              ("reason_measure", measure)):
            out[f"{prefix}_n_items"] = float(len(flags))
            out[f"{prefix}_n_correct"] = float(sum(flags))
        out["reason_links_claim"] = sum(links) / len(links)
        out["reason_copied"] = sum(copied) / len(copied)
        out["reason_fallback"] = sum(fallback) / len(fallback)
    if dropped:
        claims = list(inp.claims.values())
        text = " ".join(c.text for c in claims)
        context = {f"{n}:{k}": v for n, c in enumerate(claims) for k, v in c.context.items()}
        named = [names_other(d.reason, texts[d.id], text, context) for d in dropped]
        out["discard_named_n_items"] = float(len(named))
        out["discard_named_n_correct"] = float(sum(named))
        out["discard_names_other"] = sum(named) / len(named)
    return out


# -- stance on the hand-labelled sample --------------------------------------------------------------------------
STANCE_SAMPLE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "stance_absence_sample.jsonl"


@lru_cache(maxsize=4)
def stance_gold(path: str = str(STANCE_SAMPLE)) -> dict[tuple[str, str], str]:
    """(item id, evidence id) -> the hand label (supports / contradicts / unclear) of the stance sample; empty when
    the file is not there (an installed package without the repository's benchmarks folder)."""
    file = Path(path)
    if not file.is_file():
        return {}
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["item"], str(r["evidence_id"])): r["gold"] for r in rows}


def stance_sample_scores(pred: ClaimPrediction, gold: Mapping[tuple[str, str], str] | None = None) -> dict[str, float]:
    """Agreement of the kept items' labels with the hand labels, over the pairs of this item that the sample holds
    (absent when it holds none). A kept item labelled anything but "supports" says "does not support"; a hand label
    "unclear" agrees only with that. ``stance_sample_not_supports_*`` counts the pairs the run says do not support
    (pooled over a run: the share of the sample's pairs it labels so)."""
    gold = stance_gold() if gold is None else gold
    pairs = [(d.label, gold[(pred.id, d.id)], d.id) for d in pred.decisions if d.kept and (pred.id, d.id) in gold]
    if not pairs:
        return {}
    agree = [label == g or (g == "unclear" and label != "supports") for label, g, _ in pairs]
    report = [a for a, (_, _, eid) in zip(agree, pairs) if in_report_half(pred.id, eid)]
    return {"stance_sample_n_items": float(len(pairs)), "stance_sample_n_correct": float(sum(agree)),
            "stance_sample_agreement": sum(agree) / len(agree),
            "stance_report_n_items": float(len(report)), "stance_report_n_correct": float(sum(report)),
            "stance_sample_not_supports_n_items": float(len(pairs)),
            "stance_sample_not_supports_n_correct": float(sum(label != "supports" for label, _, _ in pairs))}


def in_report_half(item: str, evidence_id: str) -> bool:
    """The sample's split (benchmarks/data/README.md): a pair is in the report half when the first byte of
    sha256("stance-absence/1:<item>/<evidence_id>") is odd; choices are made on the other (tune) half."""
    return hashlib.sha256(f"stance-absence/1:{item}/{evidence_id}".encode()).digest()[0] % 2 == 1


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
    if shown:
        whole = sum(_whole(d.reason, claims.values()) for d in shown)
        scores["reason_complete"] = whole / len(shown)
        scores["reasons_n_items"] = float(len(shown))
        scores["reasons_n_correct"] = float(whole)
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

"""Scoring of claim-explainer predictions (pure functions: no graph, no LLM).

``score_item`` returns only the metrics that apply to an item's task. A key that is *absent* means "not
applicable"; a value of NaN means "applicable but undefined" (e.g. precision when nothing was predicted).
``aggregate`` turns per-item dicts into means with 95% bootstrap CIs, plus micro-averaged P/R/F1 from the
raw counts (``*_tp/_fp/_fn``), which are the honest aggregate when per-item precision is often 0/0.

Metrics (see ``shared/specs/ibe.md`` §3 for the originals, which never scored retrieval, selection,
assignment or wrong-evidence rejection):
  recovery_*           added_ids vs gold.missing_ids            (missing_evidence, mixed)
  discard_*            discarded_ids vs gold.wrong_ids          (wrong_evidence, mixed, wrong_claim)
  false_discard_rate   share of given correct items discarded   (baseline, missing_evidence, wrong_claim controls)
  selection_accuracy   selected_claim == correct_claim          (selection)
  assignment_*         per-item and per-pair A/B/neither        (assignment)
  wrong_claim_accuracy supported == gold.supported              (wrong_claim)
  explanation_*        MiniLM cosine / sentence completeness    (every task with a gold explanation)
  citation_validity    cited ids that were kept; cites_any      (every task)
  golden_fact_coverage token coverage of R4C golden facts       (r4c)
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from evidex.evaluators.stats import NAN, aggregate_metrics, prf_from_counts, safe_ratio
from evidex.tools.claims import ClaimInput, ClaimPrediction, Gold
from evidex.tools.text import split_sentences

RECOVERY_TASKS = frozenset({"missing_evidence", "mixed"})
DISCARD_TASKS = frozenset({"wrong_evidence", "mixed", "wrong_claim"})
FALSE_DISCARD_TASKS = frozenset({"baseline", "missing_evidence"})
COVERAGE_THRESHOLD = 0.7  # completeness_coverage@0.7
FACT_TOKEN_THRESHOLD = 0.5  # a golden fact counts as present if >= 50% of its content tokens are
COVERAGE_KEY = f"completeness_coverage@{COVERAGE_THRESHOLD}"

class Embedder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


# -- evidence-set metrics -------------------------------------------------------------------------------------
def set_prf_scores(prefix: str, predicted: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """P/R/F1 of two id sets plus the raw counts (conventions in ``stats.prf_from_counts``)."""
    pred_set, gold_set = set(predicted), set(gold)
    tp, fp, fn = len(pred_set & gold_set), len(pred_set - gold_set), len(gold_set - pred_set)
    prf = prf_from_counts(tp, fp, fn)
    return {f"{prefix}_precision": prf.precision, f"{prefix}_recall": prf.recall, f"{prefix}_f1": prf.f1,
            f"{prefix}_tp": float(tp), f"{prefix}_fp": float(fp), f"{prefix}_fn": float(fn)}


def _is_control(inp: ClaimInput, gold: Gold) -> bool:
    # wrong_claim controls are baseline claims with their own evidence (gold.supported True). ibe.py builds
    # them through the wrong_claim builder, which marks every given item as wrong; nothing is wrong there.
    return inp.task == "wrong_claim" and gold.supported is True


def wrong_id_set(inp: ClaimInput, gold: Gold) -> set[str] | None:
    """The ids that should be discarded, or None when the task has no wrong evidence."""
    if _is_control(inp, gold):
        return None
    if inp.task in DISCARD_TASKS or gold.wrong_ids:
        return set(gold.wrong_ids)
    return None


def false_discard_rate(inp: ClaimInput, gold: Gold, pred: ClaimPrediction) -> float:
    """Share of the given, correct items that were discarded (NaN if there are none)."""
    wrong = set() if _is_control(inp, gold) else set(gold.wrong_ids)
    correct = {e.id for e in inp.evidence} - wrong
    return safe_ratio(len(correct & set(pred.discarded_ids)), len(correct))


# -- decisions ------------------------------------------------------------------------------------------------
def selection_accuracy(gold: Gold, pred: ClaimPrediction) -> float:
    return float(pred.selected_claim is not None and pred.selected_claim == gold.correct_claim)


def wrong_claim_accuracy(gold: Gold, pred: ClaimPrediction) -> float:
    return float(pred.supported is not None and pred.supported == gold.supported)


def _predicted_assignment(pred: ClaimPrediction) -> dict[str, str]:
    # Graphs fill `assignment`; fall back to the per-decision claim labels if they only wrote those.
    if pred.assignment:
        return dict(pred.assignment)
    return {d.id: d.claim for d in pred.decisions if d.claim is not None}


def assignment_scores(gold: Gold, pred: ClaimPrediction) -> dict[str, float]:
    """Per-item accuracy, all-or-nothing pair accuracy, and recall for claim items vs distractors."""
    predicted = _predicted_assignment(pred)
    right = {eid: predicted.get(eid) == label for eid, label in gold.assignment.items()}
    n, n_ok = len(right), sum(right.values())
    on_claim = [ok for eid, ok in right.items() if gold.assignment[eid] in ("A", "B")]
    neither = [ok for eid, ok in right.items() if gold.assignment[eid] == "neither"]
    return {
        "assignment_item_accuracy": safe_ratio(n_ok, n),
        "assignment_pair_accuracy": float(n_ok == n) if n else NAN,
        "assignment_claim_recall": safe_ratio(sum(on_claim), len(on_claim)),
        "assignment_neither_recall": safe_ratio(sum(neither), len(neither)),
        "assignment_n_items": float(n),
        "assignment_n_correct": float(n_ok),
    }


# -- explanations ---------------------------------------------------------------------------------------------
# Split after . ! ? when whitespace and a capital follow (fixed-width lookbehinds keep common abbreviations
# together), and at blank lines. Deliberately no nltk: its punkt data would need a download.




def _unit_vectors(embedder: Embedder, texts: list[str]) -> dict[str, np.ndarray]:
    """Embed unique texts once; re-normalise so cosine is a dot product even for unnormalised embedders."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return {}
    vecs = np.asarray(embedder.encode(unique), dtype=float)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)  # zero vector -> cosine 0
    return dict(zip(unique, vecs))


def _generated_for(key: str, inp: ClaimInput, pred: ClaimPrediction) -> str:
    text = pred.explanations.get(key, "")
    if not text.strip() and inp.task == "selection" and pred.selected_claim:
        # Like the original, score the explanation the model wrote even if it picked the wrong claim.
        text = pred.explanations.get(pred.selected_claim, "")
    return text.strip()


def _completeness(gold_sents: list[str], gen_sents: list[str], vec: dict[str, np.ndarray]) -> tuple[float, float]:
    """(mean over gold sentences of the best cosine to a generated sentence, share of those >= threshold)."""
    if not gold_sents or not gen_sents:
        return 0.0, 0.0
    best = (np.stack([vec[s] for s in gold_sents]) @ np.stack([vec[s] for s in gen_sents]).T).max(axis=1)
    return float(best.mean()), float((best >= COVERAGE_THRESHOLD - 1e-9).mean())


def explanation_scores(inp: ClaimInput, gold: Gold, pred: ClaimPrediction,
                       embedder: Embedder | None) -> dict[str, float]:
    """Similarity / completeness / coverage, averaged over the claim keys that have a gold explanation.

    An empty generated explanation scores 0 on all three (as in the original); nothing is embedded then, so
    a run of empty outputs never loads the model.
    """
    pairs = [(gold.explanations[k].strip(), _generated_for(k, inp, pred)) for k in sorted(gold.explanations)]
    pairs = [(g, p) for g, p in pairs if g]
    if not pairs:
        return {}
    texts = [t for g, p in pairs if p for t in (g, p, *split_sentences(g), *split_sentences(p))]
    vec = _unit_vectors(embedder or _default_embedder(), texts) if texts else {}
    per_key = np.array([_pair_scores(g, p, vec) for g, p in pairs])  # (keys, 3)
    sim, comp, cov = per_key.mean(axis=0)
    return {"explanation_similarity": float(sim), "explanation_completeness": float(comp),
            COVERAGE_KEY: float(cov)}


def _pair_scores(gold_text: str, generated: str, vec: dict[str, np.ndarray]) -> tuple[float, float, float]:
    if not generated:
        return 0.0, 0.0, 0.0
    comp, cov = _completeness(split_sentences(gold_text), split_sentences(generated), vec)
    return float(vec[gold_text] @ vec[generated]), comp, cov


def _default_embedder() -> Embedder:
    from evidex.tools.embeddings import get_embeddings  # lazy: loading MiniLM costs seconds

    return get_embeddings()


# -- citations and golden facts -------------------------------------------------------------------------------
def citation_scores(pred: ClaimPrediction) -> dict[str, float]:
    """Share of cited ids (deduplicated per claim key, counted over all keys) that are among kept_ids."""
    kept = set(pred.kept_ids)
    cited = [cid for key in pred.cited_ids for cid in dict.fromkeys(pred.cited_ids[key])]
    return {"citation_validity": safe_ratio(sum(c in kept for c in cited), len(cited)),
            "cites_any": float(bool(cited))}


_STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as into about over after before between under "
    "is are was were be been being has have had do does did it its this that these those he she they them "
    "his her their we you i not no so than then there which who whom whose what when where how also can "
    "could would should may might will shall one".split()
)


def content_tokens(text: str) -> set[str]:
    """Lower-cased alphanumeric tokens without stopwords."""
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOPWORDS}


def fact_coverage(facts: Sequence[str], texts: Sequence[str]) -> float:
    """Share of facts with >= 50% of their content tokens present in the union of ``texts``.

    Facts without any content token cannot be checked and are left out; NaN if none remain.
    """
    pool = set().union(*(content_tokens(t) for t in texts)) if texts else set()
    fact_tokens = [tok for tok in (content_tokens(f) for f in facts) if tok]
    covered = [len(tok & pool) / len(tok) >= FACT_TOKEN_THRESHOLD for tok in fact_tokens]
    return safe_ratio(sum(covered), len(covered))


def _kept_texts(inp: ClaimInput, pred: ClaimPrediction) -> list[str]:
    if pred.evidence_texts:
        return list(pred.evidence_texts.values())
    kept = set(pred.kept_ids)  # older predictions may lack evidence_texts: look the kept ids up
    return [e.text for e in inp.evidence if e.id in kept]


def golden_fact_scores(inp: ClaimInput, gold: Gold, pred: ClaimPrediction) -> dict[str, float]:
    # The ceiling (all given paragraphs) matters: golden facts are not always in the paragraphs (ibe.md §1.1).
    return {"golden_fact_coverage": fact_coverage(gold.golden_facts, _kept_texts(inp, pred)),
            "golden_fact_coverage_ceiling": fact_coverage(gold.golden_facts, [e.text for e in inp.evidence])}


# -- per item and aggregate -----------------------------------------------------------------------------------
def score_item(inp: ClaimInput, gold: Gold, pred: ClaimPrediction, *,
               embedder: Embedder | None = None, explanations: bool = True) -> dict[str, float]:
    """All metrics that apply to this item's task (absent = not applicable, NaN = undefined).

    ``explanations=False``: the run wrote none (write step off), so explanation and citation metrics are not
    applicable rather than 0."""
    scores: dict[str, float] = {}
    if inp.task in RECOVERY_TASKS or gold.missing_ids:
        scores.update(set_prf_scores("recovery", pred.added_ids, gold.missing_ids))
    wrong = wrong_id_set(inp, gold)
    if wrong is not None:
        scores.update(set_prf_scores("discard", pred.discarded_ids, sorted(wrong)))
    elif inp.task in FALSE_DISCARD_TASKS or _is_control(inp, gold):
        scores["false_discard_rate"] = false_discard_rate(inp, gold, pred)
    if inp.task == "selection" or gold.correct_claim is not None:
        scores["selection_accuracy"] = selection_accuracy(gold, pred)
    if inp.task == "assignment" or gold.assignment:
        scores.update(assignment_scores(gold, pred))
    if inp.task == "wrong_claim" or gold.supported is not None:
        scores["wrong_claim_accuracy"] = wrong_claim_accuracy(gold, pred)
    if inp.task == "r4c" or gold.golden_facts:
        scores.update(golden_fact_scores(inp, gold, pred))
    if explanations:
        scores.update(explanation_scores(inp, gold, pred, embedder))
        scores.update(citation_scores(pred))
    return scores


def aggregate(per_item: Sequence[dict[str, float]], *, n_boot: int = 2000, alpha: float = 0.05,
              seed: int = 0) -> dict[str, dict[str, float]]:
    """Mean + bootstrap CI for every metric and micro P/R/F1 (see :func:`evaluators.stats.aggregate_metrics`)."""
    return aggregate_metrics(per_item, n_boot=n_boot, alpha=alpha, seed=seed)

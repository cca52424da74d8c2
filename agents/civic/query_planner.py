"""Deterministic (no-LLM) query planning and candidate gathering for missing-evidence retrieval.

A claim comes with structured context (for CIViC: molecular profile, disease, therapies, ...) and some given
evidence. :func:`plan_queries` turns that into weighted facet queries:

* ``claim`` — the claim sentence;
* one facet per short context value (``profile``, ``disease``, ``therapy``; unknown short keys get
  :data:`OTHER_CONTEXT_WEIGHT`); long free-text values (summaries) and phenotype lists are left out: on the
  held-out items they did not help;
* ``variant_class`` — the mutation class implied by an HGVS-style variant name (``Q195*`` -> nonsense,
  ``R167Q`` -> missense, ``F76del`` -> in-frame deletion, ``...fs`` -> frameshift), because evidence texts often
  say "this nonsense mutation" instead of repeating the variant;
* ``feedback`` — each given evidence text, for pseudo-relevance feedback. Its weight says how much we trust it:
  with ``kept_ids`` (the graph's relevance judgements) kept items weigh 1 and the rest 0; without judgements
  the weight comes from how the item itself ranks for the claim's facets among the whole KB
  (:func:`feedback_weight`), so wrong evidence copied from other claims contributes (almost) nothing.

:func:`gather_candidates` scores the whole KB (``hybrid``): z-normalised BM25 of every facet, weighted and
summed (CombSUM), plus dense similarity of the claim, plus BM25 of RM3 expansion terms taken from the weighted
feedback texts, minus :data:`RIVAL_VARIANT_PENALTY` for items about another variant than the claim's
(``agents.variants.rival_variant``), minus :data:`CLAIM_PENALTY` x ln(rank here / rank there) for items
that a competing claim ranks better (with a claim catalog, ``agents.claim_catalog``); given ids are excluded.
``bm25`` drops the dense part; ``dense`` uses the claim embedding plus the weighted centroid of the feedback
embeddings. Weights were tuned on items 30..65 only (see ``benchmarks/retrieval.py``).
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel

from evidex.agents.civic.variants import PROFILE_KEY, rival_variant, variant_classes
from evidex.tools.claims import Claim, Evidence
from evidex.tools.kb_index import KnowledgeBaseIndex, SearchHit, SearchMode, analyze, combsum, znorm

# Facet weights (BM25 channel). Keys are context keys as loaded by tools.claim_data.
CONTEXT_FACETS: dict[str, tuple[str, float]] = {
    PROFILE_KEY: ("profile", 1.0),
    "Disease": ("disease", 0.5),  # broad names ("Cancer", "Lung ... Carcinoma") are shared by many claims
    "Therapies": ("therapy", 1.0),
    "Phenotypes": ("phenotype", 0.0),  # neutral-to-harmful on held-out items
    "Molecular Profile Summary": ("summary", 0.0),  # long generic prose
}
CLAIM_WEIGHT = 1.0
VARIANT_CLASS_WEIGHT = 1.0
OTHER_CONTEXT_WEIGHT = 0.5  # short context values under keys we do not know
LONG_CONTEXT_CHARS = 300  # unknown context values longer than this are prose, not a facet
DENSE_CLAIM_WEIGHT = {"hybrid": 0.5, "dense": 1.0, "bm25": 0.0}
FEEDBACK_WEIGHT = {"hybrid": 1.0, "bm25": 1.0, "dense": 0.5}  # RM3 (sparse) or centroid (dense) feedback
FEEDBACK_TERMS = 20
# Subtracted from the fused score (a sum of ~6 weighted z-scores) of KB items about another variant: a soft
# demotion, because pan-cancer trials may name other fusions too. Held-out items 30..65 re-split 8 times
# (benchmarks/retrieval.py --simulated 8): recall@10 0.981 / 0.963 at 0, 0.984 / 0.968 at 3, 0.986 / 0.962 at 4.
RIVAL_VARIANT_PENALTY = 3.0
# Competing claims (agents.claim_catalog): an item that another known claim ranks better loses
# CLAIM_PENALTY * ln(its rank here / its best rank there), at most CLAIM_PENALTY * CLAIM_PENALTY_CAP. Held-out
# items 30..65 (real / 8 simulated re-splits), recall@10 missing_evidence / mixed: 0 -> 0.957 / 0.970,
# 0.984 / 0.968; 2 -> 0.979 / 0.970, 0.991 / 0.975; 4 -> 1.000 / 0.985, 0.998 / 0.985; 6 -> 1.000 / 0.985,
# 0.998 / 0.983 (caps 2 and 5 equal; cap 1 lower).
CLAIM_PENALTY = 4.0
CLAIM_PENALTY_CAP = 2.0
# Retrieval-only trust in a given item: 1 if it ranks in the top FULL_TRUST_RANK of the KB for the claim facets,
# falling linearly to 0 at NO_TRUST_RANK.
FULL_TRUST_RANK = 20
NO_TRUST_RANK = 60


class WeightedQuery(BaseModel):
    text: str
    weight: float = 1.0
    facet: str = "claim"
    source_id: str | None = None  # feedback: the evidence id the text comes from


# ---------------------------------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------------------------------
def facet_queries(claim: Claim) -> list[WeightedQuery]:
    """Claim + context facets (no feedback)."""
    out = [WeightedQuery(text=claim.text, weight=CLAIM_WEIGHT, facet="claim")] if claim.text.strip() else []
    for key, value in claim.context.items():
        value = value.strip()
        if not value:
            continue
        if key in CONTEXT_FACETS:
            facet, weight = CONTEXT_FACETS[key]
        elif len(value) <= LONG_CONTEXT_CHARS:
            facet, weight = key.lower().replace(" ", "_"), OTHER_CONTEXT_WEIGHT
        else:
            continue
        if weight > 0:
            out.append(WeightedQuery(text=value, weight=weight, facet=facet))
    profile = claim.context.get(PROFILE_KEY, "")
    classes = variant_classes(profile) or variant_classes(claim.text)
    if classes and VARIANT_CLASS_WEIGHT > 0:
        out.append(WeightedQuery(text=" ".join(classes), weight=VARIANT_CLASS_WEIGHT, facet="variant_class"))
    return out


def facet_scores(index: KnowledgeBaseIndex, facets: list[WeightedQuery], mode: SearchMode = "hybrid") -> np.ndarray:
    """CombSUM over the KB of the facet queries (z-normalised BM25 per facet, plus dense of the claim)."""
    vecs: list[np.ndarray] = []
    ws: list[float] = []
    if mode in ("bm25", "hybrid"):
        for q in facets:
            if q.weight and index.term_weights(q.text):
                vecs.append(index.bm25_scores(q.text, distinct=True))
                ws.append(q.weight)
    dense_w = DENSE_CLAIM_WEIGHT[mode]
    if dense_w:
        for q in facets:
            if q.facet == "claim":
                vecs.append(index.dense_scores(q.text))
                ws.append(dense_w * q.weight)
    return combsum(vecs, ws) if vecs else np.zeros(len(index.docs))


def feedback_weight(rank: int) -> float:
    """Trust in a given item from its rank (1 = best) among all KB docs for the claim facets."""
    if rank <= FULL_TRUST_RANK:
        return 1.0
    if rank >= NO_TRUST_RANK:
        return 0.0
    return (NO_TRUST_RANK - rank) / (NO_TRUST_RANK - FULL_TRUST_RANK)


def _lexical_trust(facets: list[WeightedQuery], text: str) -> float:
    """Fallback trust without an index: weighted share of facets with at least one term in the text."""
    toks = set(analyze(text))
    total = sum(q.weight for q in facets if q.facet != "variant_class")
    hit = sum(q.weight for q in facets if q.facet != "variant_class" and toks & set(analyze(q.text)))
    return hit / total if total else 0.0


def plan_queries(
    claim: Claim,
    evidence: list[Evidence],
    *,
    kept_ids: set[str] | None = None,
    index: KnowledgeBaseIndex | None = None,
    mode: SearchMode = "hybrid",
) -> list[WeightedQuery]:
    """Weighted facet queries for a claim plus one ``feedback`` query per given evidence item.

    ``kept_ids=None``: judgements unknown, feedback weighted by how well each item matches the claim (ranked
    against the KB when ``index`` is given, else lexical facet coverage). A set: items in it weigh 1, others 0
    (they are still listed, with weight 0, so callers can see what was discarded)."""
    facets = facet_queries(claim)
    ranks: dict[str, int] = {}
    if kept_ids is None and index is not None and evidence:
        ranks = relevance_ranks(index, claim, evidence, mode, facets=facets)
    feedback: list[WeightedQuery] = []
    for e in evidence:
        if kept_ids is not None:
            w = 1.0 if e.id in kept_ids else 0.0
        elif index is not None:
            w = feedback_weight(ranks[e.id])
        else:
            w = _lexical_trust(facets, e.text)
        feedback.append(WeightedQuery(text=e.text, weight=round(w, 4), facet="feedback", source_id=e.id))
    return facets + feedback


def relevance_ranks(index: KnowledgeBaseIndex, claim: Claim, evidence: list[Evidence], mode: SearchMode = "hybrid",
                    *, facets: list[WeightedQuery] | None = None) -> dict[str, int]:
    """How each evidence item ranks (1 = best) among all KB docs for the claim's facet queries.

    Evidence that belongs to the claim ranks near the top; evidence from other claims ranks far down, which
    makes this a cheap, model-free relevance signal for judging given items."""
    facets = facets or facet_queries(claim)
    scores = facet_scores(index, facets, mode)
    ranks: dict[str, int] = {}
    for e in evidence:
        pos = index.position.get(e.id)
        if pos is not None:  # 1 + number of KB docs scoring strictly higher (ties share a rank)
            ranks[e.id] = int((scores > scores[pos]).sum()) + 1
        else:  # not in the KB: rank it among the KB docs by dense similarity to the claim
            ranks[e.id] = _dense_rank(index, facets, e.text)
    return ranks


def neighbour_rank(index: KnowledgeBaseIndex, doc_id: str, targets: Iterable[str]) -> int | None:
    """Best rank (1 = nearest) of any ``targets`` doc among ``doc_id``'s neighbours in the KB (dense + BM25 of its
    own text, CombSUM); ``None`` when there is no target in the KB.

    Evidence collected for one claim tends to be each other's nearest neighbours; a same-gene item of a
    neighbouring claim sits closer to its own claim's items than to this claim's."""
    pos = index.position.get(doc_id)
    target_pos = [index.position[t] for t in targets if t in index.position and t != doc_id]
    if pos is None or not target_pos:
        return None
    vec = index.doc_vector(doc_id)
    scores = combsum([index.dense_scores(vec), index.bm25_scores(index.docs[pos].text)])
    scores[pos] = -np.inf  # not its own neighbour
    return min(int((scores > scores[t]).sum()) + 1 for t in target_pos)


def facet_coverage(claim: Claim, facet: str, text: str) -> float | None:
    """Share of the claim's ``facet`` words (e.g. ``therapy``) that occur in ``text``; ``None`` when the claim
    has no such facet."""
    values = [q.text for q in facet_queries(claim) if q.facet == facet]
    words = set(analyze(" ".join(values)))
    if not words:
        return None
    return len(words & set(analyze(text))) / len(words)


def _dense_rank(index: KnowledgeBaseIndex, facets: list[WeightedQuery], text: str) -> int:
    """Rank an out-of-KB text among the KB docs by dense similarity to the claim (1 = more similar than all)."""
    claim = next((q.text for q in facets if q.facet == "claim"), " ".join(q.text for q in facets))
    kb = index.dense_scores(claim)
    return int((kb > float(index.embed(text) @ index.embed(claim))).sum()) + 1


# ---------------------------------------------------------------------------------------------------------------
# Gathering
# ---------------------------------------------------------------------------------------------------------------
def score_plan(index: KnowledgeBaseIndex, plan: list[WeightedQuery], mode: SearchMode = "hybrid") -> np.ndarray:
    """Fused score of every KB doc for a plan: facet CombSUM + feedback (RM3 terms or dense centroid)."""
    facets = [q for q in plan if q.facet != "feedback"]
    feedback = [q for q in plan if q.facet == "feedback" and q.weight > 0]
    total = facet_scores(index, facets, mode)
    fb_weight = FEEDBACK_WEIGHT[mode]
    if feedback and fb_weight:
        if mode in ("bm25", "hybrid"):
            terms = index.expansion_terms(((q.text, q.weight) for q in feedback), FEEDBACK_TERMS)
            if terms:
                total = total + fb_weight * znorm(index.bm25_scores(terms))
        else:
            vecs = [index.doc_vector(q.source_id) if q.source_id else None for q in feedback]
            vecs = [v if v is not None else index.embed(q.text) for v, q in zip(vecs, feedback)]
            centroid = sum(q.weight * v for q, v in zip(feedback, vecs)) / sum(q.weight for q in feedback)
            total = total + fb_weight * znorm(index.dense_scores(centroid))
    return total


def gather_candidates(
    index: KnowledgeBaseIndex,
    claim: Claim,
    evidence: list[Evidence],
    *,
    kept_ids: set[str] | None = None,
    k: int = 10,
    mode: SearchMode = "hybrid",
    exclude: Iterable[str] = (),
    plan: list[WeightedQuery] | None = None,
    rival_penalty: float = RIVAL_VARIANT_PENALTY,
    catalog=None,
    claim_penalty: float = CLAIM_PENALTY,
) -> list[SearchHit]:
    """Top-k KB items likely to be missing evidence for the claim; given (and ``exclude``) ids never return.
    ``plan``: the :func:`plan_queries` result for the same arguments, when the caller already has it.
    ``rival_penalty``: subtracted from the score of items about another variant (0 = off).
    ``catalog``: competing claims (:class:`agents.claim_catalog.ClaimCatalog`); an item another known claim ranks
    better loses ``claim_penalty`` times the log of the rank ratio (capped; 0 = off)."""
    plan = plan if plan is not None else plan_queries(claim, evidence, kept_ids=kept_ids, index=index, mode=mode)
    scores = score_plan(index, plan, mode)
    profile = claim.context.get(PROFILE_KEY, "")
    if rival_penalty and profile:
        rivals = [n for n, d in enumerate(index.docs) if rival_variant(profile, d.text) is not None]
        scores = scores.copy()
        scores[rivals] -= rival_penalty
    if catalog is not None and claim_penalty:
        scores = scores - claim_penalty * np.clip(catalog.log_rank_ratio(claim), 0.0, CLAIM_PENALTY_CAP)
    skip = {e.id for e in evidence} | set(exclude)
    dense = bm25 = None
    if mode in ("dense", "hybrid"):
        claim_q = next((q.text for q in plan if q.facet == "claim"), None)
        dense = index.dense_scores(claim_q) if claim_q else None
    if mode in ("bm25", "hybrid"):
        text = " ".join(q.text for q in plan if q.facet != "feedback")
        bm25 = index.bm25_scores(text, distinct=True) if index.term_weights(text) else None
    return index.hits(scores, k, skip, dense=dense, bm25=bm25)

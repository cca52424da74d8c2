"""Model-free relevance gate for the cascade judge.

Given items: an item's rank among *all* KB items for the claim's facet queries. Evidence collected for this
claim ranks near the top; evidence belonging to other claims ranks far down (held-out CIViC items 30-65:
dropping rank > 30 gives discard F1 0.94 on wrong_evidence and 0.96 on mixed, with 1 false discard each).
Selection and assignment without a model use the same ranks. Retrieved candidates have their own gate
(:mod:`agents.candidate_gate`).
"""
from __future__ import annotations

from pydantic import BaseModel

from agents.query_planner import relevance_ranks
from evaluators.ibe import Claim, Evidence


class GateResult(BaseModel):
    id: str
    passed: bool
    reason: str
    score: float


def gate_given(index, claim: Claim, evidence: list[Evidence], keep_rank: int) -> list[GateResult]:
    ranks = relevance_ranks(index, claim, evidence)
    n = len(index.docs)
    out = []
    for e in evidence:
        r = ranks[e.id]
        passed = r <= keep_rank
        reason = (f"on topic: ranks {r}/{n} in the knowledge base for the claim's subject" if passed else
                  f"off topic: ranks {r}/{n} for the claim's subject (gate {keep_rank}); likely another claim's evidence")
        out.append(GateResult(id=e.id, passed=passed, reason=reason, score=float(r)))
    return out


def gate_top_given(embeddings, claim: Claim, evidence: list[Evidence], keep_top: int) -> list[GateResult]:
    """Keep the ``keep_top`` given items that best match the claim, ranked among the given items themselves
    (dense + BM25): for evidence outside any knowledge base, where a KB rank cannot be had."""
    from tools.kb_index import rank_texts

    scores = rank_texts(claim.text, [e.text for e in evidence], embeddings)
    order = sorted(range(len(evidence)), key=lambda i: -scores[i])
    rank_of = {evidence[i].id: r for r, i in enumerate(order, start=1)}
    n = len(evidence)
    out = []
    for e, score in zip(evidence, scores):
        r = rank_of[e.id]
        passed = r <= keep_top
        reason = (f"among the {keep_top} items closest to the claim (ranks {r}/{n})" if passed else
                  f"ranks {r}/{n} among the given items for the claim (keeps the top {keep_top})")
        out.append(GateResult(id=e.id, passed=passed, reason=reason, score=round(float(score), 4)))
    return out


def select_by_relevance(index, claims: dict[str, Claim], evidence: list[Evidence]) -> tuple[str, str]:
    """Selection without a model: the claim for which the evidence ranks better (mean log-rank) in the KB."""
    import math

    means = {}
    for key in ("A", "B"):
        ranks = relevance_ranks(index, claims[key], evidence)
        means[key] = sum(math.log(r) for r in ranks.values()) / max(1, len(ranks))
    best = min(means, key=means.get)
    other = "B" if best == "A" else "A"
    reason = (f"the evidence ranks higher for claim {best} (geometric mean rank {math.exp(means[best]):.0f}) "
              f"than for claim {other} ({math.exp(means[other]):.0f})")
    return best, reason


def assign_by_relevance(index, claims: dict[str, Claim], evidence: list[Evidence],
                        keep_rank: int) -> dict[str, tuple[str, str]]:
    """Assignment without a model: each item goes to the claim it ranks best for, or neither past the gate."""
    ranks = {key: relevance_ranks(index, claims[key], evidence) for key in ("A", "B")}
    out = {}
    for e in evidence:
        ra, rb = ranks["A"][e.id], ranks["B"][e.id]
        best, r = ("A", ra) if ra <= rb else ("B", rb)
        if r > keep_rank:
            out[e.id] = ("neither", f"off topic for both claims (ranks {ra} for A, {rb} for B; gate {keep_rank})")
        else:
            out[e.id] = (best, f"ranks {r} for claim {best} vs {rb if best == 'A' else ra} for the other claim")
    return out

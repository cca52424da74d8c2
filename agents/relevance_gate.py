"""Model-free relevance gate for the cascade judge.

Given items: an item's rank among *all* KB items for the claim's facet queries. Evidence collected for this
claim ranks near the top; evidence belonging to other claims ranks far down (held-out CIViC items 30-65:
dropping rank > 30 gives discard F1 0.94 on wrong_evidence and 0.96 on mixed, with 1 false discard each).
Retrieved candidates: the fused score relative to the best candidate.
"""
from __future__ import annotations

from pydantic import BaseModel

from agents.query_planner import relevance_ranks
from evaluators.ibe import Claim, Evidence
from tools.kb_index import SearchHit


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


def gate_candidates(hits: list[SearchHit], ratio: float) -> list[GateResult]:
    best = max((h.score for h in hits), default=0.0)
    out = []
    for rank, h in enumerate(hits, start=1):
        rel = h.score / best if best > 0 else 0.0
        passed = rel >= ratio
        reason = (f"retrieved at rank {rank} with {rel:.0%} of the best score" if passed else
                  f"retrieved at rank {rank} but only {rel:.0%} of the best score (gate {ratio:.0%})")
        out.append(GateResult(id=h.id, passed=passed, reason=reason, score=round(h.score, 4)))
    return out

"""Model-free relevance gate for the cascade judge.

Given items: an item's rank among *all* KB items for the claim's facet queries. Evidence collected for this
claim ranks near the top; evidence belonging to other claims ranks far down (held-out CIViC items 30-65:
dropping rank > 30 gives discard F1 0.94 on wrong_evidence and 0.96 on mixed, with 1 false discard each).
Retrieved candidates: the fused score relative to the best candidate, then two checks (held-out items 30-65,
k=6: recovery precision 0.43 -> 0.49 on missing_evidence and 0.52 -> 0.57 on mixed, recall unchanged / -0.015):
a kept given item must be among the candidate's nearest KB neighbours (evidence of one claim clusters), and the
candidate must name the claim's required facets (e.g. at least half of the therapy's words).
"""
from __future__ import annotations

from pydantic import BaseModel

from agents.query_planner import facet_coverage, neighbour_rank, relevance_ranks
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


def gate_candidates(hits: list[SearchHit], ratio: float, *, index=None, claim: Claim | None = None,
                    kept_ids: set[str] | None = None, max_neighbour_rank: int | None = None,
                    required_facets: dict[str, float] | None = None) -> list[GateResult]:
    """Keep a retrieved candidate when it scores at least ``ratio`` of the best candidate and, if configured,
    (a) a kept given item is among its ``max_neighbour_rank`` nearest KB neighbours (skipped when nothing is
    kept) and (b) it mentions at least the given share of each required facet's words (skipped for facets the
    claim does not have)."""
    best = max((h.score for h in hits), default=0.0)
    out = []
    for rank, h in enumerate(hits, start=1):
        rel = h.score / best if best > 0 else 0.0
        failed = _candidate_check(h, index, claim, kept_ids, max_neighbour_rank, required_facets) \
            if rel >= ratio else f"only {rel:.0%} of the best score (gate {ratio:.0%})"
        reason = (f"retrieved at rank {rank} with {rel:.0%} of the best score" if failed is None else
                  f"retrieved at rank {rank} but {failed}")
        out.append(GateResult(id=h.id, passed=failed is None, reason=reason, score=round(h.score, 4)))
    return out


def _candidate_check(hit: SearchHit, index, claim: Claim | None, kept_ids: set[str] | None,
                     max_neighbour_rank: int | None, required_facets: dict[str, float] | None) -> str | None:
    """Why the candidate fails the neighbour / facet checks, or None when it passes."""
    if claim is not None:
        for facet, share in (required_facets or {}).items():
            cov = facet_coverage(claim, facet, hit.text)
            if cov is not None and cov < share:
                return f"names {cov:.0%} of the claim's {facet} (needs {share:.0%})"
    if index is not None and max_neighbour_rank and kept_ids:
        nn = neighbour_rank(index, hit.id, kept_ids)
        if nn is not None and nn > max_neighbour_rank:
            return (f"no kept evidence among its {max_neighbour_rank} nearest KB neighbours (closest is "
                    f"#{nn}); likely another claim's evidence")
    return None


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

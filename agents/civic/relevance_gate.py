"""Model-free relevance gate for the cascade judge.

Given items: an item's rank among *all* KB items for the claim's facet queries. Evidence collected for this
claim ranks near the top; evidence belonging to other claims ranks far down (held-out CIViC items 30-65:
dropping rank > 30 gives discard F1 0.94 on wrong_evidence and 0.96 on mixed, with 1 false discard each).
With competing claims (:class:`GivenClaimCheck`) an item that another known claim ranks far better is that
claim's evidence, and the plain cut loosens. Selection and assignment without a model use the same ranks.
Retrieved candidates have their own gate (:mod:`agents.civic.candidate_gate`); R4C-style evidence outside any
knowledge base uses the domain-free :mod:`agents.given_rank_gate`.
"""
from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from evidex.agents.civic.claim_catalog import RivalClaim, quote
from evidex.agents.evidence_gate import GateResult
from evidex.agents.civic.query_planner import relevance_ranks
from evidex.tools.claims import Claim, Evidence


class GivenClaimCheck(BaseModel):
    """With competing claims (:mod:`agents.claim_catalog`): a given item is another claim's evidence when a
    known claim ranks it at least ``margin`` times better than this claim does and it is outside this claim's
    top ``floor``; the plain rank cut then loosens to ``keep_rank``, since the catalog catches what it caught.
    Held-out items 30-65 (discard F1 wrong_evidence / mixed; false discards on missing_evidence / baseline):
    rank cut 30 alone 0.942 / 0.961, 1 / 1; margin 4, floor 10, cut 60: 0.951 / 1.000, 0 / 0."""

    margin: float = Field(4.0, gt=1.0)
    floor: int = Field(10, ge=1)
    keep_rank: int = Field(60, ge=1)

    def claimed_elsewhere(self, catalog, doc_id: str, rank: int, claims: Iterable[Claim]) -> tuple[int, Claim] | None:
        """The known claim outside ``claims`` that ranks ``doc_id`` at least ``margin`` times better than its
        ``rank`` here, with that rank; ``None`` inside the top ``floor`` or when no claim does."""
        if rank <= self.floor:
            return None
        found = catalog.best_other(doc_id, claims)
        return found if found is not None and found[0] * self.margin <= rank else None


def gate_given(index, claim: Claim, evidence: list[Evidence], keep_rank: int, *, catalog=None,
               check: GivenClaimCheck | None = None) -> list[GateResult]:
    """Keep given items that rank within ``keep_rank`` among all KB items for the claim's subject; with a
    ``catalog`` of competing claims and a ``check``, its rule replaces the plain cut."""
    ranks = relevance_ranks(index, claim, evidence)
    check = check if catalog is not None else None
    cut = check.keep_rank if check else keep_rank
    n = len(index.docs)
    out = []
    for e in evidence:
        r = ranks[e.id]
        passed = r <= cut
        reason = (f"on topic: ranks {r}/{n} in the knowledge base for the claim's subject" if passed else
                  f"off topic: ranks {r}/{n} for the claim's subject (gate {cut}); likely another claim's evidence")
        other = check.claimed_elsewhere(catalog, e.id, r, [claim]) if passed and check else None
        if other is not None:
            rival = RivalClaim(claim=other[1], rank=other[0], own_rank=r)
            passed, reason = False, f"{rival.reason()} (at least {check.margin:g} times better)"
        out.append(GateResult(id=e.id, passed=passed, reason=reason, score=float(r)))
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


def assign_by_relevance(index, claims: dict[str, Claim], evidence: list[Evidence], keep_rank: int, *,
                        catalog=None, check: GivenClaimCheck | None = None) -> dict[str, tuple[str, str]]:
    """Assignment without a model: each item goes to the claim it ranks best for, or neither past the gate.
    With a ``catalog`` and a ``check``, "neither" follows the given-item rule for the pair: past
    ``check.keep_rank``, or a third known claim ranks the item ``check.margin`` times better than the better of
    A and B (held-out assignment items 30-49: per item 0.893 -> 0.940, per pair 0.30 -> 0.65)."""
    ranks = {key: relevance_ranks(index, claims[key], evidence) for key in ("A", "B")}
    check = check if catalog is not None else None
    cut = check.keep_rank if check else keep_rank
    out = {}
    for e in evidence:
        ra, rb = ranks["A"][e.id], ranks["B"][e.id]
        best, r = ("A", ra) if ra <= rb else ("B", rb)
        third = check.claimed_elsewhere(catalog, e.id, r, claims.values()) if check and r <= cut else None
        if r > cut:
            out[e.id] = ("neither", f"off topic for both claims (ranks {ra} for A, {rb} for B; gate {cut})")
        elif third is not None:
            out[e.id] = ("neither", f"ranks #{third[0]} for another known claim ({quote(third[1])}), at least "
                                    f"{check.margin:g} times better than for A (#{ra}) or B (#{rb})")
        else:
            out[e.id] = (best, f"ranks {r} for claim {best} vs {rb if best == 'A' else ra} for the other claim")
    return out

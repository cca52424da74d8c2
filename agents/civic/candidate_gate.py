"""Model-free gate for retrieved candidates: which KB items the gather step adds as missing evidence.

Checks, in order (tuned on held-out CIViC items 30-65 only; numbers are recovery P / R there for
missing_evidence / mixed):

* **score** — the fused score must be at least ``ratio`` of the best candidate's;
* **variant** — the candidate must not be about another variant: naming rival variants of the claim's kind, or
  calling its variant a class the claim's cannot have, while never naming the claim's own; or naming one rival
  more often than the claim's own (``agents.variants.rival_variant``; negated mentions do not count);
* **competing claims** — the candidate must not rank better (model-free facet rank among all KB items) for
  another known claim than for this one (:mod:`agents.claim_catalog`): CIViC files the same study under
  neighbouring assertions, and the one it fits best is its owner. With k=6 and the other checks as they were:
  0.553 / 0.894 -> 0.841 / 0.787 and 0.605 / 0.776 -> 0.849 / 0.672; it then let the score ratio drop to 0.5
  and k rise to 10 (0.796 / 0.830, 0.828 / 0.716) and made a nearest-neighbour check and a rescue of low
  scores redundant (off: held out unchanged or better; both were deleted in issue 54);
* **facets** — the candidate names the claim's required facets (e.g. half the therapy's words);
* **near-copy** — CIViC files one study under several assertions with near-identical text; a candidate that
  shares most of its word 5-grams with a kept item is that other assertion's copy and adds nothing new.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from evidex.agents.civic.claim_catalog import ClaimCatalog
from evidex.agents.civic.query_planner import facet_coverage
from evidex.agents.civic.variants import PROFILE_KEY, rival_variant
from evidex.agents.evidence_gate import GateResult
from evidex.tools.claims import Claim
from evidex.tools.kb_index import SearchHit


class CandidateChecks(BaseModel):
    """Thresholds of the candidate gate (``gate.candidate_*`` in a CIViC task config); ``None`` switches a check off."""

    ratio: float = Field(0.7, gt=0.0, le=1.0)
    facets: dict[str, float] = Field(default_factory=dict)
    max_overlap: float | None = None
    variant_conflict: bool = False
    claim_margin: float = Field(1.0, ge=1.0)


@dataclass
class _Context:
    """What the checks compare a candidate with (any part may be missing; its checks are skipped then)."""

    claim: Claim | None
    kept: dict[str, str] | None
    catalog: ClaimCatalog | None
    own_ranks: np.ndarray | None = None  # every KB item's rank for the claim (for the catalog check)


def gate_candidates(hits: list[SearchHit], checks: CandidateChecks, *, claim: Claim | None = None,
                    kept: dict[str, str] | None = None, catalog: ClaimCatalog | None = None) -> list[GateResult]:
    """One decision per hit. ``kept``: id -> text of the kept given items (``None`` = not judged; the checks
    that compare with kept items are skipped then, and also when nothing was kept). ``catalog``: competing
    claims (:mod:`agents.claim_catalog`); ``None`` = that check is off."""
    ctx = _Context(claim, kept, catalog if claim is not None else None)
    if ctx.catalog is not None:
        ctx.own_ranks = ctx.catalog.ranks(claim)
    best = max((h.score for h in hits), default=0.0)
    out = []
    for rank, h in enumerate(hits, start=1):
        rel = h.score / best if best > 0 else 0.0
        head = f"retrieved at rank {rank} with {rel:.0%} of the best score"
        if rel >= checks.ratio:
            failed = _content_check(h, checks, ctx)
        else:
            failed = f"only {rel:.0%} of the best score (gate {checks.ratio:.0%})"
        reason = head if failed is None else f"retrieved at rank {rank} but {failed}"
        out.append(GateResult(id=h.id, passed=failed is None, reason=reason, score=round(h.score, 4)))
    return out


def _content_check(hit: SearchHit, checks: CandidateChecks, ctx: _Context) -> str | None:
    """Why the candidate fails the variant / claim / facet / near-copy checks, or None when it passes."""
    claim, kept = ctx.claim, ctx.kept
    if claim is not None and checks.variant_conflict:
        rival = rival_variant(claim.context.get(PROFILE_KEY, ""), hit.text)
        if rival is not None:
            return f"{rival}: evidence about another variant"
    if ctx.catalog is not None:
        other = ctx.catalog.rival(claim, hit.id, ctx.own_ranks, checks.claim_margin)
        if other is not None:
            return other.reason()
    if claim is not None:
        for facet, share in checks.facets.items():
            cov = facet_coverage(claim, facet, hit.text)
            if cov is not None and cov < share:
                return f"names {cov:.0%} of the claim's {facet} (needs {share:.0%})"
    if checks.max_overlap and kept:
        share, kid = max((shingle_overlap(hit.text, t), i) for i, t in kept.items())
        if share >= checks.max_overlap:
            return (f"repeats kept item [{kid}] ({share:.0%} of its 5-grams; gate {checks.max_overlap:.0%}): "
                    "the same study, filed under another claim, adds nothing new")
    return None


def shingle_overlap(text: str, other: str, n: int = 5) -> float:
    """Share of ``text``'s word n-grams that also occur in ``other`` (0 when ``text`` has none)."""
    def grams(t: str) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z0-9]+", t.lower())
        return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    mine = grams(text)
    return len(mine & grams(other)) / len(mine) if mine else 0.0

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
  and k rise to 10 (0.796 / 0.830, 0.828 / 0.716) and made the neighbour and rescue checks redundant (off: held
  out unchanged or better);
* **facets** — the candidate names the claim's required facets (e.g. half the therapy's words);
* **neighbours** — a kept given item is among the candidate's nearest KB neighbours (one claim's evidence
  clusters; a same-gene item of a neighbouring claim sits nearer its own claim's items);
* **near-copy** — CIViC files one study under several assertions with near-identical text; a candidate that
  shares most of its word 5-grams with a kept item is that other assertion's copy and adds nothing new;
* **rescue** — a candidate below the score ratio is still added when it ranks for the claim's facets no worse
  than the worst kept given item and a kept item is among its few nearest neighbours.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from evidex.agents.civic.claim_catalog import ClaimCatalog
from evidex.agents.civic.query_planner import facet_coverage, neighbour_rank, relevance_ranks
from evidex.agents.civic.variants import PROFILE_KEY, rival_variant
from evidex.agents.evidence_gate import GateResult
from evidex.tools.claims import Claim, Evidence
from evidex.tools.kb_index import SearchHit


class CandidateChecks(BaseModel):
    """Thresholds of the candidate gate (``gate.candidate_*`` in a CIViC task config); ``None`` switches a check off."""

    ratio: float = Field(0.7, gt=0.0, le=1.0)
    neighbour_rank: int | None = None
    facets: dict[str, float] = Field(default_factory=dict)
    max_overlap: float | None = None
    rescue_neighbour_rank: int | None = None
    variant_conflict: bool = False
    claim_margin: float = Field(1.0, ge=1.0)


@dataclass
class _Context:
    """What the checks compare a candidate with (any part may be missing; its checks are skipped then)."""

    index: object | None
    claim: Claim | None
    kept: dict[str, str] | None
    catalog: ClaimCatalog | None
    own_ranks: np.ndarray | None = None  # every KB item's rank for the claim (for the catalog check)


def gate_candidates(hits: list[SearchHit], checks: CandidateChecks, *, index=None, claim: Claim | None = None,
                    kept: dict[str, str] | None = None, catalog: ClaimCatalog | None = None) -> list[GateResult]:
    """One decision per hit. ``kept``: id -> text of the kept given items (``None`` = not judged; the checks
    that compare with kept items are skipped then, and also when nothing was kept). ``catalog``: competing
    claims (:mod:`agents.claim_catalog`); ``None`` = that check is off."""
    ctx = _Context(index, claim, kept, catalog if claim is not None else None)
    if ctx.catalog is not None:
        ctx.own_ranks = ctx.catalog.ranks(claim)
    best = max((h.score for h in hits), default=0.0)
    bar = _kept_bar(hits, checks, ctx)
    out = []
    for rank, h in enumerate(hits, start=1):
        rel = h.score / best if best > 0 else 0.0
        head = f"retrieved at rank {rank} with {rel:.0%} of the best score"
        if rel >= checks.ratio:
            failed = _content_check(h, checks, ctx, checks.neighbour_rank)
            reason = head if failed is None else f"retrieved at rank {rank} but {failed}"
        else:
            rescued = _rescue(h, checks, ctx, bar)
            failed = None if rescued else f"only {rel:.0%} of the best score (gate {checks.ratio:.0%})"
            reason = f"{head} (gate {checks.ratio:.0%}), but {rescued}" if rescued else f"retrieved at rank {rank} but {failed}"
        out.append(GateResult(id=h.id, passed=failed is None, reason=reason, score=round(h.score, 4)))
    return out


def _content_check(hit: SearchHit, checks: CandidateChecks, ctx: _Context,
                   max_neighbour_rank: int | None) -> str | None:
    """Why the candidate fails the variant / claim / facet / neighbour / near-copy checks, or None when it passes."""
    claim, kept, index = ctx.claim, ctx.kept, ctx.index
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
    if index is not None and max_neighbour_rank and kept:
        nn = neighbour_rank(index, hit.id, kept)
        if nn is not None and nn > max_neighbour_rank:
            return (f"no kept evidence among its {max_neighbour_rank} nearest KB neighbours (closest is "
                    f"#{nn}); likely another claim's evidence")
    if checks.max_overlap and kept:
        share, kid = max((shingle_overlap(hit.text, t), i) for i, t in kept.items())
        if share >= checks.max_overlap:
            return (f"repeats kept item [{kid}] ({share:.0%} of its 5-grams; gate {checks.max_overlap:.0%}): "
                    "the same study, filed under another claim, adds nothing new")
    return None


def _kept_bar(hits: list[SearchHit], checks: CandidateChecks, ctx: _Context) -> tuple[dict[str, int], str, int] | None:
    """Facet ranks of the hits, and the worst-ranked kept item (id, rank): the bar a rescued candidate must meet."""
    if not (checks.rescue_neighbour_rank and ctx.index is not None and ctx.claim is not None and ctx.kept):
        return None
    items = [Evidence(id=h.id, text=h.text) for h in hits] + [Evidence(id=i, text=t) for i, t in ctx.kept.items()]
    ranks = relevance_ranks(ctx.index, ctx.claim, items)
    worst = max(ctx.kept, key=lambda i: ranks[i])
    return ranks, worst, ranks[worst]


def _rescue(hit: SearchHit, checks: CandidateChecks, ctx: _Context,
            bar: tuple[dict[str, int], str, int] | None) -> str | None:
    """Why a candidate below the score ratio is added anyway, or None."""
    if bar is None:
        return None
    ranks, worst_id, worst = bar
    if ranks[hit.id] > worst or _content_check(hit, checks, ctx, checks.rescue_neighbour_rank):
        return None
    return (f"it ranks #{ranks[hit.id]} for the claim's subject, no worse than kept item [{worst_id}] (#{worst}), "
            f"and kept evidence is among its {checks.rescue_neighbour_rank} nearest KB neighbours")


def shingle_overlap(text: str, other: str, n: int = 5) -> float:
    """Share of ``text``'s word n-grams that also occur in ``other`` (0 when ``text`` has none)."""
    def grams(t: str) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z0-9]+", t.lower())
        return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    mine = grams(text)
    return len(mine & grams(other)) / len(mine) if mine else 0.0

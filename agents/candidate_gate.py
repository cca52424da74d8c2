"""Model-free gate for retrieved candidates: which KB items the gather step adds as missing evidence.

Checks, in order (all tuned on held-out CIViC items 30-65 only; numbers are recovery P / R there, k=6):

* **score** — the fused score must be at least ``ratio`` of the best candidate's;
* **variant** — the candidate must not be about another variant: naming rival variants of the claim's kind, or
  calling its variant a class the claim's cannot have, while never naming the claim's own; or naming one rival
  more often than the claim's own (``agents.variants.rival_variant``; rival names: missing_evidence
  0.537 -> 0.553 with one hidden item lost, mixed 0.584 -> 0.598; dominance: mixed 0.591 -> 0.598, missing_evidence
  unchanged; negated mentions not counted: 0.545 -> 0.553 / 0.598 -> 0.605; held-out claims have no point
  mutations for the class check to act on);
* **facets** — the candidate names the claim's required facets (e.g. half the therapy's words);
* **neighbours** — a kept given item is among the candidate's nearest KB neighbours (one claim's evidence
  clusters; a same-gene item of a neighbouring claim sits nearer its own claim's items). With the facet
  check: missing_evidence 0.43 -> 0.49, mixed 0.52 -> 0.57;
* **near-copy** — CIViC files one study under several assertions with near-identical text; a candidate that
  shares most of its word 5-grams with a kept item is that other assertion's copy and adds nothing new
  (missing_evidence 0.49 -> 0.55, mixed 0.57 -> 0.61 with one hidden item lost);
* **rescue** — a candidate below the score ratio is still added when it ranks for the claim's facets no worse
  than the worst kept given item (evidence we already trust calibrates the bar) and a kept item is among its
  few nearest neighbours (recall 0.85 -> 0.92 / 0.73 -> 0.78 for precision -0.01 / -0.03).
"""
from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agents.query_planner import facet_coverage, neighbour_rank, relevance_ranks
from agents.relevance_gate import GateResult
from agents.variants import PROFILE_KEY, rival_variant
from evaluators.ibe import Claim, Evidence
from tools.kb_index import SearchHit


class CandidateChecks(BaseModel):
    """Thresholds of the candidate gate (``judge.candidate_*`` in the task config); ``None`` switches a check off."""

    ratio: float = Field(0.7, gt=0.0, le=1.0)
    neighbour_rank: int | None = None
    facets: dict[str, float] = Field(default_factory=dict)
    max_overlap: float | None = None
    rescue_neighbour_rank: int | None = None
    variant_conflict: bool = False


def gate_candidates(hits: list[SearchHit], checks: CandidateChecks, *, index=None, claim: Claim | None = None,
                    kept: dict[str, str] | None = None) -> list[GateResult]:
    """One decision per hit. ``kept``: id -> text of the kept given items (``None`` = not judged; the checks
    that compare with kept items are skipped then, and also when nothing was kept)."""
    best = max((h.score for h in hits), default=0.0)
    bar = _kept_bar(hits, checks, index, claim, kept)
    out = []
    for rank, h in enumerate(hits, start=1):
        rel = h.score / best if best > 0 else 0.0
        head = f"retrieved at rank {rank} with {rel:.0%} of the best score"
        if rel >= checks.ratio:
            failed = _content_check(h, checks, index, claim, kept, checks.neighbour_rank)
            reason = head if failed is None else f"retrieved at rank {rank} but {failed}"
        else:
            rescued = _rescue(h, checks, index, claim, kept, bar)
            failed = None if rescued else f"only {rel:.0%} of the best score (gate {checks.ratio:.0%})"
            reason = f"{head} (gate {checks.ratio:.0%}), but {rescued}" if rescued else f"retrieved at rank {rank} but {failed}"
        out.append(GateResult(id=h.id, passed=failed is None, reason=reason, score=round(h.score, 4)))
    return out


def _content_check(hit: SearchHit, checks: CandidateChecks, index, claim: Claim | None,
                   kept: dict[str, str] | None, max_neighbour_rank: int | None) -> str | None:
    """Why the candidate fails the variant / facet / neighbour / near-copy checks, or None when it passes."""
    if claim is not None and checks.variant_conflict:
        rival = rival_variant(claim.context.get(PROFILE_KEY, ""), hit.text)
        if rival is not None:
            return f"{rival}: evidence about another variant"
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


def _kept_bar(hits: list[SearchHit], checks: CandidateChecks, index, claim: Claim | None,
              kept: dict[str, str] | None) -> tuple[dict[str, int], str, int] | None:
    """Facet ranks of the hits, and the worst-ranked kept item (id, rank): the bar a rescued candidate must meet."""
    if not (checks.rescue_neighbour_rank and index is not None and claim is not None and kept):
        return None
    items = [Evidence(id=h.id, text=h.text) for h in hits] + [Evidence(id=i, text=t) for i, t in kept.items()]
    ranks = relevance_ranks(index, claim, items)
    worst = max(kept, key=lambda i: ranks[i])
    return ranks, worst, ranks[worst]


def _rescue(hit: SearchHit, checks: CandidateChecks, index, claim: Claim | None, kept: dict[str, str] | None,
            bar: tuple[dict[str, int], str, int] | None) -> str | None:
    """Why a candidate below the score ratio is added anyway, or None."""
    if bar is None:
        return None
    ranks, worst_id, worst = bar
    if ranks[hit.id] > worst or _content_check(hit, checks, index, claim, kept, checks.rescue_neighbour_rank):
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

"""Competing claims: the other claims a knowledge base's evidence was filed under.

CIViC files every evidence item under one assertion (the claims of the IBE files); the KB is all of them
together. A retrieved item that fits another known claim better than the one being explained is most likely
that claim's evidence: the same ETV6::NTRK3 study filed under a neighbouring disease, the pan-NTRK trial filed
under "NTRK1 fusions". "Fits better" is the model-free relevance rank already used for given items
(:func:`agents.query_planner.relevance_ranks`): how the item ranks among all KB items for each claim's facet
queries (claim sentence, profile, disease, therapy), and the claim being explained gets no extra signal from its
kept evidence, so all claims are compared on the same footing.

The catalog holds claim sentences and their context only, never evidence lists (see
:func:`evidex.tools.claim_data.load_claim_catalog`), so no hidden answer is used.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel

from evidex.agents.civic.query_planner import facet_queries, facet_scores
from evidex.tools.claims import Claim
from evidex.tools.kb_index import KnowledgeBaseIndex


class RivalClaim(BaseModel):
    """Another known claim an item ranks better for than the claim being explained (ranks: 1 = best)."""

    claim: Claim
    rank: int  # the item's rank for that claim
    own_rank: int  # its rank for the claim being explained

    def reason(self) -> str:
        return (f"ranks #{self.rank} in the KB for another known claim ({quote(self.claim)}) but only "
                f"#{self.own_rank} for this one: likely that claim's evidence")


def quote(claim: Claim, limit: int = 110) -> str:
    """The claim sentence in quotes, shortened for a one-line reason."""
    text = claim.text if len(claim.text) <= limit else claim.text[:limit - 3].rstrip() + "..."
    return f'"{text}"'


def _key(text: str) -> str:
    return " ".join(text.lower().split())


class ClaimCatalog:
    """Claims known to own the KB's evidence, with every KB item's rank for each (computed once, lazily)."""

    def __init__(self, index: KnowledgeBaseIndex, claims: list[Claim]):
        self.index = index
        self.claims = list({_key(c.text): c for c in claims if c.text.strip()}.values())
        self._keys = [_key(c.text) for c in self.claims]
        self._ranks: np.ndarray | None = None  # (claims, KB docs)
        self._lock = threading.Lock()

    def ranks(self, claim: Claim) -> np.ndarray:
        """Rank (1 = best; ties share a rank) of every KB item for ``claim``'s facet queries."""
        scores = facet_scores(self.index, facet_queries(claim))
        ordered = np.sort(scores)  # 1 + the number of items scoring strictly higher
        return len(scores) - np.searchsorted(ordered, scores, side="right") + 1

    def _catalog_ranks(self) -> np.ndarray:
        with self._lock:
            if self._ranks is None:
                n = len(self.index.docs)
                rows = [self.ranks(c) for c in self.claims]
                self._ranks = np.stack(rows) if rows else np.zeros((0, n), dtype=int)
            return self._ranks

    def log_rank_ratio(self, claim: Claim) -> np.ndarray:
        """Per KB item: ln(its rank for ``claim`` / its best rank for any other catalog claim). Positive where
        another known claim ranks the item better (likely that claim's evidence); 0 everywhere when no other
        claim is known."""
        own = self.ranks(claim)
        skip = _key(claim.text)
        rows = [n for n, key in enumerate(self._keys) if key != skip]
        if not rows:
            return np.zeros(len(own))
        best_other = self._catalog_ranks()[rows].min(axis=0)
        return np.log(own / best_other)

    def best_other(self, doc_id: str, exclude: Iterable[Claim]) -> tuple[int, Claim] | None:
        """The best rank of ``doc_id`` for a catalog claim other than ``exclude`` (matched by sentence), with
        that claim; ``None`` for ids outside the KB or when no other claim is left."""
        pos = self.index.position.get(doc_id)
        if pos is None or not self.claims:
            return None
        skip = {_key(c.text) for c in exclude}
        ranks = self._catalog_ranks()[:, pos]
        others = [(int(r), c) for r, c, key in zip(ranks, self.claims, self._keys) if key not in skip]
        return min(others, key=lambda rc: rc[0]) if others else None

    def rival(self, claim: Claim, doc_id: str, own_ranks: np.ndarray | None = None,
              margin: float = 1.0) -> RivalClaim | None:
        """The other catalog claim ``doc_id`` ranks best for, when its rank there times ``margin`` is still
        better than its rank for ``claim``; ``None`` otherwise (also for ids outside the KB). Catalog entries
        with the claim's own sentence are the claim itself and never compete. ``own_ranks``: :meth:`ranks` of
        ``claim``, when the caller checks several items."""
        found = self.best_other(doc_id, [claim])
        if found is None:
            return None
        best, other = found
        own = int((own_ranks if own_ranks is not None else self.ranks(claim))[self.index.position[doc_id]])
        return RivalClaim(claim=other, rank=best, own_rank=own) if best * margin < own else None

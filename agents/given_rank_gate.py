"""The domain-free gate: keep the given items closest to the claim, ranked among the given items themselves.

For evidence that is in no knowledge base (R4C's ten Wikipedia paragraphs, a user's own list) no KB rank can be
had, so the items are ranked against each other by dense + BM25 similarity to the claim sentence and the
``keep_top`` best are kept. It reads no data files and knows nothing of any domain; it cannot gather, select
or assign (those need a knowledge base: use another gate, or ``judge.strategy: llm``).
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from evidex.agents.evidence_gate import (Capability, DataFile, Gathered, GateResult, GateSettings, GraphKind,
                                         unsupported)
from evidex.tools.claims import Claim, Evidence
from evidex.tools.kb_index import rank_texts


class GivenRankSettings(GateSettings):
    name: Literal["given_rank"] = Field("given_rank", description="The evidence-gate plug-in (agents/gates.py: "
                                        "given_rank, civic); given_rank ranks the given items among themselves, for "
                                        "evidence in no knowledge base.")
    keep_top: int = Field(3, ge=1, description="Keep this many given items, the ones closest to the claim among "
                                              "the given items themselves.")


def gate_top_given(embeddings, claim: Claim, evidence: list[Evidence], keep_top: int) -> list[GateResult]:
    """Keep the ``keep_top`` given items that best match the claim, ranked among the given items themselves
    (dense + BM25)."""
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


class GivenRankGate:
    name = "given_rank"

    def __init__(self, settings: GivenRankSettings, *, embedder, kb: str | None = None, mode: str = "hybrid",
                 index=None):
        self.settings = settings  # kb, mode and index: no knowledge base is used
        self.embedder = embedder

    def supports(self, capability: Capability) -> bool:
        return capability == "judge_given"

    def judge_given(self, claim: Claim, evidence: list[Evidence]) -> list[GateResult]:
        return gate_top_given(self.embedder, claim, evidence, self.settings.keep_top)

    def gather(self, claim, evidence, *, kept_ids, k) -> Gathered:
        raise unsupported(self.name, "gather evidence (it has no knowledge base)",
                          "set steps.gather=false or choose a gate with a knowledge base (gate.name)")

    def judge_candidates(self, claim, hits, kept) -> list[GateResult]:
        raise unsupported(self.name, "judge retrieved candidates", "set judge.strategy=llm or steps.gather=false")

    def select(self, claims, evidence):
        raise unsupported(self.name, "choose between two claims", "set judge.strategy=llm for selection")

    def assign(self, claims, evidence):
        raise unsupported(self.name, "assign evidence to claims", "set judge.strategy=llm for assignment")

    def owners(self, claim: Claim, ids: list[str]) -> dict[str, Claim]:
        return {}  # it knows no other claims

    def data_files(self, graph: GraphKind) -> list[DataFile]:
        return []

"""The registered evidence-gate plug-ins (the protocol is in :mod:`agents.evidence_gate`).

A task config chooses one with ``gate: {name: ...}``; its other keys are that plug-in's settings. To add a
plug-in: write its settings model and gate class, then add both below (one line each).
"""
from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from evidex.agents.civic.gate import CivicGate, CivicGateSettings
from evidex.agents.evidence_gate import EvidenceGate
from evidex.agents.given_rank_gate import GivenRankGate, GivenRankSettings

AnyGateSettings = Annotated[Union[GivenRankSettings, CivicGateSettings], Field(discriminator="name")]


GATES: dict[str, type] = {"given_rank": GivenRankGate, "civic": CivicGate}


def make_gate(settings: GivenRankSettings | CivicGateSettings, *, kb: str | None, embedder, mode: str = "hybrid",
              index=None) -> EvidenceGate:
    """The gate for ``settings`` over the knowledge base ``kb`` (for plug-ins that use one)."""
    return GATES[settings.name](settings, kb=kb, embedder=embedder, mode=mode, index=index)

"""Typed graph state shared by the claim graphs (pydantic; list fields have reducers)."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from evidex.tools.claims import ClaimInput, ClaimPrediction, EvidenceDecision, Label


def merge_decisions(old: list[EvidenceDecision], new: list[EvidenceDecision]) -> list[EvidenceDecision]:
    """Reducer: append new decisions; a decision for an item already judged (same source and id) replaces it
    in place, so a later node can refine a label without re-listing everything."""
    merged = {(d.source, d.id): d for d in old}
    for d in new:
        merged[(d.source, d.id)] = d
    return list(merged.values())


class ClaimGraphInput(BaseModel):
    """What callers pass in: the visible claim input (never the gold)."""

    input: ClaimInput


class ClaimGraphOutput(BaseModel):
    prediction: ClaimPrediction


class ClaimGraphState(ClaimGraphInput):
    decisions: Annotated[list[EvidenceDecision], merge_decisions] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)
    retrieved: dict[str, str] = Field(default_factory=dict)  # id -> text of KB candidates shown to the judge
    findings: dict[str, str] = Field(default_factory=dict)  # id -> the item's short finding, for its reason
    long_findings: dict[str, str] = Field(default_factory=dict)  # id -> its finding for the explanation
    selected_claim: Label | None = None
    explanations: dict[str, str] = Field(default_factory=dict)
    verification: dict[str, Any] = Field(default_factory=dict)
    prediction: ClaimPrediction | None = None

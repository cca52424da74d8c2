"""Typed graph state shared by the claim graphs (pydantic; list fields have reducers)."""
from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, Field

from evaluators.ibe import ClaimInput, ClaimPrediction, EvidenceDecision, Label


class ClaimGraphInput(BaseModel):
    """What callers pass in: the visible claim input (never the gold)."""

    input: ClaimInput


class ClaimGraphOutput(BaseModel):
    prediction: ClaimPrediction


class ClaimGraphState(ClaimGraphInput):
    decisions: Annotated[list[EvidenceDecision], operator.add] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list)
    retrieved: dict[str, str] = Field(default_factory=dict)  # id -> text of KB candidates shown to the judge
    selected_claim: Label | None = None
    explanations: dict[str, str] = Field(default_factory=dict)
    verification: dict[str, Any] = Field(default_factory=dict)
    revisions: int = 0
    prediction: ClaimPrediction | None = None

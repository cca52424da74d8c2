"""Claim-task data types shared by every layer: what a claim graph is given, the hidden gold, and what it returns.

The split matters: a :class:`ClaimInput` is all a graph ever sees; :class:`Gold` (gold explanation, hidden
missing evidence, which items are wrong, the right claim, golden facts) stays with the scorer.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Label = Literal["A", "B"]
AssignLabel = Literal["A", "B", "neither"]

class Evidence(BaseModel):
    id: str
    text: str


class Claim(BaseModel):
    text: str
    context: dict[str, str] = Field(default_factory=dict)


class ClaimInput(BaseModel):
    """What a claim graph is given. Single-claim tasks use ``claims["claim"]``; selection and assignment use
    ``claims["A"]`` and ``claims["B"]``."""

    id: str
    task: str
    claims: dict[str, Claim]
    evidence: list[Evidence]


class Gold(BaseModel):
    """Hidden answers, used only for scoring."""

    explanations: dict[str, str] = Field(default_factory=dict)  # keyed like ClaimInput.claims
    missing_ids: list[str] = Field(default_factory=list)
    wrong_ids: list[str] = Field(default_factory=list)
    correct_claim: Label | None = None  # selection
    assignment: dict[str, AssignLabel] = Field(default_factory=dict)  # evidence id -> claim
    supported: bool | None = None  # wrong_claim
    golden_facts: list[str] = Field(default_factory=list)  # r4c
    correct_evidence_texts: list[str] = Field(default_factory=list)  # visible correct evidence (reference)


class TaskItem(BaseModel):
    """One dataset item: the visible input and the hidden gold (the runner's item protocol)."""

    input: ClaimInput
    gold: Gold

    @property
    def id(self) -> str:
        return self.input.id

    def graph_input(self) -> dict[str, Any]:
        return {"input": self.input}

    def public_input(self) -> dict[str, Any]:
        return self.input.model_dump()


# -- what a claim graph returns (scored by evaluators.explainers) ---------------------------------------------
JudgeLabel = Literal["supports", "contradicts", "irrelevant"]


class EvidenceDecision(BaseModel):
    """One judged evidence item: a given one (kept or discarded) or a retrieved candidate (added or not)."""

    id: str
    source: Literal["given", "retrieved"]
    label: JudgeLabel
    reason: str
    kept: bool
    claim: AssignLabel | None = None  # assignment: which claim the item belongs to
    score: float | None = None  # retrieval score for retrieved candidates
    basis: str | None = None  # the gate's own note, kept when ``reason`` was rewritten as a sentence for readers


class ClaimPrediction(BaseModel):
    id: str
    task: str
    decisions: list[EvidenceDecision] = Field(default_factory=list)
    kept_ids: list[str] = Field(default_factory=list)  # evidence the explanation may cite
    added_ids: list[str] = Field(default_factory=list)  # retrieved and kept
    discarded_ids: list[str] = Field(default_factory=list)  # given but not kept
    explanations: dict[str, str] = Field(default_factory=dict)  # keyed like ClaimInput.claims
    cited_ids: dict[str, list[str]] = Field(default_factory=dict)
    selected_claim: Label | None = None
    assignment: dict[str, AssignLabel] = Field(default_factory=dict)
    supported: bool | None = None
    queries: list[str] = Field(default_factory=list)
    verification: dict[str, object] = Field(default_factory=dict)
    evidence_texts: dict[str, str] = Field(default_factory=dict)  # id -> text of every kept item (for RAGAS)

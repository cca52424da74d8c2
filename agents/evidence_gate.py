"""The evidence-gate protocol: the model-free, domain-specific rules a claim graph consults.

The claim graphs (gather -> discard -> explain, selection, assignment) hold no domain knowledge. Where a
decision can be made without the model they ask the gate the task config names (``gate.name``):

==================  ==========================================================================================
``judge_given``     keep or discard each given evidence item, with a one-line reason
``gather``          candidate items for the claim from a knowledge base (top ``k``, given ids excluded)
``judge_candidates`` which gathered candidates to add as missing evidence
``select``          which of two claims the evidence supports (selection)
``assign``          claim A, claim B or neither for each item (assignment)
``owners``          for items set aside, the known claim each belongs to, where the gate knows one (their reasons
                    name it); every gate answers, an empty dict when it knows no other claims
``data_files``      the data files the gate reads, loaded before a run so a bad file fails once, not per item
==================  ==========================================================================================

A gate that cannot do one of these raises :class:`GateUnsupported` naming the setting to change; the graph
builder asks first (:meth:`EvidenceGate.supports`) so a config that needs a missing capability fails when the
graph is built, not on the first item.

Plug-ins (registered in :mod:`agents.gates`):

* ``given_rank`` (:mod:`agents.given_rank_gate`) — domain-free: keeps the given items closest to the claim,
  ranked among themselves (R4C's Wikipedia paragraphs, any evidence that is not in a knowledge base);
* ``civic`` (:mod:`agents.civic`) — CIViC's knowledge base, variant names, and the claims that compete for its
  evidence.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from evidex.tools.claims import AssignLabel, Claim, Evidence, Label
from evidex.tools.kb_index import SearchHit

Capability = Literal["judge_given", "gather", "judge_candidates", "select", "assign"]
GraphKind = Literal["explainer", "selection", "assignment"]


class GateUnsupported(ValueError):
    """The configured gate cannot make this decision; the message says which setting to change."""


class GateResult(BaseModel):
    """One model-free decision: passed (keep / add) or not, why, and the score or rank it rests on."""

    id: str
    passed: bool
    reason: str
    score: float


class Gathered(BaseModel):
    """Candidates from a knowledge base and the queries that found them (shown in traces and results)."""

    hits: list[SearchHit]
    queries: list[str] = []


class DataFile(BaseModel):
    """A data file a gate reads: the config key that names it, its path, and the loader that checks it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    key: str
    path: str
    load: Callable[[str], object]


class GateSettings(BaseModel):
    """Base of every plug-in's settings (the ``gate:`` section of a claim task config)."""

    model_config = ConfigDict(extra="forbid")

    def for_knowledge_base(self, kb: str | None) -> GateSettings:
        """These settings adjusted to the configured knowledge base (``retrieval.kb``); most plug-ins ignore it."""
        return self

    def ignored_settings(self) -> list[str]:
        """Settings given explicitly that other settings override (a run prints them as warnings)."""
        return []


@runtime_checkable
class EvidenceGate(Protocol):
    name: str

    def supports(self, capability: Capability) -> bool: ...

    def judge_given(self, claim: Claim, evidence: list[Evidence]) -> list[GateResult]: ...

    def gather(self, claim: Claim, evidence: list[Evidence], *, kept_ids: set[str] | None, k: int) -> Gathered: ...

    def judge_candidates(self, claim: Claim, hits: list[SearchHit],
                         kept: dict[str, str] | None) -> list[GateResult]: ...

    def select(self, claims: dict[str, Claim], evidence: list[Evidence]) -> tuple[Label, str]: ...

    def assign(self, claims: dict[str, Claim],
               evidence: list[Evidence]) -> dict[str, tuple[AssignLabel, str]]: ...

    def owners(self, claim: Claim, ids: list[str]) -> dict[str, Claim]: ...

    def data_files(self, graph: GraphKind) -> list[DataFile]: ...


def unsupported(gate: str, what: str, hint: str) -> GateUnsupported:
    return GateUnsupported(f"gate {gate!r} cannot {what}; {hint}")

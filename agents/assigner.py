"""Assignment: each evidence item belongs to claim A, claim B, or neither (one call, one key per id)."""
from __future__ import annotations

from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field, create_model

from agents.claim_prompt import messages
from agents.prompts import render
from agents.structured import call_structured
from evaluators.ibe import AssignLabel, Claim, Evidence


class Assignment(BaseModel):
    id: str
    claim: AssignLabel
    reason: str


def assign_evidence(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *,
                    evidence_chars: int, context_chars: int, reason_chars: int) -> list[Assignment]:
    ids = [e.id for e in evidence]
    item = create_model("ItemAssignment", reason=(str, Field(max_length=reason_chars)),
                        claim=(Literal["A", "B", "neither"], ...))
    fields = {f"e{i}": (item, Field(alias=eid)) for i, eid in enumerate(ids)}
    schema = create_model("EvidenceAssignments", __config__=ConfigDict(populate_by_name=True), **fields)
    task = render("assign_evidence", ids=", ".join(f"[{i}]" for i in ids), reason_words=max(5, reason_chars // 7))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars)
    out = call_structured(llm, schema, msgs, name="assign_evidence")
    return [Assignment(id=eid, claim=getattr(out, f"e{i}").claim, reason=getattr(out, f"e{i}").reason.strip())
            for i, eid in enumerate(ids)]

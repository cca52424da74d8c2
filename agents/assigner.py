"""Assignment: each evidence item belongs to claim A, claim B, or neither (one call, one key per id)."""
from __future__ import annotations

from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import messages
from evidex.agents.prompts import render
from evidex.agents.structured import call_structured, per_id_items, per_id_schema
from evidex.tools.claims import AssignLabel, Claim, Evidence


class Assignment(BaseModel):
    id: str
    claim: AssignLabel
    reason: str


def assign_evidence(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *,
                    evidence_chars: int, context_chars: int, reason_chars: int) -> list[Assignment]:
    ids = [e.id for e in evidence]
    item = create_model("ItemAssignment", reason=(str, Field(max_length=reason_chars)),
                        claim=(Literal["A", "B", "neither"], ...))
    schema = per_id_schema("EvidenceAssignments", item, ids)
    task = render("assign_evidence", ids=", ".join(f"[{i}]" for i in ids), reason_words=max(5, reason_chars // 7))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars)
    out = call_structured(llm, schema, msgs, name="assign_evidence")
    return [Assignment(id=eid, claim=a.claim, reason=a.reason.strip()) for eid, a in per_id_items(out, ids)]

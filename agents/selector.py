"""Selection: which of two claims (A or B) does the evidence list support?"""
from __future__ import annotations

from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import messages
from evidex.agents.prompts import render
from evidex.agents.structured import call_structured
from evidex.tools.claims import Claim, Evidence


class Selection(BaseModel):
    answer: Literal["A", "B"]
    reason: str


def select_claim(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *, evidence_chars: int,
                 context_chars: int, reason_chars: int) -> Selection:
    schema = create_model("ClaimSelection", reason=(str, Field(max_length=reason_chars)),
                          answer=(Literal["A", "B"], ...))
    task = render("select_claim", reason_words=max(5, reason_chars // 7))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars)
    out = call_structured(llm, schema, msgs, name="select_claim")
    return Selection(answer=out.answer, reason=out.reason.strip())

"""Judge evidence items against a claim: supports / contradicts / irrelevant, with a one-line reason.

One small call per item. Batching every item into one JSON object was tried first: the 1.5B local model then
repeats one label for all items. Per-item calls keep the claim block as a shared prefix, so llama.cpp only
processes each item's own tokens.
"""
from __future__ import annotations

from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from agents.claim_prompt import messages
from agents.prompts import render
from agents.structured import call_structured
from evaluators.ibe import Claim, Evidence, JudgeLabel


class Judgement(BaseModel):
    id: str
    label: JudgeLabel
    reason: str


def judgement_schema(reason_chars: int, labels: tuple[str, ...]) -> type[BaseModel]:
    # label first: with the reason first, the small model tends to copy the label into the reason
    return create_model("EvidenceJudgement", label=(Literal[labels], ...),  # type: ignore[valid-type]
                        reason=(str, Field(max_length=reason_chars)))


def judge_evidence(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *,
                   evidence_chars: int, context_chars: int, reason_chars: int, stance_only: bool = False,
                   name: str = "judge_evidence") -> list[Judgement]:
    """Label each item. ``stance_only``: the item is known to be on-topic; ask supports vs contradicts."""
    labels = ("supports", "contradicts") if stance_only else ("supports", "contradicts", "irrelevant")
    schema = judgement_schema(reason_chars, labels)
    prompt = "judge_stance" if stance_only else "judge_evidence"
    out = []
    for item in evidence:
        task = render(prompt, id=item.id, reason_words=max(5, reason_chars // 7))
        msgs = messages(claims, [item], task, evidence_chars=evidence_chars, context_chars=context_chars)
        result = call_structured(llm, schema, msgs, name=f"{name}[{item.id}]")
        out.append(Judgement(id=item.id, label=result.label, reason=result.reason.strip() or result.label))
    return out

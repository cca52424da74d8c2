"""Judge evidence items against a claim: supports / contradicts / irrelevant, with a one-line reason.

``judge_evidence`` makes one small call per item; the claim block is a shared prefix that llama.cpp caches.
``judge_stances`` asks for all kept items in one call whose prefix the writer reuses (``judge.stance_batch``):
faster, but on long lists the 1.5B local model repeats one label and one reason for every item (15 ALK
items all "contradicts"), so it is off by default.
"""
from __future__ import annotations

from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import messages
from evidex.agents.prompts import render
from evidex.agents.structured import call_structured, per_id_items, per_id_schema
from evidex.tools.claims import Claim, Evidence, JudgeLabel


class Judgement(BaseModel):
    id: str
    label: JudgeLabel
    reason: str


def judgement_schema(reason_chars: int, labels: tuple[str, ...]) -> type[BaseModel]:
    # The field name steers a small model: asked for a "reason" it restates the claim or copies the label;
    # asked for the item's "evidence_finding" first, it names the finding and then labels it (measured on
    # mixed-000/001 with the local 1.5B model).
    return create_model("EvidenceJudgement", evidence_finding=(str, Field(max_length=reason_chars)),
                        label=(Literal[labels], ...))  # type: ignore[valid-type]


def judge_evidence(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *,
                   evidence_chars: int, context_chars: int, reason_chars: int, stance_only: bool = False,
                   name: str = "judge_evidence") -> list[Judgement]:
    """One call per item: supports / contradicts / irrelevant (``judge.strategy: llm``), or with
    ``stance_only`` just supports / contradicts for items a relevance gate already kept."""
    labels = ("supports", "contradicts") if stance_only else ("supports", "contradicts", "irrelevant")
    schema = judgement_schema(reason_chars, labels)
    prompt = "judge_stance" if stance_only else "judge_evidence"
    out = []
    for item in evidence:
        task = render(prompt, id=item.id, reason_words=max(5, reason_chars // 7))
        msgs = messages(claims, [item], task, evidence_chars=evidence_chars, context_chars=context_chars)
        result = call_structured(llm, schema, msgs, name=f"{name}[{item.id}]")
        out.append(Judgement(id=item.id, label=result.label, reason=result.evidence_finding.strip() or result.label))
    return out


def judge_stances(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *, evidence_chars: int,
                  context_chars: int, reason_chars: int, name: str = "judge_stances") -> list[Judgement]:
    """supports/contradicts + reason for every on-topic item in ONE call (one required key per id, in order).

    The messages up to the TASK line are built exactly like the writer's, so the explanation call that follows
    reuses the cached prompt: the evidence is read by the model once per item, not twice."""
    if not evidence:
        return []
    item = create_model("ItemStance", evidence_finding=(str, Field(max_length=reason_chars)),
                        label=(Literal["supports", "contradicts"], ...))
    ids = [e.id for e in evidence]
    schema = per_id_schema("EvidenceStances", item, ids)
    task = render("judge_stances", ids=", ".join(f"[{e.id}]" for e in evidence), reason_words=max(5, reason_chars // 7))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars)
    # ~45 tokens per item (label, reason, JSON punctuation) plus slack, so long lists are not cut off
    result = call_structured(llm, schema, msgs, name=name, max_tokens=64 + 48 * len(evidence))
    return [Judgement(id=eid, label=x.label, reason=x.evidence_finding.strip() or x.label)
            for eid, x in per_id_items(result, ids)]

"""Judge evidence items against a claim.

``judge_evidence`` (``judge.strategy: llm``) makes one small call per item: supports / contradicts / irrelevant,
with a one-line reason; the claim block is a shared prefix that llama.cpp caches. ``judge_stances``
(``judge.llm_stance``) labels the items a gate kept supports / contradicts in batched calls of at most
``batch_size`` ids; every call shows the same system + claim + evidence prefix, so llama.cpp reads the evidence
once per item. Short batches keep the 1.5B local model from repeating one label down a long list (with all 15
ALK items in one call it called every one "contradicts").

A batched reply that still does not validate after the repair retry is salvaged: the entries that are valid
are kept, and each missing id is asked again on its own (same prefix, one id); only when that also fails does
the item get an error (:class:`~agents.structured.StructuredOutputError`).
"""
from __future__ import annotations

import logging
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import STANCES, messages
from evidex.agents.prompts import render
from evidex.agents.structured import (StructuredOutputError, call_structured, per_id_items, per_id_schema,
                                      salvage_per_id)
from evidex.tools.claims import Claim, Evidence, JudgeLabel

log = logging.getLogger(__name__)


class Judgement(BaseModel):
    id: str
    label: JudgeLabel
    reason: str


def reason_words(reason_chars: int) -> int:
    """The word budget the prompt states for a reason of at most ``reason_chars`` characters."""
    return max(5, reason_chars // 7)


def judgement_schema(reason_chars: int, labels: tuple[str, ...]) -> type[BaseModel]:
    # The field name steers a small model: asked for a "reason" it restates the claim or copies the label;
    # asked for the item's "evidence_finding" first, it names the finding and then labels it (measured on
    # mixed-000/001 with the local 1.5B model).
    return create_model("EvidenceJudgement", evidence_finding=(str, Field(max_length=reason_chars)),
                        label=(Literal[labels], ...))  # type: ignore[valid-type]


def judge_evidence(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *,
                   evidence_chars: int, context_chars: int, reason_chars: int,
                   name: str = "judge_evidence") -> list[Judgement]:
    """One call per item: supports / contradicts / irrelevant (``judge.strategy: llm``)."""
    schema = judgement_schema(reason_chars, ("supports", "contradicts", "irrelevant"))
    out = []
    for item in evidence:
        task = render("judge_evidence", id=item.id, reason_words=reason_words(reason_chars))
        msgs = messages(claims, [item], task, evidence_chars=evidence_chars, context_chars=context_chars)
        result = call_structured(llm, schema, msgs, name=f"{name}[{item.id}]")
        out.append(Judgement(id=item.id, label=result.label, reason=result.evidence_finding.strip() or result.label))
    return out


StanceLabel = Literal["supports", "contradicts"]


def judge_stances(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *, evidence_chars: int,
                  context_chars: int, batch_size: int = 64, name: str = "judge_stances") -> list[Judgement]:
    """supports/contradicts for every kept item, ``batch_size`` ids per call (one required key per id, in order),
    in the order of ``evidence``; labels only (each Judgement's reason is "").

    Every call shows all of ``evidence`` and names its ids in the TASK line, so the calls share one cached prompt:
    the evidence is read by the model once per item."""
    if not evidence:
        return []
    ids = [e.id for e in evidence]
    chunks = [ids[i: i + batch_size] for i in range(0, len(ids), batch_size)]
    found: dict[str, Judgement] = {}
    for n, chunk in enumerate(chunks):
        call_name = name if len(chunks) == 1 else f"{name}[{n + 1}/{len(chunks)}]"
        found.update(_stance_call(llm, claims, evidence, chunk, evidence_chars=evidence_chars,
                                  context_chars=context_chars, name=call_name, fallback_name=name))
    return [found[i] for i in ids]


def _stance_call(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], ids: list[str], *,
                 evidence_chars: int, context_chars: int, name: str, fallback_name: str) -> dict[str, Judgement]:
    """One batched call for ``ids``; on a reply that stays invalid, keep its valid entries and ask each missing
    id alone (raises :class:`StructuredOutputError` when a single id still fails)."""
    schema = per_id_schema("EvidenceStances", StanceLabel, ids)
    task = render(STANCES, ids=", ".join(f"[{i}]" for i in ids))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars)
    try:
        # ~10 tokens per label (label, JSON punctuation) plus slack, so long lists are not cut off
        result = call_structured(llm, schema, msgs, name=name, max_tokens=64 + 12 * len(ids))
        pairs = per_id_items(result, ids)
    except StructuredOutputError as exc:
        if len(ids) == 1:
            raise
        salvaged = salvage_per_id(exc.replies, StanceLabel, ids)
        missing = [i for i in ids if i not in salvaged]
        log.info("%s: %d of %d stances invalid after repair; asking them one by one", name, len(missing), len(ids))
        out = {i: Judgement(id=i, label=x, reason="") for i, x in salvaged.items()}
        for eid in missing:
            out.update(_stance_call(llm, claims, evidence, [eid], evidence_chars=evidence_chars,
                                    context_chars=context_chars, name=f"{fallback_name}[{eid}]",
                                    fallback_name=fallback_name))
        return out
    return {eid: Judgement(id=eid, label=x, reason="") for eid, x in pairs}

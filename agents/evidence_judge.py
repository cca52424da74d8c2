"""Judge evidence items against a claim: supports / contradicts / irrelevant, with a one-line reason.

``judge_evidence`` makes one small call per item; the claim block is a shared prefix that llama.cpp caches.
``judge_stances`` (``judge.stance_batch``) labels the kept items in batched calls of at most ``batch_size`` ids;
every call shows the same system + claim + evidence prefix as the writer, so llama.cpp reads the evidence once
per item and the explanation call reuses it. Short batches keep the 1.5B local model from repeating one label
and one reason down a long list (with all 15 ALK items in one call it called every one "contradicts").

A batched reply that still does not validate after the repair retry is salvaged: the entries that are valid
are kept, and each missing id is asked again on its own (same prefix, one id); only when that also fails does
the item get an error (:class:`~agents.structured.StructuredOutputError`).
"""
from __future__ import annotations

import logging
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import FULL, PromptStyle, messages
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
                   evidence_chars: int, context_chars: int, reason_chars: int, stance_only: bool = False,
                   name: str = "judge_evidence", style: PromptStyle = FULL) -> list[Judgement]:
    """One call per item: supports / contradicts / irrelevant (``judge.strategy: llm``), or with
    ``stance_only`` just supports / contradicts for items a relevance gate already kept."""
    labels = ("supports", "contradicts") if stance_only else ("supports", "contradicts", "irrelevant")
    schema = judgement_schema(reason_chars, labels)
    prompt = style.stance if stance_only else "judge_evidence"
    out = []
    for item in evidence:
        task = render(prompt, id=item.id, reason_words=reason_words(reason_chars))
        msgs = messages(claims, [item], task, evidence_chars=evidence_chars, context_chars=context_chars,
                        system=style.system)
        result = call_structured(llm, schema, msgs, name=f"{name}[{item.id}]")
        out.append(Judgement(id=item.id, label=result.label, reason=result.evidence_finding.strip() or result.label))
    return out


StanceLabel = Literal["supports", "contradicts"]


def stance_item_schema(reason_chars: int, reasons: bool = True):
    """One item of a batched stance reply: ``{"evidence_finding", "label"}``, or with ``reasons=False`` just the
    label string."""
    if not reasons:
        return StanceLabel
    return create_model("ItemStance", evidence_finding=(str, Field(max_length=reason_chars)),
                        label=(StanceLabel, ...))


def judge_stances(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *, evidence_chars: int,
                  context_chars: int, reason_chars: int, batch_size: int = 64, style: PromptStyle = FULL,
                  reasons: bool = True, name: str = "judge_stances") -> list[Judgement]:
    """supports/contradicts + reason for every kept item, ``batch_size`` ids per call (one required key per id,
    in order), in the order of ``evidence``. ``reasons=False``: labels only (each Judgement's reason is "").

    Every call shows all of ``evidence`` (the writer's prefix) and names its ids in the TASK line, so the calls
    and the explanation that follows share one cached prompt: the evidence is read by the model once per item."""
    if not evidence:
        return []
    item = stance_item_schema(reason_chars, reasons)
    ids = [e.id for e in evidence]
    chunks = [ids[i: i + batch_size] for i in range(0, len(ids), batch_size)]
    found: dict[str, Judgement] = {}
    for n, chunk in enumerate(chunks):
        call_name = name if len(chunks) == 1 else f"{name}[{n + 1}/{len(chunks)}]"
        found.update(_stance_call(llm, claims, evidence, chunk, item, evidence_chars=evidence_chars,
                                  context_chars=context_chars, reason_chars=reason_chars, style=style,
                                  name=call_name, fallback_name=name))
    return [found[i] for i in ids]


def _stance_call(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], ids: list[str],
                 item, *, evidence_chars: int, context_chars: int, reason_chars: int, style: PromptStyle, name: str,
                 fallback_name: str) -> dict[str, Judgement]:
    """One batched call for ``ids``; on a reply that stays invalid, keep its valid entries and ask each missing
    id alone (raises :class:`StructuredOutputError` when a single id still fails)."""
    schema = per_id_schema("EvidenceStances", item, ids)
    labels_only = not (isinstance(item, type) and issubclass(item, BaseModel))
    ids_text = ", ".join(f"[{i}]" for i in ids)
    task = render(style.stance_labels, ids=ids_text) if labels_only else \
        render(style.stances, ids=ids_text, reason_words=reason_words(reason_chars))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars,
                    system=style.system)
    try:
        # ~45 tokens per item (label, reason, JSON punctuation; ~10 for a label alone) plus slack, so long lists
        # are not cut off
        per_item = 12 if labels_only else 48
        result = call_structured(llm, schema, msgs, name=name, max_tokens=64 + per_item * len(ids))
        pairs = per_id_items(result, ids)
    except StructuredOutputError as exc:
        if len(ids) == 1:
            raise
        salvaged = salvage_per_id(exc.replies, item, ids)
        missing = [i for i in ids if i not in salvaged]
        log.info("%s: %d of %d stances invalid after repair; asking them one by one", name, len(missing), len(ids))
        out = {i: _judgement(i, x) for i, x in salvaged.items()}
        for eid in missing:
            out.update(_stance_call(llm, claims, evidence, [eid], item, evidence_chars=evidence_chars,
                                    context_chars=context_chars, reason_chars=reason_chars, style=style,
                                    name=f"{fallback_name}[{eid}]", fallback_name=fallback_name))
        return out
    return {eid: _judgement(eid, x) for eid, x in pairs}


def _judgement(eid: str, x) -> Judgement:
    if isinstance(x, str):  # labels only
        return Judgement(id=eid, label=x, reason="")
    return Judgement(id=eid, label=x.label, reason=x.evidence_finding.strip() or x.label)

"""Render the visible input as a compact, stable prompt block.

Layout is fixed (system, then CLAIM/CONTEXT, then EVIDENCE, then TASK) so llama.cpp's prefix cache reuses the
claim block across steps. Only ``ClaimInput`` fields are rendered: hidden gold never reaches a prompt.

Every claim role shares one system prompt (:data:`SYSTEM`, ``prompts/system_grounded.txt``) that holds the fixed
instructions, so the cached prefix covers them across calls and items; each call ends with a short TASK line.
"""
from __future__ import annotations

from collections.abc import Iterable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from evidex.agents.prompts import load_prompt
from evidex.tools.claims import Claim, Evidence

SYSTEM = "system_grounded"  # the system prompt of every claim role
REASONS = "write_grounded"  # the grounded writer's reasons call (placeholder: words)
REASONS_EXAMPLE = "reasons_example"  # its worked example (``_user`` / ``_reply``), shown before the real request
STANCES = "stance_labels"  # the batched stance call of judge.llm_stance, labels only (placeholder: ids)


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def claim_block(claims: dict[str, Claim], context_chars: int) -> str:
    lines = []
    for key, claim in claims.items():
        label = "CLAIM" if key == "claim" else f"CLAIM {key}"
        lines.append(f"{label}: {claim.text}")
        for k, v in claim.context.items():
            if context_chars:
                lines.append(f"  {k}: {clip(v, context_chars)}")
    return "\n".join(lines)


def evidence_block(evidence: Iterable[Evidence], evidence_chars: int, title: str = "EVIDENCE") -> str:
    rows = [f"[{e.id}] {clip(e.text, evidence_chars)}" for e in evidence]
    return f"{title}:\n" + ("\n".join(rows) if rows else "(none)")


def with_example(msgs: list[BaseMessage], example: str) -> list[BaseMessage]:
    """``msgs`` with a worked example (user turn ``<example>_user``, model turn ``<example>_reply``) between the
    system prompt and the real request: fixed text, so it is part of the cached prefix."""
    if not example:
        return msgs
    return [msgs[0], HumanMessage(content=load_prompt(f"{example}_user")),
            AIMessage(content=load_prompt(f"{example}_reply")), *msgs[1:]]


def messages(claims: dict[str, Claim], evidence: Iterable[Evidence], task: str, *, evidence_chars: int,
             context_chars: int, evidence_title: str = "EVIDENCE", system: str = SYSTEM) -> list[BaseMessage]:
    """[system prompt ``system``] then one human message: claim block, evidence block, TASK (item-specific
    last)."""
    body = "\n\n".join([claim_block(claims, context_chars), evidence_block(evidence, evidence_chars, evidence_title),
                         task])
    return [SystemMessage(content=load_prompt(system)), HumanMessage(content=body)]

"""Render the visible input as a compact, stable prompt block.

Layout is fixed (system, then CLAIM/CONTEXT, then EVIDENCE, then TASK) so llama.cpp's prefix cache reuses the
claim block across steps. Only ``ClaimInput`` fields are rendered: hidden gold never reaches a prompt.

Three prompt styles (config ``prompts.style``): ``full``, the original prompts (a one-line system prompt, each
role's instructions in its TASK block); ``compact``, every fixed instruction in the system prompt, so the
cached prefix covers them across calls and items, and short TASK lines that only name the step and the ids;
``grounded``, the compact layout for the grounded writer, whose evidence block holds findings.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from evidex.agents.prompts import load_prompt
from evidex.tools.claims import Claim, Evidence


@dataclass(frozen=True)
class PromptStyle:
    """The prompt files (``prompts/<name>.txt``) one style uses for each claim role."""

    system: str
    stance: str  # one kept item (placeholders: id, reason_words)
    stances: str  # several kept items in one call (ids, reason_words)
    stance_labels: str  # several kept items in one call, labels only (ids)
    write: str  # the explanation (stance_hint)
    revise: str  # one revision (draft, problems)
    example: str = ""  # a worked example (``<example>_user`` / ``<example>_reply``) shown before the write call
    max_sentences: int = 5  # the explanation schema's cap, matching the sentence count the write prompt asks for


PROMPT_STYLES: dict[str, PromptStyle] = {
    "full": PromptStyle(system="system", stance="judge_stance", stances="judge_stances",
                        stance_labels="stance_labels", write="write_explanation", revise="revise_explanation"),
    "compact": PromptStyle(system="system_compact", stance="judge_stance", stances="stances_compact",
                           stance_labels="stance_labels", write="write_compact", revise="revise_explanation",
                           max_sentences=4),
    # the grounded writer (agents/grounded_writer.py): the model sees findings, not whole evidence texts, and
    # writes the reasons (after one worked example); stances are labels only
    "grounded": PromptStyle(system="system_grounded", stance="judge_stance", stances="stances_compact",
                            stance_labels="stance_labels", write="write_grounded", revise="revise_explanation",
                            example="reasons_example", max_sentences=2),
}
FULL = PROMPT_STYLES["full"]


def prompt_style(name: str) -> PromptStyle:
    try:
        return PROMPT_STYLES[name]
    except KeyError:
        raise ValueError(f"unknown prompt style {name!r}; known: {', '.join(PROMPT_STYLES)}") from None


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
             context_chars: int, evidence_title: str = "EVIDENCE", system: str = "system",
             more: Sequence[tuple[str, Iterable[Evidence]]] = ()) -> list[BaseMessage]:
    """[system prompt ``system``] then one human message: claim block, evidence block, any ``more`` blocks
    (title, items), TASK (item-specific last)."""
    blocks = [evidence_block(evidence, evidence_chars, evidence_title)]
    blocks += [evidence_block(items, evidence_chars, title) for title, items in more]
    body = "\n\n".join([claim_block(claims, context_chars), *blocks, task])
    return [SystemMessage(content=load_prompt(system)), HumanMessage(content=body)]

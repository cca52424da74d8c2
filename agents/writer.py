"""Write (and once revise) a 3-5 sentence explanation that cites evidence ids like [1122]."""
from __future__ import annotations

from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import FULL, PromptStyle, messages
from evidex.agents.prompts import render
from evidex.agents.structured import call_structured
from evidex.tools.cited_text import CITATION, parse_citations  # noqa: F401 - parse_citations re-exported
from evidex.tools.claims import Claim, Evidence

_CITATION = CITATION


def explanation_schema(ids: list[str], sentence_chars: int = 240, max_sentences: int = 5) -> type[BaseModel]:
    """3 to ``max_sentences`` sentences, each citing 1+ ids from the evidence shown: a small model cannot cite an
    unknown id."""
    sentence = create_model("CitedSentence", text=(str, Field(min_length=10, max_length=sentence_chars)),
                            ids=(list[Literal[tuple(ids)]], Field(min_length=1, max_length=4)))  # type: ignore[misc]
    return create_model("Explanation", sentences=(list[sentence], Field(min_length=3, max_length=max_sentences)))


def render_explanation(result: BaseModel) -> str:
    parts = []
    for s in result.sentences:
        text = _CITATION.sub("", s.text).strip().rstrip(".")
        parts.append(f"{text} [{', '.join(dict.fromkeys(s.ids))}].")
    return " ".join(parts)


def write_explanation(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], *,
                      stance_hint: str, evidence_chars: int, context_chars: int, max_tokens: int,
                      name: str = "write_explanation", style: PromptStyle = FULL) -> str:
    task = render(style.write, stance_hint=stance_hint).strip()
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars,
                    system=style.system)
    schema = explanation_schema([e.id for e in evidence], max_sentences=style.max_sentences)
    return render_explanation(call_structured(llm, schema, msgs, name=name, max_tokens=max_tokens))


def revise_explanation(llm: BaseChatModel, claims: dict[str, Claim], evidence: list[Evidence], draft: str,
                       problems: list[str], *, evidence_chars: int, context_chars: int, max_tokens: int,
                       name: str = "revise_explanation", style: PromptStyle = FULL) -> str:
    task = render(style.revise, draft=draft, problems="\n".join(f"- {p}" for p in problems))
    msgs = messages(claims, evidence, task, evidence_chars=evidence_chars, context_chars=context_chars,
                    system=style.system)
    schema = explanation_schema([e.id for e in evidence], max_sentences=style.max_sentences)
    return render_explanation(call_structured(llm, schema, msgs, name=name, max_tokens=max_tokens))

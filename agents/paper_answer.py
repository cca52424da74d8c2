"""One constrained answer to a question about papers, from a given context (the single-call baselines, and the
NeuSym agent's answer step when it is set to answer from what it gathered).

The answer's JSON type follows the question's answer format (an integer format gets an integer under the
grammar, a list format a list), and with ``quote`` the model first copies the sentence or table row the answer
rests on: a small model that has to point at its evidence first answers from it instead of from the format's
words.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

from evidex.agents.prompts import load_prompt, render
from evidex.agents.structured import call_structured
from evidex.tools.answer_format import answer_kind, answer_text, answer_type

QUOTE_CHARS = 400


@lru_cache(maxsize=64)
def answer_schema(answer_format: str, typed: bool = True, quote: bool = False) -> type[BaseModel]:
    """``{"quote"?: str, "answer": <type the format asks for>}``; untyped, the answer is a string."""
    fields: dict[str, Any] = {}
    if quote:
        fields["quote"] = (str, Field(max_length=QUOTE_CHARS, description="The sentence or table row from the "
                                                                          "context that gives the answer, copied."))
    kind = answer_type(answer_format) if typed else str
    spec = Field(max_length=2000, description="Exactly in the requested answer format.") if kind is str else Field(
        description="Exactly in the requested answer format.")
    fields["answer"] = (kind, spec)
    return create_model("Answer", **fields)


class ContextAnswer(NamedTuple):
    answer: str  # as the text an evaluator reads
    quote: str  # what the model copied as its evidence ("" without ``quote``)


def answer_from_context(llm: BaseChatModel, question: str, answer_format: str, scope: str, context: str, *,
                        typed: bool = True, quote: bool = False, max_tokens: int = 700,
                        name: str = "answer") -> ContextAnswer:
    """The model's answer to ``question`` from ``context`` (and, with ``quote``, the evidence it copied)."""
    body = render("qa_answer_quote" if quote else "qa_answer", question=question, answer_format=answer_format,
                  scope=scope, context=context or "(none)")
    messages = [SystemMessage(content=load_prompt("qa_system")), HumanMessage(content=body)]
    out = call_structured(llm, answer_schema(answer_format, typed, quote), messages, name=name,
                          max_tokens=max_tokens)
    return ContextAnswer(answer_text(out.answer), getattr(out, "quote", ""))


__all__ = ["ContextAnswer", "answer_from_context", "answer_kind", "answer_schema"]

"""Structured steps: a pydantic schema, JSON-schema-constrained decoding where the model supports it, and one
repair retry. A reply that still does not validate raises :class:`StructuredOutputError`, which the runner
records as a per-item error."""
from __future__ import annotations

import json
import re
from typing import TypeVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from evidex.agents.models import is_openai_compatible
from evidex.agents.prompts import render

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class StructuredOutputError(RuntimeError):
    """The model's reply did not match the schema, even after one repair attempt."""


def _call_kwargs(llm: BaseChatModel, schema: type[BaseModel]) -> dict:
    if is_openai_compatible(llm):
        # llama.cpp turns the JSON schema into a grammar, so the local model cannot leave the schema.
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}}}
    return {}


def parse_json_reply(text: str, schema: type[T]) -> T:
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end < start:
        raise ValueError(f"no JSON object in reply: {text[:120]!r}")
    return schema.model_validate(json.loads(body[start: end + 1]))


class _CutOff(ValueError):
    """The reply hit the token limit before the JSON closed."""


def _invoke(llm: BaseChatModel, messages: list[BaseMessage], name: str, kwargs: dict) -> str:
    try:
        return str(llm.invoke(messages, config={"run_name": name}, **kwargs).content)
    except Exception as exc:  # openai raises LengthFinishReasonError instead of returning a truncated reply
        if type(exc).__name__ == "LengthFinishReasonError":
            raise _CutOff("the reply was cut off at the token limit; answer more briefly") from exc
        raise


def call_structured(llm: BaseChatModel, schema: type[T], messages: list[BaseMessage], *, name: str,
                    max_tokens: int | None = None) -> T:
    kwargs = _call_kwargs(llm, schema)
    if max_tokens and is_openai_compatible(llm):
        kwargs["max_tokens"] = max_tokens
    raw = ""
    try:
        raw = _invoke(llm, messages, name, kwargs)
        return parse_json_reply(raw, schema)
    except (ValueError, ValidationError) as first:
        repair = messages + ([AIMessage(content=raw)] if raw else []) + [
            HumanMessage(content=render("repair_json", error=_short(first)))]
        try:
            return parse_json_reply(_invoke(llm, repair, f"{name}:repair", kwargs), schema)
        except (ValueError, ValidationError) as second:
            raise StructuredOutputError(
                f"{name}: the model's reply did not match {schema.__name__} after one repair: {_short(second)}"
            ) from second


def per_id_schema(name: str, item: type[BaseModel], ids: list[str]) -> type[BaseModel]:
    """A JSON object with one required key per evidence id, in order: a small model must answer for every
    item exactly once and cannot invent ids. Keys are the ids (aliases); fields are ``e0, e1, ...``."""
    fields = {f"e{i}": (item, Field(alias=eid)) for i, eid in enumerate(ids)}
    return create_model(name, __config__=ConfigDict(populate_by_name=True), **fields)


def per_id_items(result: BaseModel, ids: list[str]) -> list[tuple[str, BaseModel]]:
    """(id, item) pairs of a :func:`per_id_schema` result, in the ids' order."""
    return [(eid, getattr(result, f"e{i}")) for i, eid in enumerate(ids)]


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"

"""Structured steps: a pydantic schema, JSON-schema-constrained decoding where the model supports it, and one
repair retry. A reply that still does not validate raises :class:`StructuredOutputError`, which the runner
records as a per-item error."""
from __future__ import annotations

import json
import re
from typing import TypeVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from evidex.agents.lazy_model import unwrap
from evidex.agents.models import is_llama_cpp, is_openai_compatible
from evidex.agents.prompts import render

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class StructuredOutputError(RuntimeError):
    """The model's reply did not match the schema, even after one repair attempt. ``replies`` holds the raw
    replies (first, repair), so a caller can salvage the parts that are valid."""

    def __init__(self, message: str, replies: list[str] | None = None):
        super().__init__(message)
        self.replies = list(replies or [])


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


class ContextOverflow(RuntimeError):
    """The prompt is longer than the model's context (llama.cpp and OpenAI-style servers reject it): a caller that
    can send a shorter one (fewer turns of history) tries again."""


# how servers say a prompt does not fit: llama.cpp, OpenAI, vLLM
_OVERFLOW = ("exceed_context_size", "exceeds the available context size", "context_length_exceeded",
             "maximum context length")


def _invoke(llm: BaseChatModel, messages: list[BaseMessage], name: str, kwargs: dict) -> AIMessage:
    try:
        return unwrap(llm).invoke(messages, config={"run_name": name}, **kwargs)
    except Exception as exc:  # openai raises LengthFinishReasonError instead of returning a truncated reply
        if type(exc).__name__ == "LengthFinishReasonError":
            raise _CutOff("the reply was cut off at the token limit; answer more briefly") from exc
        if any(mark in str(exc) for mark in _OVERFLOW):
            raise ContextOverflow(f"{name}: the prompt does not fit the model's context: {str(exc)[:200]}") from exc
        raise


def call_structured(llm: BaseChatModel, schema: type[T], messages: list[BaseMessage], *, name: str,
                    max_tokens: int | None = None, repair: bool = True, llama_sampling: dict | None = None) -> T:
    """The model's reply to ``messages`` as ``schema``; one repair round when it does not parse (``repair=False``:
    none, for a caller that has a fallback and would rather not pay for a second call). ``llama_sampling``:
    llama.cpp sampling fields sent to the local model only (other models ignore them)."""
    return call_structured_reply(llm, schema, messages, name=name, max_tokens=max_tokens, repair=repair,
                                 llama_sampling=llama_sampling)[0]


def call_structured_reply(llm: BaseChatModel, schema: type[T], messages: list[BaseMessage], *, name: str,
                          max_tokens: int | None = None, repair: bool = True,
                          top_logprobs: int = 0, llama_sampling: dict | None = None) -> tuple[T, AIMessage]:
    """:func:`call_structured`, plus the reply message that parsed (its ``response_metadata`` holds the token
    log-probabilities when ``top_logprobs`` > 0 and the model is served OpenAI-style; others ignore it)."""
    kwargs = _call_kwargs(llm, schema)
    if max_tokens and is_openai_compatible(llm):
        kwargs["max_tokens"] = max_tokens
    if llama_sampling and is_llama_cpp(llm):
        kwargs["extra_body"] = dict(llama_sampling)
    if top_logprobs and is_openai_compatible(llm):
        kwargs.update(logprobs=True, top_logprobs=top_logprobs)
    raw = ""
    try:
        reply = _invoke(llm, messages, name, kwargs)
        raw = str(reply.content)
        return parse_json_reply(raw, schema), reply
    except (ValueError, ValidationError) as first:
        if not repair:
            raise StructuredOutputError(f"{name}: the model's reply did not match {schema.__name__}: {_short(first)}",
                                        replies=[raw] if raw else []) from first
        repair = messages + ([AIMessage(content=raw)] if raw else []) + [
            HumanMessage(content=render("repair_json", error=_short(first)))]
        second_raw = ""
        try:
            repaired = _invoke(llm, repair, f"{name}:repair", kwargs)
            second_raw = str(repaired.content)
            return parse_json_reply(second_raw, schema), repaired
        except (ValueError, ValidationError) as second:
            raise StructuredOutputError(
                f"{name}: the model's reply did not match {schema.__name__} after one repair: {_short(second)}",
                replies=[r for r in (raw, second_raw) if r]) from second


def per_id_schema(name: str, item: type[BaseModel], ids: list[str]) -> type[BaseModel]:
    """A JSON object with one required key per evidence id, in order: a small model must answer for every
    item exactly once and cannot invent ids. Keys are the ids (aliases); fields are ``e0, e1, ...``."""
    fields = {f"e{i}": (item, Field(alias=eid)) for i, eid in enumerate(ids)}
    return create_model(name, __config__=ConfigDict(populate_by_name=True), **fields)


def per_id_items(result: BaseModel, ids: list[str]) -> list[tuple[str, BaseModel]]:
    """(id, item) pairs of a :func:`per_id_schema` result, in the ids' order."""
    return [(eid, getattr(result, f"e{i}")) for i, eid in enumerate(ids)]


def salvage_per_id(replies: list[str], item, ids: list[str]) -> dict[str, object]:
    """The entries of invalid :func:`per_id_schema` replies that are still valid ``item`` values for known ids:
    an object keyed by id (some keys missing or broken), or a list of objects that carry an ``"id"`` field.
    ``item`` is a model (entries are objects) or a plain type such as a ``Literal`` (entries are values; in a
    list, the object's ``"label"``). Later replies (the repair) win; unknown ids and invalid entries are dropped."""
    is_model = isinstance(item, type) and issubclass(item, BaseModel)
    adapter = None if is_model else TypeAdapter(item)
    wanted, found = set(ids), {}
    for text in replies:
        data = _loose_json(text)
        if isinstance(data, dict):
            data = {str(k).strip().strip("[]"): v for k, v in data.items()}
            pairs = [(k, v) for k, v in data.items() if k in wanted]
        elif isinstance(data, list):
            pairs = [(str(v.get("id", "")).strip().strip("[]"), v) for v in data if isinstance(v, dict)]
        else:
            continue
        for eid, value in pairs:
            if eid not in wanted:
                continue
            try:
                if is_model:
                    if isinstance(value, dict):
                        found[eid] = item.model_validate({k: v for k, v in value.items() if k != "id"})
                else:
                    found[eid] = adapter.validate_python(value.get("label") if isinstance(value, dict) else value)
            except ValidationError:
                continue
    return found


def _loose_json(text: str):
    """The first JSON object or array in ``text`` (code fences and chatter around it ignored), else None."""
    body = _FENCE.sub("", text.strip())
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = body.find(open_), body.rfind(close)
        if start != -1 and end > start:
            try:
                return json.loads(body[start: end + 1])
            except json.JSONDecodeError:
                continue
    return None


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"

"""The reader protocol and registry.

A reader answers one shape of question from a typed context: ``applies(question, context)`` says cheaply whether
the question and context have that shape (a gap question and a table the question names, ...); ``read(request)``
gives an :class:`~tools.qa.context.Answer` or None when it cannot tell for sure (the next reader, finally the
model, answers then). Readers that need no model never call it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question


@dataclass
class ReadRequest:
    """What a reader is given: the parsed question, the typed context, and for the model reader the model, how the
    context is shown (``keys``: store keys in the tags; ``limit``: characters of context), the reply's token cap
    and the call's name in traces."""

    question: Question
    context: Context
    llm: Any = None
    keys: bool = False
    limit: int | None = None
    max_tokens: int = 700
    name: str = "answer"


class Reader(Protocol):
    name: str

    def applies(self, question: Question, context: Context) -> bool: ...

    def read(self, request: ReadRequest) -> Answer | None: ...


_READERS: dict[str, Reader] = {}
_BUILTIN = ("table_gap", "table_lookup", "ranked_rows", "model")


def register_reader(reader: Reader) -> Reader:
    _READERS[reader.name] = reader
    return reader


def _load_builtin() -> None:
    for module in _BUILTIN:
        importlib.import_module(f"evidex.agents.readers.{module}")


def reader_names() -> list[str]:
    _load_builtin()
    return sorted(_READERS)


def get_reader(name: str) -> Reader:
    if name not in _READERS:
        _load_builtin()
    if name not in _READERS:
        raise KeyError(f"no answer reader named {name!r} (known: {', '.join(reader_names())})")
    return _READERS[name]


__all__ = ["ReadRequest", "Reader", "get_reader", "reader_names", "register_reader"]

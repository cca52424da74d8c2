"""The reader protocol and registry.

A reader answers one shape of question from a typed context: ``applies(question, context)`` says cheaply whether
the question and context have that shape; ``read(request)``
gives an :class:`~tools.qa.context.Answer` or None when it cannot tell for sure (the next reader, finally the
model, answers then). Readers that need no model never call it.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Protocol

from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question


@dataclass
class ReadRequest:
    """What a reader is given: the parsed question, the typed context, and for the model reader the model, how much
    of the context is shown (``limit``: characters; ``paper_ids``: the papers' ids in the tags and a papers line,
    as QA settings ``paper_ids`` says), the reply's token cap and the call's name in traces."""

    question: Question
    context: Context
    llm: Any = None
    limit: int | None = None
    paper_ids: bool = False
    max_tokens: int = 700
    name: str = "answer"


class Reader(Protocol):
    name: str

    def applies(self, question: Question, context: Context) -> bool: ...

    def read(self, request: ReadRequest) -> Answer | None: ...


_READERS: dict[str, Reader] = {}


def register_reader(reader: Reader) -> Reader:
    _READERS[reader.name] = reader
    return reader


def _load_builtin() -> None:
    """Import every module of this folder: a reader module registers its reader when imported (``model``; a new
    module here is found without a list to update)."""
    from evidex.agents import readers

    for module in pkgutil.iter_modules(readers.__path__):
        importlib.import_module(f"{readers.__name__}.{module.name}")


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

"""Degraded searches, made visible: which part of a hybrid search could not run, and why.

A search that loses a part (tools/search.py) answers with the other part, and records an :class:`Unavailable` into
every :func:`search_degradations` collection open in its context; the runner opens one per item (graphs/items.py),
so the item's row, its trace and the run's metrics say it. A warning is logged once per store, part and cause.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from typing import Literal

from pydantic import BaseModel, Field

log = logging.getLogger("evidex.tools.search")


class Unavailable(BaseModel):
    """A part of a search that could not run, so the result lacks it (a degraded search)."""

    part: Literal["dense", "bm25"]
    store: str = Field(description="the store folder")
    pair: str = Field(description="table.column searched")
    reason: str = Field(description="why, in one line (e.g. the Chroma server at ... does not answer)")

    def text(self) -> str:
        kind = "dense (embedding)" if self.part == "dense" else "keyword (BM25)"
        return f"{kind} search unavailable: {self.reason}"


_DEGRADED: contextvars.ContextVar[list[Unavailable] | None] = contextvars.ContextVar("evidex_search_degraded",
                                                                                     default=None)
_WARNED: set[tuple[str, str, str]] = set()  # (store, part, reason) already logged
_WARNED_LOCK = threading.Lock()


@contextlib.contextmanager
def search_degradations():
    """Collect the :class:`Unavailable` parts of every search made inside (in this context: the thread, and the
    threads and tasks it starts with a copy of it, as LangGraph's nodes run). Nested collections also report to the
    enclosing one. Yields the list, filled as searches degrade."""
    outer = _DEGRADED.get()
    seen: list[Unavailable] = []
    token = _DEGRADED.set(seen)
    try:
        yield seen
    finally:
        _DEGRADED.reset(token)
        if outer is not None:
            outer.extend(seen)


def record_degraded(item: Unavailable, exc: BaseException | None = None) -> None:
    """Report a part of a search that could not run (collected, and logged once per store, part and cause)."""
    seen = _DEGRADED.get()
    if seen is not None:
        seen.append(item)
    key = (item.store, item.part, item.reason)
    with _WARNED_LOCK:
        first = key not in _WARNED
        _WARNED.add(key)
    if first:  # once per store, part and cause: a run of a thousand questions does not print a thousand lines
        log.warning("%s: %s; hybrid search answers from the other part only", item.store, item.text())


__all__ = ["Unavailable", "record_degraded", "search_degradations"]

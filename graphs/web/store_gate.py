"""One writer or many readers per store, inside the web server's process.

DuckDB lets a process hold either read-only connections or one writable connection to a file, and ingestion
closes the cached read-only connections before it writes. So an upload (the writer) must not start while a
question or a page look-up (readers) is using the store, and readers wait while an upload writes. Writers are
preferred, so a stream of questions cannot hold an upload back forever.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class StoreBusyError(RuntimeError):
    """The store stayed locked by an upload for longer than the caller would wait."""


class StoreGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self, timeout: float | None = None, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        with self._cond:
            if self._writing or self._writers_waiting:
                if on_wait is not None:
                    on_wait()
                if not self._cond.wait_for(lambda: not self._writing and not self._writers_waiting, timeout):
                    raise StoreBusyError("The store is being updated by an upload; try again when it has finished.")
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def writing(self, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                if self._writing or self._readers:
                    if on_wait is not None:
                        on_wait()
                    self._cond.wait_for(lambda: not self._writing and not self._readers)
                self._writing = True
            finally:
                self._writers_waiting -= 1
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()

    @property
    def busy_writing(self) -> bool:
        with self._cond:
            return self._writing or self._writers_waiting > 0

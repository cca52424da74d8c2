"""Progress for long work: a tqdm bar with ETA on a terminal, a short line at most every 30 s otherwise.

In a log file or CI output a redrawn bar becomes thousands of carriage-return updates; there the same progress
is one readable line (``[mixed] 12/66 (18%) | 1 failed | ETA 25 min``) at most every ``interval`` seconds, plus
one at the end.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

from tqdm import tqdm

LOG_INTERVAL_S = 30.0


def fmt_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """``update(n, failed=...)`` after each finished unit; ``close()`` at the end. ``enabled=False`` is silent."""

    def __init__(self, total: int, *, desc: str, initial: int = 0, unit: str = "item", enabled: bool = True,
                 stream: TextIO | None = None, interval: float = LOG_INTERVAL_S):
        self.total, self.done, self.failed = total, initial, 0
        self.desc, self.unit = desc, unit
        self.stream = stream or sys.stderr
        self.interval = interval
        self._start = time.monotonic()
        self._initial = initial
        self._last_line = self._start
        self._bar = None
        self.enabled = enabled
        if enabled and _is_terminal(self.stream):
            self._bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True, file=self.stream)

    def update(self, n: int = 1, *, failed: int = 0, note: str | None = None) -> None:
        self.done += n
        self.failed += failed
        if not self.enabled:
            return
        if self._bar is not None:
            postfix = {"failed": self.failed}
            if note:
                postfix["last"] = note
            self._bar.set_postfix(postfix)
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval or self.done >= self.total:
            self._last_line = now
            print(self.line(), file=self.stream, flush=True)

    def eta_s(self) -> float | None:
        finished_here = self.done - self._initial
        if finished_here <= 0:
            return None
        return (time.monotonic() - self._start) / finished_here * max(0, self.total - self.done)

    def line(self) -> str:
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        eta = self.eta_s()
        tail = f" | ETA {fmt_duration(eta)}" if eta is not None and self.done < self.total else ""
        return f"[{self.desc}] {self.done}/{self.total}{share} | {self.failed} failed{tail}"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False

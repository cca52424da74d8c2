"""Resident memory of this process, for run reports and benchmarks: peak (``getrusage``) and current (``psutil``, or
``/proc/self/statm`` without it), in MiB.

    from evidex.tools.memory import memory_mb
    memory_mb()  # {"peak_rss_mb": 812.4, "rss_mb": 640.1, "children_peak_rss_mb": 301.0}
"""
from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable
from functools import lru_cache


def _max_rss_mb(who: int) -> float:
    """``getrusage(who).ru_maxrss`` in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(who).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def peak_rss_mb() -> float:
    """Highest resident set size of this process so far."""
    return _max_rss_mb(resource.RUSAGE_SELF)


def rss_mb() -> float:
    """Resident set size of this process now."""
    try:
        import psutil

        return round(psutil.Process().memory_info().rss / 2**20, 1)
    except ImportError:  # pragma: no cover - psutil comes with pymupdf
        with open("/proc/self/statm") as fh:
            return round(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``; nothing elsewhere).

    Each item of a run allocates and frees many small blocks from several threads (model client, embedder,
    tracer); glibc keeps the freed pages in its per-thread arenas, so resident memory crept up item after item
    although nothing was held. Trimming after each item costs about a millisecond."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``; None on other systems and C libraries (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def children_peak_rss_mb() -> float:
    """Highest resident set size among this process's finished children (e.g. PDF parser processes)."""
    return _max_rss_mb(resource.RUSAGE_CHILDREN)


def memory_mb() -> dict[str, float]:
    """``{"peak_rss_mb", "rss_mb", "children_peak_rss_mb"}`` of this process (MiB)."""
    return {"peak_rss_mb": peak_rss_mb(), "rss_mb": rss_mb(), "children_peak_rss_mb": children_peak_rss_mb()}

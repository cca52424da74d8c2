"""Resident memory of this process, for run reports and benchmarks: peak (``getrusage``) and current (``psutil``, or
``/proc/self/statm`` without it), in MiB.

    from evidex.tools.memory import memory_mb
    memory_mb()  # {"peak_rss_mb": 812.4, "rss_mb": 640.1, "children_peak_rss_mb": 301.0}
"""
from __future__ import annotations

import os
import resource
import sys


def peak_rss_mb() -> float:
    """Highest resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


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
    global _LIBC
    if _LIBC is False or not sys.platform.startswith("linux"):
        return
    try:
        if _LIBC is None:
            import ctypes

            _LIBC = ctypes.CDLL("libc.so.6")
        _LIBC.malloc_trim(0)
    except (OSError, AttributeError):  # musl or another libc without malloc_trim
        _LIBC = False


_LIBC = None


def children_peak_rss_mb() -> float:
    """Highest resident set size among this process's finished children (e.g. PDF parser processes)."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def memory_mb() -> dict[str, float]:
    """``{"peak_rss_mb", "rss_mb", "children_peak_rss_mb"}`` of this process (MiB)."""
    return {"peak_rss_mb": peak_rss_mb(), "rss_mb": rss_mb(), "children_peak_rss_mb": children_peak_rss_mb()}

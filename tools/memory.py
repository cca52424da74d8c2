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


def children_peak_rss_mb() -> float:
    """Highest resident set size among this process's finished children (e.g. PDF parser processes)."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def memory_mb() -> dict[str, float]:
    """``{"peak_rss_mb", "rss_mb", "children_peak_rss_mb"}`` of this process (MiB)."""
    return {"peak_rss_mb": peak_rss_mb(), "rss_mb": rss_mb(), "children_peak_rss_mb": children_peak_rss_mb()}

"""Small statistics helpers for benchmark reports: bootstrap CIs, NaN-aware summaries, micro P/R/F1.

Everything is numpy-only and deterministic (fixed seed), so two runs over the same per-item values give the
same report. NaN and None mean "could not compute" and are excluded from means but counted (``n_nan``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel

NAN = float("nan")


class MetricSummary(BaseModel):
    """Mean of the finite values with a percentile-bootstrap CI; ``n`` finite values, ``n_nan`` skipped."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    n_nan: int


class PRF(BaseModel):
    precision: float
    recall: float
    f1: float


def is_missing(value: object) -> bool:
    """True for None and NaN (the two ways a metric says "could not compute")."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def finite_values(values: Iterable[float | None]) -> tuple[np.ndarray, int]:
    """Split into an array of usable values and the number of NaN/None entries."""
    kept, n_nan = [], 0
    for v in values:
        if is_missing(v):
            n_nan += 1
        else:
            kept.append(float(v))
    return np.asarray(kept, dtype=float), n_nan


def _resample_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    # One (n_boot, n) index matrix: vectorised and reproducible for a given seed.
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def _percentiles(stats: np.ndarray, alpha: float) -> tuple[float, float]:
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return NAN, NAN
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_ci(values: Sequence[float | None], n_boot: int = 2000, alpha: float = 0.05,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean over the finite values; (nan, nan) if there are none."""
    arr, _ = finite_values(values)
    if arr.size == 0:
        return NAN, NAN
    if arr.size == 1:  # nothing to resample: the interval collapses to the value
        return float(arr[0]), float(arr[0])
    means = arr[_resample_indices(arr.size, n_boot, seed)].mean(axis=1)
    return _percentiles(means, alpha)


def summarize(values: Sequence[float | None], n_boot: int = 2000, alpha: float = 0.05,
              seed: int = 0) -> MetricSummary:
    arr, n_nan = finite_values(values)
    mean = float(arr.mean()) if arr.size else NAN
    low, high = bootstrap_ci(arr.tolist(), n_boot=n_boot, alpha=alpha, seed=seed)
    return MetricSummary(mean=mean, ci_low=low, ci_high=high, n=int(arr.size), n_nan=n_nan)


# -- precision / recall / F1 from counts ----------------------------------------------------------------------
def safe_ratio(num: float, den: float) -> float:
    """num/den, NaN when the denominator is 0 (the ratio is undefined, not zero)."""
    return float(num) / float(den) if den else NAN


def prf_from_counts(tp: float, fp: float, fn: float) -> PRF:
    """P = tp/(tp+fp), R = tp/(tp+fn), F1 = 2tp/(2tp+fp+fn).

    0/0 conventions: P is NaN when nothing was predicted, R is NaN when nothing was expected, F1 is NaN only
    when both sets are empty. Writing F1 through counts makes "expected items, predicted none" an F1 of 0
    (a real miss) instead of NaN, and equals 2PR/(P+R) whenever P and R are both defined.
    """
    return PRF(precision=safe_ratio(tp, tp + fp), recall=safe_ratio(tp, tp + fn),
               f1=safe_ratio(2 * tp, 2 * tp + fp + fn))


def micro_prf(counts: Sequence[tuple[float, float, float]]) -> PRF:
    """Micro average: sum the (tp, fp, fn) of every item, then compute P/R/F1 once."""
    if not counts:
        return PRF(precision=NAN, recall=NAN, f1=NAN)
    tp, fp, fn = (float(sum(c[i] for c in counts)) for i in range(3))
    return prf_from_counts(tp, fp, fn)


def bootstrap_micro_prf(counts: Sequence[tuple[float, float, float]], n_boot: int = 2000,
                        alpha: float = 0.05, seed: int = 0) -> dict[str, MetricSummary]:
    """Micro P/R/F1 with CIs from resampling *items* (a ratio of sums, so resample before summing)."""
    point = micro_prf(counts)
    n = len(counts)
    names = ("precision", "recall", "f1")
    if n == 0:
        return {k: MetricSummary(mean=NAN, ci_low=NAN, ci_high=NAN, n=0, n_nan=0) for k in names}
    arr = np.asarray(counts, dtype=float)  # (n, 3)
    sums = arr[_resample_indices(n, n_boot, seed)].sum(axis=1)  # (n_boot, 3)
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    stats = {"precision": _div(tp, tp + fp), "recall": _div(tp, tp + fn), "f1": _div(2 * tp, 2 * tp + fp + fn)}
    out = {}
    for name in names:
        low, high = _percentiles(stats[name], alpha)
        out[name] = MetricSummary(mean=getattr(point, name), ci_low=low, ci_high=high, n=n, n_nan=0)
    return out


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out



# -- aggregating per-item metrics ---------------------------------------------------------------------------
# Naming conventions every family's scorer follows, so aggregation, reports and comparisons need no family code:
#   <prefix>_tp / _fp / _fn              raw counts -> <prefix>_{precision,recall,f1}_micro
#   <prefix>_n_items / <prefix>_n_correct  raw counts -> <prefix>_item_accuracy_micro (pooled accuracy)
# Raw counts are summed, never averaged or shown themselves.
COUNT_SUFFIXES = ("_tp", "_fp", "_fn", "_n_items", "_n_correct")


def aggregate_metrics(per_item: Sequence[dict[str, float]], *, n_boot: int = 2000, alpha: float = 0.05,
                      seed: int = 0) -> dict[str, dict[str, float]]:
    """Mean + bootstrap CI for every metric (over the items where it applies) and micro P/R/F1 and pooled
    accuracies from the raw counts (the honest aggregate when per-item precision is often 0/0)."""
    keys = list(dict.fromkeys(k for item in per_item for k in item if not k.endswith(COUNT_SUFFIXES)))
    out = {k: summarize([item[k] for item in per_item if k in item], n_boot=n_boot, alpha=alpha,
                        seed=seed).model_dump() for k in keys}
    prefixes = list(dict.fromkeys(k.removesuffix("_tp") for item in per_item for k in item if k.endswith("_tp")))
    for prefix in prefixes:
        counts = [tuple(item[f"{prefix}_{c}"] for c in ("tp", "fp", "fn"))
                  for item in per_item if f"{prefix}_tp" in item]
        micro = bootstrap_micro_prf(counts, n_boot=n_boot, alpha=alpha, seed=seed)
        out.update({f"{prefix}_{name}_micro": s.model_dump() for name, s in micro.items()})
    pooled = list(dict.fromkeys(k.removesuffix("_n_items") for item in per_item for k in item
                                if k.endswith("_n_items")))
    for prefix in pooled:
        # correct as tp, wrong as fn -> micro recall = accuracy over every sub-item
        counts = [(it[f"{prefix}_n_correct"], 0.0, it[f"{prefix}_n_items"] - it[f"{prefix}_n_correct"])
                  for it in per_item if f"{prefix}_n_items" in it]
        recall = bootstrap_micro_prf(counts, n_boot=n_boot, alpha=alpha, seed=seed)["recall"]
        out[f"{prefix}_item_accuracy_micro"] = recall.model_dump()
    return out

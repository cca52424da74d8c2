"""RAGAS faithfulness / response relevancy over a LangChain chat model, fully offline.

Uses the ragas 0.4.3 *legacy* metrics with ``evaluate()``: the new ``ragas.metrics.collections`` accept only
an instructor LLM, while the legacy path takes any LangChain ``BaseChatModel`` through
``LangchainLLMWrapper`` (``shared/specs/deps.md`` §4). Malformed judge output never raises here: ragas turns
it into NaN, which we keep as NaN and count with :func:`count_nan`.
"""
from __future__ import annotations

from functools import partial

import logging
import math
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models.chat_models import BaseChatModel

# ragas posts telemetry on import/evaluate unless told not to (31 DNS lookups per run otherwise).
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

NAN = float("nan")
log = logging.getLogger(__name__)


@dataclass
class RagasSample:
    user_input: str
    response: str
    retrieved_contexts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _MetricSpec:
    factory: Callable[[], Any]  # builds a fresh legacy metric (metric objects hold their llm)
    ragas_name: str  # column name in ragas' result
    needs_contexts: bool
    needs_embeddings: bool


@contextmanager
def _quiet_ragas() -> Iterator[None]:
    # The legacy metrics and both wrappers emit DeprecationWarnings by design; keep them out of our logs.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _specs() -> dict[str, _MetricSpec]:
    from evidex.tools.extras import require

    with _quiet_ragas():
        require("ragas", "ragas", "RAGAS metrics (metrics.ragas)")
        from ragas.metrics import Faithfulness, ResponseRelevancy
    return {
        "faithfulness": _MetricSpec(Faithfulness, "faithfulness", needs_contexts=True, needs_embeddings=False),
        # strictness=1: one generated question per call. llama.cpp's server (the local judge) accepts only n=1,
        # and ragas asks for n=strictness completions in one request.
        "response_relevancy": _MetricSpec(partial(ResponseRelevancy, strictness=1), "answer_relevancy",
                                          needs_contexts=False, needs_embeddings=True),
    }


SUPPORTED_METRICS = ("faithfulness", "response_relevancy")


def _applicable(sample: RagasSample, spec: _MetricSpec) -> bool:
    """A sample without a response (or, for faithfulness, without contexts) is NaN without an LLM call."""
    if not sample.response.strip() or not sample.user_input.strip():
        return False
    return not spec.needs_contexts or any(c.strip() for c in sample.retrieved_contexts)


def _as_float(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return NAN
    return out if math.isfinite(out) else NAN


def ragas_scores(samples: Sequence[RagasSample], llm: BaseChatModel, embeddings: Embeddings | None = None,
                 metrics: Sequence[str] = ("faithfulness", "response_relevancy"), max_workers: int = 1,
                 timeout: int = 180, max_retries: int = 1) -> list[dict[str, float]]:
    """One dict per sample, keyed by our metric names; NaN where ragas could not score.

    ``embeddings`` defaults to the local MiniLM ``LocalEmbeddings`` (needed only for response_relevancy).
    ``max_retries`` is low because retrying a local model rarely helps and ragas backs off between attempts.
    """
    specs = _specs()
    unknown = [m for m in metrics if m not in specs]
    if unknown:
        raise ValueError(f"Unknown RAGAS metric(s) {unknown}; supported: {', '.join(SUPPORTED_METRICS)}")
    results: list[dict[str, float]] = [{m: NAN for m in metrics} for _ in samples]
    if not samples or not metrics:
        return results
    if embeddings is None and any(specs[m].needs_embeddings for m in metrics):
        from evidex.tools.embeddings import get_embeddings

        embeddings = get_embeddings()
    # Group samples by the metrics that apply to them, so one evaluate() call covers each group.
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, sample in enumerate(samples):
        names = tuple(m for m in metrics if _applicable(sample, specs[m]))
        if names:
            groups.setdefault(names, []).append(i)
    for names, idx in groups.items():
        rows = _evaluate([samples[i] for i in idx], [specs[m] for m in names], llm, embeddings,
                         max_workers=max_workers, timeout=timeout, max_retries=max_retries)
        for i, row in zip(idx, rows):
            results[i].update({m: _as_float(row.get(specs[m].ragas_name)) for m in names})
    return results


def _evaluate(samples: list[RagasSample], specs: list[_MetricSpec], llm: BaseChatModel,
              embeddings: Embeddings | None, *,
              max_workers: int, timeout: int, max_retries: int) -> list[dict[str, Any]]:
    with _quiet_ragas():
        from ragas import EvaluationDataset, RunConfig, SingleTurnSample, evaluate
        from ragas.embeddings import LangchainEmbeddingsWrapper
        from ragas.llms import LangchainLLMWrapper

        run_config = RunConfig(max_workers=max_workers, timeout=timeout, max_retries=max_retries, max_wait=5)
        dataset = EvaluationDataset(samples=[
            SingleTurnSample(user_input=s.user_input, response=s.response,
                             retrieved_contexts=[c for c in s.retrieved_contexts if c.strip()] or None)
            for s in samples])
        wrapped_emb = LangchainEmbeddingsWrapper(embeddings, run_config=run_config) if embeddings is not None else None
        try:
            result = evaluate(dataset, metrics=[spec.factory() for spec in specs],
                              llm=LangchainLLMWrapper(llm, run_config=run_config), embeddings=wrapped_emb,
                              run_config=run_config, raise_exceptions=False, show_progress=False)
        except Exception:  # noqa: BLE001 - a broken judge must not abort a benchmark run
            log.exception("RAGAS evaluate() failed; scoring %d sample(s) as NaN", len(samples))
            return [{} for _ in samples]
    return list(result.scores)


def count_nan(scores: Sequence[dict[str, float]]) -> dict[str, int]:
    """Number of NaN (or missing) values per metric over a list of ``ragas_scores`` rows."""
    names = list(dict.fromkeys(k for row in scores for k in row))
    return {m: sum(1 for row in scores if math.isnan(_as_float(row.get(m)))) for m in names}

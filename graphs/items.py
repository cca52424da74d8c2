"""One item of a run: invoke the graph, record the row (prediction, error, latency, memory, tokens, trace), score it.

Shared by the executors: the runner's own (items one after another or in a thread pool) and the Ray workers
(:mod:`graphs.ray_executor`), so a row looks the same wherever its item ran.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from evidex.graphs.config import TaskConfig
from evidex.graphs.registry import Resources, RunItem, TaskFamily
from evidex.graphs.tracing import RunTreeTracer, safe_name
from evidex.tools.memory import release_free_memory, rss_mb
from evidex.tools.degraded import search_degradations


def run_one(graph, item: RunItem, cfg: TaskConfig, family: TaskFamily, run_dir: Path, resources: Resources,
            ragas_llm=None) -> dict[str, Any]:
    """Invoke the graph on one item; never raises: errors are recorded on the row."""
    tracer = RunTreeTracer(run_dir / "traces" if cfg.tracing.enabled else None, item.id)
    row: dict[str, Any] = {"id": item.id, "task": cfg.task, "tags": family.item_tags(item) or [cfg.task],
                           "input": item.public_input(), "prediction": None, "metrics": {}, "error": None}
    start = time.perf_counter()
    with search_degradations() as degraded:  # a hybrid search that lost a part, anywhere inside the graph
        try:
            out = graph.invoke(item.graph_input(), config={"callbacks": [tracer], "run_name": cfg.name,
                                                           "metadata": {"item_id": item.id},
                                                           "tags": [f"task:{cfg.task}", f"family:{cfg.family}"]})
            pred = out["prediction"]
            row["prediction"] = pred.model_dump()
        except Exception as exc:  # noqa: BLE001 - any failure of one item is recorded, the run goes on
            row["error"] = f"{type(exc).__name__}: {exc}"
            pred = None
    row["latency_s"] = round(time.perf_counter() - start, 3)
    if degraded:
        _flag_degraded(row, degraded, cfg, tracer)
    release_free_memory()
    row["rss_mb"] = rss_mb()  # resident memory after the item: a run whose memory grows shows it item by item
    tree = tracer.last_tree or {}
    row["tokens"] = {"prompt": tree.get("prompt_tokens", 0), "completion": tree.get("completion_tokens", 0),
                     "cached": tree.get("cached_prompt_tokens", 0), "calls": tree.get("llm_calls", 0)}
    if cfg.tracing.enabled:
        row["trace"] = f"traces/{safe_name(item.id)}.json"
    if pred is not None:
        try:
            grounded = family.grounded_answers(item, pred)
            if grounded:
                row["grounded"] = [g.model_dump() for g in grounded]
            row["metrics"] = family.score_item(cfg, item, pred, resources)
            if ragas_llm is not None and grounded:
                row["metrics"].update(_ragas_for(grounded, ragas_llm, resources.embedder))
        except Exception as exc:  # noqa: BLE001
            row["error"] = f"scoring failed: {type(exc).__name__}: {exc}"
    return row


def _flag_degraded(row: dict[str, Any], degraded: list, cfg: TaskConfig, tracer: RunTreeTracer) -> None:
    """The item's searches lost a part: the row says which and why (``degraded``), and is an error unless
    ``run.on_degraded: warning``; the trace's root says so too."""
    parts = list({(u.part, u.reason): u.model_dump() for u in degraded}.values())
    row["degraded"] = parts
    said = "; ".join(f"{p['part']} search unavailable ({p['reason']})" for p in parts)
    if cfg.run.on_degraded == "error" and row["error"] is None:
        row["error"] = (f"Degraded: {said}; the answer rests on the other part of the search only (set "
                        "run.on_degraded: warning to keep such answers)")
    if tracer.last_tree is not None and tracer.folder is not None:
        tracer.last_tree["degraded"] = parts
        tracer.write(tracer.last_tree)


def _ragas_for(grounded, llm, embedder) -> dict[str, float]:
    """RAGAS during the run (``metrics.ragas``): the mean of each metric over the item's grounded answers."""
    from evidex.evaluators.ragas_metrics import RagasSample, ragas_scores

    samples = [RagasSample(user_input=g.question, response=g.answer, retrieved_contexts=g.contexts) for g in grounded]
    scores = ragas_scores(samples, llm, embedder)
    keys = {k for s in scores for k in s}
    return {f"ragas_{k}": float(sum(s.get(k, float("nan")) for s in scores) / len(scores)) for k in keys}


def ragas_llm_for(cfg: TaskConfig, graph_llm=None):
    """The judge model for RAGAS during a run: ``metrics.ragas_llm``, else the graph's own model."""
    from evidex.agents.models import make_chat_model

    if cfg.metrics.ragas_llm:
        return make_chat_model(cfg.metrics.ragas_llm, temperature=0.0, max_tokens=1024)
    m = cfg.model  # the same local server as the graph's (same context, threads and slots), not a second one
    return graph_llm or make_chat_model(m.spec, temperature=0.0, max_tokens=1024, base_url=m.base_url, n_ctx=m.n_ctx,
                                        threads=m.threads, parallel=cfg.model_slots,
                                        prompt_cache_mib=m.prompt_cache_mib)

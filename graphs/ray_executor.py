"""``run.executor: ray`` (``--executor ray``): a run's items on Ray workers, its results written here.

Each worker is a Ray actor that builds the task's graph once, from the run's own config (the YAML saved as
``config.yaml``), and then runs one item at a time with the runner's :func:`graphs.items.run_one`, so a row is
the same wherever its item ran. This process stays the one writer of ``results.jsonl`` and ``traces/``: it hands
an item to each idle worker and appends each row as it comes back (in completion order, as the local thread pool
does). So the run folder keeps its guarantees:

* resume: a row is written only once its item finished; an interrupted run resumes with either executor;
* no duplicate: an item is in flight on one worker at a time and a row is written once per id;
* no loss: when a worker dies mid-item (killed, out of memory, its node gone) the item goes back to the queue
  and a fresh worker takes the dead one's place; an item that took down ``MAX_ATTEMPTS`` workers is recorded as
  an error, like any item that fails.

Without ``run.ray_address`` a Ray is started for this run, on loopback only, and stopped after it; with one, the
run joins that cluster (``ray start --head ...``). Workers on other machines need the package, the data and
cache folders at the same paths, and their own keys (environment or ``~/.config/evidex/.env``): keys are never
sent through Ray. Details and measurements: docs/scaling-out.md.
"""
from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evidex.graphs.config import TaskConfig, dump_config
from evidex.graphs.registry import RunItem, TaskFamily
from evidex.tools.ray_cluster import (RayClusterError, dispatch, import_ray, ray_error_cause, ray_session,
                                     worker_env)

MAX_ATTEMPTS = 3  # workers an item may take down before it is recorded as an error
# The cluster plumbing lives in tools/ray_cluster.py (ingestion uses it too); the runner's names stay importable.
RayExecutorError = RayClusterError
__all__ = ["MAX_ATTEMPTS", "ItemWorker", "RayExecutorError", "execute_on_ray", "import_ray", "ray_session"]


class ItemWorker:
    """One Ray worker: the graph built once from the run's config, then one item at a time."""

    def __init__(self, config_yaml: str):
        import yaml

        from evidex.graphs.items import ragas_llm_for
        from evidex.graphs.registry import Resources, get_family
        from evidex.graphs.tasks import validate

        cfg = validate(yaml.safe_load(config_yaml), "the run's config.yaml")
        # One item at a time here: a local model started by this worker gets one slot.
        run = cfg.run.model_copy(update={"concurrency": 1, "executor": "local"})
        self.cfg = cfg.model_copy(update={"run": run})
        self.family = get_family(cfg.family)
        self.resources = Resources()
        self.graph = self.family.build_graph(self.cfg, self.resources)
        self.ragas_llm = ragas_llm_for(self.cfg) if self.cfg.metrics.ragas else None
        self.scratch = Path(tempfile.mkdtemp(prefix="evidex-ray-worker-"))  # traces, before they go to the run

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "host": socket.gethostname()}

    def run_item(self, item: RunItem) -> tuple[dict[str, Any], str | None]:
        """The item's row and its trace (JSON text), for the driver to write."""
        from evidex.graphs.items import run_one

        row = run_one(self.graph, item, self.cfg, self.family, self.scratch, self.resources, self.ragas_llm)
        trace = None
        if row.get("trace"):
            path = self.scratch / row["trace"]
            if path.is_file():
                trace = path.read_text(encoding="utf-8")
                path.unlink()
        return row, trace


def execute_on_ray(pending: Sequence[RunItem], cfg: TaskConfig, family: TaskFamily, run_dir: Path,
                   record: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Run ``pending`` on ``run.concurrency`` Ray workers; ``record(row)`` is called here once per item, as rows
    come back. Returns what ``run.json`` keeps about the executor (workers, deaths, items handed out again)."""
    n_workers = min(cfg.run.concurrency, len(pending))
    cpus = cfg.run.ray_cpus_per_worker
    if cfg.uses_model and cfg.model.spec.strip().split(":", 1)[0] == "local":
        print("warning: every Ray worker starts its own copy of the local model (model.spec local); serve one for "
              "all of them with  evidex serve  and run with --llm openai:<name> --set model.base_url=...",
              file=sys.stderr, flush=True)
    # A Ray of this run gets at least one CPU per worker, so every worker is placed at once (as threads would be).
    local_cpus = max(float(os.cpu_count() or 1), n_workers * cpus)
    info: dict[str, Any] = {"name": "ray", "address": cfg.run.ray_address or "local (loopback)",
                            "workers": n_workers, "worker_deaths": 0, "handed_out_again": []}
    t0 = time.monotonic()
    with ray_session(cfg.run.ray_address, num_cpus=local_cpus) as ray:
        from ray.exceptions import RayActorError

        actor = ray.remote(ItemWorker).options(num_cpus=cpus, max_restarts=0, max_task_retries=0,
                                               runtime_env={"env_vars": worker_env()})
        config_yaml = dump_config(cfg)
        workers = [actor.remote(config_yaml) for _ in range(n_workers)]
        try:
            _wait_ready(ray, workers, RayActorError)
            info["startup_s"] = round(time.monotonic() - t0, 2)  # Ray up and every worker's graph built
            t1 = time.monotonic()
            _dispatch(ray, workers, lambda: actor.remote(config_yaml), pending, cfg, family, run_dir, record, info)
            info["items_s"] = round(time.monotonic() - t1, 2)
        finally:
            for w in workers:
                ray.kill(w)
    return info


def _wait_ready(ray, workers, actor_error) -> None:
    """Every worker has built its graph (a bad config or a missing model fails here, once, before any item)."""
    try:
        ray.get([w.info.remote() for w in workers])
    except actor_error as exc:
        raise RayExecutorError(f"a Ray worker could not build the graph: {ray_error_cause(exc)}") from None


def _dispatch(ray, workers: list, spawn, pending, cfg, family, run_dir: Path, record, info) -> None:
    """Items to the workers (``tools.ray_cluster.dispatch``: one in flight per worker, a dead worker replaced and
    its item handed out again); each row written once, as it comes back."""
    written: set[str] = set()
    for done in dispatch(ray, workers, spawn, pending, lambda w, item: w.run_item.remote(item), lambda item: item.id,
                         info, MAX_ATTEMPTS):
        if done.error is None:
            row, trace = done.result
        elif done.worker_died:
            row, trace = _error_row(done.job, cfg, family, f"WorkerDied: {MAX_ATTEMPTS} Ray workers died running "
                                    f"this item; last: {ray_error_cause(done.error)}"), None
        else:  # run_one records item errors itself; this is Ray failing to ship the item
            row, trace = _error_row(done.job, cfg, family, f"RayTaskError: {ray_error_cause(done.error)}"), None
        if row["id"] in written:
            continue
        if trace is not None and row.get("trace"):
            _write_trace(run_dir / row["trace"], trace)
        written.add(row["id"])
        record(row)


def _write_trace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _error_row(item: RunItem, cfg: TaskConfig, family: TaskFamily, error: str) -> dict[str, Any]:
    return {"id": item.id, "task": cfg.task, "tags": family.item_tags(item) or [cfg.task],
            "input": item.public_input(), "prediction": None, "metrics": {}, "error": error, "latency_s": 0.0,
            "tokens": {"prompt": 0, "completion": 0, "cached": 0, "calls": 0}}

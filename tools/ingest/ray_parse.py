"""``evidex ingest ... --executor ray``: PDFs parsed *and embedded* on Ray workers; one writer commits.

Each Ray worker (:class:`tools.ingest.worker.ParseEmbedWorker`) does both halves of the expensive work for a file:
it parses the PDF, builds the rows the writer will store and encodes the cells of the dense columns. The
ingesting process stays the single writer: it commits each paper to DuckDB in its own transaction and upserts the
vectors to Chroma, finding them by text (:class:`tools.ingest.worker.WorkerVectors`), so the store is the same as
a local ingestion's.

Guarantees are the local pipeline's: a paper is committed only when its result came back, so an interrupted run
loses nothing committed and skips it next time; a worker that dies mid-file (killed, out of memory, its node
gone) is replaced and its files handed out again; a file that took down ``MAX_ATTEMPTS`` workers is reported as
failed (``parser_crash``) and the batch goes on.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evidex.tools.ingest.config import IngestConfig
from evidex.tools.ingest.worker import ParseEmbedWorker

MAX_ATTEMPTS = 3  # workers a file may take down before it is reported as failed


def ray_parse_stream(jobs: list[tuple[str, str]], config: IngestConfig, workers: int | None, address: str | None,
                     embed: bool, info: dict[str, Any], metadata_dir: str | None = None) -> Iterator[tuple]:
    """Yield (path, ok, ParsedPaper | (kind, message), {text sha1: vector} | None, embed seconds) as Ray workers
    finish files (``embed``: the workers encode the dense cells). ``info`` collects what the report keeps
    (workers, deaths, files handed out again, start-up seconds). ``workers`` None: one per CPU of the cluster
    (``embedding.threads`` CPUs each, default 1)."""
    from evidex.tools.ray_cluster import RayClusterError, dispatch, ray_error_cause, ray_session, worker_env

    if not jobs:
        return
    threads = config.embedding.threads or 1
    t0 = time.monotonic()
    local_cpus = max(float(os.cpu_count() or 1), float((workers or 1) * threads))
    with ray_session(address, num_cpus=local_cpus) as ray:
        from ray.exceptions import RayActorError

        if workers is None:
            workers = int(ray.cluster_resources().get("CPU", 1) // threads)
        n_workers = max(1, min(workers, len(jobs)))
        info.update({"name": "ray", "address": address or "local (loopback)", "workers": n_workers,
                     "threads_per_worker": threads, "worker_deaths": 0, "handed_out_again": []})

        actor = ray.remote(ParseEmbedWorker).options(num_cpus=threads, max_restarts=0, max_task_retries=0,
                                                    runtime_env={"env_vars": worker_env()})
        config_json = config.model_dump_json()

        def spawn():
            return actor.remote(config_json, embed, threads, metadata_dir)

        pool = [spawn() for _ in range(n_workers)]
        try:
            try:
                ray.get([w.info.remote() for w in pool])
            except RayActorError as exc:
                raise RayClusterError(f"a Ray worker could not start its parser and embedder: {ray_error_cause(exc)}") from None
            info["startup_s"] = round(time.monotonic() - t0, 2)
            for done in dispatch(ray, pool, spawn, jobs, lambda w, job: w.parse.remote(*job),
                                 lambda job: Path(job[0]).name, info, MAX_ATTEMPTS):
                if done.error is None:
                    yield done.result
                    continue
                path = done.job[0]
                why = (f"{MAX_ATTEMPTS} Ray workers died parsing or embedding this file" if done.worker_died
                       else "Ray could not run the parse")
                yield path, False, ("parser_crash", f"{path}: {why}; last: {ray_error_cause(done.error)}"), None, 0.0
        finally:
            for w in pool:
                ray.kill(w)

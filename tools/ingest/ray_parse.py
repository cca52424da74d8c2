"""``python -m tools.ingest ... --executor ray``: PDFs parsed *and embedded* on Ray workers; one writer commits.

Locally, parser processes run ahead while the ingesting process embeds, so embedding (90% of the time on CPU)
stays on one process. On Ray each worker does both halves of the expensive work for a file: it parses the PDF,
builds the rows the writer will store (``writer.paper_rows``, the same function) and encodes the cells of the
dense columns. The ingesting process stays the single writer: it commits each paper to DuckDB in its own
transaction and upserts the vectors to Chroma, looking them up by text (:class:`WorkerVectors`), so the store is
the same as a local ingestion's. A text the writer changes after parsing (a metadata JSON's title or abstract, an
LLM summary) is not among the worker's vectors and is encoded here.

Guarantees are the local pipeline's: a paper is committed only when its result came back, so an interrupted run
loses nothing committed and skips it next time; a worker that dies mid-file (killed, out of memory, its node
gone) is replaced and its files handed out again; a file that took down ``MAX_ATTEMPTS`` workers is reported as
failed (``parser_crash``) and the batch goes on.
"""
from __future__ import annotations

import hashlib
import logging
import os
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from evidex.tools.ingest.config import IngestConfig
from evidex.tools.ingest.errors import PDFError

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # workers a file may take down before it is reported as failed


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def dense_texts(paper, config: IngestConfig, lookup=None) -> list[str]:
    """The distinct non-empty cells of the config's dense columns, as the writer will store them (the filter is
    ``indexer.cell_query``'s: not null, not blank, not the string 'None'), with the metadata JSON that ``lookup``
    (a MetadataLookup) finds for the paper applied, as the writer applies it."""
    from evidex.tools.ingest.metadata import apply_metadata_json
    from evidex.tools.ingest.writer import paper_rows

    js = lookup.find(Path(paper.path), paper.metadata.title)[0] if lookup is not None else None
    rows = paper_rows(paper, apply_metadata_json(paper.metadata, js), config.parser.max_cell_chars)
    texts: dict[str, None] = {}
    for c in config.index:
        if not c.dense:
            continue
        for row in rows.get(c.table, ()):
            value = row.get(c.column)
            if isinstance(value, str) and value.strip() and value != "None":
                texts[value] = None
    return list(texts)


class ParseEmbedWorker:
    """One Ray worker: a parser and an embedder built once, then one PDF at a time."""

    def __init__(self, config_json: str, embed: bool, threads: int, metadata_dir: str | None):
        from evidex.tools.ingest.metadata import MetadataLookup
        from evidex.tools.ingest.parser import make_parser
        from evidex.tools.ingest.indexer import make_embeddings

        self.config = IngestConfig.model_validate_json(config_json)
        self.lookup = MetadataLookup(Path(metadata_dir) if metadata_dir else None)
        self.parser = make_parser(self.config.parser, self.config.embedding.model)
        self.embeddings = make_embeddings(self.config) if embed else None
        if self.embeddings is not None:
            import torch

            torch.set_num_threads(threads)  # the CPUs Ray gave this worker, not every core of the node
            self.embeddings.encode(["warm-up"])  # load the weights now, not inside the first file's time

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid()}

    def parse(self, path: str, sha: str) -> tuple[str, bool, object, dict[str, np.ndarray] | None, float]:
        """(path, ok, ParsedPaper | (kind, message), {text sha1: vector} | None, embed seconds)."""
        try:
            paper = self.parser.parse(Path(path), sha)
        except PDFError as exc:
            return path, False, (exc.kind, str(exc)), None, 0.0
        except Exception as exc:  # noqa: BLE001 - a parser bug on one file must not stop the batch
            log.debug("parser crashed on %s:\n%s", path, traceback.format_exc())
            return path, False, ("parser_error", f"{path}: parser failed ({type(exc).__name__}: {exc})"), None, 0.0
        if self.embeddings is None:
            return path, True, paper, None, 0.0
        t = time.perf_counter()
        texts = dense_texts(paper, self.config, self.lookup)
        vectors = np.asarray(self.embeddings.encode(texts), dtype=np.float32) if texts else []
        return path, True, paper, {text_key(t): v for t, v in zip(texts, vectors)}, time.perf_counter() - t


class WorkerVectors:
    """The writer's embedder: vectors the workers computed, found by text; a text without one (changed by the
    writer after parsing) is encoded with the config's own embedder, loaded only if that ever happens."""

    def __init__(self, config: IngestConfig):
        self.config = config
        self.model_name = config.embedding.model
        self.vectors: dict[str, np.ndarray] = {}
        self._fallback = None
        self.encoded_here = 0

    def add(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors.update(vectors)

    def clear(self) -> None:
        """After each paper: vectors are only needed until its upsert (memory stays flat over a long batch)."""
        self.vectors.clear()

    def encode(self, texts: list[str]) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        missing = [t for t, k in zip(texts, keys) if k not in self.vectors]
        if missing:
            if self._fallback is None:
                from evidex.tools.ingest.indexer import make_embeddings

                self._fallback = make_embeddings(self.config)
            self.vectors.update(zip(map(text_key, missing), np.asarray(self._fallback.encode(missing), dtype=np.float32)))
            self.encoded_here += len(missing)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])


def ray_parse_stream(jobs: list[tuple[str, str]], config: IngestConfig, workers: int | None, address: str | None,
                     embed: bool, on_vectors: Callable[[dict[str, np.ndarray], float], None],
                     info: dict[str, Any], metadata_dir: str | None = None) -> Iterator[tuple[str, bool, object]]:
    """Yield (path, ok, ParsedPaper | (kind, message)) as Ray workers finish files; before a parsed paper is
    yielded its vectors go to ``on_vectors(vectors, embed_seconds)``. ``info`` collects what the report keeps
    (workers, deaths, files handed out again, start-up seconds). ``workers`` None: one per CPU of the cluster
    (``embedding.threads`` CPUs each, default 1)."""
    from evidex.tools.ray_cluster import RayClusterError, ray_error_cause, ray_session, worker_env

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
            queue = deque(jobs)
            attempts: dict[str, int] = {}
            idle = list(pool)
            running: dict[Any, tuple[Any, tuple[str, str]]] = {}  # object ref -> (worker, job): one file per worker

            def hand_out() -> None:
                while queue and idle:
                    w, job = idle.pop(), queue.popleft()
                    running[w.parse.remote(*job)] = (w, job)

            hand_out()
            while running:
                done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)  # short: Ctrl-C stays responsive
                for ref in done:
                    w, job = running.pop(ref)
                    try:
                        path, ok, payload, vectors, embed_s = ray.get(ref)
                    except RayActorError as exc:  # the worker died on this file: a fresh worker, the file again
                        info["worker_deaths"] += 1
                        ray.kill(w)
                        pool.remove(w)
                        fresh = spawn()
                        pool.append(fresh)
                        idle.append(fresh)
                        attempts[job[0]] = attempts.get(job[0], 0) + 1
                        if attempts[job[0]] >= MAX_ATTEMPTS:
                            hand_out()
                            yield job[0], False, ("parser_crash", f"{job[0]}: {MAX_ATTEMPTS} Ray workers died parsing "
                                                  f"or embedding this file; last: {ray_error_cause(exc)}")
                        else:
                            info["handed_out_again"].append(Path(job[0]).name)
                            queue.appendleft(job)
                            hand_out()
                        continue
                    idle.append(w)
                    hand_out()  # the worker starts its next file while the writer commits this one
                    if ok and vectors is not None:
                        on_vectors(vectors, embed_s)
                    yield path, ok, payload
        finally:
            for w in pool:
                ray.kill(w)

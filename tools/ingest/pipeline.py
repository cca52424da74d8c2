"""Batch ingestion: discover PDFs, skip known content, parse in parallel, commit per paper, index.

Robustness contract:
- each PDF is committed in its own transaction, then embedded; ``evidex.files.dense_indexed`` records the
  second step, so a crash at any point loses nothing committed and a rerun only finishes what is missing;
- a PDF whose sha256 is already stored is skipped (``--from-scratch`` rebuilds everything);
- a bad PDF (empty, not a PDF, corrupt, encrypted, scanned without OCR) or a crashed parser process becomes a
  per-file error in the report and the batch goes on.
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import logging
import multiprocessing
import os
import sys
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from evidex.tools.ingest.config import IngestConfig, load_ingest_config
from evidex.tools.ingest.errors import DuplicatePaperError, IngestConfigError, IngestError, StoreConfigMismatch
from evidex.tools.ingest.indexer import DenseIndexer, make_embeddings, rebuild_bm25, remove_store, wipe_dense, write_manifest
from evidex.tools.ingest.metadata import MetadataLookup, apply_metadata_json
from evidex.tools.ingest.records import ParsedPaper
from evidex.tools.ingest.summaries import Summariser, SummaryCache, summarise_paper
from evidex.tools.ingest.removal import finish_pending_removals, queue_removals
from evidex.tools.ingest.writer import write_paper
from evidex.tools.memory import memory_mb
from evidex.tools.store import TABLES, StorePaths, close_readonly, connect_writable, store_paths, writer_lock

log = logging.getLogger(__name__)

# what the PDF parser reads changes with its code as well as its settings: each change that alters stored rows adds
# a line here, and a store parsed before it says so when papers are added to it (its other papers keep their rows)
PARSER_CHANGES = (
    "stores without a recorded revision",
    "a figure holds every panel above its sub-captions ('(a) ...'), which stay in the page's text",
    "two columns of text under a full-width part of a page are read one after the other, not line by line across",
    "a hyphen that belongs to a word broken at a line end stays with no space after it ('DSTC7-AVSD', not "
    "'DSTC7- AVSD'), and a title line with words in small capitals stays in the title",
)
PARSER_REVISION = len(PARSER_CHANGES)


class FileResult(BaseModel):
    path: str
    status: Literal["ingested", "skipped", "reindexed", "failed"]
    paper_id: str | None = None
    title: str | None = None
    pages: int = 0
    error_kind: str | None = None
    error: str | None = None
    warnings: list[str] = Field(default_factory=list)
    parse_seconds: float = 0.0
    metadata_json: str | None = None


class IngestReport(BaseModel):
    store: str
    files: list[FileResult]
    seconds: dict[str, float]
    rows: dict[str, int]
    dense_entries: dict[str, int] = Field(default_factory=dict)
    bm25_entries: dict[str, int] = Field(default_factory=dict)
    memory: dict[str, float] = Field(default_factory=dict, description="peak_rss_mb and rss_mb (final) of the process")
    executor: dict = Field(default_factory=dict, description="local, or ray: workers, worker deaths, files handed out "
                           "again, start-up seconds")

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "failed"]

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)


# ------------------------------------------------------------------------------------------------ discovery


def discover(inputs: Iterable[str | Path]) -> tuple[list[Path], list[FileResult]]:
    """Files as given, folders searched recursively for *.pdf, glob patterns expanded. Missing -> errors."""
    found: list[Path] = []
    missing: list[FileResult] = []
    for item in inputs:
        s = str(item)
        p = Path(s).expanduser()
        if p.is_dir():
            found.extend(sorted(x for x in p.rglob("*") if x.is_file() and x.suffix.lower() == ".pdf"))
        elif p.is_file():
            found.append(p)
        elif glob.has_magic(s):
            hits = sorted(Path(x) for x in glob.glob(os.path.expanduser(s), recursive=True) if Path(x).is_file())
            if not hits:
                missing.append(FileResult(path=s, status="failed", error_kind="not_found", error=f"{s}: no file matches this pattern."))
            found.extend(hits)
        else:
            missing.append(FileResult(path=s, status="failed", error_kind="not_found", error=f"{s}: no such file or folder."))
    seen: set[Path] = set()
    unique = []
    for p in found:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(r)
    return unique, missing


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ------------------------------------------------------------------------------------------------ workers

_WORKER = None  # the ParseEmbedWorker of a parser process (or of this process when parsing in-process)


def _init_worker(config_json: str, embed: bool = False, threads: int = 1, metadata_dir: str | None = None,
                 parent_pid: int | None = None) -> None:
    global _WORKER
    from evidex.tools.ingest.worker import ParseEmbedWorker

    if parent_pid is not None:  # a parser process: it dies with the ingestion, even a SIGKILLed one
        from evidex.tools.lifeline import die_with_parent

        die_with_parent(parent_pid)

    _WORKER = ParseEmbedWorker(config_json, embed, threads, metadata_dir)


def _parse_one(path: str, sha: str) -> tuple[str, bool, object, dict | None, float]:
    """Runs in a worker (or inline): (path, ok, ParsedPaper | (kind, message), vectors | None, embed seconds)."""
    return _WORKER.parse(path, sha)


def _parse_stream(jobs: list[tuple[str, str]], config: IngestConfig, workers: int, embed: bool = False,
                  metadata_dir: str | None = None):
    """Yield parse results (see ``_parse_one``) as they complete; restarts the pool if a worker process dies.
    ``embed``: the parser processes also encode the papers' dense cells (each with its share of the cores)."""
    if workers <= 1:
        _init_worker(config.model_dump_json())
        for path, sha in jobs:
            yield _parse_one(path, sha)
        return
    yield from _parse_in_processes(jobs, config, workers, embed, metadata_dir)


def _parse_in_processes(jobs: list[tuple[str, str]], config: IngestConfig, workers: int, embed: bool,
                        metadata_dir: str | None):
    """``_parse_stream`` on parser processes that die with this one, however it dies: the lifeline's watcher kills
    them (also while they are still starting), and once started they carry a parent-death signal. The
    multiprocessing resource tracker is started before, outside the lifeline: it outlives pools (shared by every
    pool of this process) and exits by itself once this process and its parser processes are gone."""
    from multiprocessing import resource_tracker

    from evidex.tools.lifeline import reaped

    resource_tracker.ensure_running()
    with reaped():
        yield from _parse_pool(jobs, config, workers, embed, metadata_dir)


def _parse_pool(jobs: list[tuple[str, str]], config: IngestConfig, workers: int, embed: bool,
                metadata_dir: str | None):
    pending = list(jobs)
    ctx = multiprocessing.get_context("spawn")  # fork after torch/onnx threads start can deadlock
    threads = max(1, (config.embedding.threads or os.cpu_count() or 1) // workers)
    init = (config.model_dump_json(), embed, threads, metadata_dir, os.getpid())
    while pending:
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=init) as pool:
            futures: dict[Future, tuple[str, str]] = {}
            broken = False
            while (pending or futures) and not broken:
                while pending and len(futures) < workers * 2:
                    job = pending.pop(0)
                    futures[pool.submit(_parse_one, *job)] = job
                done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                for fut in done:
                    job = futures.pop(fut)
                    try:
                        yield fut.result()
                    except BrokenProcessPool:
                        broken = True
                        yield job[0], False, ("parser_crash", f"{job[0]}: the parser process crashed on this file."), None, 0.0
            if broken:
                # the other in-flight files are innocent bystanders: parse them again in a fresh pool
                pending = [job for job in futures.values()] + pending


# ------------------------------------------------------------------------------------------------ store checks


def _check_store_config(con, config: IngestConfig, paths: StorePaths) -> IngestConfig:
    """The config to ingest with (see ``record_signatures``); raises when the store was parsed differently."""
    info = dict(con.execute("SELECT key, value FROM evidex.info").fetchall())
    n_files = con.execute("SELECT count(*) FROM evidex.files").fetchone()[0]
    fp = config.parse_fingerprint()
    if n_files and info.get("parse_fingerprint") not in (None, fp):
        raise StoreConfigMismatch(
            f"The store at {paths.root} was parsed with different parser settings "
            f"(fingerprint {info.get('parse_fingerprint')} vs {fp}). Rebuild it with --from-scratch, "
            f"or use the config it was built with."
        )
    revision = int(info.get("parser_revision", 1))
    if not n_files:  # a new (or rebuilt) store: every paper in it is parsed by this code
        con.execute("INSERT OR REPLACE INTO evidex.info VALUES (?, ?)", ["parser_revision", str(PARSER_REVISION)])
    elif revision < PARSER_REVISION:
        log.warning("The store at %s was parsed by an earlier parser (revision %d, now %d: %s). Papers added now "
                    "are parsed by this one; rebuild with --from-scratch to parse the others again.", paths.root,
                    revision, PARSER_REVISION, PARSER_CHANGES[-1])
    return record_signatures(con, config, paths, info, fp)


def stored_signature(info: dict) -> list | None:
    """A store's recorded dense signature, ``[embedding, dense columns, (vector store)]``; None for a new store
    (or one whose record cannot be read)."""
    try:
        sig = json.loads(info["dense_signature"]) if info.get("dense_signature") else None
    except ValueError:
        return None
    return sig if isinstance(sig, list) and len(sig) >= 2 else None


def stored_embedding(info: dict) -> tuple[str, str] | None:
    """(model, backend) a store was embedded with, read back from its ``embedding_signature`` (``model`` for
    torch, ``model#backend`` otherwise); None for a new store."""
    sig = stored_signature(info)
    if not sig:
        return None
    name, _, backend = str(sig[0]).partition("#")
    return name, backend or "torch"


def keep_store_backend(config: IngestConfig, info: dict) -> IngestConfig:
    """An existing store keeps the embedding backend it was embedded with when the config does not name one (the
    default changed to onnx-int8; a library of thousands of papers is not re-embedded for it unasked)."""
    stored = stored_embedding(info)
    if not stored or "backend" in config.embedding.model_fields_set:
        return config
    name, backend = stored
    if name != config.embedding.model:
        return config  # another model: re-embedded anyway, with the default backend
    return config.model_copy(update={"embedding": config.embedding.model_copy(update={"backend": backend})})


def _drop_dense_columns(paths: StorePaths, model: str, columns: set[tuple[str, ...]]) -> None:
    """Delete the vectors of columns a config made keyword-only (their Chroma collections)."""
    from evidex.tools.store import collection_name
    from evidex.tools.vectorstore import chroma_client

    client = chroma_client(paths.root)
    for table, column, *_ in sorted(columns):  # (table, column[, "heading"]) as IndexedColumn.signature
        try:
            client.delete_collection(collection_name(table, column, model))
        except Exception as exc:  # noqa: BLE001 - Chroma raises its own errors for a collection that is not there
            log.debug("no collection to delete for %s.%s: %s", table, column, exc)
    _clear_chroma_cache()


def record_signatures(con, config: IngestConfig, paths: StorePaths, info: dict, fingerprint: str) -> IngestConfig:
    """Once a store's parse fingerprint is accepted: keep the store's embedding backend unless the config names
    one; when dense columns were only dropped, delete their vectors; when the embedding model, its backend or the
    dense columns otherwise changed, re-embed every paper. Records the fingerprint and the dense signature (every
    ingestion path shares this) and returns the config to ingest with."""
    from evidex.tools.vectorstore import STORE_UID_KEY, store_database, write_vector_config

    config = keep_store_backend(config, info)
    sig = [embedding_signature(config), sorted(c.signature() for c in config.index if c.dense)]
    if config.vector.mode != "embedded":  # embedded stores keep the signature they had before servers
        sig.append(f"{config.vector.where()}/{store_database(paths.root, config.vector)}")
    dense_sig = json.dumps(sig)
    old = stored_signature(info)
    old_cols = {tuple(c) for c in old[1]} if old else set()
    new_cols = {tuple(c) for c in sig[1]}
    if old and old[0] == sig[0] and old[2:] == sig[2:] and new_cols < old_cols:
        log.warning("Dense columns dropped (%s): deleting their vectors; the other vectors are kept.",
                    ", ".join(".".join(c) for c in sorted(old_cols - new_cols)))
        _drop_dense_columns(paths, config.embedding.model, old_cols - new_cols)
    elif info.get("dense_signature") not in (None, dense_sig):
        log.warning("Embedding model, dense columns or vector store changed: re-embedding every paper.")
        wipe_dense(paths)  # the vectors where they were until now (ingest checked that their server answers)
        _clear_chroma_cache()
        con.execute("UPDATE evidex.files SET dense_indexed = false")
    write_vector_config(paths.root, config.vector)  # search, removal and checks open the same Chroma
    for key, value in (("parse_fingerprint", fingerprint), ("dense_signature", dense_sig)):
        con.execute("INSERT OR REPLACE INTO evidex.info VALUES (?, ?)", [key, value])
    if STORE_UID_KEY not in info and not con.execute("SELECT count(*) FROM evidex.files").fetchone()[0]:
        # a new store: every vector it writes carries this uid, so a vector without it is an orphan (stores made
        # before uids keep none: their vectors carry none, and --check --repair finds their orphans by id)
        con.execute("INSERT OR REPLACE INTO evidex.info VALUES (?, ?)", [STORE_UID_KEY, uuid.uuid4().hex])
    return config


def embedding_signature(config: IngestConfig) -> str:
    """The model name, plus the backend when it is not torch (stores made before backends keep their signature)."""
    e = config.embedding
    if e.backend == "torch":
        return e.model
    from evidex.tools.embeddings import resolve_backend

    backend = resolve_backend(e.model, e.backend)
    return e.model if backend == "torch" else f"{e.model}#{backend}"


@contextlib.contextmanager
def _torch_threads(n: int | None):
    torch = sys.modules.get("torch")
    if n is None or torch is None:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _clear_chroma_cache() -> None:
    try:
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
    except Exception:  # noqa: BLE001 - only matters when a store is rebuilt inside one process
        pass


# ------------------------------------------------------------------------------------------------ main entry


def ingest(
    inputs: Iterable[str | Path],
    db: str | None = None,
    *,
    store_dir: str | Path | None = None,
    config: IngestConfig | str | Path | None = None,
    metadata_dir: str | Path | None = None,
    from_scratch: bool = False,
    workers: int | None = 1,
    skip_dense: bool = False,
    summariser: Summariser | None = None,
    embeddings=None,
    progress: bool = True,
    vector=None,
    executor: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
    embed_in: Literal["workers", "writer"] = "workers",
    wait_s: float | None = None,
) -> IngestReport:
    """Ingest PDFs into the store ``db`` (or ``store_dir``). See the module docstring for guarantees.

    The store has one writer at a time (:func:`tools.store.writer_lock`): another writer, or a process reading the
    store, is waited for up to ``wait_s`` seconds (default ``EVIDEX_STORE_WAIT_S``), then StoreBusyError names it.

    ``executor="ray"``: parse and embed on Ray workers (``workers`` of them, default one per CPU; a Ray started on
    loopback for this call, or the cluster at ``ray_address``), this process the single writer (see
    tools/ingest/ray_parse.py).

    ``embed_in="workers"`` (default): parser processes (2 or more ``workers``) and Ray workers also embed what they
    parse, each with its share of the cores; ``"writer"``: they only parse and this process embeds everything (one
    copy of the embedding model in memory instead of one per worker). Measured: benchmarks/ingest_executors.py."""
    if executor not in ("local", "ray"):
        raise IngestConfigError(f"executor must be 'local' or 'ray', not {executor!r}")
    if embed_in not in ("workers", "writer"):
        raise IngestConfigError(f"embed_in must be 'workers' or 'writer', not {embed_in!r}")
    cfg = config if isinstance(config, IngestConfig) else load_ingest_config(config)
    cfg = cfg.with_embedder(embeddings)
    if cfg.summaries.enabled and summariser is None:
        raise IngestConfigError(
            "summaries.enabled is true but no summariser was given: pass summariser=callable to "
            "evidex.tools.ingest.ingest(...) (the CLI has no LLM client), or set summaries.enabled: false."
        )
    paths = store_paths(db, store_dir)
    inputs = list(inputs)
    files, missing = discover(inputs)
    if not files and not paths.db.exists():
        why = "; ".join(f.error for f in missing if f.error) or f"no PDF under {', '.join(map(str, inputs)) or '(no path)'}"
        raise IngestError(f"nothing to ingest ({why}); no store was created at {paths.root}")
    from evidex.tools.vectorstore import require_reachable, with_store_vector

    # vector: a VectorConfig (the CLI's --chroma-server); else the config's own, else where the store has them
    cfg = cfg.model_copy(update={"vector": vector}) if vector is not None else with_store_vector(cfg, paths.root)
    t_start = time.perf_counter()
    seconds: dict[str, float] = {"parse_wall": 0.0, "parse_cpu": 0.0, "write": 0.0, "dense": 0.0, "bm25": 0.0}
    with writer_lock(paths.root, wait_s):
        # every part of the store answers before any part is touched: a --from-scratch (or a move of the vectors)
        # with its Chroma server away would otherwise delete the local store and leave the vectors on the server
        if from_scratch or not skip_dense or cfg.vector.where() != _recorded_where(paths):
            require_reachable(paths.root, cfg.vector)
        close_readonly(paths.db)
        if from_scratch:
            remove_store(paths)
            _clear_chroma_cache()
        con = connect_writable(paths.db, wait_s)
        try:
            cfg = _check_store_config(con, cfg, paths)
            _vector_step(paths, cfg, "finishing interrupted removals", lambda: finish_pending_removals(con, paths))
            swept = 0 if skip_dense else _vector_step(paths, cfg, "deleting vectors of an earlier life of the store",
                                                      lambda: _sweep(con, paths, cfg))
            report = _run(con, (files, missing), cfg, paths, metadata_dir, workers, skip_dense, summariser, embeddings,
                          progress, seconds, executor, ray_address, embed_in)
            if swept:
                report.executor["foreign_vectors_deleted"] = swept
        finally:
            con.close()
    seconds["total"] = round(time.perf_counter() - t_start, 3)
    report.seconds = {k: round(v, 3) for k, v in seconds.items()}
    report.memory = memory_mb()
    return report


def _recorded_where(paths: StorePaths) -> str:
    from evidex.tools.vectorstore import read_vector_config

    return read_vector_config(paths.root).where()


def _sweep(con, paths: StorePaths, cfg: IngestConfig) -> int:
    """Vectors on the store's Chroma that carry another store uid (an earlier life of the store): deleted."""
    from evidex.tools.ingest.indexer import store_uid
    from evidex.tools.vectorstore import sweep_foreign_vectors

    uid = store_uid(con)
    if uid is None:
        return 0
    removed = sweep_foreign_vectors(paths.root, cfg.vector, uid)
    if removed:
        log.warning("deleted %d vectors of an earlier life of the store at %s (orphans on its Chroma)", removed,
                    paths.root)
        _clear_chroma_cache()
    return removed


def _vector_step(paths: StorePaths, cfg: IngestConfig, doing: str, step, resume: str = ""):
    """Run one step that talks to the store's Chroma; a server that stopped answering becomes one line naming it,
    what was being done and how to go on (any other failure is raised as it is)."""
    from evidex.tools.vectorstore import lost_server

    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - httpx/chromadb errors of a server that went away
        lost = lost_server(paths.root, cfg.vector, exc, doing, resume)
        if lost is None:
            raise
        raise lost from None


def _run(con, discovered: tuple[list[Path], list[FileResult]], cfg: IngestConfig, paths: StorePaths, metadata_dir,
         workers, skip_dense, summariser, embeddings, progress, seconds, executor: str = "local",
         ray_address: str | None = None, embed_in: str = "workers") -> IngestReport:
    from tqdm import tqdm

    files, results = discovered[0], list(discovered[1])
    known = {sha: (str(pid), bool(ok), path) for sha, pid, ok, path in con.execute(
        "SELECT pdf_sha256, paper_id, dense_indexed, pdf_path FROM evidex.files").fetchall()}
    jobs: list[tuple[str, str]] = []
    reindex: list[tuple[Path, str, str]] = []
    for f in files:
        try:
            sha = sha256_file(f)
        except OSError as exc:
            results.append(FileResult(path=str(f), status="failed", error_kind="unreadable", error=f"{f}: {exc.strerror}"))
            continue
        if sha in known:
            pid, indexed, _ = known[sha]
            if indexed or skip_dense:
                results.append(FileResult(path=str(f), status="skipped", paper_id=pid))
            else:
                reindex.append((f, sha, pid))
        else:
            jobs.append((str(f), sha))
    resume = ("Papers committed so far are kept; start the server again and run the same command again: it embeds "
              "what is not embedded yet and ingests the rest")

    dense: DenseIndexer | None = None
    if executor == "local" and workers is None:  # auto: parser processes run ahead of the writer
        workers = min(2, os.cpu_count() or 1) if len(jobs) >= 3 else 1
    # Ray workers, and parser processes when there are several, also embed: the writer finds their vectors by text
    worker_vectors = None
    if embeddings is None and not skip_dense and embed_in == "workers" and (executor == "ray" or workers > 1):
        from evidex.tools.ingest.worker import WorkerVectors

        embeddings = worker_vectors = WorkerVectors(cfg)

    def get_dense() -> DenseIndexer:
        nonlocal dense, embeddings
        if dense is None:
            if embeddings is None:
                embeddings = make_embeddings(cfg)
            dense = DenseIndexer(paths, cfg, embeddings)
        return dense

    def index_dense(pid: str, path: str = "") -> None:
        t = time.perf_counter()

        def embed_and_upsert() -> None:
            d = get_dense()
            d.delete_paper(pid)  # vectors of an older version of this paper
            with _torch_threads(cfg.embedding.threads):
                d.index_paper(con, pid)

        # a server lost here: the paper stays committed with dense_indexed = false, so the next run embeds it
        _vector_step(paths, cfg, f"storing the vectors of {Path(path).name or pid}", embed_and_upsert, resume)
        con.execute("UPDATE evidex.files SET dense_indexed = true WHERE paper_id = ?", [pid])
        if worker_vectors is not None:
            worker_vectors.clear()
        seconds["dense"] += time.perf_counter() - t

    if not skip_dense:
        for f, sha, pid in reindex:  # committed earlier but not embedded (an interrupted run)
            index_dense(pid, str(f))
            results.append(FileResult(path=str(f), status="reindexed", paper_id=pid))

    lookup = MetadataLookup(Path(metadata_dir) if metadata_dir else None)
    cache = SummaryCache(paths.root / "summaries.sqlite") if cfg.summaries.enabled else None
    bar = tqdm(total=len(jobs), desc=f"ingest {paths.root.name}", unit="pdf", disable=not progress or not jobs)
    pages_done = 0
    t_parse = time.perf_counter()
    executor_info: dict = {"name": executor}
    stream = None
    try:
        meta_dir = str(Path(metadata_dir).resolve()) if metadata_dir else None
        if executor == "ray":
            from evidex.tools.ingest.ray_parse import ray_parse_stream

            stream = ray_parse_stream(jobs, cfg, workers, ray_address, worker_vectors is not None, executor_info, meta_dir)
        else:
            stream = _parse_stream(jobs, cfg, workers, worker_vectors is not None, meta_dir)
        for path, ok, payload, vectors, embed_s in stream:
            bar.update(1)
            if vectors is not None and worker_vectors is not None:
                worker_vectors.add(vectors)
                seconds["embed_in_workers"] = seconds.get("embed_in_workers", 0.0) + embed_s
            if not ok:
                kind, message = payload
                results.append(FileResult(path=path, status="failed", error_kind=kind, error=message))
                continue
            paper: ParsedPaper = payload
            seconds["parse_cpu"] += paper.parse_seconds
            try:
                result, replaced = _commit(con, paper, cfg, lookup, summariser, cache, seconds)
                results.append(result)
                if replaced:  # the old version's vectors (queued in the same transaction as its rows' deletion)
                    _vector_step(paths, cfg, "deleting the vectors of a replaced paper",
                                 lambda: finish_pending_removals(con, paths), resume)
            except DuplicatePaperError as exc:
                results.append(FileResult(path=path, status="failed", error_kind="duplicate_paper", error=str(exc)))
                continue
            except IngestError as exc:
                results.append(FileResult(path=path, status="failed", error_kind="metadata", error=str(exc)))
                continue
            pages_done += len(paper.pages)
            if not skip_dense:
                index_dense(results[-1].paper_id, path)
            elapsed = time.perf_counter() - t_parse
            bar.set_postfix(pages=pages_done, pages_per_s=f"{pages_done / max(elapsed, 1e-6):.1f}")
    finally:
        if stream is not None:
            stream.close()  # a Ray session stops here, also on Ctrl-C
        bar.close()
        if cache is not None:
            cache.close()
    # parse time not hidden behind writing and embedding (parser processes run ahead while this one embeds)
    seconds["parse_wall"] = max(0.0, time.perf_counter() - t_parse - seconds["dense"] - seconds["write"])

    t = time.perf_counter()
    bm25_counts = rebuild_bm25(con, paths, cfg)
    seconds["bm25"] = time.perf_counter() - t
    dense_counts = _vector_step(paths, cfg, "counting the store's vectors", lambda: get_dense().counts(),
                                resume) if not skip_dense else {}
    dim = dense.dimension if dense is not None else None
    if dim is None:  # nothing embedded in this run: keep what the previous run recorded
        from evidex.tools.store import read_index_manifest

        dim = read_index_manifest(paths).get("dimension")
    write_manifest(paths, cfg, dense_counts, bm25_counts, dim)
    rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in TABLES}
    con.execute("CHECKPOINT")
    if worker_vectors is not None:
        executor_info["vectors_encoded_by_writer"] = worker_vectors.encoded_here
    return IngestReport(store=str(paths.root), files=results, seconds={}, rows=rows, dense_entries=dense_counts,
                        bm25_entries=bm25_counts, executor=executor_info)


def _commit(con, paper: ParsedPaper, cfg: IngestConfig, lookup: MetadataLookup, summariser, cache, seconds) -> tuple[FileResult, list[str]]:
    t = time.perf_counter()
    js, js_path = lookup.find(Path(paper.path), paper.metadata.title)
    meta = apply_metadata_json(paper.metadata, js)
    paper.metadata = meta
    if summariser is not None and cache is not None:
        summarise_paper(paper, summariser, cache, list(cfg.summaries.views), cfg.summaries.max_words)
    clash = con.execute(
        "SELECT pdf_path FROM evidex.files WHERE CAST(paper_id AS VARCHAR) = ? AND pdf_path <> ?", [meta.paper_id, paper.path]
    ).fetchone()
    if clash is not None:
        raise DuplicatePaperError(
            f"{paper.path}: paper id {meta.paper_id} (title {meta.title!r}, {meta.conference_year}) is already used by "
            f"{clash[0]}. If these are different papers, give this one a metadata JSON with its own uuid or "
            "conference_year; if it is a new version, replace the old file at the same path."
        )
    # the same path with new content replaces the old version of the paper
    replaced: list[str] = []
    for (old_pid,) in con.execute(
        "SELECT CAST(paper_id AS VARCHAR) FROM evidex.files WHERE pdf_path = ? AND pdf_sha256 <> ?", [paper.path, paper.sha256]
    ).fetchall():
        if old_pid != meta.paper_id:
            queue_removals(con, [old_pid])
            replaced.append(old_pid)
    write_paper(con, paper, meta, cfg.parser.max_cell_chars)
    seconds["write"] += time.perf_counter() - t
    return FileResult(
        path=paper.path,
        status="ingested",
        paper_id=meta.paper_id,
        title=meta.title,
        pages=len(paper.pages),
        warnings=paper.warnings,
        parse_seconds=paper.parse_seconds,
        metadata_json=str(js_path) if js_path else None,
    ), replaced

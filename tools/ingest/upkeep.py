"""Library upkeep: remove papers, sync a folder, and check that DuckDB, Chroma and BM25 agree.

    evidex ingest --db NAME --remove PAPER_ID_OR_PATH ...   # drop papers from every store
    evidex ingest --db NAME --sync FOLDER                   # gone files removed, new/changed ingested
    evidex ingest --db NAME --check                         # orphan rows / index entries (exit 1 if any)

Removal is journaled so that a kill at any point leaves a store the next write completes:

1. one DuckDB transaction deletes the paper's rows from the 8 tables and ``evidex.files`` and queues its id in
   ``evidex.pending_removals``;
2. its vectors are deleted from every Chroma collection of the store, then the queue entry is dropped;
3. the BM25 indexes are rebuilt from DuckDB (they are a function of ``evidex.files``, so a stale set is detected
   and rebuilt by the next ingestion, removal or sync) and the index manifest is rewritten.

Every write (ingest, remove, sync) first finishes the queued removals (:func:`finish_pending_removals`).
A killed ingestion is completed by the next one already (a paper is committed with ``dense_indexed = false`` and
embedded after). :func:`check_store` counts what the three stores disagree on; the tests and ``--check`` use it.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from evidex.tools.ingest.config import IngestConfig, load_ingest_config
from evidex.tools.ingest.errors import IngestError
from evidex.tools.ingest.removal import chroma_client, finish_pending_removals, queue_removals
from evidex.tools.store import (TABLES, StoreError, StorePaths, close_readonly, collection_name, connect_readonly_private,
                                connect_writable, store_paths, writer_lock)

log = logging.getLogger(__name__)
CHROMA_PAGE = 5000  # ids read per Chroma get() while checking


class UpkeepError(IngestError):
    """A removal or sync request cannot run as given (unknown paper, missing folder); nothing was changed."""


class RemovedPaper(BaseModel):
    paper_id: str
    path: str | None = None
    title: str | None = None


class UpkeepReport(BaseModel):
    store: str
    removed: list[RemovedPaper] = Field(default_factory=list)
    finished_pending: int = 0
    seconds: float = 0.0
    rows: dict[str, int] = Field(default_factory=dict)
    dense_entries: dict[str, int] = Field(default_factory=dict)
    bm25_entries: dict[str, int] = Field(default_factory=dict)


# ------------------------------------------------------------------------------------------------ locking


class _Locked:
    """The store's single-writer lock plus a writable connection (closed, then unlocked, on exit). Every part of
    the store (its Chroma server too) must answer before the connection is opened: removals touch all of them."""

    def __init__(self, paths: StorePaths, wait_s: float | None = None):
        self.paths = paths
        self.wait_s = wait_s
        self._lock = None

    def __enter__(self):
        from evidex.tools.vectorstore import require_reachable

        self._lock = writer_lock(self.paths.root, self.wait_s)
        self._lock.__enter__()
        try:
            require_reachable(self.paths.root)
            close_readonly(self.paths.db)
            self.con = connect_writable(self.paths.db, self.wait_s)
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self.con

    def __exit__(self, *exc):
        try:
            self.con.close()
        finally:
            self._lock.__exit__(None, None, None)


def _store_config(con, config: IngestConfig | str | Path | None, paths: StorePaths | None = None) -> IngestConfig:
    """The config to rebuild indexes with: the one given, else the QASPER one for a QASPER store, else default;
    without a config, the vectors stay where the store has them (its embedded Chroma or its Chroma server)."""
    if isinstance(config, IngestConfig):
        return config
    if config is None:
        info = dict(con.execute("SELECT key, value FROM evidex.info").fetchall())
        from evidex.tools.ingest.qasper import FINGERPRINT, INGEST_CONFIG

        if info.get("parse_fingerprint") == FINGERPRINT:
            config = INGEST_CONFIG
        cfg = load_ingest_config(config)
        from evidex.tools.ingest.pipeline import stored_embedding

        stored = stored_embedding(info)
        if stored:  # keep the store's embedding model (its collections' names) and backend
            name, backend = stored
            cfg = cfg.model_copy(update={"embedding": cfg.embedding.model_copy(
                update={"model": name, "backend": backend})})
        return _with_vector(cfg, paths)
    return _with_vector(load_ingest_config(config), paths)


def _with_vector(cfg: IngestConfig, paths: StorePaths | None) -> IngestConfig:
    from evidex.tools.vectorstore import with_store_vector

    return cfg if paths is None else with_store_vector(cfg, paths.root)


# ------------------------------------------------------------------------------------------------ removal


def refresh_indexes(con, paths: StorePaths, cfg: IngestConfig) -> tuple[dict[str, int], dict[str, int]]:
    """Step 3: BM25 rebuilt if the store changed, manifest rewritten with the current entry counts."""
    from evidex.tools.ingest.indexer import rebuild_bm25, write_manifest
    from evidex.tools.store import read_index_manifest

    bm25_counts = rebuild_bm25(con, paths, cfg)
    dense_counts: dict[str, int] = {}
    client = chroma_client(paths)
    names = {c.name if hasattr(c, "name") else c for c in client.list_collections()} if client is not None else set()
    for item in cfg.index:
        if item.dense:
            name = collection_name(item.table, item.column, cfg.embedding.model)
            dense_counts[f"{item.table}.{item.column}"] = (
                client.get_collection(name, embedding_function=None).count() if name in names else 0)
    write_manifest(paths, cfg, dense_counts, bm25_counts, read_index_manifest(paths).get("dimension"))
    con.execute("CHECKPOINT")
    return dense_counts, bm25_counts


def resolve_targets(con, targets: Iterable[str]) -> tuple[list[tuple[str, str | None, str | None]], list[str]]:
    """Map paper ids and file paths to stored papers: ([(paper_id, path, title)], [targets not in the store])."""
    rows = con.execute(
        "SELECT CAST(f.paper_id AS VARCHAR), f.pdf_path, m.title FROM evidex.files f "
        "LEFT JOIN metadata m ON m.paper_id = f.paper_id").fetchall()
    by_id = {pid: (pid, path, title) for pid, path, title in rows}
    by_path = {path: (pid, path, title) for pid, path, title in rows}
    # a paper with rows but no file record (a half-written store) can still be removed by id
    for (pid, title, path) in con.execute(
            "SELECT CAST(paper_id AS VARCHAR), title, pdf_path FROM metadata").fetchall():
        by_id.setdefault(pid, (pid, path, title))
    found: dict[str, tuple[str, str | None, str | None]] = {}
    unknown: list[str] = []
    for t in targets:
        t = str(t).strip()
        hit = None
        if _is_uuid(t):
            hit = by_id.get(str(uuid.UUID(t)))
        if hit is None:
            hit = by_path.get(t)
        if hit is None and not t.startswith("qasper:"):
            hit = by_path.get(str(Path(t).expanduser().resolve()))
        if hit is None:
            if Path(t).expanduser().is_dir():
                unknown.append(f"{t} (a folder: to drop the papers whose files are gone from it, use --sync {t})")
            else:
                unknown.append(t)
        else:
            found[hit[0]] = hit
    return list(found.values()), unknown


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def remove(targets: Iterable[str], db: str | None = None, *, store_dir: str | Path | None = None,
           config: IngestConfig | str | Path | None = None, progress: bool = True,
           wait_s: float | None = None) -> UpkeepReport:
    """Remove papers (ids or file paths) from DuckDB, Chroma and BM25. Unknown targets raise :class:`UpkeepError`
    before anything changes; so does a part of the store that does not answer (its Chroma server)."""
    targets = [t for t in targets if str(t).strip()]
    if not targets:
        raise UpkeepError("--remove needs at least one paper id or file path.")
    paths = _existing_store(db, store_dir)
    t0 = time.perf_counter()
    with _Locked(paths, wait_s) as con:
        cfg = _store_config(con, config, paths)
        papers, unknown = resolve_targets(con, targets)
        if unknown:
            raise UpkeepError(
                f"Not in the store at {paths.root}: {', '.join(unknown)}. Nothing was removed. Give paper ids "
                "(metadata.paper_id) or the paths the papers were ingested from; list them with "
                f"python -m evidex.tools.sql --db {paths.root.name} \"SELECT paper_id, pdf_path FROM metadata\".")
        report = _remove_papers(con, paths, cfg, papers, progress)
    report.seconds = round(time.perf_counter() - t0, 3)
    return report


def _remove_papers(con, paths: StorePaths, cfg: IngestConfig, papers, progress: bool) -> UpkeepReport:
    from evidex.tools.ingest.pipeline import _vector_step
    from evidex.tools.progress import Progress

    resume = ("The removal is journaled in the store: start the server again and run any ingest, --remove or --sync "
              "on this store to finish it")
    finished = _vector_step(paths, cfg, "finishing interrupted removals", lambda: finish_pending_removals(con, paths),
                            resume)
    bar = Progress(len(papers), desc=f"remove from {paths.root.name}", unit="paper", enabled=progress and len(papers) > 1)
    for s in range(0, len(papers), 50):
        batch = [p[0] for p in papers[s : s + 50]]
        queue_removals(con, batch)
        _vector_step(paths, cfg, "deleting the removed papers' vectors", lambda: finish_pending_removals(con, paths),
                     resume)
        bar.update(len(batch))
    bar.close()
    dense, bm25 = _vector_step(paths, cfg, "counting the store's vectors", lambda: refresh_indexes(con, paths, cfg),
                               resume)
    rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in TABLES}
    return UpkeepReport(store=str(paths.root), removed=[RemovedPaper(paper_id=p, path=a, title=t) for p, a, t in papers],
                        finished_pending=finished, rows=rows, dense_entries=dense, bm25_entries=bm25)


def _existing_store(db: str | None, store_dir: str | Path | None) -> StorePaths:
    paths = store_paths(db, store_dir)
    if not paths.db.exists():
        raise StoreError(f"No paper store at {paths.root}. Build it first: evidex ingest PDF_OR_FOLDER "
                         f"--db NAME")
    return paths


# ------------------------------------------------------------------------------------------------ sync


def sync(folder: str | Path, db: str | None = None, *, store_dir: str | Path | None = None,
         config: IngestConfig | str | Path | None = None, metadata_dir: str | Path | None = None, workers: int = 1,
         progress: bool = True, wait_s: float | None = None, **ingest_kwargs):
    """Make the store hold exactly the PDFs under ``folder``: papers ingested from it whose files are gone are
    removed, new and changed files ingested (papers from elsewhere are left alone). Returns
    ``(UpkeepReport, IngestReport)``. One writer lock covers both halves."""
    from evidex.tools.ingest.pipeline import discover, ingest

    root = Path(folder).expanduser()
    if not root.is_dir():
        raise UpkeepError(f"--sync {folder}: no such folder. Nothing was changed.")
    root = root.resolve()
    paths = store_paths(db, store_dir)
    t0 = time.perf_counter()
    files, _ = discover([root])
    present = {str(f) for f in files}
    upkeep = UpkeepReport(store=str(paths.root))
    if not files and not paths.db.exists():
        raise UpkeepError(f"--sync {folder}: no PDF in this folder and no store yet. Nothing was changed.")
    with writer_lock(paths.root, wait_s):
        if paths.db.exists():
            with _Locked(paths, wait_s) as con:
                cfg = _store_config(con, config, paths)
                stored = con.execute(
                    "SELECT CAST(f.paper_id AS VARCHAR), f.pdf_path, m.title FROM evidex.files f "
                    "LEFT JOIN metadata m ON m.paper_id = f.paper_id").fetchall()
                prefix = str(root).rstrip("/") + "/"
                gone = [(pid, p, t) for pid, p, t in stored if p and p.startswith(prefix) and p not in present]
                upkeep = _remove_papers(con, paths, cfg, gone, progress)
        report = ingest([root], db, store_dir=store_dir, config=config, metadata_dir=metadata_dir, workers=workers,
                        progress=progress, wait_s=wait_s, **ingest_kwargs)
    upkeep.seconds = round(time.perf_counter() - t0, 3)
    return upkeep, report


# ------------------------------------------------------------------------------------------------ check


class PairCheck(BaseModel):
    pair: str
    kind: str  # dense | bm25
    cells: int  # non-empty cells in DuckDB that this index should hold
    entries: int  # entries in the index
    orphans: int  # entries without a cell (or of a removed paper)
    missing: int  # cells without an entry (dense: only papers marked embedded)
    examples: list[str] = Field(default_factory=list)


class StoreCheck(BaseModel):
    store: str
    papers: int
    rows: dict[str, int]
    orphan_rows: dict[str, int]  # rows whose paper (or page) is not in the store
    files_without_rows: int  # evidex.files records with no metadata row
    pending_removals: int
    bm25_stale: bool
    indexes: list[PairCheck]
    unreachable: dict[str, str] = Field(default_factory=dict, description="parts of the store that could not be "
                                        "checked because they do not answer (dense: its Chroma server), and why")

    @property
    def orphans(self) -> int:
        return (sum(self.orphan_rows.values()) + self.files_without_rows + self.pending_removals
                + sum(p.orphans for p in self.indexes))

    @property
    def ok(self) -> bool:
        return (not self.unreachable and self.orphans == 0 and not self.bm25_stale
                and all(p.missing == 0 for p in self.indexes))

    def problems(self) -> list[str]:
        out = [f"{part} not checked: {why}" for part, why in self.unreachable.items()]
        out += [f"{n} {t} rows of papers (or pages) not in the store" for t, n in self.orphan_rows.items() if n]
        if self.files_without_rows:
            out.append(f"{self.files_without_rows} file records without a metadata row")
        if self.pending_removals:
            out.append(f"{self.pending_removals} removals not finished (the next ingest, --remove or --sync finishes them)")
        if self.bm25_stale:
            out.append("BM25 indexes older than the store (the next ingest, --remove or --sync rebuilds them)")
        for p in self.indexes:
            if p.orphans:
                out.append(f"{p.kind} {p.pair}: {p.orphans} entries without a cell")
            if p.missing:
                out.append(f"{p.kind} {p.pair}: {p.missing} cells without an entry")
        return out


def check_store(db: str | None = None, *, store_dir: str | Path | None = None,
                config: IngestConfig | str | Path | None = None, wait_s: float | None = None) -> StoreCheck:
    """Count what DuckDB, Chroma and BM25 disagree on (read-only). A writer at work is waited for (``wait_s``), then
    StoreBusyError names it; a Chroma server that does not answer is reported in ``unreachable``, not as missing
    vectors."""
    paths = _existing_store(db, store_dir)
    con = connect_readonly_private(paths.db, wait_s)
    try:
        return _check(con, paths, config)
    finally:
        con.close()


def _check(con, paths: StorePaths, config) -> StoreCheck:
    from evidex.tools.bm25_index import BM25Index
    from evidex.tools.ingest.indexer import bm25_state, cell_query

    has_pending = bool(con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'evidex' AND table_name = "
        "'pending_removals'").fetchone()[0])
    cfg = _store_config(con, config, paths)
    rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in TABLES}
    orphan_rows: dict[str, int] = {}
    for name, spec in TABLES.items():
        if name == "metadata":
            continue
        q = f"SELECT count(*) FROM {name} t WHERE t.ref_paper_id NOT IN (SELECT paper_id FROM metadata)"
        if "ref_page_id" in spec.column_names:
            q += " OR t.ref_page_id NOT IN (SELECT page_id FROM pages)"
        orphan_rows[name] = con.execute(q).fetchone()[0]
    orphan_rows["metadata"] = con.execute(
        "SELECT count(*) FROM metadata WHERE paper_id NOT IN (SELECT paper_id FROM evidex.files)").fetchone()[0]
    files_without = con.execute(
        "SELECT count(*) FROM evidex.files WHERE paper_id NOT IN (SELECT paper_id FROM metadata)").fetchone()[0]
    pending = con.execute("SELECT count(*) FROM evidex.pending_removals").fetchone()[0] if has_pending else 0
    embedded = {r[0] for r in con.execute(
        "SELECT CAST(paper_id AS VARCHAR) FROM evidex.files WHERE dense_indexed").fetchall()}
    papers = con.execute("SELECT count(*) FROM evidex.files").fetchone()[0]

    state_file = paths.bm25 / "state.json"
    import json

    state = json.loads(state_file.read_text()).get("state") if state_file.exists() else None
    bm25_stale = papers > 0 and state != bm25_state(con, cfg)

    unreachable: dict[str, str] = {}
    client, names = None, set()
    try:
        client = chroma_client(paths)
        names = {c.name if hasattr(c, "name") else c for c in client.list_collections()} if client is not None else set()
    except Exception as exc:  # noqa: BLE001 - a server that does not answer is reported, not counted as missing
        from evidex.tools.vectorstore import lost_server, read_vector_config

        lost = lost_server(paths.root, read_vector_config(paths.root), exc, "listing the store's collections")
        if lost is None:
            raise
        unreachable["dense"] = str(lost)
    checks: list[PairCheck] = []
    for item in cfg.index:
        key = f"{item.table}.{item.column}"
        cells = con.execute(cell_query(item.table, item.column, one_paper=False)).fetchall()
        cell_keys = {r[0] for r in cells}
        if item.dense and not unreachable:
            want = {r[0] for r in cells if r[2] in embedded}
            have = set()
            name = collection_name(item.table, item.column, cfg.embedding.model)
            if name in names:
                col = client.get_collection(name, embedding_function=None)
                have = _chroma_keys(col)
            orphans = have - cell_keys
            missing = want - have
            checks.append(PairCheck(pair=key, kind="dense", cells=len(want), entries=len(have), orphans=len(orphans),
                                    missing=len(missing), examples=sorted(orphans | missing)[:3]))
        if item.bm25:
            folder = paths.bm25 / key
            have_list: list[str] = []
            if folder.exists() and ((folder / "entries.npz").exists() or (folder / "entries.json").exists()):
                have_list = [str(k) for k in BM25Index(folder).keys]
            have = set(have_list)
            orphans = have - cell_keys
            missing = cell_keys - have
            checks.append(PairCheck(pair=key, kind="bm25", cells=len(cell_keys), entries=len(have_list),
                                    orphans=len(orphans), missing=len(missing), examples=sorted(orphans | missing)[:3]))
    # collections of other models or columns would be orphans of a different kind: report their size
    expected = {collection_name(i.table, i.column, cfg.embedding.model) for i in cfg.index if i.dense}
    for name in sorted(names - expected):
        n = client.get_collection(name, embedding_function=None).count()
        checks.append(PairCheck(pair=name, kind="dense", cells=0, entries=n, orphans=n, missing=0))
    return StoreCheck(store=str(paths.root), papers=papers, rows=rows, orphan_rows=orphan_rows,
                      files_without_rows=files_without, pending_removals=pending, bm25_stale=bm25_stale,
                      indexes=checks, unreachable=unreachable)


def _chroma_keys(col) -> set[str]:
    """Primary keys of a collection's entries (ids are ``table:column:key``), read page by page."""
    out: set[str] = set()
    offset = 0
    while True:
        got = col.get(include=[], limit=CHROMA_PAGE, offset=offset)
        ids = got["ids"]
        out.update(i.rsplit(":", 1)[-1] for i in ids)
        if len(ids) < CHROMA_PAGE:
            return out
        offset += CHROMA_PAGE


# ------------------------------------------------------------------------------------------------ repair


class RepairReport(BaseModel):
    store: str
    before: StoreCheck
    after: StoreCheck
    rows_deleted: int = 0  # DuckDB rows of papers not in the store
    vectors_deleted: int = 0  # orphan entries deleted from Chroma (by id)
    collections_deleted: list[str] = Field(default_factory=list)  # collections of no configured column
    papers_embedded: int = 0  # papers whose missing vectors were written again
    seconds: float = 0.0


def repair_store(db: str | None = None, *, store_dir: str | Path | None = None,
                 config: IngestConfig | str | Path | None = None, embeddings=None, progress: bool = True,
                 wait_s: float | None = None) -> RepairReport:
    """``--check --repair``: make DuckDB, Chroma and BM25 agree again. Interrupted removals are finished; rows of
    papers not in the store are deleted; orphan vectors (entries without a cell, collections of no configured
    column) are deleted on the store's Chroma (its server too); papers with missing vectors are embedded again (with
    ``embeddings``, else the store's model); the keyword indexes are rebuilt. Takes the writer lock; every part of
    the store must answer first. Works on any store (PDF or QASPER): nothing is parsed again."""
    from evidex.tools.ingest.pipeline import _vector_step
    from evidex.tools.ingest.writer import delete_paper

    paths = _existing_store(db, store_dir)
    t0 = time.perf_counter()
    with _Locked(paths, wait_s) as con:
        cfg = _store_config(con, config, paths)
        if embeddings is not None:
            cfg = cfg.with_embedder(embeddings)
        _vector_step(paths, cfg, "finishing interrupted removals", lambda: finish_pending_removals(con, paths))
        before = _check(con, paths, cfg)
        rows_deleted = _delete_orphan_rows(con, delete_paper)
        deleted, dropped, stale = _vector_step(paths, cfg, "deleting orphan vectors",
                                               lambda: _delete_orphan_vectors(con, paths, cfg))
        todo = sorted(stale | {r[0] for r in con.execute(
            "SELECT CAST(paper_id AS VARCHAR) FROM evidex.files WHERE NOT dense_indexed").fetchall()})
        if todo:
            _vector_step(paths, cfg, "embedding the papers whose vectors are missing",
                         lambda: _embed_again(con, paths, cfg, todo, embeddings, progress),
                         "Start it again and run --check --repair again")
        from evidex.tools.ingest.indexer import rebuild_bm25

        rebuild_bm25(con, paths, cfg, force=True)
        _vector_step(paths, cfg, "counting the store's vectors", lambda: refresh_indexes(con, paths, cfg))
        after = _check(con, paths, cfg)
    return RepairReport(store=str(paths.root), before=before, after=after, rows_deleted=rows_deleted,
                        vectors_deleted=deleted, collections_deleted=dropped, papers_embedded=len(todo),
                        seconds=round(time.perf_counter() - t0, 3))


def _embed_again(con, paths: StorePaths, cfg: IngestConfig, paper_ids: list[str], embeddings, progress: bool) -> None:
    """Delete and write again every vector of these papers (from their rows in DuckDB), then mark them embedded."""
    from evidex.tools.ingest.indexer import DenseIndexer, make_embeddings
    from evidex.tools.progress import Progress

    indexer = DenseIndexer(paths, cfg, embeddings if embeddings is not None else make_embeddings(cfg))
    bar = Progress(len(paper_ids), desc=f"embed {paths.root.name}", unit="paper", enabled=progress and len(paper_ids) > 1)
    for pid in paper_ids:
        indexer.delete_paper(pid)
        indexer.index_paper(con, pid)
        con.execute("UPDATE evidex.files SET dense_indexed = true WHERE CAST(paper_id AS VARCHAR) = ?", [pid])
        bar.update(1)
    bar.close()


def _delete_orphan_rows(con, delete_paper) -> int:
    """Rows whose paper (or page) is not in the store, and papers with rows but no file record (or the reverse)."""
    n = 0
    for (pid,) in con.execute("SELECT CAST(paper_id AS VARCHAR) FROM metadata WHERE paper_id NOT IN "
                              "(SELECT paper_id FROM evidex.files)").fetchall():
        delete_paper(con, pid)
        n += 1
    n += con.execute("SELECT count(*) FROM evidex.files WHERE paper_id NOT IN (SELECT paper_id FROM metadata)"
                     ).fetchone()[0]
    con.execute("DELETE FROM evidex.files WHERE paper_id NOT IN (SELECT paper_id FROM metadata)")
    for name, spec in TABLES.items():
        if name == "metadata":
            continue
        where = "ref_paper_id NOT IN (SELECT paper_id FROM metadata)"
        if "ref_page_id" in spec.column_names:
            where += " OR ref_page_id NOT IN (SELECT page_id FROM pages)"
        n += con.execute(f"SELECT count(*) FROM {name} WHERE {where}").fetchone()[0]
        con.execute(f"DELETE FROM {name} WHERE {where}")
    return n


def _delete_orphan_vectors(con, paths: StorePaths, cfg: IngestConfig) -> tuple[int, list[str], set[str]]:
    """Delete, by id, the entries of the store's collections that have no cell; drop collections of no configured
    dense column. Returns (entries deleted, collections dropped, papers with cells that have no entry)."""
    from evidex.tools.ingest.indexer import cell_query
    from evidex.tools.store import entry_id

    client = chroma_client(paths)
    if client is None:
        return 0, [], set()
    names = {c.name if hasattr(c, "name") else c for c in client.list_collections()}
    embedded = {r[0] for r in con.execute(
        "SELECT CAST(paper_id AS VARCHAR) FROM evidex.files WHERE dense_indexed").fetchall()}
    deleted, stale = 0, set()
    expected = set()
    for item in cfg.index:
        if not item.dense:
            continue
        name = collection_name(item.table, item.column, cfg.embedding.model)
        expected.add(name)
        cells = con.execute(cell_query(item.table, item.column, one_paper=False)).fetchall()
        paper_of = {r[0]: r[2] for r in cells}
        have = set()
        if name in names:
            col = client.get_collection(name, embedding_function=None)
            have = _chroma_keys(col)
            orphans = sorted(have - set(paper_of))
            for s in range(0, len(orphans), CHROMA_PAGE):
                col.delete(ids=[entry_id(item.table, item.column, k) for k in orphans[s : s + CHROMA_PAGE]])
            deleted += len(orphans)
        stale |= {paper_of[k] for k in set(paper_of) - have if paper_of[k] in embedded}
    dropped = sorted(names - expected)
    for name in dropped:
        deleted += client.get_collection(name, embedding_function=None).count()
        client.delete_collection(name)
    return deleted, dropped, stale

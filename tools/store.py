"""The multiview paper store: where it lives on disk, its DuckDB schema, and connections to it.

One store = one folder ``<cache_dir>/stores/<name>/`` holding ``papers.duckdb`` (the 8 tables of
neusym.md §1.3 plus a private ``evidex`` schema for ingestion bookkeeping), ``chroma/`` (dense vectors, one
collection per encoded (table, column)) and ``bm25/`` (one bm25s index per encoded (table, column)).
Ingestion writes; every agent-facing tool opens the database read-only.
"""
from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from evidex.tools.owner import Owner, describe_pid
from evidex.tools.settings import get_settings

DB_FILE = "papers.duckdb"
# bm25s tokenisation shared by indexing and querying: single characters count (table cells, "Table 1", x_1)
BM25_TOKEN_PATTERN = r"(?u)\b\w+\b"
BM25_STOPWORDS = "en"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class StoreError(RuntimeError):
    """A store is missing, misnamed or inconsistent; the message says what to run."""


class StoreBusyError(StoreError):
    """Another process holds the store (a writer meeting a reader or another writer, or a reader meeting a writer)
    for longer than the wait allowed. The one-line message names that process (pid, host, command) and what to do;
    ``holder`` is it as an :class:`~evidex.tools.owner.Owner` when known."""

    def __init__(self, message: str, holder: Owner | None = None):
        super().__init__(message)
        self.holder = holder


# ---------------------------------------------------------------------------------------------------------
# Schema. Kept as data so the schema prompt, the index builder and the search tool share one truth.
# Boxes are [x0, y0, w, h] in PDF points (origin top-left), floored/ceiled to integers, for every table.
# Ids are uuid5(NAMESPACE_DNS, "<paper>_page_<n>_chunk_<k>" ...) exactly like NeuSym-RAG, so they are stable.
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    comment: str


@dataclass(frozen=True)
class TableSpec:
    name: str
    comment: str
    columns: tuple[Column, ...]
    primary_key: str
    has_page: bool  # rows belong to one page (ref_page_id); sections/metadata do not
    text_columns: tuple[str, ...] = field(default=())  # columns that may be encoded for search

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def _c(name: str, type_: str, comment: str) -> Column:
    return Column(name, type_, comment)


_BOX = "bounding box [x0, y0, w, h] in PDF points, origin top-left"
TABLES: dict[str, TableSpec] = {
    t.name: t
    for t in (
        TableSpec(
            "metadata",
            "one row per paper",
            (
                _c("paper_id", "UUID", "paper id: AirQA uuid5 of the normalised title and conference_year"),
                _c("title", "VARCHAR", "paper title"),
                _c("abstract", "VARCHAR", "abstract text"),
                _c("num_pages", "INTEGER", "number of pages"),
                _c("conference_full", "VARCHAR", "full venue name, e.g. Annual Meeting of the ACL"),
                _c("conference_abbreviation", "VARCHAR", "venue abbreviation, e.g. ACL"),
                _c("pub_year", "INTEGER", "publication year"),
                _c("volume", "VARCHAR", "proceedings volume"),
                _c("download_url", "VARCHAR", "where the PDF came from"),
                _c("bibtex", "VARCHAR", "BibTeX entry"),
                _c("authors", "VARCHAR[]", "author names in order"),
                _c("pdf_path", "VARCHAR", "absolute path of the ingested PDF"),
                _c("tldr", "VARCHAR", "one-sentence summary"),
                _c("tags", "VARCHAR[]", "keywords"),
                _c("conference_year", "VARCHAR", "venue+year folder used in the uuid, e.g. acl2023"),
                _c("pdf_sha256", "VARCHAR", "content hash of the PDF file"),
            ),
            "paper_id",
            False,
            ("title", "abstract", "bibtex", "tldr"),
        ),
        TableSpec(
            "pages",
            "one row per PDF page",
            (
                _c("page_id", "UUID", "page id"),
                _c("page_number", "INTEGER", "1-based page number"),
                _c("page_width", "INTEGER", "page width in PDF points"),
                _c("page_height", "INTEGER", "page height in PDF points"),
                _c("page_content", "VARCHAR", "page text in reading order"),
                _c("page_summary", "VARCHAR", "LLM summary of the page (NULL unless summaries were enabled)"),
                _c("ocr", "BOOLEAN", "true when the text came from OCR"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
            ),
            "page_id",
            True,
            ("page_content", "page_summary"),
        ),
        TableSpec(
            "images",
            "figures and pictures",
            (
                _c("image_id", "UUID", "image id"),
                _c("image_caption", "VARCHAR", "caption text, e.g. 'Figure 2: ...' (may be empty)"),
                _c("image_summary", "VARCHAR", "VLM summary of the image (NULL unless enabled)"),
                _c("bounding_box", "INTEGER[4]", _BOX),
                _c("ordinal", "INTEGER", "0-based order within the page"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
                _c("ref_page_id", "UUID", "-> pages.page_id"),
            ),
            "image_id",
            True,
            ("image_caption", "image_summary"),
        ),
        TableSpec(
            "chunks",
            "token-bounded text chunks, never crossing a page",
            (
                _c("chunk_id", "UUID", "chunk id"),
                _c("text_content", "VARCHAR", "chunk text"),
                _c("ordinal", "INTEGER", "1-based order within the page"),
                _c("token_count", "INTEGER", "number of embedding-model tokens"),
                _c("bounding_box", "INTEGER[4]", _BOX + " (union of the chunk's lines)"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
                _c("ref_page_id", "UUID", "-> pages.page_id"),
            ),
            "chunk_id",
            True,
            ("text_content",),
        ),
        TableSpec(
            "tables",
            "tables detected in the PDF",
            (
                _c("table_id", "UUID", "table id"),
                _c("table_caption", "VARCHAR", "caption text, e.g. 'Table 1: ...' (may be empty)"),
                _c("table_content", "VARCHAR", "table as HTML"),
                _c("table_markdown", "VARCHAR", "table as GitHub markdown"),
                _c("table_summary", "VARCHAR", "LLM summary of the table (NULL unless enabled)"),
                _c("bounding_box", "INTEGER[4]", _BOX),
                _c("ordinal", "INTEGER", "0-based order within the page"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
                _c("ref_page_id", "UUID", "-> pages.page_id"),
            ),
            "table_id",
            True,
            ("table_caption", "table_content", "table_markdown", "table_summary"),
        ),
        TableSpec(
            "sections",
            "sections and subsections (content includes subsections)",
            (
                _c("section_id", "UUID", "section id"),
                _c("section_title", "VARCHAR", "heading text, e.g. '3.1 Datasets'"),
                _c("section_content", "VARCHAR", "section text including its subsections"),
                _c("section_summary", "VARCHAR", "LLM summary of the section (NULL unless enabled)"),
                _c("ordinal", "INTEGER", "0-based order in the paper"),
                _c("level", "INTEGER", "nesting level, 1 = top level"),
                _c("parent_section_id", "UUID", "-> sections.section_id of the enclosing section (NULL at level 1)"),
                _c("page_numbers", "INTEGER[]", "1-based pages the section spans"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
            ),
            "section_id",
            False,
            ("section_title", "section_content", "section_summary"),
        ),
        TableSpec(
            "equations",
            "display equations (their extracted text, not LaTeX)",
            (
                _c("equation_id", "UUID", "equation id"),
                _c("equation_content", "VARCHAR", "text of the equation"),
                _c("equation_number", "VARCHAR", "printed number such as '3' or '2.1' (may be NULL)"),
                _c("bounding_box", "INTEGER[4]", _BOX),
                _c("ordinal", "INTEGER", "0-based order within the page"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
                _c("ref_page_id", "UUID", "-> pages.page_id"),
            ),
            "equation_id",
            True,
            ("equation_content",),
        ),
        TableSpec(
            "reference",
            "bibliography entries, one per cited work",
            (
                _c("reference_id", "UUID", "reference id"),
                _c("reference_content", "VARCHAR", "full text of the bibliography entry"),
                _c("ordinal", "INTEGER", "0-based order in the bibliography"),
                _c("bounding_box", "INTEGER[4]", _BOX + " (first line's column)"),
                _c("ref_paper_id", "UUID", "-> metadata.paper_id"),
                _c("ref_page_id", "UUID", "-> pages.page_id of the page where the entry starts"),
            ),
            "reference_id",
            True,
            ("reference_content",),
        ),
    )
}

BOOKKEEPING_DDL = """
CREATE SCHEMA IF NOT EXISTS evidex;
CREATE TABLE IF NOT EXISTS evidex.files (
    pdf_sha256 VARCHAR PRIMARY KEY, pdf_path VARCHAR, paper_id UUID, num_pages INTEGER,
    dense_indexed BOOLEAN, ingested_at TIMESTAMP, parse_seconds DOUBLE, warnings VARCHAR[]
);
CREATE TABLE IF NOT EXISTS evidex.info (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS evidex.pending_removals (paper_id VARCHAR PRIMARY KEY, queued_at TIMESTAMP);
"""


def schema_ddl() -> str:
    """CREATE statements (with COMMENTs, which DuckDB keeps and the schema prompt shows)."""
    out: list[str] = []
    for t in TABLES.values():
        cols = ",\n    ".join(
            f"{c.name} {c.type}{' PRIMARY KEY' if c.name == t.primary_key else ''}" for c in t.columns
        )
        out.append(f"CREATE TABLE IF NOT EXISTS {t.name} (\n    {cols}\n);")
        out.append(f"COMMENT ON TABLE {t.name} IS {_sql_str(t.comment)};")
        out.extend(f"COMMENT ON COLUMN {t.name}.{c.name} IS {_sql_str(c.comment)};" for c in t.columns)
    return "\n".join(out) + "\n" + BOOKKEEPING_DDL


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------------------------------------------------
# Ids (NeuSym-RAG scheme, §1.3)
# ---------------------------------------------------------------------------------------------------------


def row_uuid(key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, key))


# ---------------------------------------------------------------------------------------------------------
# Locations
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StorePaths:
    root: Path

    @property
    def db(self) -> Path:
        return self.root / DB_FILE

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    @property
    def bm25(self) -> Path:
        return self.root / "bm25"

    @property
    def index_manifest(self) -> Path:
        return self.root / "indexes.json"


def stores_root() -> Path:
    return get_settings().cache_dir / "stores"


def store_paths(name: str | None = None, store_dir: str | Path | None = None) -> StorePaths:
    """Resolve a store by name (under the cache) or by explicit folder (``--store-dir``)."""
    if store_dir is not None:
        return StorePaths(Path(store_dir).expanduser().resolve())
    if not name:
        raise StoreError("Give a store name (--db NAME) or a folder (--store-dir DIR).")
    if not NAME_RE.match(name):
        raise StoreError(f"Bad store name {name!r}: use letters, digits, '_', '-', '.' (max 64 chars).")
    return StorePaths(stores_root() / name)


def require_store(paths: StorePaths) -> StorePaths:
    if not paths.db.exists():
        raise StoreError(
            f"No paper store at {paths.root} (missing {DB_FILE}). Build it first: "
            f"evidex ingest PDF_OR_FOLDER --db NAME"
        )
    return paths


# ---------------------------------------------------------------------------------------------------------
# Connections. DuckDB allows one read-write process or many read-only ones per file, and inside one process
# all connections to a file must share one configuration, so read-only connections are cached per file and
# dropped (close_readonly) before ingestion writes to that file. A process that meets another one holding the
# file (a writer meeting a reader, or the reverse) waits up to ``EVIDEX_STORE_WAIT_S`` seconds, then raises
# StoreBusyError naming the other process.
# ---------------------------------------------------------------------------------------------------------

_RO_LOCK = threading.Lock()
_RO_CONNECTIONS: dict[Path, duckdb.DuckDBPyConnection] = {}
WRITER_LOCK_FILE = ".ingest.lock"  # the store's single-writer lock (the name older versions used, so they agree)
WRITER_INFO_FILE = ".writer.json"  # who holds it: pid, host, command, since
_POLL_S = 0.2
_PID_IN_LOCK_ERROR = re.compile(r"\(PID (\d+)\)")

READONLY_CONFIG = {
    "enable_external_access": False,  # no files, no network, no extension downloads
    "python_enable_replacements": False,  # FROM some_name must not read a Python variable of the caller
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "max_memory": "1GB",
    "threads": 2,
    "lock_configuration": True,  # SET / PRAGMA cannot undo the above
}


def store_wait_s(wait_s: float | None = None) -> float:
    """Seconds to wait for a store another process holds: ``wait_s``, else ``EVIDEX_STORE_WAIT_S`` (default 10)."""
    return float(get_settings().store_wait_s if wait_s is None else wait_s)


def _is_lock_conflict(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, duckdb.IOException) and ("Could not set lock" in text or "Conflicting lock" in text)


def _read_writer(root: Path) -> Owner | None:
    try:
        return Owner.model_validate_json((root / WRITER_INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _holder_of(db_path: Path, exc: BaseException) -> tuple[str, Owner | None]:
    """Who holds ``db_path``, from DuckDB's lock error (it names the pid) and the store's writer record."""
    writer = _read_writer(db_path.parent)
    found = _PID_IN_LOCK_ERROR.search(str(exc))
    if found:
        pid = int(found.group(1))
        if writer is not None and writer.pid == pid and writer.on_this_host:
            return writer.describe(), writer
        return describe_pid(pid), None
    return (writer.describe(), writer) if writer is not None else ("another process", None)


def _connect_waiting(db_path: Path, read_only: bool, wait_s: float | None, config: dict | None = None):
    """``duckdb.connect``, retried while another process holds the file, up to the wait; then StoreBusyError."""
    wait = store_wait_s(wait_s)
    deadline = time.monotonic() + wait
    while True:
        try:
            return duckdb.connect(str(db_path), read_only=read_only, config=dict(config or {}))
        except duckdb.Error as exc:
            if not _is_lock_conflict(exc):
                raise
            if time.monotonic() >= deadline:
                who, holder = _holder_of(db_path, exc)
                waited = f"waited {wait:g} s; " if wait else ""
                if read_only:
                    msg = (f"the paper store {db_path.parent} is being written by {who}; {waited}let it finish (or stop "
                           "it) and run again, or wait longer with EVIDEX_STORE_WAIT_S=SECONDS")
                else:
                    msg = (f"the paper store {db_path.parent} is open in {who}, so it cannot be written now; "
                           f"{waited}stop that process or let it finish, then run again (EVIDEX_STORE_WAIT_S=SECONDS "
                           "waits longer)")
                raise StoreBusyError(msg, holder) from None
            time.sleep(_POLL_S)


def connect_readonly(db_path: Path, wait_s: float | None = None) -> duckdb.DuckDBPyConnection:
    """A shared, locked-down, read-only connection; use ``.cursor()`` per query for thread safety. A store another
    process is writing is waited for (``wait_s``, default ``EVIDEX_STORE_WAIT_S``), then StoreBusyError."""
    db_path = Path(db_path).resolve()
    with _RO_LOCK:
        con = _RO_CONNECTIONS.get(db_path)
        if con is None:
            if not db_path.exists():
                raise StoreError(f"Database file {db_path} does not exist. Run evidex ingest first.")
            try:
                con = _connect_waiting(db_path, True, wait_s, READONLY_CONFIG)
            except StoreBusyError:
                raise
            except duckdb.Error as exc:
                raise StoreError(f"Cannot open {db_path} read-only: {exc}") from exc
            _RO_CONNECTIONS[db_path] = con
        return con


def connect_readonly_private(db_path: Path, wait_s: float | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection of its own (not shared; the caller closes it), for checks that must not keep the file
    open afterwards. Waits for a writer as :func:`connect_readonly` does."""
    db_path = Path(db_path).resolve()
    close_readonly(db_path)
    try:
        return _connect_waiting(db_path, True, wait_s)
    except StoreBusyError:
        raise
    except duckdb.Error as exc:
        raise StoreError(f"Cannot open {db_path} read-only: {exc}") from exc


def close_readonly(db_path: Path | None = None) -> None:
    """Close cached read-only connections (all, or those of one file) so a writer can open the file."""
    with _RO_LOCK:
        keys = list(_RO_CONNECTIONS) if db_path is None else [Path(db_path).resolve()]
        for key in keys:
            con = _RO_CONNECTIONS.pop(key, None)
            if con is not None:
                con.close()


def connect_writable(db_path: Path, wait_s: float | None = None) -> duckdb.DuckDBPyConnection:
    """The store's read-write connection (schema created when missing). Take :func:`writer_lock` first: it keeps
    other writers out; this waits for readers (``wait_s``), then raises StoreBusyError naming one."""
    db_path = Path(db_path)
    close_readonly(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    con = _connect_waiting(db_path, False, wait_s)
    con.execute(schema_ddl())
    return con


# The single-writer lock. A file lock (fcntl: released by the kernel when the holder dies, so a killed writer leaves
# no stale lock) on <store>/.ingest.lock, plus <store>/.writer.json saying who holds it. Reentrant inside a process:
# ingestion called while the caller already holds the lock (a web upload, --sync) goes through.
_WRITER_GUARD = threading.Lock()
_WRITERS: dict[Path, tuple[threading.RLock, list]] = {}  # root -> (thread lock, [file lock, depth])


@contextmanager
def writer_lock(store_dir: str | Path, wait_s: float | None = None) -> Iterator[Owner]:
    """Hold the single-writer lock of the store at ``store_dir`` (a folder, or a ``StorePaths``) while writing it.

    Another process (or thread) writing the store is waited for up to ``wait_s`` seconds (default
    ``EVIDEX_STORE_WAIT_S``, 10), then :class:`StoreBusyError` says who holds it and what to do. Yields the
    :class:`~evidex.tools.owner.Owner` recorded for this holder. Every write to a store (ingest, ``--remove``,
    ``--sync``, ``--check --repair``, web uploads) goes through it."""
    from filelock import FileLock, Timeout

    root = _store_root(store_dir)
    root.mkdir(parents=True, exist_ok=True)
    wait = store_wait_s(wait_s)
    with _WRITER_GUARD:
        guard, state = _WRITERS.setdefault(root, (threading.RLock(), [None, 0]))
    if not guard.acquire(timeout=wait):
        raise StoreBusyError(f"the paper store {root} is being written by another thread of this process; wait for "
                             "it to finish, then try again")
    try:
        if state[1] == 0:
            lock = FileLock(str(root / WRITER_LOCK_FILE))
            try:
                lock.acquire(timeout=wait, poll_interval=_POLL_S)
            except Timeout:
                holder = _read_writer(root)
                who = holder.describe() if holder is not None else "another process (one that does not say which)"
                raise StoreBusyError(f"the paper store {root} is being written by {who}; waited {wait:g} s. Let it "
                                     "finish (or stop it) and run again; EVIDEX_STORE_WAIT_S=SECONDS waits longer",
                                     holder) from None
            me = Owner.current()
            tmp = root / (WRITER_INFO_FILE + ".tmp")
            tmp.write_text(me.model_dump_json(), encoding="utf-8")
            tmp.replace(root / WRITER_INFO_FILE)
            state[0] = (lock, me)
        state[1] += 1
        try:
            yield state[0][1]
        finally:
            state[1] -= 1
            if state[1] == 0:
                lock, _ = state[0]
                state[0] = None
                try:
                    (root / WRITER_INFO_FILE).unlink(missing_ok=True)
                finally:
                    lock.release()
    finally:
        guard.release()


def _store_root(store_dir) -> Path:
    return (store_dir.root if isinstance(store_dir, StorePaths) else Path(store_dir)).expanduser().resolve()


def store_writer(store_dir: str | Path) -> Owner | None:
    """The process writing the store now (its recorded owner), or None when no live process holds the lock."""
    owner = _read_writer(_store_root(store_dir))
    if owner is None or owner.alive() is False:
        return None
    return owner


# ---------------------------------------------------------------------------------------------------------
# Index manifest: which (table, column) pairs are searchable and how. Written by ingestion, read by search
# and the schema prompt, so neither has to import the ingestion package.
# ---------------------------------------------------------------------------------------------------------


def read_index_manifest(paths: StorePaths) -> dict:
    if not paths.index_manifest.exists():
        return {"embedding_model": None, "pairs": []}
    return json.loads(paths.index_manifest.read_text())


def write_index_manifest(paths: StorePaths, manifest: dict) -> None:
    tmp = paths.index_manifest.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    tmp.replace(paths.index_manifest)


def collection_name(table: str, column: str, model_name: str) -> str:
    """Chroma collection of one (table, column) under one embedding model; Chroma allows [a-zA-Z0-9._-]."""
    slug = re.sub(r"[^a-z0-9]+", "_", model_name.lower()).strip("_")[-40:]
    return f"{table}__{column}__{slug}"


def entry_id(table: str, column: str, primary_key: str) -> str:
    return f"{table}:{column}:{primary_key}"


def fetch_cells(
    con: duckdb.DuckDBPyConnection, table: str, column: str, keys: list[str]
) -> dict[str, object]:
    """Map primary key -> cell value for one (table, column); names are checked against the schema."""
    spec = TABLES.get(table)
    if spec is None or column not in spec.column_names:
        raise StoreError(f"Unknown cell {table}.{column}.")
    if not keys:
        return {}
    cur = con.cursor()
    pk_type = next(c.type for c in spec.columns if c.name == spec.primary_key)
    if pk_type == "UUID":
        keys = [k for k in keys if _is_uuid(k)]
        if not keys:
            return {}
        # compare as UUIDs so DuckDB looks the keys up in the primary-key index: casting every stored key to text
        # scanned the whole table (52 ms vs 1.2 ms for 10 keys among 200,000 chunks)
        where = f"{spec.primary_key} IN (SELECT unnest(?::UUID[]))"
    else:
        where = f"CAST({spec.primary_key} AS VARCHAR) IN (SELECT unnest(?::VARCHAR[]))"
    rows = cur.execute(
        f"SELECT CAST({spec.primary_key} AS VARCHAR), {column} FROM {table} WHERE {where}", [list(keys)]
    ).fetchall()
    return {k: v for k, v in rows}


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(str(text))
    except ValueError:
        return False
    return True

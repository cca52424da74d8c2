"""Encodable cells -> Chroma (dense, per paper, incremental) and bm25s (keyword, rebuilt over the store).

Every entry carries (table_name, column_name, primary_key, pdf_id, page_number) and, when the row has one,
its box, so a hit maps back to exactly one DuckDB cell. Texts are not duplicated into the indexes; search
re-reads the cell from DuckDB. bm25s indexes cannot be updated in place, so they are rebuilt after each
ingestion run that changed the store (a few seconds for thousands of papers' cells).
"""
from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

import duckdb
import numpy as np

from evidex.tools.bm25_index import write_entries
from evidex.tools.ingest.config import IngestConfig
from evidex.tools.quiet import quiet_bm25s
from evidex.tools.store import (
    BM25_STOPWORDS,
    BM25_TOKEN_PATTERN,
    TABLES,
    StorePaths,
    collection_name,
    entry_id,
    write_index_manifest,
)

log = logging.getLogger(__name__)


def cell_query(table: str, column: str, one_paper: bool, heading: bool = False) -> str:
    """SELECT pk, text, pdf_id, page_number, bbox for the non-empty cells of one (table, column); with ``heading``
    (chunks only) the text is '<section title>: <text>', the title of the deepest section whose pages hold the
    chunk's page (``IndexedColumn.heading``): the text to index, not the text to store."""
    spec = TABLES[table]
    pk = spec.primary_key
    join = ""
    if table == "metadata":
        pdf, page = "t.paper_id", "-1"
    elif table == "pages":
        pdf, page = "t.ref_paper_id", "t.page_number"
    elif table == "sections":
        pdf, page = "t.ref_paper_id", "coalesce(t.page_numbers[1], -1)"  # the page the section starts on
    else:
        pdf, page = "t.ref_paper_id", "p.page_number"
        join = "JOIN pages p ON p.page_id = t.ref_page_id"
    bbox = "t.bounding_box" if "bounding_box" in spec.column_names else "NULL"
    where = f"t.{column} IS NOT NULL AND length(trim(t.{column})) > 0 AND t.{column} <> 'None'"
    if one_paper:
        where += f" AND {pdf} = ?"
    text = f"t.{column}"
    if heading:
        if table != "chunks":
            raise ValueError(f"heading applies to chunks only, not {table}.{column}")
        title = ("(SELECT s.section_title FROM sections s WHERE s.ref_paper_id = t.ref_paper_id "
                 "AND list_contains(s.page_numbers, p.page_number) AND length(trim(s.section_title)) > 0 "
                 "ORDER BY s.level DESC, s.ordinal DESC LIMIT 1)")
        text = f"coalesce(trim({title}) || ': ', '') || t.{column}"
    return (
        f"SELECT CAST(t.{pk} AS VARCHAR), {text}, CAST({pdf} AS VARCHAR), {page}, {bbox} "
        f"FROM {table} t {join} WHERE {where} ORDER BY 1"
    )


def entry_metadata(table: str, column: str, pk: str, pdf_id: str, page: int, bbox, store_uid: str | None = None) -> dict:
    meta = {
        "table_name": table,
        "column_name": column,
        "primary_key": pk,
        "pdf_id": pdf_id,
        "page_number": int(page) if page is not None else -1,
    }
    if store_uid:  # whose vector this is: one of another store's life is an orphan (vectorstore.sweep_foreign_vectors)
        meta["store_uid"] = store_uid
    if bbox is not None:  # Chroma metadata must be scalars: the box is stored as bbox_0..bbox_3
        for i, v in enumerate(bbox):
            meta[f"bbox_{i}"] = int(v)
    return meta


def make_embeddings(config: IngestConfig, threads: int | None = None):
    """The ingestion embedder of a config (own object, so batch_size stays local; weights are shared); ``threads``
    (else ``embedding.threads``) bounds the ONNX backend's threads, as workers bound torch's."""
    from evidex.tools.embeddings import LocalEmbeddings

    e = config.embedding
    return LocalEmbeddings(e.model, batch_size=e.batch_size, precision=e.precision, backend=e.backend,
                           threads=threads or e.threads)


class DenseIndexer:
    def __init__(self, paths: StorePaths, config: IngestConfig, embeddings):
        from evidex.tools.vectorstore import chroma_client

        self.paths = paths
        self.config = config
        self.embeddings = embeddings
        self.columns = [c for c in config.index if c.dense]
        self.pairs = [(c.table, c.column) for c in self.columns]
        self.client = chroma_client(paths.root, config.vector)  # embedded <store>/chroma, or the Chroma server
        self._collections: dict[tuple[str, str], object] = {}
        self.dimension: int | None = None

    def collection(self, table: str, column: str):
        key = (table, column)
        if key not in self._collections:
            # embedding_function=None: we embed ourselves (Chroma's default EF downloads a model at first use)
            self._collections[key] = self.client.get_or_create_collection(
                collection_name(table, column, self.config.embedding.model),
                embedding_function=None,
                metadata={"hnsw:space": "cosine", "table_name": table, "column_name": column},
            )
        return self._collections[key]

    def delete_paper(self, paper_id: str) -> None:
        for table, column in self.pairs:
            self.collection(table, column).delete(where={"pdf_id": paper_id})

    def index_paper(self, con: duckdb.DuckDBPyConnection, paper_id: str) -> int:
        """Embed and upsert every dense cell of one paper; returns the number of vectors written."""
        return self.index_papers(con, [paper_id])

    def index_papers(self, con: duckdb.DuckDBPyConnection, paper_ids: list[str]) -> int:
        """Embed and upsert every dense cell of several papers with one encode call (length-sorted batches across
        papers pad less than one call per paper); returns the number of vectors written."""
        batches: list[tuple[tuple[str, str], list]] = []
        texts: list[str] = []
        for c in self.columns:
            query = cell_query(c.table, c.column, one_paper=True, heading=c.heading)
            rows = [r for pid in paper_ids for r in con.execute(query, [pid]).fetchall()]
            if rows:
                batches.append(((c.table, c.column), rows))
                texts.extend(str(r[1]) for r in rows)
        if not texts:
            return 0
        uid = store_uid(con)
        vectors = np.asarray(self.embeddings.encode(texts), dtype=np.float32)  # one call: length-sorted batches
        self.dimension = int(vectors.shape[1])
        offset = 0
        max_batch = max(1, int(self.client.get_max_batch_size()))
        for (table, column), rows in batches:
            vecs = vectors[offset : offset + len(rows)]
            offset += len(rows)
            col = self.collection(table, column)
            ids = [entry_id(table, column, r[0]) for r in rows]
            metas = [entry_metadata(table, column, r[0], r[2], r[3], r[4], uid) for r in rows]
            for s in range(0, len(ids), max_batch):
                col.upsert(ids=ids[s : s + max_batch], embeddings=vecs[s : s + max_batch], metadatas=metas[s : s + max_batch])
        return len(texts)

    def counts(self) -> dict[str, int]:
        return {f"{t}.{c}": self.collection(t, c).count() for t, c in self.pairs}


def store_uid(con: duckdb.DuckDBPyConnection) -> str | None:
    """The store's uid (evidex.info ``store_uid``; stores made before uids have none)."""
    row = con.execute("SELECT value FROM evidex.info WHERE key = 'store_uid'").fetchone()
    return row[0] if row else None


def bm25_state(con: duckdb.DuckDBPyConnection, config: IngestConfig) -> str:
    shas = [r[0] for r in con.execute("SELECT pdf_sha256 FROM evidex.files ORDER BY 1").fetchall()]
    pairs = sorted(c.signature() for c in config.index if c.bm25)
    return hashlib.sha256(json.dumps([shas, pairs, BM25_STOPWORDS, BM25_TOKEN_PATTERN]).encode()).hexdigest()[:16]


def rebuild_bm25(con: duckdb.DuckDBPyConnection, paths: StorePaths, config: IngestConfig, force: bool = False) -> dict[str, int]:
    """Rebuild every bm25 index if the store changed since the last build. Returns entries per pair."""
    bm25s = quiet_bm25s()

    state = bm25_state(con, config)
    meta_file = paths.bm25 / "state.json"
    if not force and meta_file.exists():
        old = json.loads(meta_file.read_text())
        if old.get("state") == state:
            return old.get("counts", {})
    tmp = paths.root / "bm25.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    counts: dict[str, int] = {}
    for item in config.index:
        if not item.bm25:
            continue
        rows = con.execute(cell_query(item.table, item.column, one_paper=False, heading=item.heading)).fetchall()
        key = f"{item.table}.{item.column}"
        counts[key] = len(rows)
        if not rows:
            continue
        folder = tmp / key
        tokens = bm25s.tokenize(
            [str(r[1]) for r in rows], token_pattern=BM25_TOKEN_PATTERN, stopwords=BM25_STOPWORDS, show_progress=False
        )
        if not tokens.vocab:  # nothing but stopwords/punctuation in every cell: no index for this column
            counts[key] = 0
            continue
        model = bm25s.BM25()
        model.index(tokens, show_progress=False)
        model.save(str(folder), show_progress=False)
        keys, pdfs = [r[0] for r in rows], [r[2] for r in rows]
        pages = [int(r[3]) if r[3] is not None else -1 for r in rows]
        boxes = [list(r[4]) if r[4] is not None else None for r in rows]
        write_entries(folder, keys, pdfs, pages, boxes)
        # the JSON form too, for search code of earlier versions (and benchmarks.scale --baseline)
        (folder / "entries.json").write_text(json.dumps({"primary_key": keys, "pdf_id": pdfs, "page_number": pages,
                                                         "bbox": boxes}))
    (tmp / "state.json").write_text(json.dumps({"state": state, "counts": counts}))
    # swap in the new indexes only when all are written: a crash leaves the previous set intact
    old = paths.root / "bm25.old"
    shutil.rmtree(old, ignore_errors=True)
    if paths.bm25.exists():
        paths.bm25.rename(old)
    tmp.rename(paths.bm25)
    shutil.rmtree(old, ignore_errors=True)
    return counts


def write_manifest(paths: StorePaths, config: IngestConfig, dense_counts: dict[str, int], bm25_counts: dict[str, int], dimension: int | None) -> None:
    pairs = []
    for item in config.index:
        key = f"{item.table}.{item.column}"
        pairs.append(
            {
                "table": item.table,
                "column": item.column,
                "dense": item.dense,
                "bm25": item.bm25,
                "collection": collection_name(item.table, item.column, config.embedding.model) if item.dense else None,
                "dense_entries": dense_counts.get(key, 0) if item.dense else 0,
                "bm25_entries": bm25_counts.get(key, 0) if item.bm25 else 0,
            }
        )
    backend = config.embedding.backend
    if backend != "torch":
        from evidex.tools.embeddings import resolve_backend

        backend = resolve_backend(config.embedding.model, backend)  # what the vectors were made with
    write_index_manifest(
        paths,
        {"embedding_model": config.embedding.model, "embedding_backend": backend, "dimension": dimension, "bm25_stopwords": BM25_STOPWORDS, "bm25_token_pattern": BM25_TOKEN_PATTERN, "pairs": pairs},
    )


def wipe_dense(paths: StorePaths) -> None:
    from evidex.tools.vectorstore import wipe_vectors

    wipe_vectors(paths.root)


def remove_store(paths: StorePaths) -> None:
    """Delete the store: its vectors first (a server's collections of this store too; a server that does not answer
    raises before any local file is touched, so no vector is left behind on it), then its files."""
    from evidex.tools.vectorstore import VECTOR_FILE

    wipe_dense(paths)
    (paths.root / VECTOR_FILE).unlink(missing_ok=True)
    for p in (paths.db, Path(str(paths.db) + ".wal"), paths.index_manifest):
        if p.exists():
            p.unlink()
    for d in (paths.chroma, paths.bm25, paths.root / "bm25.tmp", paths.root / "bm25.old"):
        shutil.rmtree(d, ignore_errors=True)

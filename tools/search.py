"""Search one encoded (table, column) of a paper store: dense (Chroma), keyword (bm25s) or hybrid (RRF).

    python -m evidex.tools.search --db NAME --table chunks --column text_content --query "rotary embeddings" \
        --filter "page_number <= 3" --mode hybrid --limit 5

Filters use the Milvus-style grammar of ``tools.filters``. The part of a filter that Chroma can express
becomes a ``where`` clause; whatever it cannot (arithmetic on boxes, ``like``, array functions) is checked in
Python on an over-fetched candidate list, and BM25 applies the whole filter as a document mask.
Each hit names its cell (table, column, primary key) and carries pdf_id, page number, box and the cell text.

A hybrid search that loses one of its parts (the Chroma server does not answer, the embedder cannot encode, the
keyword index cannot be read) answers with the other part and says so: the result carries ``unavailable`` (which
part, and why), its text starts with the warning, a warning is logged once per store and cause, and every search
made inside :func:`search_degradations` is collected there (the runner flags the item; docs/paper-store.md).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from evidex.tools.bm25_index import ENTRIES_FILE, LEGACY_ENTRIES_FILE, BM25Index, query_tokens
from evidex.tools.degraded import Unavailable, record_degraded
from evidex.tools.filters import Filter, FilterSyntaxError, parse_filter
from evidex.tools.kb_index import rrf_fuse
from evidex.tools.store import (
    StoreError,
    StorePaths,
    connect_readonly,
    entry_id,
    fetch_cells,
    read_index_manifest,
    require_store,
    store_paths,
)

SearchMode = Literal["dense", "bm25", "hybrid"]
MAX_TEXT_CHARS = 2000  # per hit, in tool output
QUERY_VECTORS = 256  # query embeddings kept per engine
MAX_ENGINES = 8  # stores kept open per process
MAX_SCOPED_VECTORS = 5000  # a paper-scoped dense search reads at most this many vectors itself


class SearchError(ValueError):
    """The search request cannot run as given (unknown column, mode not indexed, ...)."""


MAX_HITS = 50  # most hits one search returns


class SearchArgs(BaseModel):
    query: str = Field(..., min_length=1, max_length=2000, description="what to look for (natural language or keywords)")
    table: str = Field(..., description="table of the searchable column, e.g. chunks")
    column: str = Field(..., description="searchable column, e.g. text_content")
    filter: str | None = Field(
        None,
        max_length=2000,
        description="optional Milvus-style condition on pdf_id, page_number, primary_key, table_name, column_name, "
        "bbox, e.g. \"pdf_id == '<uuid>' and page_number <= 3\"",
    )
    mode: SearchMode = Field("hybrid", description="dense (embeddings), bm25 (keywords) or hybrid (both, RRF-fused)")
    limit: int = Field(5, ge=1, le=MAX_HITS, description="number of hits")


class SearchHit(BaseModel):
    score: float
    table_name: str
    column_name: str
    primary_key: str
    pdf_id: str
    page_number: int
    bbox: list[int] | None = None
    text: str
    dense_rank: int | None = None
    bm25_rank: int | None = None


class SearchResult(BaseModel):
    mode: SearchMode
    hits: list[SearchHit]
    note: str | None = None
    seconds: float = 0.0
    unavailable: list[Unavailable] = Field(default_factory=list, description="parts of a hybrid search that could "
                                           "not run: the hits come from the other part only")

    @property
    def degraded(self) -> str | None:
        """Which part of the search was missing and why, in one line; None when the search was whole."""
        return "; ".join(u.text() for u in self.unavailable) or None

    def to_text(self) -> str:
        """Agent-facing observation: one JSON object per line, most relevant first; a degraded search says so first."""
        warning = "".join(f"[Warning]: {u.text()}; these results come from the other part only.\n"
                          for u in self.unavailable)
        if not self.hits:
            return warning + "[Warning]: no matching records found for this query and filter." + (f" ({self.note})" if self.note else "")
        head = warning + f"{len(self.hits)} results ({self.mode}), most relevant first" + (f"; {self.note}" if self.note else "") + ":"
        lines = []
        for h in self.hits:
            d = h.model_dump(exclude={"dense_rank", "bm25_rank"}, exclude_none=True)
            d["score"] = round(h.score, 4)
            if len(d["text"]) > MAX_TEXT_CHARS:
                d["text"] = d["text"][:MAX_TEXT_CHARS] + " ..."
            lines.append(json.dumps(d, ensure_ascii=False))
        return head + "\n" + "\n".join(lines)


def _why(exc: BaseException, paths: StorePaths) -> str:
    """One line on why a part of the search failed; a Chroma server that does not answer is named as such (the same
    words whatever error the client raised, so the warning is logged once)."""
    from evidex.tools.vectorstore import VectorStoreError, read_vector_config, server_answers

    try:
        vector = read_vector_config(paths.root)
    except VectorStoreError as bad:
        return str(bad).splitlines()[0]
    if vector.mode != "embedded" and not server_answers(vector, timeout_s=2.0):
        return f"the Chroma server at {vector.where()} does not answer"
    first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + first if first else ''}"


_REGISTERED_EMBEDDINGS: dict[str, object] = {}


def register_embeddings(model_name: str, embeddings) -> None:
    """Encode queries of stores embedded with ``model_name`` with ``embeddings`` (an object with ``encode`` or
    ``embed_query``): an app that ingested with its own embedding model (``ingest(embeddings=...)``) searches with it
    too, wherever the store is opened. Without it such a store's dense search is unavailable (and says so)."""
    _REGISTERED_EMBEDDINGS[model_name] = embeddings


_THREADS_LOCK = threading.Lock()


@contextlib.contextmanager
def _torch_threads(n: int):
    """Encode one short query on one thread: intra-op parallelism buys nothing for a single query, and on a
    busy machine 2 spinning threads made it 30x slower (~500 ms vs ~16 ms measured)."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with _THREADS_LOCK:
        old = torch.get_num_threads()
        if old != n:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if old != n:
                torch.set_num_threads(old)


def _meta_to_record(meta: dict) -> dict:
    bbox = [meta[f"bbox_{i}"] for i in range(4)] if "bbox_0" in meta else None
    return {
        "pdf_id": meta.get("pdf_id"),
        "page_number": meta.get("page_number"),
        "table_name": meta.get("table_name"),
        "column_name": meta.get("column_name"),
        "primary_key": meta.get("primary_key"),
        "bbox": bbox,
    }


class SearchEngine:
    """Open indexes of one store. Cheap to query repeatedly; get one with :func:`get_engine`."""

    def __init__(self, paths: StorePaths, embeddings=None):
        self.paths = require_store(paths)
        self.manifest = read_index_manifest(paths)
        if not self.manifest.get("pairs"):
            raise StoreError(f"The store at {paths.root} has no search indexes; re-run evidex ingest on it.")
        self.pairs = {(p["table"], p["column"]): p for p in self.manifest["pairs"]}
        self._embeddings = embeddings
        self._client = None
        self._collections: dict[tuple[str, str], object] = {}
        self._bm25_pairs: dict[tuple[str, str], BM25Index] = {}
        self._lock = threading.Lock()
        self._query_vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    # -- resources -------------------------------------------------------------------------------------
    @property
    def embeddings(self):
        if self._embeddings is None:
            from evidex.tools.embeddings import get_embeddings

            registered = _REGISTERED_EMBEDDINGS.get(self.manifest["embedding_model"])
            # the backend the store was embedded with (stores made before backends: torch)
            self._embeddings = registered or get_embeddings(self.manifest["embedding_model"],
                                                            backend=self.manifest.get("embedding_backend") or "torch")
        return self._embeddings

    def _collection(self, table: str, column: str):
        key = (table, column)
        with self._lock:
            if key not in self._collections:
                if self._client is None:
                    from evidex.tools.vectorstore import chroma_client

                    self._client = chroma_client(self.paths.root)  # embedded, or the server ingestion used
                self._collections[key] = self._client.get_collection(self.pairs[key]["collection"], embedding_function=None)
            return self._collections[key]

    def _bm25_pair(self, table: str, column: str) -> BM25Index | None:
        key = (table, column)
        with self._lock:
            if key not in self._bm25_pairs:
                folder = self.paths.bm25 / f"{table}.{column}"
                if not ((folder / ENTRIES_FILE).exists() or (folder / LEGACY_ENTRIES_FILE).exists()):
                    return None
                self._bm25_pairs[key] = BM25Index(folder)
            return self._bm25_pairs[key]

    def _query_vector(self, query: str) -> np.ndarray:
        """The query's embedding; the last QUERY_VECTORS queries are kept (hybrid and dense of one question)."""
        with self._lock:
            vec = self._query_vectors.get(query)
            if vec is not None:
                self._query_vectors.move_to_end(query)
                return vec
        from evidex.tools.embeddings import encode_query

        with _torch_threads(1):
            vec = np.asarray(encode_query(self.embeddings, query), dtype=np.float32)
        with self._lock:
            self._query_vectors[query] = vec
            while len(self._query_vectors) > QUERY_VECTORS:
                self._query_vectors.popitem(last=False)
        return vec

    def searchable(self) -> list[dict]:
        return list(self.manifest["pairs"])

    # -- search ----------------------------------------------------------------------------------------
    def search(self, args: SearchArgs) -> SearchResult:
        t0 = time.perf_counter()
        key = (args.table, args.column)
        pair = self.pairs.get(key)
        if pair is None:
            allowed = ", ".join(f"{t}.{c}" for t, c in self.pairs)
            raise SearchError(f"{args.table}.{args.column} is not searchable. Searchable columns: {allowed}.")
        flt = parse_filter(args.filter)
        mode, note = self._effective_mode(args.mode, pair)
        depth = max(args.limit * 4, 20)
        dense: list[tuple[str, float, dict]] = []
        sparse: list[tuple[str, float, dict]] = []
        unavailable: list[Unavailable] = []
        name = f"{args.table}.{args.column}"
        for part in ("dense", "bm25"):
            if mode not in (part, "hybrid"):
                continue
            k = args.limit if mode == part else depth
            try:
                if part == "dense":
                    dense = self._dense(args, flt, k)
                else:
                    sparse = self._bm25(args, flt, k)
            except (SearchError, FilterSyntaxError):
                raise
            except Exception as exc:  # noqa: BLE001 - reported: the result, the log and the run say it
                why = _why(exc, self.paths)
                if part == "dense":
                    self._reset_dense()  # the next search connects again (the server may be back)
                if mode == part:  # nothing else to answer with
                    other = "bm25" if part == "dense" else "dense"
                    raise SearchError(f"{part} search of {name} is unavailable: {why}. Use mode {other} or "
                                      "hybrid.") from None
                item = Unavailable(part=part, store=str(self.paths.root), pair=name, reason=why)
                unavailable.append(item)
                record_degraded(item, exc)
        if mode == "hybrid" and unavailable:
            mode = "bm25" if unavailable[0].part == "dense" else "dense"
        if mode == "hybrid":
            fused = rrf_fuse([[k for k, _, _ in dense], [k for k, _, _ in sparse]])
            recs = {k: r for k, _, r in dense + sparse}
            d_rank = {k: i for i, (k, _, _) in enumerate(dense, 1)}
            s_rank = {k: i for i, (k, _, _) in enumerate(sparse, 1)}
            order = sorted(fused, key=lambda k: (-fused[k], k))[: args.limit]
            ranked = [(k, fused[k], recs[k], d_rank.get(k), s_rank.get(k)) for k in order]
        elif mode == "dense":
            ranked = [(k, s, r, i, None) for i, (k, s, r) in enumerate(dense[: args.limit], 1)]
        else:
            ranked = [(k, s, r, None, i) for i, (k, s, r) in enumerate(sparse[: args.limit], 1)]
        con = connect_readonly(self.paths.db)
        texts = fetch_cells(con, args.table, args.column, [k for k, *_ in ranked])
        hits = [
            SearchHit(
                score=float(score),
                table_name=args.table,
                column_name=args.column,
                primary_key=k,
                pdf_id=str(rec["pdf_id"]),
                page_number=int(rec["page_number"]),
                bbox=rec.get("bbox"),
                text=str(texts.get(k, "")),
                dense_rank=dr,
                bm25_rank=br,
            )
            for k, score, rec, dr, br in ranked
            if k in texts
        ]
        return SearchResult(mode=mode, hits=hits, note=note, seconds=round(time.perf_counter() - t0, 4),
                            unavailable=unavailable)

    def _reset_dense(self) -> None:
        with self._lock:
            self._client = None
            self._collections.clear()

    @staticmethod
    def _effective_mode(mode: SearchMode, pair: dict) -> tuple[SearchMode, str | None]:
        has_dense = pair["dense"] and pair.get("dense_entries", 0) > 0
        has_bm25 = pair["bm25"] and pair.get("bm25_entries", 0) > 0
        name = f"{pair['table']}.{pair['column']}"
        if mode == "dense" and not has_dense:
            raise SearchError(f"{name} has no dense index (config: dense: false or no cells); use mode bm25.")
        if mode == "bm25" and not has_bm25:
            raise SearchError(f"{name} has no BM25 index (config: bm25: false or no cells); use mode dense.")
        if mode == "hybrid" and not (has_dense and has_bm25):
            if has_dense:
                return "dense", f"{name} has no BM25 index, used dense only"
            if has_bm25:
                return "bm25", f"{name} has no dense index, used BM25 only"
            return "bm25", f"{name} is empty"
        return mode, None

    def _dense(self, args: SearchArgs, flt: Filter | None, k: int) -> list[tuple[str, float, dict]]:
        col = self._collection(args.table, args.column)
        # the manifest's count (the engine is reopened when ingestion rewrites it): Chroma's count() is a scan,
        # 2 ms at 13,500 entries and growing with the store
        total = int(self.pairs[(args.table, args.column)].get("dense_entries") or 0)
        if total == 0:
            return []
        where, exact = flt.chroma_where() if flt is not None else (None, True)
        vec = self._query_vector(args.query)
        if flt is not None and flt.field_values("pdf_id") is not None:
            scoped = self._dense_in_papers(args, flt, col, vec, k)
            if scoped is not None:
                return scoped
        fetch = k if exact else min(total, max(k * 10, 100))
        while True:
            res = col.query(
                query_embeddings=[vec], n_results=max(1, min(fetch, total)), where=where, include=["metadatas", "distances"]
            )
            out = []
            for cid, meta, dist in zip(res["ids"][0], res["metadatas"][0], res["distances"][0]):
                rec = _meta_to_record(meta)
                if exact or flt.matches(rec):
                    out.append((rec["primary_key"], 1.0 - float(dist), rec))
            if exact or len(out) >= k or fetch >= total:
                return out[:k]
            fetch = min(total, fetch * 4)

    def _dense_in_papers(self, args: SearchArgs, flt: Filter, col, vec: np.ndarray, k: int):
        """Exact cosine over the chunks of the papers a filter names: their ids come from the keyword index's paper
        map, their vectors from Chroma by id. Chroma's own filtered query scans its metadata (60 ms vs 8 ms for one
        QASPER paper among 13,500 chunks, growing with the store). None when there is no keyword index for the
        column or the papers hold too many entries (then Chroma filters)."""
        index = self._bm25_pair(args.table, args.column)
        if index is None:
            return None
        docs = index.candidates(flt, args.table, args.column)  # the whole filter, evaluated on those papers
        if len(docs) > MAX_SCOPED_VECTORS:
            return None
        if len(docs) == 0:
            return []
        ids = [entry_id(args.table, args.column, str(key)) for key in index.keys[docs]]
        got = col.get(ids=ids, include=["embeddings", "metadatas"])
        if not got["ids"]:
            return []
        scores = np.asarray(got["embeddings"], dtype=np.float32) @ vec
        recs = [_meta_to_record(m) for m in got["metadatas"]]
        order = sorted(range(len(recs)), key=lambda i: (-float(scores[i]), recs[i]["primary_key"]))[:k]
        return [(recs[i]["primary_key"], float(scores[i]), recs[i]) for i in order]

    def _bm25(self, args: SearchArgs, flt: Filter | None, k: int) -> list[tuple[str, float, dict]]:
        index = self._bm25_pair(args.table, args.column)
        if index is None or index.n == 0:
            return []
        tokens = query_tokens(args.query)
        if not tokens:
            return []
        docs = index.candidates(flt, args.table, args.column) if flt is not None else None
        out = []
        for i, score in index.search(tokens, k, docs):
            rec = index.record(i)
            out.append((rec["primary_key"], score, rec))
        return out


# ------------------------------------------------------------------------------------------------ cache + API

_ENGINES: dict[tuple[Path, float], SearchEngine] = {}
_ENGINES_LOCK = threading.Lock()


def get_engine(db: str | None = None, store_dir: str | Path | None = None, embeddings=None) -> SearchEngine:
    """One engine per store, rebuilt when ingestion rewrote the index manifest or other ``embeddings`` are given."""
    paths = store_paths(db, store_dir)
    mtime = paths.index_manifest.stat().st_mtime if paths.index_manifest.exists() else 0.0
    key = (paths.root, mtime)
    with _ENGINES_LOCK:
        eng = _ENGINES.get(key)
        # an explicit embedding model replaces an engine opened without it (or with another one)
        if eng is None or (embeddings is not None and eng._embeddings is not embeddings):
            for old in [k for k in _ENGINES if k[0] == paths.root]:
                del _ENGINES[old]
            eng = SearchEngine(paths, embeddings)
            _ENGINES[key] = eng
            while len(_ENGINES) > MAX_ENGINES:  # least recently opened store first
                del _ENGINES[next(iter(_ENGINES))]
        return eng


def search(args: SearchArgs | dict, db: str | None = None, store_dir: str | Path | None = None) -> SearchResult:
    if isinstance(args, dict):
        args = SearchArgs.model_validate(args)
    return get_engine(db, store_dir).search(args)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evidex.tools.search",
                                description="Search an encoded column of a paper store.")
    p.add_argument("--db", help="store name")
    p.add_argument("--store-dir", help="store folder (instead of --db)")
    p.add_argument("--table", required=True)
    p.add_argument("--column", required=True)
    p.add_argument("--query", required=True)
    p.add_argument("--filter", default=None)
    p.add_argument("--mode", choices=["dense", "bm25", "hybrid"], default="hybrid")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    a = p.parse_args(argv)
    try:
        args = SearchArgs(query=a.query, table=a.table, column=a.column, filter=a.filter, mode=a.mode, limit=a.limit)
        result = search(args, a.db, a.store_dir)
    except (FilterSyntaxError, SearchError, StoreError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.model_dump_json(indent=1) if a.json else result.to_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())

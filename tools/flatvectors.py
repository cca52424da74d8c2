"""A paper store's dense vectors without Chroma: one SQLite file (the standard library's) beside the store, searched
exactly with numpy. The core install uses it for new stores (Chroma is the ``chroma`` extra); stores embedded with
Chroma keep Chroma (``tools/vectorstore.py`` decides by what is on disk).

It speaks the part of Chroma's client and collection API evidex uses, with Chroma's shapes, so ingestion, search,
removal and the consistency check work on either unchanged:

* client: ``get_collection``, ``get_or_create_collection``, ``create_collection``, ``list_collections``,
  ``delete_collection``, ``get_max_batch_size``;
* collection: ``add`` (existing ids are kept, as Chroma does), ``upsert``, ``delete(ids=, where=)``, ``count``,
  ``get(ids=, where=, limit=, offset=, include=)``, ``query(query_embeddings=, n_results=, where=, include=)``;
* ``where``: ``{"field": value}``, ``{"field": {"$eq|$ne|$gt|$gte|$lt|$lte|$in|$nin": value}}``, ``$and``, ``$or``
  (several fields in one dict mean all of them). A field an entry lacks matches no condition.

Distances follow the collection's ``hnsw:space``: ``cosine`` (1 - cosine similarity), ``ip`` (1 - dot product) or
``l2`` (squared Euclidean, Chroma's default). Search is exact (every entry scored; ties broken by id), which at
paper-store sizes (tens of thousands of 384-d vectors) takes milliseconds: a reader keeps each collection's
matrix in memory and reloads it only when a writer has changed the collection since (a version number per
collection, bumped in the writing transaction).
"""
from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

FOLDER = "vectors"
DB_FILE = "vectors.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (name TEXT PRIMARY KEY, metadata TEXT NOT NULL, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS entries (collection TEXT NOT NULL, id TEXT NOT NULL, vector BLOB NOT NULL,
    metadata TEXT, document TEXT, PRIMARY KEY (collection, id)) WITHOUT ROWID;
"""
MAX_BATCH = 50_000
_OPS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"}


class FlatVectorError(ValueError):
    """A collection that is not there, or a request this store cannot answer."""


def store_folder(root: Path) -> Path:
    return Path(root) / FOLDER


def has_flat_vectors(root: Path) -> bool:
    return (store_folder(root) / DB_FILE).is_file()


class FlatClient:
    """Chroma-shaped client over ``<root>/vectors/vectors.sqlite3`` (created on first use)."""

    def __init__(self, root: Path):
        folder = store_folder(root)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / DB_FILE
        self._lock = threading.RLock()
        self._con = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._con.executescript(SCHEMA)

    # -- collections --------------------------------------------------------------------------------------
    def _meta(self, name: str) -> dict | None:
        with self._lock:
            row = self._con.execute("SELECT metadata FROM collections WHERE name = ?", [name]).fetchone()
        return None if row is None else json.loads(row[0])

    def get_collection(self, name: str, embedding_function=None) -> FlatCollection:
        meta = self._meta(name)
        if meta is None:
            raise FlatVectorError(f"Collection {name} does not exist.")
        return FlatCollection(self, name, meta)

    def create_collection(self, name: str, embedding_function=None, metadata: dict | None = None,
                          get_or_create: bool = False) -> FlatCollection:
        with self._lock:
            if self._meta(name) is not None:
                if get_or_create:
                    return self.get_collection(name)
                raise FlatVectorError(f"Collection {name} already exists.")
            self._con.execute("INSERT INTO collections VALUES (?, ?, 0)", [name, json.dumps(metadata or {})])
        return FlatCollection(self, name, metadata or {})

    def get_or_create_collection(self, name: str, embedding_function=None, metadata: dict | None = None) -> FlatCollection:
        return self.create_collection(name, metadata=metadata, get_or_create=True)

    def list_collections(self) -> list[FlatCollection]:
        with self._lock:
            rows = self._con.execute("SELECT name, metadata FROM collections ORDER BY name").fetchall()
        return [FlatCollection(self, name, json.loads(meta)) for name, meta in rows]

    def delete_collection(self, name: str) -> None:
        with self._lock, self._transaction():
            if self._con.execute("DELETE FROM collections WHERE name = ?", [name]).rowcount == 0:
                raise FlatVectorError(f"Collection {name} does not exist.")
            self._con.execute("DELETE FROM entries WHERE collection = ?", [name])
        _CACHE.pop((str(self.path), name), None)

    def get_max_batch_size(self) -> int:
        return MAX_BATCH

    def close(self) -> None:
        with self._lock:
            self._con.close()

    # -- internals ----------------------------------------------------------------------------------------
    def _transaction(self):
        con = self._con

        class _Tx:
            def __enter__(self_inner):
                con.execute("BEGIN IMMEDIATE")

            def __exit__(self_inner, exc_type, *_):
                con.execute("ROLLBACK" if exc_type else "COMMIT")
                return False

        return _Tx()

    def _version(self, name: str) -> int:
        row = self._con.execute("SELECT version FROM collections WHERE name = ?", [name]).fetchone()
        if row is None:
            raise FlatVectorError(f"Collection {name} does not exist.")
        return int(row[0])


class _Loaded:
    """One collection as read at one version: ids, the vectors as a matrix, metadatas, documents."""

    def __init__(self, version: int, rows: list[tuple]):
        self.version = version
        self.ids = [r[0] for r in rows]
        self.position = {cid: i for i, cid in enumerate(self.ids)}
        dim = len(rows[0][1]) // 4 if rows else 0
        self.matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                       if rows else np.zeros((0, 0), dtype=np.float32))
        self.metadatas = [json.loads(r[2]) if r[2] else None for r in rows]
        self.documents = [r[3] for r in rows]
        self._fields: dict[str, np.ndarray] = {}

    def field(self, key: str) -> np.ndarray:
        if key not in self._fields:
            missing = _Missing
            self._fields[key] = np.array([(m or {}).get(key, missing) for m in self.metadatas] or [], dtype=object)
        return self._fields[key]


class _MissingType:
    def __repr__(self) -> str:
        return "<missing>"


_Missing = _MissingType()
_CACHE: dict[tuple[str, str], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


class FlatCollection:
    """A Chroma-shaped collection (see the module docstring)."""

    def __init__(self, client: FlatClient, name: str, metadata: dict):
        self._client = client
        self.name = name
        self.metadata = metadata

    def __repr__(self) -> str:
        return f"FlatCollection(name={self.name!r})"

    @property
    def space(self) -> str:
        return str((self.metadata or {}).get("hnsw:space", "l2"))

    # -- writing ------------------------------------------------------------------------------------------
    def add(self, ids: Sequence[str], embeddings=None, metadatas: Sequence[dict] | None = None,
            documents: Sequence[str] | None = None) -> None:
        self._write("INSERT OR IGNORE", ids, embeddings, metadatas, documents)

    def upsert(self, ids: Sequence[str], embeddings=None, metadatas: Sequence[dict] | None = None,
               documents: Sequence[str] | None = None) -> None:
        self._write("INSERT OR REPLACE", ids, embeddings, metadatas, documents)

    def _write(self, verb: str, ids, embeddings, metadatas, documents) -> None:
        ids = [str(i) for i in ids]
        if embeddings is None:
            raise FlatVectorError("this vector store stores given embeddings only (embedding_function=None)")
        vecs = np.asarray(embeddings, dtype=np.float32)
        if vecs.ndim != 2 or len(vecs) != len(ids):
            raise FlatVectorError(f"{len(ids)} ids but embeddings of shape {vecs.shape}")
        if len(set(ids)) != len(ids):
            raise FlatVectorError("duplicate ids in one call")
        metas = list(metadatas) if metadatas is not None else [None] * len(ids)
        docs = list(documents) if documents is not None else [None] * len(ids)
        rows = [(self.name, cid, vecs[i].tobytes(), json.dumps(metas[i]) if metas[i] is not None else None, docs[i])
                for i, cid in enumerate(ids)]
        c = self._client
        with c._lock, c._transaction():
            c._version(self.name)
            c._con.executemany(f"{verb} INTO entries VALUES (?, ?, ?, ?, ?)", rows)
            c._con.execute("UPDATE collections SET version = version + 1 WHERE name = ?", [self.name])

    def delete(self, ids: Sequence[str] | None = None, where: dict | None = None) -> None:
        if ids is None and where is None:
            raise FlatVectorError("delete needs ids or where")
        targets = set(map(str, ids)) if ids is not None else None
        if where is not None:
            loaded = self._loaded()
            mask = _where_mask(loaded, where)
            chosen = {loaded.ids[i] for i in np.flatnonzero(mask)}
            targets = chosen if targets is None else targets & chosen
        if not targets:
            return
        c = self._client
        with c._lock, c._transaction():
            c._con.executemany("DELETE FROM entries WHERE collection = ? AND id = ?", [(self.name, t) for t in targets])
            c._con.execute("UPDATE collections SET version = version + 1 WHERE name = ?", [self.name])

    # -- reading ------------------------------------------------------------------------------------------
    def count(self) -> int:
        c = self._client
        with c._lock:
            return int(c._con.execute("SELECT count(*) FROM entries WHERE collection = ?", [self.name]).fetchone()[0])

    def _loaded(self) -> _Loaded:
        c = self._client
        key = (str(c.path), self.name)
        with c._lock:
            version = c._version(self.name)
            cached = _CACHE.get(key)
            if cached is not None and cached.version == version:
                return cached
            rows = c._con.execute("SELECT id, vector, metadata, document FROM entries WHERE collection = ? ORDER BY id",
                                  [self.name]).fetchall()
        loaded = _Loaded(version, rows)
        with _CACHE_LOCK:
            _CACHE[key] = loaded
        return loaded

    def get(self, ids: Sequence[str] | None = None, where: dict | None = None, limit: int | None = None,
            offset: int | None = None, include: Iterable[str] = ("metadatas", "documents")) -> dict[str, Any]:
        loaded = self._loaded()
        if ids is not None:
            picked = [loaded.position[str(i)] for i in ids if str(i) in loaded.position]
            if where is not None:
                mask = _where_mask(loaded, where)
                picked = [i for i in picked if mask[i]]
        else:
            picked = list(np.flatnonzero(_where_mask(loaded, where))) if where is not None else list(range(len(loaded.ids)))
        start = int(offset or 0)
        picked = picked[start: start + limit if limit is not None else None]
        return _result(loaded, [int(i) for i in picked], set(include))

    def query(self, query_embeddings=None, n_results: int = 10, where: dict | None = None,
              include: Iterable[str] = ("metadatas", "documents", "distances"), **_: Any) -> dict[str, Any]:
        if query_embeddings is None:
            raise FlatVectorError("query needs query_embeddings (this store embeds nothing itself)")
        loaded = self._loaded()
        queries = np.atleast_2d(np.asarray(query_embeddings, dtype=np.float32))
        mask = _where_mask(loaded, where) if where is not None else None
        candidates = np.flatnonzero(mask) if mask is not None else np.arange(len(loaded.ids))
        include = set(include)
        out: dict[str, list] = {"ids": [], "distances": [], "metadatas": [], "documents": [], "embeddings": []}
        for q in queries:
            if len(candidates) == 0:
                dist = np.zeros(0, dtype=np.float32)
            else:
                dist = _distances(loaded.matrix[candidates], q, self.space)
            k = min(int(n_results), len(candidates))
            if k < len(candidates):
                part = np.argpartition(dist, k - 1)[:k]
                cut = dist[part].max()
                part = np.flatnonzero(dist <= cut)  # every tie of the k-th, so the id tie-break is exact
            else:
                part = np.arange(len(candidates))
            order = sorted(part.tolist(), key=lambda i: (float(dist[i]), loaded.ids[candidates[i]]))[:k]
            chosen = [int(candidates[i]) for i in order]
            res = _result(loaded, chosen, include)
            for key in ("ids", "metadatas", "documents", "embeddings"):
                out[key].append(res.get(key))
            out["distances"].append([float(dist[i]) for i in order] if "distances" in include else None)
        return {k: (v if (k == "ids" or k in include) else None) for k, v in out.items()} | {"include": sorted(include)}


def _distances(matrix: np.ndarray, q: np.ndarray, space: str) -> np.ndarray:
    if space == "cosine":
        norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(q)), 1e-12)
        return 1.0 - (matrix @ q) / np.maximum(norms, 1e-12)
    if space == "ip":
        return 1.0 - matrix @ q
    diff = matrix - q
    return np.einsum("ij,ij->i", diff, diff)


def _result(loaded: _Loaded, picked: list[int], include: set[str]) -> dict[str, Any]:
    res: dict[str, Any] = {"ids": [loaded.ids[i] for i in picked]}
    res["embeddings"] = loaded.matrix[picked] if "embeddings" in include else None
    res["metadatas"] = [loaded.metadatas[i] for i in picked] if "metadatas" in include else None
    res["documents"] = [loaded.documents[i] for i in picked] if "documents" in include else None
    res["include"] = sorted(include)
    return res


def _where_mask(loaded: _Loaded, where: dict) -> np.ndarray:
    n = len(loaded.ids)
    if not isinstance(where, dict) or not where:
        raise FlatVectorError(f"where must be a non-empty dict, got {where!r}")
    mask = np.ones(n, dtype=bool)
    for key, cond in where.items():
        if key == "$and":
            for sub in cond:
                mask &= _where_mask(loaded, sub)
        elif key == "$or":
            any_mask = np.zeros(n, dtype=bool)
            for sub in cond:
                any_mask |= _where_mask(loaded, sub)
            mask &= any_mask
        elif key.startswith("$"):
            raise FlatVectorError(f"unsupported where operator {key!r}")
        else:
            mask &= _field_mask(loaded.field(key), cond)
    return mask


def _field_mask(values: np.ndarray, cond) -> np.ndarray:
    if not isinstance(cond, dict):
        cond = {"$eq": cond}
    present = np.fromiter((v is not _Missing for v in values), dtype=bool, count=len(values))
    mask = present.copy()
    for op, target in cond.items():
        if op not in _OPS:
            raise FlatVectorError(f"unsupported where operator {op!r}")
        if op in ("$in", "$nin"):
            allowed = set(target)
            hit = np.fromiter((v in allowed if v is not _Missing else False for v in values), dtype=bool,
                              count=len(values))
            mask &= hit if op == "$in" else ~hit
            continue
        mask &= np.fromiter((_compare(v, op, target) if v is not _Missing else False for v in values), dtype=bool,
                            count=len(values))
    return mask & present


def _compare(value, op: str, target) -> bool:
    same = value == target and isinstance(value, bool) == isinstance(target, bool)  # True is not 1 here
    if op == "$eq":
        return same
    if op == "$ne":
        return not same
    try:
        if op == "$gt":
            return value > target
        if op == "$gte":
            return value >= target
        if op == "$lt":
            return value < target
        return value <= target
    except TypeError:
        return False

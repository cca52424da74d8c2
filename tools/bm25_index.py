"""The keyword index of one encoded (table, column) of a paper store: bm25s's inverted index, searched without
scoring every document.

Files (one folder per pair, written by ``tools.ingest.indexer``): bm25s's own ``params.index.json``,
``vocab.index.json`` and the CSC score matrix ``{data,indices,indptr}.csc.index.npy`` (token -> postings with
precomputed BM25 weights), plus ``entries.npz``: per document its primary key, paper, page and box, column-wise.
Stores built before ``entries.npz`` existed have ``entries.json`` instead; it is still read.

Search cost. bm25s scores a query by adding the postings of its tokens into a dense array of every document,
multiplying by a filter mask and sorting: O(N) per query, plus an O(N) Python pass over every record to build
the mask of each new filter. Here the arrays are memory-mapped (resident only as far as the OS caches them), a
query reads only its tokens' postings, a filter that names papers (``pdf_id == ...`` / ``pdf_id in [...]``, the
usual scope of a question) is turned into those papers' document ids through a paper -> documents map before any
scoring, and other filters are evaluated once per distinct (paper, page) rather than once per document when they
do not read the box or the primary key. Scores equal bm25s's (same weights, summed in float64).
"""
from __future__ import annotations

import json
import re
from collections import OrderedDict
from pathlib import Path

import numpy as np

from evidex.tools.filters import Filter
from evidex.tools.store import BM25_STOPWORDS, BM25_TOKEN_PATTERN

ENTRIES_FILE = "entries.npz"
LEGACY_ENTRIES_FILE = "entries.json"
MASK_CACHE = 32  # filters whose document mask is kept (each N bytes)
_SCORED_METHODS = ("lucene", "robertson", "atire")  # methods without a non-occurrence term


def _stopwords() -> frozenset[str]:
    from evidex.tools.quiet import quiet_bm25s

    quiet_bm25s()
    from bm25s.tokenization import _infer_stopwords

    return frozenset(_infer_stopwords(BM25_STOPWORDS))


_TOKEN_RE = re.compile(BM25_TOKEN_PATTERN)
_STOP: frozenset[str] | None = None


def query_tokens(text: str) -> list[str]:
    """bm25s.tokenize's analysis of one text (lower-case, ``BM25_TOKEN_PATTERN``, English stopwords dropped), without
    building a vocabulary object per call."""
    global _STOP
    if _STOP is None:
        _STOP = _stopwords()
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in _STOP]


def write_entries(folder: Path, keys: list[str], pdf_ids: list[str], pages: list[int], boxes: list) -> None:
    """Column-wise document records of one index (see the module docstring)."""
    papers, codes = np.unique(np.asarray(pdf_ids, dtype=str), return_inverse=True) if pdf_ids else (np.array([], dtype=str), np.array([], dtype=np.int64))
    has_box = np.array([b is not None for b in boxes], dtype=bool)
    box = np.array([list(b) if b is not None else [0, 0, 0, 0] for b in boxes], dtype=np.int32).reshape(-1, 4)
    np.savez(
        folder / ENTRIES_FILE,
        keys=np.asarray(keys, dtype=str),
        papers=papers,
        paper_code=codes.astype(np.int32),
        page=np.asarray(pages, dtype=np.int32),
        has_box=has_box,
        box=box,
    )


class BM25Index:
    """One (table, column) keyword index, opened read-only."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        params = json.loads((self.folder / "params.index.json").read_text())
        method = params.get("method", "lucene")
        if method not in _SCORED_METHODS:
            raise ValueError(f"{self.folder}: BM25 variant {method!r} is not supported by the search engine")
        self.vocab: dict[str, int] = json.loads((self.folder / "vocab.index.json").read_text())
        self.data = np.load(self.folder / "data.csc.index.npy", mmap_mode="r")
        self.indices = np.load(self.folder / "indices.csc.index.npy", mmap_mode="r")
        self.indptr = np.load(self.folder / "indptr.csc.index.npy", mmap_mode="r")
        self._load_entries()
        self.n = len(self.keys)
        self._by_paper: dict[str, np.ndarray] | None = None
        self._masks: OrderedDict[str, np.ndarray] = OrderedDict()

    def _load_entries(self) -> None:
        npz = self.folder / ENTRIES_FILE
        if npz.exists():
            with np.load(npz) as z:
                self.keys = z["keys"]
                self.papers = z["papers"]
                self.paper_code = z["paper_code"]
                self.page = z["page"]
                self.has_box = z["has_box"]
                self.box = z["box"]
            return
        e = json.loads((self.folder / LEGACY_ENTRIES_FILE).read_text())
        pdf = e["pdf_id"]
        self.keys = np.asarray(e["primary_key"], dtype=str)
        self.papers, codes = np.unique(np.asarray(pdf, dtype=str), return_inverse=True) if pdf else (np.array([], dtype=str), np.array([], dtype=np.int64))
        self.paper_code = codes.astype(np.int32)
        self.page = np.asarray(e["page_number"], dtype=np.int32)
        self.has_box = np.array([b is not None for b in e["bbox"]], dtype=bool)
        self.box = np.array([b if b is not None else [0, 0, 0, 0] for b in e["bbox"]], dtype=np.int32).reshape(-1, 4)

    # -- records -----------------------------------------------------------------------------------------
    def record(self, i: int) -> dict:
        return {
            "pdf_id": str(self.papers[self.paper_code[i]]),
            "page_number": int(self.page[i]),
            "primary_key": str(self.keys[i]),
            "bbox": [int(v) for v in self.box[i]] if self.has_box[i] else None,
        }

    def paper_docs(self, paper_ids) -> np.ndarray:
        """Sorted document ids of the given papers."""
        if self._by_paper is None:
            order = np.argsort(self.paper_code, kind="stable")
            bounds = np.searchsorted(self.paper_code[order], np.arange(len(self.papers) + 1))
            self._by_paper = {str(p): order[bounds[c] : bounds[c + 1]] for c, p in enumerate(self.papers)}
        parts = [self._by_paper[p] for p in paper_ids if isinstance(p, str) and p in self._by_paper]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate(parts)) if len(parts) > 1 else parts[0]

    def candidates(self, flt: Filter, table: str, column: str) -> np.ndarray:
        """Sorted ids of the documents that match ``flt``."""
        extra = {"table_name": table, "column_name": column}
        papers = flt.field_values("pdf_id")
        if papers is not None:  # narrow to the named papers first, then check the whole filter on those
            docs = self.paper_docs(papers)
            keep = [i for i in docs.tolist() if flt.matches({**self.record(i), **extra})]
            return np.asarray(keep, dtype=np.int64)
        cached = self._masks.get(flt.text)
        if cached is None:
            cached = self._mask(flt, extra)
            self._masks[flt.text] = cached
            while len(self._masks) > MASK_CACHE:
                self._masks.popitem(last=False)
        else:
            self._masks.move_to_end(flt.text)
        return cached

    def _mask(self, flt: Filter, extra: dict) -> np.ndarray:
        if flt.fields() & {"bbox", "primary_key"}:
            return np.flatnonzero([flt.matches({**self.record(i), **extra}) for i in range(self.n)])
        # the filter reads only paper and page: evaluate it once per distinct (paper, page)
        combo = self.paper_code.astype(np.int64) * (1 << 32) + (self.page.astype(np.int64) & 0xFFFFFFFF)
        uniq, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
        ok = np.array(
            [flt.matches({"pdf_id": str(self.papers[self.paper_code[i]]), "page_number": int(self.page[i]), **extra})
             for i in first.tolist()],
            dtype=bool,
        )
        return np.flatnonzero(ok[inverse])

    # -- scoring -----------------------------------------------------------------------------------------
    def search(self, tokens: list[str], k: int, docs: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top ``k`` (document id, score > 0) for the query tokens, best first (ties: lower id first); ``docs``
        restricts the search to those (sorted) document ids."""
        ids = [self.vocab[t] for t in tokens if t in self.vocab]
        if not ids or k <= 0 or self.n == 0 or (docs is not None and len(docs) == 0):
            return []
        ids_arr = np.asarray(ids, dtype=np.int64)
        starts, ends = self.indptr[ids_arr], self.indptr[ids_arr + 1]
        post = [np.asarray(self.indices[s:e]) for s, e in zip(starts.tolist(), ends.tolist())]
        weights = [np.asarray(self.data[s:e], dtype=np.float64) for s, e in zip(starts.tolist(), ends.tolist())]
        idx = np.concatenate(post) if post else np.zeros(0, dtype=np.int64)
        w = np.concatenate(weights) if weights else np.zeros(0)
        if docs is not None:
            pos = np.searchsorted(docs, idx)
            pos[pos >= len(docs)] = 0
            keep = docs[pos] == idx
            idx, w = idx[keep], w[keep]
        if idx.size == 0:
            return []
        if docs is None:  # one pass over the postings, then over the touched documents
            dense = np.bincount(idx, weights=w, minlength=self.n)
            hit = np.flatnonzero(dense > 0)
            score = dense[hit].astype(np.float32)  # bm25s keeps float32 scores
        else:
            hit, inv = np.unique(idx, return_inverse=True)
            score = np.bincount(inv, weights=w, minlength=len(hit)).astype(np.float32)
            positive = score > 0
            hit, score = hit[positive], score[positive]
        if hit.size > k:
            part = np.argpartition(-score, k - 1)[:k]
            hit, score = hit[part], score[part]
        order = np.lexsort((hit, -score))
        return [(int(hit[i]), float(score[i])) for i in order]

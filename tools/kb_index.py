"""Hybrid search over a knowledge base of ``{id, text}`` items: exact dense vectors (numpy) + bm25s (keyword).

The index is persisted under ``<index_root>/kb/<name>-<content hash>/`` and rebuilt only when the content, the
embedding model, the analyzer or the index format changes: the folder name is the hash, so a changed KB simply
gets a new folder, and ``complete.json`` marks a finished build (a folder without it is rebuilt).

Two ways to search:

* :meth:`KnowledgeBaseIndex.search` — one or more (optionally weighted) queries over dense and/or BM25,
  fused by reciprocal-rank fusion (``fusion="rrf"``, the default) or by a weighted sum of z-normalised scores
  (``fusion="combsum"``).
* Score vectors for planners that fuse themselves: :meth:`~KnowledgeBaseIndex.bm25_scores` (a text, or a
  weighted bag of analyzed terms), :meth:`~KnowledgeBaseIndex.dense_scores` (a text or a vector),
  :meth:`~KnowledgeBaseIndex.expansion_terms` (RM3-style pseudo-relevance feedback terms) and :func:`combsum`.

Every score covers the whole collection: dense scores are exact cosine similarities against the stored
document vectors (``vectors.npy``), BM25 scores a sparse matrix product (numpy over bm25s' term columns). That is
exact and fast for KBs up to a few hundred thousand items, and needs neither Chroma nor scipy. (Indexes built
before kept a Chroma copy of the vectors in ``chroma/``, which nothing read; it is left alone.)

The default analyzer (``"biomed"``) is a general tokenizer that also understands biomedical identifiers:
HGVS spacing and protein 3-letter codes are normalised (``c.583 C>T`` ~ ``c.583C>T``, ``p.Glu70Lys`` ~ ``E70K``),
compound identifiers are kept whole *and* split (``ETV6::NTRK3`` -> ``etv6::ntrk3 etv6 ntrk3``), letter/digit
runs are split (``L184P`` -> ``l184p 184``), and plurals are folded (Harman's S-stemmer). ``"simple"`` is
bm25s' default (scikit-learn word regex + English stopwords).
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from filelock import FileLock
from pydantic import BaseModel
from evidex.tools.quiet import quiet_bm25s

log = logging.getLogger(__name__)

SearchMode = Literal["dense", "bm25", "hybrid"]
Fusion = Literal["rrf", "combsum"]
AnalyzerName = Literal["biomed", "simple"]
COLLECTION = "evidence"
RRF_K = 60  # the constant from Cormack et al. (2009); robust across corpora
INDEX_FORMAT = 2  # bump when the on-disk layout or the analyzer output changes
DEFAULT_ANALYZER: AnalyzerName = "biomed"


class KBDoc(BaseModel):
    id: str
    text: str


class SearchHit(BaseModel):
    id: str
    text: str
    score: float
    dense_rank: int | None = None
    bm25_rank: int | None = None


# ---------------------------------------------------------------------------------------------------------------
# Analyzer
# ---------------------------------------------------------------------------------------------------------------
_AA3 = {"ala": "a", "arg": "r", "asn": "n", "asp": "d", "cys": "c", "gln": "q", "glu": "e", "gly": "g",
        "his": "h", "ile": "i", "leu": "l", "lys": "k", "met": "m", "phe": "f", "pro": "p", "ser": "s",
        "thr": "t", "trp": "w", "tyr": "y", "val": "v", "ter": "*", "sec": "u"}
_AA3_ALT = "|".join(_AA3)
# p.Glu70Lys / Arg167Gln / Phe76del -> E70K / R167Q / F76del
_PROT3 = re.compile(rf"\b(?:p\.)?\(?({_AA3_ALT})(\d+)({_AA3_ALT}|\*|del|dup|ins|fs|=)", re.I)
# c.583 C>T -> c.583C>T (spaces inside an HGVS substitution)
_HGVS_SPACE = re.compile(r"\b([cgmnr])\.\s*([\d_+\-]+)\s*([ACGTacgt]+)\s*>\s*([ACGTacgt]+)")
# a "unit": letters/digits joined by identifier punctuation (c.583C>T, ETV6::NTRK3, EML4-ALK, V600E/K, Q195*)
_UNIT = re.compile(r"[A-Za-z0-9]+(?:(?:::|[._:>*+\-/])[A-Za-z0-9*]+)*\*?")
_PUNCT = re.compile(r"::|[._:>*+\-/]")
_LETTER_DIGIT = re.compile(r"[a-z]+|\d+")
_HGVS_EDIT = re.compile(r"^\d*(delins|del|dup|ins)([acgt]+)$")  # 226deltct -> del + tct
STOPWORDS = frozenset("""a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now
of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with you your yours yourself yourselves also et al""".split())


def s_stem(word: str) -> str:
    """Harman's S-stemmer: folds English plurals only (``fusions`` -> ``fusion``, ``therapies`` -> ``therapy``)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def normalise_text(text: str) -> str:
    """Canonical spelling of HGVS-like variant mentions (before tokenization)."""
    text = _HGVS_SPACE.sub(lambda m: f"{m[1]}.{m[2]}{m[3]}>{m[4]}", text)
    return _PROT3.sub(lambda m: _AA3[m[1].lower()].upper() + m[2] + _AA3.get(m[3].lower(), m[3]).upper(), text)


def analyze(text: str) -> list[str]:
    """Tokens of ``text`` for BM25 (the ``"biomed"`` analyzer). Deterministic, no external resources."""
    out: list[str] = []
    for unit in _UNIT.findall(normalise_text(text)):
        u = unit.lower()
        parts = [p for p in _PUNCT.split(u) if p]
        if (len(parts) > 1 or u.endswith("*")) and any(c.isdigit() for c in u):
            whole = u[2:] if u.startswith("p.") else u  # p.L184P ~ L184P
            if whole not in parts:
                out.append(whole)
        for p in parts:
            if p in STOPWORDS or (len(p) == 1 and not p.isdigit()) or (p.isdigit() and len(p) < 2):
                continue
            out.append(s_stem(p))
            edit = _HGVS_EDIT.match(p)
            if edit:
                out += [edit[1], edit[2]]
            if any(c.isdigit() for c in p) and any(c.isalpha() for c in p):
                runs = _LETTER_DIGIT.findall(p)
                if len(runs) > 1:
                    out += [r for r in runs if len(r) > 1 and r not in STOPWORDS]
    return out


def simple_analyze(text: str) -> list[str]:
    """bm25s' default tokenization (lower-case ``\\w\\w+`` words, English stopwords)."""
    bm25s = quiet_bm25s()

    return bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)[0]


ANALYZERS: dict[str, Callable[[str], list[str]]] = {"biomed": analyze, "simple": simple_analyze}


# ---------------------------------------------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------------------------------------------
def content_hash(docs: Sequence[KBDoc], model_name: str, analyzer: str = DEFAULT_ANALYZER) -> str:
    h = hashlib.sha256(f"{model_name}|{analyzer}|v{INDEX_FORMAT}".encode())
    for d in docs:
        h.update(json.dumps([d.id, d.text]).encode())
    return h.hexdigest()[:16]


def rrf_fuse(
    rankings: Iterable[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal rank fusion: ranking ``j`` adds ``weights[j]/(k + rank)`` to the ids it lists (rank from 1).

    Without weights every ranking counts 1 (the classic formula of Cormack et al.)."""
    scores: dict[str, float] = {}
    for j, ranking in enumerate(rankings):
        w = 1.0 if weights is None else float(weights[j])
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + w / (k + rank)
    return scores


def znorm(scores: np.ndarray) -> np.ndarray:
    """Standard scores over the whole collection (0 everywhere when the scores are constant)."""
    scores = np.asarray(scores, dtype=np.float64)
    sd = scores.std()
    return (scores - scores.mean()) / sd if sd > 0 else np.zeros_like(scores)


def combsum(vectors: Sequence[np.ndarray], weights: Sequence[float] | None = None) -> np.ndarray:
    """Weighted CombSUM of z-normalised score vectors (all over the same documents, in index order)."""
    if not vectors:
        raise ValueError("combsum needs at least one score vector")
    total = np.zeros(len(vectors[0]), dtype=np.float64)
    for j, v in enumerate(vectors):
        total += (1.0 if weights is None else float(weights[j])) * znorm(v)
    return total


def rank_texts(query: str, texts: Sequence[str], embeddings, analyzer: str = DEFAULT_ANALYZER) -> np.ndarray:
    """Fused relevance (CombSUM of dense cosine and BM25) of each of a few ``texts`` to ``query``, computed among
    the texts themselves: for evidence that is not in any knowledge base (e.g. R4C's ten paragraphs)."""
    bm25s = quiet_bm25s()

    if not texts:
        return np.zeros(0)
    analyze_fn = ANALYZERS[analyzer]
    dense = np.asarray(embeddings.embed_documents(list(texts))) @ np.asarray(embeddings.embed_query(query))
    corpus = [analyze_fn(t) or ["\u2205"] for t in texts]  # bm25s rejects an empty document
    bm25 = bm25s.BM25()
    bm25.index(corpus, show_progress=False)
    terms = [t for t in analyze_fn(query) if any(t in doc for doc in corpus)]
    sparse = bm25.get_scores(terms) if terms else np.zeros(len(texts))
    return combsum([dense, np.asarray(sparse, dtype=np.float64)])


# ---------------------------------------------------------------------------------------------------------------
# Index
# ---------------------------------------------------------------------------------------------------------------
class KnowledgeBaseIndex:
    """Dense + BM25 index over a fixed list of documents. Build with :meth:`open`."""

    def __init__(self, docs: Sequence[KBDoc], folder: Path, embeddings, bm25, vectors: np.ndarray,
                 analyzer: str = DEFAULT_ANALYZER):
        self.docs = list(docs)
        self.by_id = {d.id: d for d in self.docs}
        self.position = {d.id: n for n, d in enumerate(self.docs)}
        self.folder = folder
        self.analyzer_name = analyzer
        self.analyze = ANALYZERS[analyzer]
        self._embeddings = embeddings
        self._bm25 = bm25
        self.vectors = np.asarray(vectors, dtype=np.float32)
        s = bm25.scores
        self.vocab: dict[str, int] = dict(bm25.vocab_dict)
        # docs x terms BM25 weights by term column (CSC: a term's docs and weights); a query is a (weighted) term
        # vector, its scores the weighted sum of its terms' columns
        self._indptr = np.asarray(s["indptr"])
        self._indices = np.asarray(s["indices"])
        self._data = np.asarray(s["data"])
        df = np.diff(np.asarray(s["indptr"]))
        self.idf = np.log(1.0 + (len(self.docs) - df + 0.5) / (df + 0.5))
        self.df = df
        self._terms = {i: t for t, i in self.vocab.items()}
        self._embed_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._id_order = np.argsort(np.argsort(np.array([d.id for d in self.docs], dtype=object)))

    # -- building -----------------------------------------------------------------------------------------
    @classmethod
    def open(cls, name: str, docs: Sequence[KBDoc], embeddings, index_root: Path,
             analyzer: AnalyzerName = DEFAULT_ANALYZER) -> "KnowledgeBaseIndex":
        """Load the index for exactly these docs, building it first if no index with this content exists."""
        bm25s = quiet_bm25s()
        if not docs:
            raise ValueError(f"Knowledge base {name!r} is empty: nothing to index.")
        if analyzer not in ANALYZERS:
            raise ValueError(f"Unknown analyzer {analyzer!r}; known: {', '.join(ANALYZERS)}")
        docs = [d if isinstance(d, KBDoc) else KBDoc(id=str(d.id), text=str(d.text)) for d in docs]
        ids = [d.id for d in docs]
        if len(set(ids)) != len(ids):
            counts = Counter(ids)
            dup = sorted(i for i, c in counts.items() if c > 1)[:5]
            raise ValueError(f"Knowledge base {name!r} has duplicate ids, e.g. {dup}.")
        model_name = getattr(embeddings, "model_name", type(embeddings).__name__)
        digest = content_hash(docs, model_name, analyzer)
        folder = Path(index_root) / "kb" / f"{name}-{digest}"
        folder.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder) + ".lock"):
            done = folder / "complete.json"
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)  # a half-built index from an interrupted run
                log.info("Building knowledge-base index %s (%d docs)", folder, len(docs))
                cls._build(folder, docs, embeddings, analyzer)
                done.write_text(json.dumps({"name": name, "docs": len(docs), "hash": digest, "model": model_name,
                                            "analyzer": analyzer, "format": INDEX_FORMAT}))
            bm25 = bm25s.BM25.load(str(folder / "bm25"))
            vectors = np.load(folder / "vectors.npy")
        return cls(docs, folder, embeddings, bm25, vectors, analyzer)

    @staticmethod
    def _build(folder: Path, docs: Sequence[KBDoc], embeddings, analyzer: str = DEFAULT_ANALYZER) -> None:
        bm25s = quiet_bm25s()
        folder.mkdir(parents=True)
        vectors = np.asarray(embeddings.embed_documents([d.text for d in docs]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.where(norms > 0, norms, 1.0)
        np.save(folder / "vectors.npy", vectors)
        tokens = [ANALYZERS[analyzer](d.text) or [""] for d in docs]
        bm25 = bm25s.BM25()
        bm25.index(tokens, show_progress=False)
        bm25.save(str(folder / "bm25"))

    # -- score vectors (one entry per doc, in ``self.docs`` order) ------------------------------------------
    def embed(self, text: str) -> np.ndarray:
        """L2-normalised query embedding (small LRU cache: planners embed the same facet texts repeatedly)."""
        vec = self._embed_cache.get(text)
        if vec is None:
            vec = np.asarray(self._embeddings.embed_query(text), dtype=np.float32)
            n = float(np.linalg.norm(vec))
            vec = vec / n if n > 0 else vec
            self._embed_cache[text] = vec
            if len(self._embed_cache) > 512:
                self._embed_cache.popitem(last=False)
        else:
            self._embed_cache.move_to_end(text)
        return vec

    def clear_cache(self) -> None:
        """Forget cached query embeddings (e.g. to time searches honestly)."""
        self._embed_cache.clear()

    def doc_vector(self, doc_id: str) -> np.ndarray | None:
        pos = self.position.get(doc_id)
        return None if pos is None else self.vectors[pos]

    def dense_scores(self, query: str | np.ndarray) -> np.ndarray:
        """Cosine similarity of every document to a query text or vector."""
        vec = self.embed(query) if isinstance(query, str) else np.asarray(query, dtype=np.float32)
        return self.vectors @ vec

    def term_weights(self, query: str | Mapping[str, float], *, distinct: bool = False) -> dict[str, float]:
        """Analyzed in-vocabulary query terms with weights. A text weighs each term by its count in the query
        (as bm25s does), or 1 per distinct term with ``distinct=True``; a mapping is taken as is."""
        if isinstance(query, str):
            tokens = [t for t in self.analyze(query) if t in self.vocab]
            return {t: 1.0 for t in dict.fromkeys(tokens)} if distinct else {
                t: float(c) for t, c in Counter(tokens).items()}
        return {t: float(w) for t, w in query.items() if t in self.vocab and w}

    def bm25_scores(self, query: str | Mapping[str, float], *, distinct: bool = False) -> np.ndarray:
        """BM25 score of every document for a text or a weighted bag of analyzed terms (see term_weights)."""
        weights = self.term_weights(query, distinct=distinct)
        scores = np.zeros(len(self.docs), dtype=np.float64)
        for col, w in sorted((self.vocab[t], w) for t, w in weights.items()):  # term order, as a CSC product sums
            lo, hi = self._indptr[col], self._indptr[col + 1]
            scores[self._indices[lo:hi]] += self._data[lo:hi].astype(np.float64) * w
        return scores

    def expansion_terms(self, feedback: Iterable[tuple[str, float]], n_terms: int = 20) -> dict[str, float]:
        """Pseudo-relevance-feedback terms (RM3-style) from weighted texts.

        A term's weight is ``sum_d w_d * tf(t, d) / |d| * idf(t)``; terms that occur in fewer than two KB docs
        (they cannot find anything new) or are purely numeric are skipped. Returns the ``n_terms`` best."""
        acc: Counter[str] = Counter()
        for text, w in feedback:
            if w <= 0:
                continue
            tokens = [t for t in self.analyze(text) if t in self.vocab]
            if not tokens:
                continue
            for t, c in Counter(tokens).items():
                acc[t] += w * c / len(tokens)
        scored = {t: v * float(self.idf[self.vocab[t]]) for t, v in acc.items()
                  if self.df[self.vocab[t]] >= 2 and not _NUMERIC.match(t)}
        return dict(sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:n_terms])

    # -- rankings -----------------------------------------------------------------------------------------
    def _ranking(self, scores: np.ndarray, k: int, positive_only: bool) -> list[str]:
        k = min(k, len(self.docs))
        order = np.lexsort((self._id_order, -np.asarray(scores)))[:k]
        return [self.docs[int(i)].id for i in order if not positive_only or scores[int(i)] > 0]

    def dense_ranking(self, query: str, k: int) -> list[str]:
        return self._ranking(self.dense_scores(query), k, positive_only=False)

    def bm25_ranking(self, query: str, k: int) -> list[str]:
        if not self.term_weights(query):  # nothing but stopwords / punctuation / unknown terms
            return []
        return self._ranking(self.bm25_scores(query), k, positive_only=True)

    def hits(self, scores: np.ndarray, k: int, exclude: Iterable[str] = (),
             dense: np.ndarray | None = None, bm25: np.ndarray | None = None) -> list[SearchHit]:
        """Top-k hits of a fused score vector, skipping excluded ids; ranks of the parts are reported."""
        excluded = set(exclude)
        dense_rank = _rank_of(dense) if dense is not None else None
        bm25_rank = _rank_of(bm25) if bm25 is not None else None
        out: list[SearchHit] = []
        for i in np.lexsort((self._id_order, -np.asarray(scores))):  # ties broken by id, not by KB order
            doc = self.docs[int(i)]
            if doc.id in excluded:
                continue
            out.append(SearchHit(
                id=doc.id, text=doc.text, score=round(float(scores[int(i)]), 6),
                dense_rank=None if dense_rank is None else int(dense_rank[int(i)]),
                bm25_rank=None if bm25_rank is None or bm25[int(i)] <= 0 else int(bm25_rank[int(i)]),
            ))
            if len(out) >= k:
                break
        return out

    def search(
        self,
        queries: str | Sequence[str],
        k: int = 10,
        mode: SearchMode = "hybrid",
        exclude: Iterable[str] = (),
        depth: int = 50,
        weights: Sequence[float] | None = None,
        fusion: Fusion = "rrf",
    ) -> list[SearchHit]:
        """Top-k documents for one or more queries; all queries and both retrievers are fused.

        ``weights`` (one per query) scale each query's contribution. ``fusion="rrf"`` fuses the top-``depth``
        rankings by reciprocal rank; ``"combsum"`` adds z-normalised full score vectors (dense and BM25 count
        equally per query)."""
        if isinstance(queries, str):
            queries = [queries]
        if weights is not None and len(weights) != len(queries):
            raise ValueError(f"{len(weights)} weights for {len(queries)} queries")
        pairs = [(q, 1.0 if weights is None else float(w))
                 for q, w in zip(queries, weights if weights is not None else [1.0] * len(queries))
                 if q and q.strip() and (weights is None or w)]
        excluded = set(exclude)
        if fusion == "combsum":
            vecs: list[np.ndarray] = []
            ws: list[float] = []
            for q, w in pairs:
                if mode in ("dense", "hybrid"):
                    vecs.append(self.dense_scores(q))
                    ws.append(w)
                if mode in ("bm25", "hybrid") and self.term_weights(q):
                    vecs.append(self.bm25_scores(q))
                    ws.append(w)
            if not vecs:
                return []
            return self.hits(combsum(vecs, ws), k, excluded)
        if fusion != "rrf":
            raise ValueError(f"Unknown fusion {fusion!r}; use 'rrf' or 'combsum'")
        dense: list[list[str]] = []
        sparse: list[list[str]] = []
        dense_w: list[float] = []
        sparse_w: list[float] = []
        for q, w in pairs:
            if mode in ("dense", "hybrid"):
                dense.append(self.dense_ranking(q, depth))
                dense_w.append(w)
            if mode in ("bm25", "hybrid"):
                sparse.append(self.bm25_ranking(q, depth))
                sparse_w.append(w)
        fused = rrf_fuse(dense + sparse, weights=dense_w + sparse_w)
        best_dense = _best_ranks(dense)
        best_bm25 = _best_ranks(sparse)
        ordered = sorted((i for i in fused if i not in excluded), key=lambda i: (-fused[i], i))[:k]
        return [
            SearchHit(
                id=i,
                text=self.by_id[i].text,
                score=round(fused[i], 6),
                dense_rank=best_dense.get(i),
                bm25_rank=best_bm25.get(i),
            )
            for i in ordered
        ]


_NUMERIC = re.compile(r"^[\d.,/%<>=:_\-+*]+$")


def _rank_of(scores: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best; equal scores share the better rank)."""
    scores = np.asarray(scores)
    return np.searchsorted(np.sort(-scores), -scores, side="left") + 1


def _best_ranks(rankings: list[list[str]]) -> dict[str, int]:
    best: dict[str, int] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            best[doc_id] = min(rank, best.get(doc_id, rank))
    return best

"""tools.bm25_index: the search engine's keyword index gives bm25s's scores without scoring every document, narrows
a paper filter to that paper's documents first, and reads the stores written before entries.npz existed."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from evidex.tools.bm25_index import BM25Index, query_tokens, write_entries
from evidex.tools.filters import parse_filter
from evidex.tools.quiet import quiet_bm25s
from evidex.tools.store import BM25_STOPWORDS, BM25_TOKEN_PATTERN

WORDS = ("rotary position embedding attention layer the of model table x 1 2 benchmark quokka pangolin "
         "retrieval dense sparse token chunk page paper evidence").split()


def _corpus(n: int, seed: int = 0) -> tuple[list[str], list[str], list[int]]:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))) + rng.choice(["", " Table 3:", " x_1!"])
             for _ in range(n)]
    pdfs = [f"paper-{i % 7}" for i in range(n)]
    pages = [1 + (i // 7) % 5 for i in range(n)]
    return texts, pdfs, pages


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    bm25s = quiet_bm25s()
    texts, pdfs, pages = _corpus(400)
    folder = tmp_path_factory.mktemp("bm25") / "chunks.text_content"
    tokens = bm25s.tokenize(texts, token_pattern=BM25_TOKEN_PATTERN, stopwords=BM25_STOPWORDS, show_progress=False)
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    model.save(str(folder), show_progress=False)
    boxes = [[i, i, 10, 10] if i % 3 else None for i in range(len(texts))]
    write_entries(folder, [f"k{i:04d}" for i in range(len(texts))], pdfs, pages, boxes)
    return folder, model, texts, pdfs, pages


def test_query_tokens_match_bm25s():
    bm25s = quiet_bm25s()
    for text in ("The Rotary position-embedding of x_1 (Table 3)!", "the of and", "", "ÄÖü naïve café 42"):
        want = bm25s.tokenize([text], token_pattern=BM25_TOKEN_PATTERN, stopwords=BM25_STOPWORDS, return_ids=False,
                              show_progress=False)[0]
        assert query_tokens(text) == want


def test_scores_equal_bm25s_with_and_without_a_mask(index):
    folder, model, texts, pdfs, _ = index
    idx = BM25Index(folder)
    assert idx.n == len(texts)
    for query in ("rotary attention", "quokka pangolin table 3", "x 1", "benchmark the evidence evidence"):
        tokens = query_tokens(query)
        want = model.get_scores(tokens)
        got = idx.search(tokens, k=15)
        assert got, query
        top = np.sort(want)[::-1][: len(got)]
        assert np.allclose([s for _, s in got], top, rtol=1e-5)
        assert all(abs(want[i] - s) < 1e-4 for i, s in got)
        docs = idx.candidates(parse_filter("pdf_id == 'paper-3'"), "chunks", "text_content")
        assert set(docs.tolist()) == {i for i, p in enumerate(pdfs) if p == "paper-3"}
        mask = np.array([p == "paper-3" for p in pdfs], dtype=np.float32)
        masked = model.get_scores(tokens, weight_mask=mask)
        got = idx.search(tokens, k=5, docs=docs)
        assert [round(s, 4) for _, s in got] == [round(float(s), 4) for s in np.sort(masked)[::-1][: len(got)]]
        assert all(pdfs[i] == "paper-3" for i, _ in got)


def test_filters_narrow_candidates_exactly(index):
    folder, _, texts, pdfs, pages = index
    idx = BM25Index(folder)
    for text in ("pdf_id in ['paper-1', 'paper-2'] and page_number <= 2", "page_number == 3",
                 "pdf_id == 'paper-1' or pdf_id == 'paper-4'", "bbox[0] < 50", "not (pdf_id == 'paper-1')",
                 "pdf_id == 'nope'"):
        flt = parse_filter(text)
        want = [i for i in range(idx.n) if flt.matches({**idx.record(i), "table_name": "chunks", "column_name": "text_content"})]
        assert idx.candidates(flt, "chunks", "text_content").tolist() == want, text


def test_field_values():
    assert parse_filter("pdf_id == 'a' and page_number < 3").field_values("pdf_id") == {"a"}
    assert parse_filter("pdf_id in ['a', 'b'] or pdf_id == 'c'").field_values("pdf_id") == {"a", "b", "c"}
    assert parse_filter("pdf_id == 'a' or page_number == 1").field_values("pdf_id") is None
    assert parse_filter("not pdf_id == 'a'").field_values("pdf_id") is None
    assert parse_filter("pdf_id == 'a' and pdf_id == 'b'").field_values("pdf_id") == frozenset()
    assert parse_filter("bbox[0] > 1 and page_number == 2").fields() == {"bbox", "page_number"}


def test_legacy_entries_json_is_read(index, tmp_path):
    folder, model, texts, pdfs, pages = index
    legacy = tmp_path / "chunks.text_content"
    model.save(str(legacy), show_progress=False)
    idx = BM25Index(folder)
    (legacy / "entries.json").write_text(json.dumps({
        "primary_key": [str(k) for k in idx.keys], "pdf_id": pdfs, "page_number": pages,
        "bbox": [idx.record(i)["bbox"] for i in range(idx.n)]}))
    old = BM25Index(legacy)
    assert [old.record(i) for i in range(0, old.n, 37)] == [idx.record(i) for i in range(0, idx.n, 37)]
    tokens = query_tokens("quokka rotary")
    assert old.search(tokens, 10) == idx.search(tokens, 10)

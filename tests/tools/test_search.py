"""Search tool: dense / BM25 / hybrid over encoded columns, filters (Chroma where + post-filter + BM25
mask), errors, CLI; and (shared_data) real MiniLM search over small corpus papers."""
from __future__ import annotations

import pytest

from evidex.tools.filters import FilterSyntaxError
from evidex.tools.search import SearchArgs, SearchError, get_engine
from evidex.tools.search import main as search_cli


@pytest.fixture()
def engine(synthetic_store, fake_embeddings):
    store, _ = synthetic_store
    return get_engine(store_dir=store, embeddings=fake_embeddings)


def s(engine, **kw):
    return engine.search(SearchArgs(**kw))


def test_bm25_dense_hybrid_find_the_cell(engine):
    for mode in ("bm25", "dense", "hybrid"):
        res = s(engine, query="quokkas", table="metadata", column="abstract", mode=mode, limit=2)
        assert res.mode == mode and res.hits, mode
        top = res.hits[0]
        assert "quokkas" in top.text and top.table_name == "metadata" and top.column_name == "abstract"
        assert top.page_number == -1 and top.pdf_id == top.primary_key
    res = s(engine, query="pangolin benchmark accuracy", table="tables", column="table_caption", mode="hybrid")
    assert res.hits[0].text.startswith("Table 1:") and res.hits[0].bbox and res.hits[0].page_number == 2
    assert res.hits[0].dense_rank is not None and res.hits[0].bm25_rank is not None


def test_filters_restrict_hits(engine):
    base = s(engine, query="introduction parsers evaluation", table="chunks", column="text_content", mode="hybrid", limit=20)
    pids = sorted({h.pdf_id for h in base.hits})
    assert len(pids) == 2
    for mode in ("dense", "bm25", "hybrid"):
        res = s(engine, query="introduction parsers evaluation", table="chunks", column="text_content", mode=mode,
                filter=f"pdf_id == '{pids[0]}' and page_number == 1", limit=20)
        assert res.hits and all(h.pdf_id == pids[0] and h.page_number == 1 for h in res.hits), mode
        # arithmetic on the box is a post-filter (dense) / mask (bm25)
        res = s(engine, query="introduction parsers evaluation", table="chunks", column="text_content", mode=mode,
                filter="bbox[1] + bbox[3] < 300", limit=20)
        assert all(h.bbox[1] + h.bbox[3] < 300 for h in res.hits), mode
        res = s(engine, query="quokkas", table="chunks", column="text_content", mode=mode, filter="page_number > 99")
        assert res.hits == [] and "no matching" in res.to_text()


def test_errors_are_actionable(engine):
    with pytest.raises(SearchError, match="not searchable. Searchable columns:.*chunks.text_content"):
        s(engine, query="x", table="chunks", column="ordinal")
    with pytest.raises(SearchError, match="no dense index"):
        s(engine, query="x", table="pages", column="page_content", mode="dense")
    res = s(engine, query="introduction", table="pages", column="page_content", mode="hybrid")
    assert res.mode == "bm25" and "BM25 only" in res.note
    with pytest.raises(FilterSyntaxError, match="position 12"):
        s(engine, query="x", table="chunks", column="text_content", filter="page_number = 1")
    with pytest.raises(ValueError):
        SearchArgs(query="x", table="chunks", column="text_content", limit=0)
    assert s(engine, query="the of and", table="chunks", column="text_content", mode="bm25").hits == []


def test_search_output_text_maps_back_to_cells(engine):
    text = s(engine, query="bounding boxes study", table="reference", column="reference_content", mode="bm25", limit=3).to_text()
    assert '"primary_key"' in text and '"pdf_id"' in text and '"page_number": 3' in text


@pytest.mark.shared_data
def test_real_minilm_search(corpus_store, capsys):
    store, report = corpus_store
    geval = next(f.paper_id for f in report.files if f.path.endswith("g-eval-nlg-evaluation-gpt4.pdf"))
    eng = get_engine(store_dir=store)
    res = eng.search(SearchArgs(query="evaluate generated text with GPT-4 chain of thought form-filling",
                                table="chunks", column="text_content", mode="dense", limit=3))
    assert res.hits[0].pdf_id == geval
    res = eng.search(SearchArgs(query="G-Eval", table="metadata", column="title", mode="hybrid", limit=1))
    assert res.hits[0].pdf_id == geval
    res = eng.search(SearchArgs(query="Semantic Scholar literature graph", table="chunks", column="text_content",
                                filter=f"pdf_id != '{geval}' and page_number <= 2", limit=5))
    assert res.hits and all(h.pdf_id != geval and h.page_number <= 2 for h in res.hits)
    assert search_cli(["--store-dir", str(store), "--table", "reference", "--column", "reference_content",
                       "--query", "BLEU", "--mode", "bm25", "--limit", "2"]) == 0
    assert "results (bm25)" in capsys.readouterr().out
    assert search_cli(["--store-dir", str(store), "--table", "chunks", "--column", "text_content", "--query", "x",
                       "--filter", "page_id == 2"]) == 2

"""QASPER papers into the multiview store without PDFs (tools.ingest.qasper): the layout (abstract page, one page and
one verbatim chunk per paragraph, captions as tables/images, the section tree), dense and BM25 indexes, idempotent
re-runs, a changed paper replaced, evidence read back (tools.qasper_answer), and a PDF store refused."""
from __future__ import annotations

import pytest

from evidex.tools.qasper_data import load_qasper
from qasper_tiny import BLANK, CAPTION, DATA, INTRO, MODEL, P1, P2, HashEmbeddings, official, write_official


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from evidex.tools.ingest.qasper import ingest_qasper

    folder = tmp_path_factory.mktemp("qasper")
    papers = load_qasper(write_official(folder))
    report = ingest_qasper(papers, store_dir=folder / "store", embeddings=HashEmbeddings(), progress=False)
    return folder / "store", papers, report


def rows(store_dir, sql, params=()):
    from evidex.tools.store import connect_readonly, store_paths

    return connect_readonly(store_paths(store_dir=store_dir).db).cursor().execute(sql, list(params)).fetchall()


def test_layout_of_a_paper(store):
    store_dir, papers, report = store
    assert [f.status for f in report.files] == ["ingested", "ingested"]
    pid = papers[0].store_id
    pages = rows(store_dir, "SELECT page_number, page_content FROM pages WHERE CAST(ref_paper_id AS VARCHAR) = ? "
                            "ORDER BY 1", [pid])
    texts = [t for _, t in pages]
    assert texts[0] == official()[P1]["abstract"]  # page 1: the abstract
    assert texts[1:6] == [INTRO, DATA, BLANK, MODEL, official()[P1]["full_text"][3]["paragraphs"][0]]
    assert texts[6:] == [CAPTION, "Figure 1: A pangolin."]
    chunks = rows(store_dir, "SELECT p.page_number, c.text_content FROM chunks c JOIN pages p ON c.ref_page_id = "
                             "p.page_id WHERE CAST(c.ref_paper_id AS VARCHAR) = ? ORDER BY 1", [pid])
    assert [n for n, _ in chunks] == [1, 2, 3, 5, 6, 7, 8]  # the blank paragraph keeps its page, has no chunk
    assert all(t == texts[n - 1] for n, t in chunks)  # verbatim
    assert rows(store_dir, "SELECT table_caption FROM tables WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid]) == [(CAPTION,)]
    assert rows(store_dir, "SELECT image_caption FROM images WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])[0][0].startswith("Figure 1")
    meta = rows(store_dir, "SELECT title, num_pages, conference_year, download_url FROM metadata "
                           "WHERE CAST(paper_id AS VARCHAR) = ?", [pid])[0]
    assert meta == ("Counting Pangolins with Detectors", 8, "qasper", f"https://arxiv.org/abs/{P1}")


def test_section_tree(store):
    store_dir, papers, _ = store
    secs = rows(store_dir, "SELECT s.ordinal, s.section_title, s.level, p.section_title, s.page_numbers, "
                           "s.section_content FROM sections s LEFT JOIN sections p ON s.parent_section_id = p.section_id "
                           "WHERE CAST(s.ref_paper_id AS VARCHAR) = ? ORDER BY 1", [papers[0].store_id])
    assert [(o, t, lvl, parent) for o, t, lvl, parent, _, _ in secs] == [
        (0, "Abstract", 1, None), (1, "Introduction", 1, None), (2, "Method", 1, None), (3, "Data", 2, "Method"),
        (4, "Model", 2, "Method"), (5, "Results", 1, None)]
    method = secs[2]
    assert method[4] == [3, 4, 5] and DATA in method[5] and MODEL in method[5]  # a made-up parent holds its children
    untitled = rows(store_dir, "SELECT section_title, level FROM sections WHERE CAST(ref_paper_id AS VARCHAR) = ? "
                               "AND ordinal = 1", [papers[1].store_id])
    assert untitled == [("", 1)]  # section_name null


def test_indexes_search_and_evidence(store):
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.qasper_answer import page_evidence
    from evidex.tools.search import SearchArgs, get_engine

    store_dir, papers, report = store
    assert report.dense_entries["chunks.text_content"] == 7 + 3 and report.bm25_entries["chunks.text_content"] == 10
    engine = get_engine(store_dir=store_dir, embeddings=HashEmbeddings())
    flt = f"pdf_id == '{papers[0].store_id}'"
    for mode in ("bm25", "dense", "hybrid"):
        hits = engine.search(SearchArgs(query="PangoSet camera trap images dataset", table="chunks",
                                        column="text_content", filter=flt, mode=mode, limit=3)).hits
        assert hits and all(h.pdf_id == papers[0].store_id for h in hits)
        assert DATA in [h.text for h in hits]

    ev = page_evidence(PaperStore(None, str(store_dir)).pages([papers[0].store_id]))
    assert ev[1] is None and ev[2] == INTRO and ev[4] is None  # abstract and blank paragraph: no evidence
    assert ev[7] == "FLOAT SELECTED: " + CAPTION and ev[8] == "FLOAT SELECTED: Figure 1: A pangolin."


def test_rerun_skips_and_a_changed_paper_is_replaced(store, tmp_path):
    from evidex.tools.ingest.qasper import ingest_qasper

    store_dir, papers, _ = store
    again = ingest_qasper(papers, store_dir=store_dir, embeddings=HashEmbeddings(), progress=False)
    assert [f.status for f in again.files] == ["skipped", "skipped"]
    data = official()
    data[P2]["full_text"][1]["paragraphs"] = ["A new result paragraph."]
    path = tmp_path / "changed.json"
    import json

    path.write_text(json.dumps(data))
    changed = ingest_qasper(load_qasper(path), store_dir=store_dir, embeddings=HashEmbeddings(), progress=False)
    assert sorted(f.status for f in changed.files) == ["ingested", "skipped"]
    texts = [r[0] for r in rows(store_dir, "SELECT page_content FROM pages WHERE CAST(ref_paper_id AS VARCHAR) = ? "
                                           "ORDER BY page_number", [papers[1].store_id])]
    assert texts[-1] == "A new result paragraph." and changed.rows["metadata"] == 2
    assert changed.dense_entries["chunks.text_content"] == 10  # the old vectors of the paper are gone


def test_a_pdf_store_is_refused(tmp_path):
    from evidex.tools.ingest.errors import StoreConfigMismatch
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.store import connect_writable, store_paths

    con = connect_writable(store_paths(store_dir=tmp_path).db)
    con.execute("INSERT INTO evidex.files VALUES ('sha', '/x.pdf', NULL, 1, true, NULL, 0, [])")
    con.execute("INSERT OR REPLACE INTO evidex.info VALUES ('parse_fingerprint', 'abc')")
    con.close()
    with pytest.raises(StoreConfigMismatch, match="store of their own"):
        ingest_qasper(load_qasper(write_official(tmp_path)), store_dir=tmp_path, embeddings=HashEmbeddings(),
                      progress=False)


def test_real_minilm_store_answers_dense_and_hybrid_search(embedder, tmp_path):
    """The real embedding model end to end: collections named after it, queries embedded by the search engine."""
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.search import SearchArgs, search

    papers = load_qasper(write_official(tmp_path))
    report = ingest_qasper(papers, store_dir=tmp_path / "store", embeddings=embedder, progress=False)
    assert report.dense_entries["chunks.text_content"] == 10
    for mode in ("dense", "hybrid"):
        hits = search(SearchArgs(query="Which collection of wildlife photos was gathered?", table="chunks",
                                 column="text_content", filter=f"pdf_id == '{papers[0].store_id}'", mode=mode,
                                 limit=2), store_dir=tmp_path / "store").hits
        assert hits[0].text == DATA, mode


def test_section_headings_in_the_index_keep_the_text_verbatim(tmp_path):
    """``heading: true`` on chunks: a chunk is indexed as '<deepest section title>: <text>', so a keyword search for a
    section's name finds its paragraph, while the stored chunk and the search hit stay the verbatim paragraph;
    turning it on re-embeds and rebuilds the keyword index of an existing store."""
    from evidex.tools.ingest.config import IndexedColumn, load_ingest_config
    from evidex.tools.ingest.indexer import cell_query
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.search import SearchArgs, get_engine

    papers = load_qasper(write_official(tmp_path))
    store_dir = tmp_path / "store"
    qasper = load_ingest_config("qasper")
    assert any(c.heading for c in qasper.index if c.table == "chunks")  # the QASPER default
    plain = qasper.model_copy(update={"index": [c.model_copy(update={"heading": False}) for c in qasper.index]})
    ingest_qasper(papers, store_dir=store_dir, config=plain, embeddings=HashEmbeddings(), progress=False)
    flt = f"pdf_id == '{papers[0].store_id}'"

    def bm25_texts(query):
        engine = get_engine(store_dir=store_dir, embeddings=HashEmbeddings())
        return [h.text for h in engine.search(SearchArgs(query=query, table="chunks", column="text_content",
                                                         filter=flt, mode="bm25", limit=3)).hits]

    assert MODEL not in bm25_texts("model")  # the word is only in the section title
    headed = plain.model_copy(update={"index": [c.model_copy(update={"heading": c.table == "chunks"})
                                                for c in plain.index]})
    again = ingest_qasper(papers, store_dir=store_dir, config=headed, embeddings=HashEmbeddings(), progress=False)
    assert again.dense_entries["chunks.text_content"] == 10  # re-embedded, nothing doubled
    assert bm25_texts("model")[0] == MODEL  # found by its section, returned verbatim
    indexed = dict((r[1].split(": ", 1)[1], r[1].split(": ", 1)[0])
                   for r in rows(store_dir, cell_query("chunks", "text_content", False, heading=True)) if ": " in r[1])
    assert indexed[DATA] == "Data" and indexed[MODEL] == "Model" and indexed[INTRO] == "Introduction"
    stored = {r[0] for r in rows(store_dir, "SELECT text_content FROM chunks")}
    assert DATA in stored and not any(t.startswith("Data: ") for t in stored)
    with pytest.raises(ValueError, match="chunks only"):
        IndexedColumn(table="sections", column="section_title", heading=True)


def test_check_repair_works_on_a_qasper_store(tmp_path):
    """--check --repair re-embeds from the stored rows (nothing parsed again), so a QASPER store, which has no PDFs,
    is repaired like any other: two vectors deleted behind its back are found and written again."""
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.ingest.upkeep import check_store, repair_store
    from evidex.tools.vectorstore import chroma_client

    store = tmp_path / "store"
    papers = load_qasper(write_official(tmp_path))
    ingest_qasper(papers, store_dir=store, embeddings=HashEmbeddings(), progress=False)
    client = chroma_client(store)
    col = next(client.get_collection(c.name, embedding_function=None) for c in client.list_collections()
               if c.name.startswith("chunks__text_content"))
    ids = col.get(where={"pdf_id": papers[0].store_id}, include=[], limit=2)["ids"]
    col.delete(ids=ids)
    assert sum(p.missing for p in check_store(store_dir=store).indexes) == 2
    repaired = repair_store(store_dir=store, embeddings=HashEmbeddings(), progress=False)
    assert repaired.papers_embedded == 1 and repaired.after.ok, repaired.after.problems()
    assert sorted(col.get(ids=ids, include=[])["ids"]) == sorted(ids)

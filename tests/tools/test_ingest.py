"""Ingestion: schema and rows from synthetic papers, bad files, OCR, incremental runs, crash recovery,
metadata JSON, config validation, summaries hook, parallel workers; and (shared_data) small real papers."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import duckdb
import pytest

from pdfgen_helpers import SMALL_CORPUS, make_bad_pdfs, make_paper_pdf, make_scanned_pdf
from evidex.tools.ingest import IngestConfigError, airqa_paper_uuid, ingest, load_ingest_config
from evidex.tools.ingest.__main__ import main as ingest_cli
from evidex.tools.ingest.config import config_from_dict
from evidex.tools.ingest.parser import ocr_available
from evidex.tools.store import TABLES, close_readonly, row_uuid, store_paths


def q(store: Path, sql: str, params=None):
    close_readonly()
    con = duckdb.connect(str(store_paths(store_dir=store).db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


# ------------------------------------------------------------------------------------------------ config + ids


@pytest.mark.parametrize("rows, expected", [
    # sub-columns read as one cell: header words name them; "Abs. Avg Nor. Avg" is two names of two words
    ([["Model", "WinoGrande AGIEval GSM8k", "Abs. Avg Nor. Avg"],
      ["LM", "69.30 37.55 47.54", "38.56 0.776"],
      ["Task Arithmetic", "67.88 41.41 63.38", "45.01 0.932"]],
     [["Model", "WinoGrande", "AGIEval", "GSM8k", "Abs. Avg", "Nor. Avg"],
      ["LM", "69.30", "37.55", "47.54", "38.56", "0.776"],
      ["Task Arithmetic", "67.88", "41.41", "63.38", "45.01", "0.932"]]),
    # a two-row header (the group name stays over the first sub-column), a section label row, marks and dashes
    ([["", "SST2", "HATEXPLAIN"], ["", "ACC", "ACC↓ AOPC↑"], ["GlobEnc", "67.14", "47.65† -"],
      ["", "", "Large"], ["+ FFN", "64.90", "46.89 0.406*"]],
     [["", "SST2", "HATEXPLAIN", ""], ["", "ACC", "ACC↓", "AOPC↑"], ["GlobEnc", "67.14", "47.65†", "-"],
      ["", "", "Large", ""], ["+ FFN", "64.90", "46.89", "0.406*"]]),
    # values with their spreads, two to a cell
    ([["Model", "Top-20 Top-100"], ["BM25", "62.9 (0.1) 78.3 ±0.2"], ["COS", "68.0 (0.3) 81.8 ±0.1"]],
     [["Model", "Top-20", "Top-100"], ["BM25", "62.9 (0.1)", "78.3 ±0.2"], ["COS", "68.0 (0.3)", "81.8 ±0.1"]]),
])
def test_packed_table_columns_are_split(rows, expected):
    from evidex.tools.ingest.elements import split_packed_columns

    assert split_packed_columns(rows) == expected


@pytest.mark.parametrize("rows", [
    [["Method", "Name"], ["A", "Task Arithmetic"], ["B", "Ties Merging"]],  # words, not values
    [["Dataset", "# Clar. Q Link"], ["ClariT", "260K github.com/x"], ["Qulac", "3K github.com/y"]],  # value + text
    [["Model", "Years"], ["A", "2019"], ["B", "2020 2021"]],  # cells differ in how many values they hold
    [["Model", "Acc"], ["A", "1.2 ± 0.3"], ["B", "1.4 ± 0.1"]],  # a spread is one value
    [["Model", "F1"], ["A", "37.17 (0.97)"], ["B", "41.45 (1.19)"]],  # so is a value with its bracketed spread
    [["Model", "Acc"], ["A", "1.2 3.4"], ["B", "n/a text"]],  # a text cell below the values
])
def test_table_columns_that_are_not_packed_stay_whole(rows):
    from evidex.tools.ingest.elements import split_packed_columns

    assert split_packed_columns(rows) == rows



def test_default_config_is_valid():
    cfg = load_ingest_config()
    pairs = {(c.table, c.column) for c in cfg.index}
    assert ("chunks", "text_content") in pairs and cfg.parser.tables == "fast"


@pytest.mark.parametrize(
    "raw, fragments",
    [
        ({"parser": {"tables": "fancy"}}, ["parser.tables", "'fancy' is not allowed", "fast", "layout", "off"]),
        ({"parsr": {}}, ["parsr", "unknown key (allowed: parser, embedding, summaries, index, vector)"]),
        ({"index": [{"table": "chunk", "column": "text_content"}]}, ["index.0.table", "not a table", "chunks"]),
        ({"index": [{"table": "chunks", "column": "ordinal"}]}, ["not a text column of 'chunks'", "allowed: text_content"]),
        ({"parser": {"chunk_tokens": 5}}, ["parser.chunk_tokens", "greater than or equal to 32"]),
        ({"index": [{"table": "chunks", "column": "text_content", "dense": False, "bm25": False}]}, ["at least one"]),
    ],
)
def test_config_errors_name_file_key_and_allowed_values(raw, fragments, tmp_path):
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(IngestConfigError) as info:
        load_ingest_config(path)
    msg = str(info.value)
    assert str(path) in msg
    for f in fragments:
        assert f in msg, msg


def test_unknown_config_name_lists_known():
    with pytest.raises(IngestConfigError, match="known: .*default"):
        load_ingest_config("no-such-config")


def test_airqa_uuid_matches_spec_and_nfkc():
    # value from the corpus manifest (DecompX, ACL 2023)
    assert airqa_paper_uuid("DecompX: Explaining Transformers Decisions by Propagating Token Decomposition", "acl2023") == (
        "cd91a901-384e-597b-bb20-2d4f9fa0c4f9"
    )
    # ligatures and full-width letters normalise to the same id
    assert airqa_paper_uuid("Simpliﬁed Data Processing", "osdi2004") == airqa_paper_uuid("Simplified Data Processing", "osdi2004")
    assert airqa_paper_uuid("ＢＥＲＴ", "arxiv2019") == airqa_paper_uuid("BERT", "arxiv2019")
    assert airqa_paper_uuid("x") == str(uuid.uuid5(uuid.NAMESPACE_DNS, "x-uncategorized"))
    with pytest.raises(ValueError, match="conference_year"):
        airqa_paper_uuid("x", "acl 2023")


# ------------------------------------------------------------------------------------------------ synthetic store


def test_synthetic_store_has_all_views(synthetic_store):
    store, report = synthetic_store
    assert report.count("ingested") == 2
    for table in TABLES:
        assert q(store, f"SELECT count(*) FROM {table}")[0][0] > 0, table
    pid, title, authors, abstract, num_pages = q(
        store, "SELECT CAST(paper_id AS VARCHAR), title, authors, abstract, num_pages FROM metadata WHERE title LIKE 'Synthetic%'"
    )[0]
    assert pid == airqa_paper_uuid("Synthetic Evidence Paper About Tables", "uncategorized")
    assert authors == ["Alice Example", "Bob Sample", "Carol Tester"]
    assert "quokkas" in abstract and num_pages == 3
    # deterministic NeuSym-style ids
    assert q(store, "SELECT CAST(page_id AS VARCHAR) FROM pages WHERE CAST(ref_paper_id AS VARCHAR) = ? AND page_number = 1", [pid])[0][0] == row_uuid(f"{pid}_page_1")
    # nested sections with pages
    secs = q(store, "SELECT section_title, level, parent_section_id IS NULL, page_numbers FROM sections WHERE CAST(ref_paper_id AS VARCHAR) = ? ORDER BY ordinal", [pid])
    titles = [s[0] for s in secs]
    assert titles[:3] == ["Abstract", "1 Introduction", "1.1 Background and Motivation"]
    assert secs[2][1] == 2 and secs[2][2] is False and secs[2][3] == [1]
    assert "References" in titles
    # the table: caption, markdown, HTML, box [x0, y0, w, h]
    cap, md, html, box = q(store, "SELECT table_caption, table_markdown, table_content, bounding_box FROM tables WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])[0]
    assert cap.startswith("Table 1:") and "|Ours|74.9|71.3|" in md and "<td>74.9</td>" in html
    assert len(box) == 4 and box[2] > 200 and box[3] > 30
    # the picture and its caption; box is [x0, y0, w, h] (the image was placed at 150,330 .. 390,490)
    cap, box = q(store, "SELECT image_caption, bounding_box FROM images WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])[0]
    assert cap.startswith("Figure 1:") and list(box) == [150, 330, 240, 160]
    eq = q(store, "SELECT equation_content, equation_number FROM equations WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])
    assert eq and eq[0][1] == "1" and "d" in eq[0][0]
    refs = q(store, "SELECT reference_content FROM reference WHERE CAST(ref_paper_id AS VARCHAR) = ? ORDER BY ordinal", [pid])
    assert [r[0][:3] for r in refs] == ["[1]", "[2]", "[3]"]
    # chunks stay within the token budget and carry boxes
    for text, n, box in q(store, "SELECT text_content, token_count, bounding_box FROM chunks"):
        assert 0 < n <= 200 and text and len(box) == 4
    manifest = json.loads(store_paths(store_dir=store).index_manifest.read_text())
    assert {p["table"] for p in manifest["pairs"] if p["dense_entries"]} >= {"chunks", "metadata"}
    # bibliography entries are keyword-only (configs/ingest/default.yaml): BM25 entries, no vectors
    ref = next(p for p in manifest["pairs"] if p["table"] == "reference")
    assert ref["bm25_entries"] >= 3 and not ref["dense_entries"]


def test_bad_pdfs_are_per_file_errors(tmp_path, fake_embeddings):
    make_bad_pdfs(tmp_path / "in")
    make_paper_pdf(tmp_path / "in" / "good.pdf")
    store = tmp_path / "store"
    report = ingest([tmp_path / "in", tmp_path / "in" / "missing.pdf"], store_dir=store, embeddings=fake_embeddings, progress=False)
    kinds = {Path(f.path).name: f.error_kind for f in report.failed}
    assert kinds == {
        "zero.pdf": "empty_file",
        "notes.pdf": "not_a_pdf",
        "corrupt.pdf": "corrupt",
        "encrypted.pdf": "encrypted",
        "missing.pdf": "not_found",
    }
    messages = {Path(f.path).name: f.error for f in report.failed}
    assert "0 bytes" in messages["zero.pdf"] and "HTML" in messages["notes.pdf"]
    assert "password" in messages["encrypted.pdf"] and "qpdf" in messages["encrypted.pdf"]
    assert report.count("ingested") == 1
    assert q(store, "SELECT count(*) FROM metadata")[0][0] == 1
    # the CLI reports the same and exits non-zero
    assert ingest_cli([str(tmp_path / "in"), "--store-dir", str(store), "--quiet"]) == 1
    assert ingest_cli([str(tmp_path / "in" / "good.pdf"), "--store-dir", str(store), "--quiet"]) == 0


def test_scanned_pdf_is_ocrd_or_flagged(tmp_path, fake_embeddings):
    (tmp_path / "in").mkdir()
    make_scanned_pdf(tmp_path / "in" / "scan.pdf")
    base = load_ingest_config().model_dump()
    off = config_from_dict({**base, "parser": {**base["parser"], "ocr": "off"}})
    report = ingest([tmp_path / "in"], store_dir=tmp_path / "s1", config=off, embeddings=fake_embeddings, progress=False)
    assert [f.error_kind for f in report.failed] == ["scanned_no_ocr"]
    assert "tesseract" in report.failed[0].error
    if not ocr_available():
        pytest.skip("tesseract-ocr is not installed: OCR path not tested (apt-get install -y tesseract-ocr)")
    report = ingest([tmp_path / "in"], store_dir=tmp_path / "s2", embeddings=fake_embeddings, progress=False)
    assert not report.failed
    ocr, content = q(tmp_path / "s2", "SELECT ocr, page_content FROM pages")[0]
    assert ocr is True and "quokkas" in content.lower()


def test_incremental_skip_replace_and_from_scratch(tmp_path, fake_embeddings):
    src = tmp_path / "in"
    src.mkdir()
    make_paper_pdf(src / "a.pdf", "Paper Alpha On Incremental Ingestion")
    make_paper_pdf(src / "b.pdf", "Paper Beta On Incremental Ingestion")
    store = tmp_path / "store"
    kw = dict(store_dir=store, embeddings=fake_embeddings, progress=False)
    assert ingest([src], **kw).count("ingested") == 2
    again = ingest([src], **kw)
    assert again.count("skipped") == 2 and again.count("ingested") == 0
    old_pid = airqa_paper_uuid("Paper Beta On Incremental Ingestion")
    make_paper_pdf(src / "b.pdf", "Paper Gamma Replacing Beta")  # same path, new content
    changed = ingest([src], **kw)
    assert changed.count("ingested") == 1 and changed.count("skipped") == 1
    titles = sorted(r[0] for r in q(store, "SELECT title FROM metadata"))
    assert titles == ["Paper Alpha On Incremental Ingestion", "Paper Gamma Replacing Beta"]
    assert q(store, "SELECT count(*) FROM chunks WHERE CAST(ref_paper_id AS VARCHAR) = ?", [old_pid])[0][0] == 0
    from evidex.tools.search import SearchArgs, get_engine

    hits = get_engine(store_dir=store, embeddings=fake_embeddings).search(
        SearchArgs(query="Beta", table="metadata", column="title", mode="dense", limit=5)
    ).hits
    assert old_pid not in {h.pdf_id for h in hits}  # its vectors were removed too
    scratch = ingest([src], from_scratch=True, **kw)
    assert scratch.count("ingested") == 2
    assert q(store, "SELECT count(*) FROM metadata")[0][0] == 2


def test_crash_mid_batch_then_rerun_completes(tmp_path, fake_embeddings, monkeypatch):
    import evidex.tools.ingest.pipeline as pipeline

    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):
        make_paper_pdf(src / f"p{i}.pdf", f"Crash Test Paper Number {i}", seed=i)
    store = tmp_path / "store"
    real_write = pipeline.write_paper
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt("simulated crash in the middle of the batch")
        return real_write(*a, **k)

    monkeypatch.setattr(pipeline, "write_paper", flaky)
    with pytest.raises(KeyboardInterrupt):
        ingest([src], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert q(store, "SELECT count(*) FROM metadata")[0][0] == 1  # the first paper was committed
    monkeypatch.setattr(pipeline, "write_paper", real_write)

    # second crash: after the DB commit, while embedding
    real_index = pipeline.DenseIndexer.index_paper

    def broken_index(self, con, pid):
        raise RuntimeError("simulated embedding crash")

    monkeypatch.setattr(pipeline.DenseIndexer, "index_paper", broken_index)
    with pytest.raises(RuntimeError):
        ingest([src], store_dir=store, embeddings=fake_embeddings, progress=False)
    monkeypatch.setattr(pipeline.DenseIndexer, "index_paper", real_index)

    report = ingest([src], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert not report.failed
    assert report.count("reindexed") == 1 and report.count("ingested") == 1 and report.count("skipped") == 1
    assert q(store, "SELECT count(*) FROM metadata")[0][0] == 3
    assert q(store, "SELECT count(*) FROM evidex.files WHERE NOT dense_indexed")[0][0] == 0
    assert q(store, "SELECT count(*), count(DISTINCT chunk_id) FROM chunks")[0] == q(store, "SELECT count(*), count(*) FROM chunks")[0]


def test_metadata_json_overrides_parsed_values(tmp_path, fake_embeddings):
    src = tmp_path / "in"
    src.mkdir()
    make_paper_pdf(src / "one.pdf", "Parsed Title That Will Be Overridden")
    make_paper_pdf(src / "two.pdf", "Second Paper With Venue Only")
    given = "0b1cad92-b6c6-51a8-b7f2-5c844e572024"
    (src / "one.json").write_text(json.dumps({
        "uuid": given, "title": "Official Title", "authors": ["Ada Lovelace"], "conference": "ACL", "year": 2023,
        "conference_full": "Annual Meeting of the ACL", "tldr": "Short.", "tags": ["x"], "pdf_path": "papers/acl2023/x.pdf",
    }))
    meta_dir = tmp_path / "meta"
    meta_dir.mkdir()
    (meta_dir / "two.json").write_text(json.dumps({"conference_year": "emnlp2024"}))
    store = tmp_path / "store"
    report = ingest([src], store_dir=store, metadata_dir=meta_dir, embeddings=fake_embeddings, progress=False)
    assert not report.failed
    rows = dict((r[1], r) for r in q(store, "SELECT CAST(paper_id AS VARCHAR), title, authors, conference_year, pub_year, tldr FROM metadata"))
    assert rows["Official Title"][0] == given
    assert rows["Official Title"][2] == ["Ada Lovelace"] and rows["Official Title"][3] == "acl2023" and rows["Official Title"][4] == 2023
    two = rows["Second Paper With Venue Only"]
    assert two[0] == airqa_paper_uuid("Second Paper With Venue Only", "emnlp2024") and two[3] == "emnlp2024"


def test_summaries_hook_and_cache(tmp_path, fake_embeddings):
    src = tmp_path / "in"
    src.mkdir()
    make_paper_pdf(src / "s.pdf", "Paper With Summaries")
    cfg = config_from_dict({"summaries": {"enabled": True, "views": ["pages", "tables", "images"], "max_words": 10},
                            "index": [{"table": "pages", "column": "page_summary"}]})
    with pytest.raises(IngestConfigError, match="summariser"):
        ingest([src], store_dir=tmp_path / "st", config=cfg, embeddings=fake_embeddings, progress=False)
    seen = []

    def summariser(req):
        seen.append((req.view, req.image_png is not None))
        return f"summary of {req.view}"

    store = tmp_path / "st"
    ingest([src], store_dir=store, config=cfg, summariser=summariser, embeddings=fake_embeddings, progress=False)
    assert ("images", True) in seen and any(v == "pages" for v, _ in seen)
    assert q(store, "SELECT count(*) FROM pages WHERE page_summary = 'summary of pages'")[0][0] >= 2
    n = len(seen)
    ingest([src], store_dir=store, config=cfg, summariser=summariser, from_scratch=True, embeddings=fake_embeddings, progress=False)
    assert len(seen) == n  # every summary came from the cache


def test_parallel_workers_match_serial(tmp_path, fake_embeddings, synthetic_dir):
    r1 = ingest([synthetic_dir], store_dir=tmp_path / "serial", embeddings=fake_embeddings, progress=False)
    r2 = ingest([synthetic_dir], store_dir=tmp_path / "par", embeddings=fake_embeddings, workers=2, progress=False)
    assert not r1.failed and not r2.failed
    assert r1.rows == r2.rows


def test_store_config_mismatch_requires_from_scratch(tmp_path, fake_embeddings, synthetic_dir):
    from evidex.tools.ingest import StoreConfigMismatch

    store = tmp_path / "store"
    ingest([synthetic_dir], store_dir=store, embeddings=fake_embeddings, progress=False)
    other = config_from_dict({"parser": {"chunk_tokens": 64}, "index": [{"table": "chunks", "column": "text_content"}]})
    with pytest.raises(StoreConfigMismatch, match="--from-scratch"):
        ingest([synthetic_dir], store_dir=store, config=other, embeddings=fake_embeddings, progress=False)
    report = ingest([synthetic_dir], store_dir=store, config=other, from_scratch=True, embeddings=fake_embeddings, progress=False)
    assert max(r[0] for r in q(store, "SELECT token_count FROM chunks")) <= 64 and not report.failed


def test_a_store_parsed_by_an_earlier_parser_says_so_when_papers_are_added(tmp_path, fake_embeddings, synthetic_dir,
                                                                          caplog):
    """A change of the parser's code that alters stored rows bumps its revision: a store parsed before it warns
    on the next ingest (its papers keep their rows), and --from-scratch parses them all again by this code."""
    from evidex.tools.ingest.pipeline import PARSER_REVISION

    store = tmp_path / "store"
    ingest([synthetic_dir], store_dir=store, embeddings=fake_embeddings, progress=False)
    revision = "SELECT value FROM evidex.info WHERE key = 'parser_revision'"
    assert q(store, revision) == [(str(PARSER_REVISION),)]
    with caplog.at_level("WARNING"):
        ingest([synthetic_dir], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert "earlier parser" not in caplog.text
    close_readonly()
    with duckdb.connect(str(store_paths(store_dir=store).db)) as con:  # a store made before revisions were kept
        con.execute("DELETE FROM evidex.info WHERE key = 'parser_revision'")
    with caplog.at_level("WARNING"):
        ingest([synthetic_dir], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert f"earlier parser (revision 1, now {PARSER_REVISION}" in caplog.text and "--from-scratch" in caplog.text
    caplog.clear()
    ingest([synthetic_dir], store_dir=store, from_scratch=True, embeddings=fake_embeddings, progress=False)
    assert q(store, revision) == [(str(PARSER_REVISION),)]


# ------------------------------------------------------------------------------------------------ real corpus


@pytest.mark.shared_data
def test_small_real_papers(corpus_store, manifest):
    store, report = corpus_store
    assert not report.failed, [(f.path, f.error) for f in report.failed]
    assert report.count("ingested") == len(SMALL_CORPUS)
    for table in TABLES:
        assert q(store, f"SELECT count(*) FROM {table}")[0][0] > 0, table
    by_path = {Path(f.path).name: f for f in report.files}
    for name in SMALL_CORPUS:
        entry = manifest[name]
        pid = by_path[name].paper_id
        pages = q(store, "SELECT count(*) FROM pages WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])[0][0]
        assert pages == entry["pages"], name
        if entry["airqa"]:
            assert pid == entry["airqa"][0]["uuid"], f"{name}: computed {pid}"
        n_tables = q(store, "SELECT count(*) FROM tables WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])[0][0]
        if entry["table_captions"]:
            assert n_tables >= 1, name
        n_images = q(store, "SELECT count(*) FROM images WHERE CAST(ref_paper_id AS VARCHAR) = ?", [pid])[0][0]
        if entry["figure_captions"]:
            assert n_images >= 1, name
    geval = by_path["g-eval-nlg-evaluation-gpt4.pdf"].paper_id
    n_refs = q(store, "SELECT count(*) FROM reference WHERE CAST(ref_paper_id AS VARCHAR) = ?", [geval])[0][0]
    assert n_refs >= 20
    title = q(store, "SELECT title FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?", [geval])[0][0]
    assert title.lower() == "g-eval: nlg evaluation using gpt-4 with better human alignment"  # the PDF prints G-EVAL


def test_two_files_with_the_same_paper_id(tmp_path, fake_embeddings):
    src = tmp_path / "in"
    src.mkdir()
    make_paper_pdf(src / "a.pdf", "Same Title Twice", seed=1)
    make_paper_pdf(src / "b.pdf", "Same Title Twice", seed=2)  # different bytes, same title/venue
    report = ingest([src], store_dir=tmp_path / "store", embeddings=fake_embeddings, progress=False)
    assert report.count("ingested") == 1
    assert [f.error_kind for f in report.failed] == ["duplicate_paper"]
    assert "metadata JSON" in report.failed[0].error
    again = ingest([src], store_dir=tmp_path / "store", embeddings=fake_embeddings, progress=False)
    assert again.count("skipped") == 1 and again.count("ingested") == 0  # no flip-flop between the two


class _StubParser:
    """A plug-in parser: returns one page of fixed text for any PDF."""

    name = "stub"

    def __init__(self, config, embedding_model):
        self.config = config

    def parse(self, path, sha256):
        from evidex.tools.ingest.records import ChunkRecord, PageRecord, PaperMetadata, ParsedPaper

        return ParsedPaper(
            path=str(Path(path).resolve()), sha256=sha256, parser=self.name,
            metadata=PaperMetadata(title=f"Stub parse of {Path(path).stem}", num_pages=1),
            pages=[PageRecord(page_number=1, width=612, height=792, content="stub page text")],
            chunks=[ChunkRecord(page_number=1, ordinal=1, text="stub page text", token_count=3, box=(0, 0, 612, 792))],
        )


def test_plugin_parser_by_import_path(tmp_path, fake_embeddings, synthetic_dir):
    cfg = config_from_dict({"parser": {"name": f"{__name__}:_StubParser"}, "index": [{"table": "chunks", "column": "text_content"}]})
    report = ingest([synthetic_dir], store_dir=tmp_path / "s", config=cfg, embeddings=fake_embeddings, progress=False)
    assert not report.failed and report.count("ingested") == 2
    assert q(tmp_path / "s", "SELECT count(*) FROM chunks WHERE text_content = 'stub page text'")[0][0] == 2
    with pytest.raises(IngestConfigError, match="package.module:factory"):
        config_from_dict({"parser": {"name": "mineru"}})


def test_dropping_a_dense_column_deletes_its_vectors_without_re_embedding(tmp_path, fake_embeddings, caplog):
    """A store made when bibliography entries were embedded, ingested again with today's config (keyword-only
    references): the reference vectors are deleted and nothing else is re-embedded."""
    from evidex.tools.store import collection_name
    from evidex.tools.vectorstore import chroma_client

    (tmp_path / "in").mkdir()
    make_paper_pdf(tmp_path / "in" / "a.pdf", "A Study of Quokkas", seed=5)
    today = load_ingest_config()
    before = today.model_copy(update={"index": [c.model_copy(update={"dense": True}) if c.table == "reference" else c
                                                for c in today.index]})
    store = tmp_path / "store"
    ingest([tmp_path / "in"], store_dir=store, config=before, embeddings=fake_embeddings, progress=False)
    names = lambda: {c.name if hasattr(c, "name") else c for c in chroma_client(store).list_collections()}  # noqa: E731
    refs = collection_name("reference", "reference_content", fake_embeddings.model_name)
    chunks = collection_name("chunks", "text_content", fake_embeddings.model_name)
    assert refs in names()
    n_chunks = chroma_client(store).get_collection(chunks).count()
    make_paper_pdf(tmp_path / "in" / "b.pdf", "A Study of Wombats", seed=6)
    with caplog.at_level("WARNING"):
        report = ingest([tmp_path / "in"], store_dir=store, config=today, embeddings=fake_embeddings, progress=False)
    assert "Dense columns dropped (reference.reference_content)" in caplog.text
    assert "re-embedding every paper" not in caplog.text
    assert [f.status for f in report.files if Path(f.path).name == "a.pdf"] == ["skipped"]
    assert refs not in names()
    assert chroma_client(store).get_collection(chunks).count() > n_chunks  # a's vectors kept, b's added
    manifest = json.loads((store / "indexes.json").read_text())
    ref = next(p for p in manifest["pairs"] if p["table"] == "reference")
    assert not ref["dense_entries"] and ref["bm25_entries"] > 0


@pytest.mark.shared_data
def test_stacked_tables_with_captions_below_keep_their_own_rows(corpus):
    """ACL puts table captions below tables: on MetaGPT's page 7 the Table 1 caption sits between Table 1 and
    Table 2, nearer Table 2's top rule. Each caption must keep its own table (Table 1's GSM8k for MetaGPT is
    45.41; Table 2's is 66.03), and a prose line that wraps to start with "Table 9. AdamW ..." is no caption."""
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    parser = PyMuPDFParser(ParserConfig())
    metagpt = parser.parse(corpus / "pdfs" / "metagpt-merging-llms-task-arithmetic.pdf", "0" * 64)
    by_caption = {t.caption.split(":")[0]: t.markdown for t in metagpt.tables if t.page_number == 7}
    assert "|MetaGPT(ours)|64.25|32.71|45.41|" in by_caption["Table 1"]
    assert "|MetaGPT(ours)|68.35|41.86|66.03|" in by_caption["Table 2"]
    rmlm = parser.parse(corpus / "pdfs" / "rmlm-adversarial-defense.pdf", "0" * 64)
    page14 = {t.caption: t.markdown for t in rmlm.tables if t.page_number == 14}
    assert not any(c.startswith("Table 9. AdamW") for c in page14), list(page14)
    hyper = [md for c, md in page14.items() if c.startswith("Table 9: Hyperparameter settings")]
    assert hyper and "|Batch size|64|" in hyper[0], list(page14)


@pytest.mark.shared_data
def test_captions_side_by_side_each_keep_their_own_table(corpus):
    """The Compressive Transformer's page 6 sets Table 2 and Table 3 side by side, their captions on one baseline:
    each caption is its own, Table 2 holds only the PG-19 statistics (100 test books) and Table 3 its perplexities;
    the Table 4 caption under them ends Table 2's rules instead of joining its rows."""
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    paper = PyMuPDFParser(ParserConfig()).parse(corpus / "pdfs" / "compressive-transformer.pdf", "0" * 64)
    by_caption = {t.caption: t.markdown for t in paper.tables if t.page_number == 6}
    assert set(by_caption) == {"Table 2: PG-19 statistics split by subsets.", "Table 3: Eval. perplexities on PG-19.",
                               "Table 4: State-of-the-art results on Enwik8.",
                               "Table 5: Compression approaches on Enwik8."}, list(by_caption)
    assert "|# books|28,602|50|100|" in by_caption["Table 2: PG-19 statistics split by subsets."]
    assert "Enwik8" not in by_caption["Table 2: PG-19 statistics split by subsets."]
    assert "|36L Compressive Transf.|43.4|33.6|" in by_caption["Table 3: Eval. perplexities on PG-19."]


@pytest.mark.shared_data
def test_rule_less_table_ends_where_running_text_begins(corpus):
    """FlashAttention-2's Table 1 has no rules; the paragraph after it (a blank line below) is not table rows, so
    the cells stay in four columns instead of one column of whole lines."""
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    paper = PyMuPDFParser(ParserConfig()).parse(corpus / "pdfs" / "flashattention-2.pdf", "0" * 64)
    table = next(t for t in paper.tables if t.caption.startswith("Table 1:"))
    assert "|GPT3-2.7B 8k context|80 TFLOPs/s|175 TFLOPs/s|225 TFLOPs/s|" in table.markdown
    assert "long books" not in table.markdown


@pytest.mark.shared_data
def test_numbers_a_single_space_apart_still_make_columns(corpus):
    """SPECTER's Table 3 sets its scores one space apart, so no two words of a row are a cell gap apart; the gaps
    that line up down the rows still separate the score columns."""
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    paper = PyMuPDFParser(ParserConfig()).parse(corpus / "pdfs" / "specter-citation-informed-transformers.pdf", "0" * 64)
    table = next(t for t in paper.tables if t.caption.startswith("Table 3:"))
    assert "|CLS|USR|CITE|REC|All|" in table.markdown
    assert "|84.2|88.4|91.5|36.9|80.0|" in table.markdown


@pytest.mark.shared_data
def test_row_group_labels_are_written_on_every_row_of_their_group(corpus):
    """MetaGPT's Table 8 centres each pre-trained model's name on its group of rows (between rules): every row
    of the group carries it, and the row holding only the name is gone."""
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    paper = PyMuPDFParser(ParserConfig()).parse(corpus / "pdfs" / "metagpt-merging-llms-task-arithmetic.pdf", "0" * 64)
    table = next(t for t in paper.tables if t.caption.startswith("Table 8:"))
    assert "|Mistral-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH2-7B|" in table.markdown
    assert "|LLaMA-2-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH-7B|" in table.markdown
    assert "|Mistral-7b|General Knowledge|mistralai/Mistral-7B-Instruct-v0.2|" in table.markdown
    assert "|LLaMA-2-7b|||" not in table.markdown


def test_group_labels_only_fill_bands_with_one_label():
    from evidex.tools.ingest.elements import carry_group_labels

    rows = [["Model", "Size", "Score"], ["", "7B", "1.0"], ["LLaMA", "13B", "2.0"], ["", "65B", "3.0"],
            ["GPT", "175B", "4.0"], ["PaLM", "540B", "5.0"]]
    ys = [10, 30, 40, 50, 70, 80]
    got = carry_group_labels(rows, ys, rule_ys=[20, 60])
    assert [r[0] for r in got] == ["Model", "LLaMA", "LLaMA", "LLaMA", "GPT", "PaLM"]  # two labels: left as printed
    assert carry_group_labels(rows, ys, rule_ys=[]) == rows


@pytest.mark.shared_data
def test_a_figure_holds_every_panel_above_its_sub_captions(corpus):
    """Panels set side by side each carry a sub-caption ("(a) ...", "(b) ...") between them and the figure's
    caption. A long sub-caption is not running text that ends the figure: the region takes both panels and
    their sub-captions, and the sub-captions stay in the page's text as well. Self-Edit's Figure 3 (page 3,
    right column) and, in the pool papers, the two bar charts of Figure 2 of "Injecting knowledge into
    language generation" (page 4, full width)."""
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    parser = PyMuPDFParser(ParserConfig())
    paper = parser.parse(corpus / "pdfs" / "self-edit-fault-aware-code-editor.pdf", "0" * 64)
    fig3 = next(f for f in paper.images if f.caption.startswith("Figure 3:"))
    assert fig3.page_number == 3 and fig3.box[0] < 320 and fig3.box[0] + fig3.box[2] > 500, fig3.box
    pool = corpus / "pool" / "pdfs"
    if not pool.is_dir():
        pytest.skip(f"{pool} not found")
    paper = parser.parse(pool / "Injecting-knowledge-into-language-generation-a-case-study-in_395b8b83.pdf", "0" * 64)
    fig2 = next(f for f in paper.images if f.caption.startswith("Figure 2:"))
    x0, y0, w, h = fig2.box
    assert fig2.page_number == 4 and x0 < 90 and x0 + w > 500 and h > 190, fig2.box  # both panels, sub-captions
    page4 = " ".join(c.text for c in paper.chunks if c.page_number == 4)
    assert "(a) Average marginal probability of every semantic type." in page4

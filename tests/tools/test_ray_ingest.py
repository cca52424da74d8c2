"""``python -m tools.ingest ... --executor ray``: PDFs parsed and embedded on Ray workers on loopback, this process
the single writer. The store it builds is the local executor's (rows, index entries, search hits), as is the one
built by local parser processes that embed; a worker SIGKILLed mid-file loses and duplicates nothing; a bad PDF is
a per-file error as locally; Ray listens on loopback only."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from loopback import cmdline, descendants, listening_addresses, only_loopback, session_pids, stop_session, wait_for

pytest.importorskip("ray", reason="the Ray ingestion tests need Ray: pip install -e '.[dev]'")

SMALL = ["layoutparser-excerpt-2p.pdf", "otsl-table-tokenization-page9-excerpt.pdf",
         "rag-knowledge-intensive-nlp-excerpt.pdf", "open-information-extraction-from-the-web.pdf"]
FOR_KILL = ["open-information-extraction-from-the-web.pdf", "literature-graph-semantic-scholar.pdf",
            "phrase-generation-distributional-semantics-acl2014.pdf", "mapreduce-osdi2004.pdf",
            "we-understand-elliptical-sentences.pdf", "rag-knowledge-intensive-nlp-excerpt.pdf"]
QUERIES = [("chunks", "text_content", "table structure recognition tokens"),
           ("chunks", "text_content", "retrieval augmented generation for knowledge intensive tasks"),
           ("metadata", "title", "information extraction"),
           ("chunks", "text_content", "extracting facts from web pages")]


def hits(store: Path, mode: str) -> list[list[tuple]]:
    from evidex.tools.search import SearchArgs, SearchEngine
    from evidex.tools.store import StorePaths

    engine = SearchEngine(StorePaths(store))
    return [[(h.primary_key, h.pdf_id, h.page_number, round(h.score, 3))
             for h in engine.search(SearchArgs(query=q, table=t, column=c, mode=mode, limit=5)).hits]
            for t, c, q in QUERIES]


def entries(store: Path) -> dict[str, int]:
    from evidex.tools.vectorstore import chroma_client

    client = chroma_client(store)
    return {c.name: client.get_collection(c.name, embedding_function=None).count() for c in client.list_collections()}


@pytest.mark.shared_data
def test_ray_ingestion_builds_the_store_the_local_executor_builds(corpus, tmp_path):
    from evidex.tools.ingest import ingest, upkeep

    corrupt = tmp_path / "corrupt.pdf"  # a per-file error either way, the batch goes on
    corrupt.write_bytes(b"%PDF-1.4\n1 0 obj <</Type /Catalog>> truncated")
    files = [*(corpus / "pdfs" / n for n in SMALL), corrupt]
    local = ingest(files, store_dir=tmp_path / "local", workers=1, progress=False)  # the writer embeds everything
    ray = ingest(files, store_dir=tmp_path / "ray", workers=2, progress=False, executor="ray")
    processes = ingest(files, store_dir=tmp_path / "processes", workers=2, progress=False)  # local parsers embed

    assert ray.executor["name"] == "ray" and ray.executor["workers"] == 2 and ray.executor["worker_deaths"] == 0
    assert ray.executor["vectors_encoded_by_writer"] == 0  # every vector came from a worker
    assert ray.seconds["embed_in_workers"] > 0
    status = {Path(f.path).name: (f.status, f.error_kind, f.paper_id) for f in ray.files}
    assert status == {Path(f.path).name: (f.status, f.error_kind, f.paper_id) for f in local.files}
    assert status["corrupt.pdf"][0] == "failed" and all(status[n][0] == "ingested" for n in SMALL)
    assert ray.rows == local.rows and ray.bm25_entries == local.bm25_entries
    assert ray.dense_entries == local.dense_entries and entries(tmp_path / "ray") == entries(tmp_path / "local")
    assert processes.executor["vectors_encoded_by_writer"] == 0 and processes.seconds["embed_in_workers"] > 0
    assert processes.rows == local.rows and entries(tmp_path / "processes") == entries(tmp_path / "local")
    for mode in ("dense", "hybrid", "bm25"):
        want = hits(tmp_path / "local", mode)
        assert all(want) and hits(tmp_path / "ray", mode) == want, mode
        assert hits(tmp_path / "processes", mode) == want, mode
    assert upkeep.check_store(store_dir=tmp_path / "ray").ok

    again = ingest(files[:2], store_dir=tmp_path / "ray", workers=2, progress=False, executor="ray")
    assert {f.status for f in again.files} == {"skipped"}  # known content: no Ray started, nothing redone
    assert again.executor["name"] == "ray" and "workers" not in again.executor


def in_flight_parse(root: int) -> int | None:
    """A Ray worker below ``root`` parsing or embedding a file now (Ray names the process after the call)."""
    for pid in descendants(root):
        if cmdline(pid).startswith("ray::ParseEmbedWorker.parse"):
            return pid
    return None


@pytest.mark.shared_data
def test_a_worker_killed_mid_file_loses_and_duplicates_nothing(corpus, tmp_path):
    """The CLI with its own Ray on loopback, two workers; SIGKILL one while it parses/embeds a file. The file goes
    to a fresh worker, every PDF is stored once, and the store is consistent."""
    from evidex.tools.ingest import upkeep

    store = tmp_path / "store"
    log = tmp_path / "ingest.log"
    cli = subprocess.Popen([sys.executable, "-m", "evidex.tools.ingest", *[str(corpus / "pdfs" / n) for n in FOR_KILL],
                            "--store-dir", str(store), "--executor", "ray", "--workers", "2", "--json", "--quiet"],
                           stdout=subprocess.PIPE, stderr=open(log, "w"), env=dict(os.environ),  # noqa: SIM115
                           start_new_session=True, text=True)
    try:
        victim = wait_for(lambda: in_flight_parse(cli.pid), 300, "a Ray worker parsing a PDF", cli, log)
        listening = listening_addresses(session_pids(cli.pid))
        assert listening and only_loopback(listening), listening
        os.kill(victim, signal.SIGKILL)
        out, _ = cli.communicate(timeout=600)
        assert cli.returncode == 0, log.read_text()[-3000:]
    finally:
        stop_session(cli)
    report = json.loads(out)
    assert report["executor"]["worker_deaths"] >= 1 and report["executor"]["handed_out_again"], report["executor"]
    assert sorted(Path(f["path"]).name for f in report["files"]) == sorted(FOR_KILL)
    assert {f["status"] for f in report["files"]} == {"ingested"}
    import duckdb

    con = duckdb.connect(str(store / "papers.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT pdf_path) FROM evidex.files").fetchone() == (6, 6)
        assert con.execute("SELECT count(*) FROM metadata").fetchone()[0] == 6
    finally:
        con.close()
    check = upkeep.check_store(store_dir=store)
    assert check.ok, check.problems()


def test_an_unknown_executor_is_a_clear_error(tmp_path):
    from evidex.tools.ingest import ingest
    from evidex.tools.ingest.errors import IngestConfigError

    with pytest.raises(IngestConfigError, match="executor must be 'local' or 'ray'"):
        ingest([], store_dir=tmp_path, executor="dask")


def test_dense_texts_are_the_cells_the_writer_indexes(corpus, tmp_path):
    """The worker's texts (from writer.paper_rows) are exactly the cells indexer.cell_query reads back."""
    import duckdb

    from evidex.tools.ingest import load_ingest_config
    from evidex.tools.ingest.indexer import cell_query
    from evidex.tools.ingest.metadata import apply_metadata_json
    from evidex.tools.ingest.parser import make_parser
    from evidex.tools.ingest.pipeline import sha256_file
    from evidex.tools.ingest.worker import dense_texts
    from evidex.tools.ingest.writer import write_paper
    from evidex.tools.store import schema_ddl

    cfg = load_ingest_config()
    pdf = corpus / "pdfs" / SMALL[0]
    paper = make_parser(cfg.parser, cfg.embedding.model).parse(pdf, sha256_file(pdf))
    con = duckdb.connect(":memory:")
    con.execute(schema_ddl())
    write_paper(con, paper, apply_metadata_json(paper.metadata, None), cfg.parser.max_cell_chars)
    stored = {str(r[1]) for c in cfg.index if c.dense for r in con.execute(cell_query(c.table, c.column, False)).fetchall()}
    assert stored and set(dense_texts(paper, cfg)) == stored


def test_the_writer_encodes_only_texts_the_workers_did_not_see():
    """A text changed after parsing (a metadata JSON's title, a summary) has no worker vector: the writer encodes
    it with the config's embedder; the rest are the workers' vectors, and they are dropped after each paper."""
    import numpy as np

    from evidex.tools.ingest import load_ingest_config
    from evidex.tools.ingest.worker import WorkerVectors, text_key

    class Counting:
        def __init__(self):
            self.seen: list[str] = []

        def encode(self, texts):
            self.seen += texts
            return np.full((len(texts), 3), 2.0, dtype=np.float32)

    vectors = WorkerVectors(load_ingest_config())
    vectors._fallback = Counting()
    vectors.add({text_key("from a worker"): np.ones(3, dtype=np.float32)})
    out = vectors.encode(["from a worker", "title from the metadata JSON"])
    assert out.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    assert vectors._fallback.seen == ["title from the metadata JSON"] and vectors.encoded_here == 1
    vectors.clear()
    assert vectors.vectors == {}

"""A paper store whose vectors live in a real ``chroma run`` server on loopback, with the server stopped at the worst
moments: mid-ingest, before ``--from-scratch``, before ``--remove``, during ``--check``, mid-search, and after the
store was deleted by hand. Each fault ends in one line naming the server and how to go on (never a traceback), the
local store is never touched before every part answers, and after the fault and the repair (the same command again,
or ``--check --repair``) the store equals a clean ingest: the same DuckDB row counts and the same vector ids, with 0
orphans on the server. Real corpus PDFs; a deterministic fake embedder keeps it fast."""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from loopback import free_port, stop_session

PDFS = ["layoutparser-excerpt-2p.pdf", "otsl-table-tokenization-page9-excerpt.pdf",
        "rag-knowledge-intensive-nlp-excerpt.pdf"]
CHROMA = str(Path(sys.executable).with_name("chroma"))
pytestmark = pytest.mark.shared_data


class ChromaServer:
    """``chroma run`` on one loopback port and data folder, stopped and started again at will."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.proc = folder, free_port(), None

    def start(self) -> ChromaServer:
        log = self.folder / "chroma.log"
        self.proc = subprocess.Popen([CHROMA, "run", "--path", str(self.folder / "data"), "--host", "127.0.0.1",
                                      "--port", str(self.port)], stdout=open(log, "a"),  # noqa: SIM115
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=2):  # noqa: S310
                    return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"chroma run did not answer on 127.0.0.1:{self.port}:\n{log.read_text()[-2000:]}")
                time.sleep(0.3)

    def stop(self) -> None:
        if self.proc is not None:
            stop_session(self.proc)
            self.proc = None

    @property
    def vector(self):
        from evidex.tools.vectorstore import VectorConfig

        return VectorConfig(mode="http", host="127.0.0.1", port=self.port)

    @property
    def where(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture()
def server(tmp_path):
    if not Path(CHROMA).is_file():
        pytest.skip("the chroma command is not installed (it comes with chromadb)")
    srv = ChromaServer(tmp_path).start()
    yield srv
    srv.stop()


def pdfs(corpus: Path, names=PDFS) -> list[Path]:
    return [corpus / "pdfs" / n for n in names]


def ingest_into(store: Path, files, embeddings, server=None, **kw):
    from evidex.tools.ingest import ingest

    if server is not None:
        kw["vector"] = server.vector
    return ingest(files, store_dir=store, workers=1, progress=False, embeddings=embeddings, **kw)


def snapshot(store: Path) -> tuple[dict, dict]:
    """(DuckDB row counts per table, vector ids per collection) of a store; its server must answer."""
    from evidex.tools.store import TABLES, connect_readonly_private
    from evidex.tools.vectorstore import chroma_client

    con = connect_readonly_private(store / "papers.duckdb")
    try:
        rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()
    client = chroma_client(store)
    ids = {c.name: sorted(client.get_collection(c.name, embedding_function=None).get(include=[])["ids"])
           for c in client.list_collections()} if client is not None else {}
    return rows, {k: v for k, v in ids.items() if v}


@pytest.fixture()
def clean(corpus, server, fake_embeddings, tmp_path) -> tuple[dict, dict]:
    """What a clean ingest of PDFS into a server store holds."""
    store = tmp_path / "clean"
    report = ingest_into(store, pdfs(corpus), fake_embeddings, server)
    assert not report.failed and report.count("ingested") == len(PDFS)
    snap = snapshot(store)
    assert sum(snap[0].values()) > 50 and sum(map(len, snap[1].values())) > 20
    return snap


def assert_consistent(store: Path, want: tuple[dict, dict]) -> None:
    from evidex.tools.ingest.upkeep import check_store

    check = check_store(store_dir=store)
    assert check.ok, check.problems()
    assert snapshot(store) == want  # row counts and vector ids of a clean ingest: nothing lost, nothing left over


class StopServerOnEncode:
    """The fake embedder, stopping the Chroma server when it is asked for the ``at``-th batch: an outage between a
    paper's commit and its vectors' upsert."""

    def __init__(self, inner, server: ChromaServer, at: int):
        self.inner, self.server, self.at, self.calls = inner, server, at, 0
        self.model_name, self.dimension = inner.model_name, inner.dimension

    def encode(self, texts):
        self.calls += 1
        if self.calls == self.at:
            self.server.stop()
        return self.inner.encode(texts)


def test_an_outage_mid_ingest_is_one_line_and_the_same_command_finishes_it(corpus, server, clean, fake_embeddings,
                                                                          tmp_path, capsys):
    from evidex.tools.ingest.__main__ import main
    from evidex.tools.store import connect_readonly_private
    from evidex.tools.vectorstore import VectorStoreError

    store = tmp_path / "faulty"
    stopper = StopServerOnEncode(fake_embeddings, server, at=2)  # the second paper's vectors
    with pytest.raises(VectorStoreError) as err:
        ingest_into(store, pdfs(corpus), stopper, server)
    said = str(err.value)
    assert "\n" not in said and said.startswith(f"the Chroma server at {server.where} stopped answering while "
                                                 "storing the vectors of ")
    assert "run the same command again" in said
    # the first paper is committed and embedded, the second committed but not embedded: nothing is lost
    con = connect_readonly_private(store / "papers.duckdb")
    assert con.execute("SELECT count(*), count(*) FILTER (WHERE dense_indexed) FROM evidex.files").fetchone() == (2, 1)
    con.close()

    # the command line says it in one line too (here: the server is still away when the next command starts)
    assert main([*map(str, pdfs(corpus)), "--store-dir", str(store), "--quiet"]) == 2
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in out, out
    assert lines[0].startswith(f"error: the Chroma server at {server.where} that holds this store's vectors does not "
                               "answer; nothing was changed. Start it again")

    server.start()
    again = ingest_into(store, pdfs(corpus), fake_embeddings)  # the same command: the store remembers its server
    assert sorted(f.status for f in again.files) == ["ingested", "reindexed", "skipped"]
    assert_consistent(store, clean)


def test_from_scratch_with_the_server_away_changes_nothing(corpus, server, clean, fake_embeddings, tmp_path):
    from evidex.tools.vectorstore import VectorStoreError

    store = tmp_path / "store"
    ingest_into(store, pdfs(corpus), fake_embeddings, server)
    before = snapshot(store)
    bm25 = sorted(p.name for p in (store / "bm25").iterdir())
    server.stop()
    with pytest.raises(VectorStoreError, match=rf"{server.where} .*does not answer; nothing was changed"):
        ingest_into(store, pdfs(corpus)[:1], fake_embeddings, from_scratch=True)
    assert sorted(p.name for p in (store / "bm25").iterdir()) == bm25  # the local store is whole
    server.start()
    assert snapshot(store) == before  # and so are the vectors on the server
    # with the server back, --from-scratch rebuilds: the same store as a clean ingest
    ingest_into(store, pdfs(corpus), fake_embeddings, from_scratch=True)
    assert_consistent(store, clean)


def test_remove_and_check_with_the_server_away(corpus, server, clean, fake_embeddings, tmp_path, capsys):
    from evidex.tools.ingest.__main__ import main
    from evidex.tools.ingest.upkeep import check_store, remove
    from evidex.tools.vectorstore import VectorStoreError

    store = tmp_path / "store"
    report = ingest_into(store, pdfs(corpus), fake_embeddings, server)
    server.stop()
    with pytest.raises(VectorStoreError, match="does not answer; nothing was changed"):
        remove([report.files[0].paper_id], store_dir=store, progress=False)
    check = check_store(store_dir=store)
    assert not check.ok and set(check.unreachable) == {"dense"}
    assert all(p.kind == "bm25" for p in check.indexes)  # no "cells without an entry" for vectors it cannot see
    assert main(["--store-dir", str(store), "--check"]) == 1
    out = capsys.readouterr().out
    assert f"dense not checked: the Chroma server at {server.where}" in out.replace("\n", " ") or \
        f"dense not checked: no Chroma server answers at {server.where}" in out.replace("\n", " ")
    assert "cells without an entry" not in out and "Traceback" not in out
    server.start()
    assert_consistent(store, clean)


def test_orphans_of_a_store_deleted_by_hand_are_swept_by_the_next_ingest(corpus, server, fake_embeddings, tmp_path):
    """What an older version left behind (a store rebuilt while its server was away): vectors on the server that no
    paper of the store owns. The next ingest deletes them: the server holds what a clean ingest puts there."""
    store, one = tmp_path / "store", tmp_path / "one"
    ingest_into(store, pdfs(corpus), fake_embeddings, server)
    shutil.rmtree(store)  # the local store is gone; its 3 papers' vectors stay on the server
    report = ingest_into(store, pdfs(corpus)[:1], fake_embeddings, server)
    assert report.executor.get("foreign_vectors_deleted", 0) > 0
    # a clean store of that one paper, in its own database on the same server
    ingest_into(one, pdfs(corpus)[:1], fake_embeddings, server)
    assert snapshot(store) == snapshot(one)
    from evidex.tools.ingest.upkeep import check_store

    assert check_store(store_dir=store).ok


def test_check_repair_deletes_orphans_and_embeds_what_is_missing(corpus, server, clean, fake_embeddings, tmp_path):
    """A store made before store uids (its vectors carry none): orphan vectors on the server (a removed paper's, a
    stray collection) and missing ones (deleted behind its back) are found by --check and fixed by --repair."""
    from evidex.tools.ingest.upkeep import check_store, repair_store
    from evidex.tools.store import connect_writable, writer_lock
    from evidex.tools.vectorstore import chroma_client

    store = tmp_path / "store"
    paper = ingest_into(store, pdfs(corpus), fake_embeddings, server).files[0].paper_id
    with writer_lock(store):  # a store of before: no uid, its vectors without one
        con = connect_writable(store / "papers.duckdb")
        con.execute("DELETE FROM evidex.info WHERE key = 'store_uid'")
        con.close()
    client = chroma_client(store)
    cols = [client.get_collection(c.name, embedding_function=None) for c in client.list_collections()]
    chunks = next(c for c in cols if c.name.startswith("chunks__text_content"))
    got = chunks.get(where={"pdf_id": paper}, include=["embeddings", "metadatas"], limit=5)
    chunks.upsert(ids=[f"chunks:text_content:{i:08d}-0000-0000-0000-000000000000" for i in range(3)],
                  embeddings=got["embeddings"][:3], metadatas=[{**m, "store_uid": "x"} for m in got["metadatas"][:3]])
    chunks.delete(ids=got["ids"][3:5])  # two vectors of one paper missing
    stray = client.get_or_create_collection("tables__old_column__fake_hash_64", embedding_function=None)
    stray.upsert(ids=["tables:old_column:1"], embeddings=[got["embeddings"][0]])

    check = check_store(store_dir=store)
    assert check.orphans == 4 and sum(p.missing for p in check.indexes) == 2, check.problems()
    repaired = repair_store(store_dir=store, embeddings=fake_embeddings, progress=False)
    assert repaired.vectors_deleted == 4 and repaired.collections_deleted == [stray.name]
    assert repaired.papers_embedded == 1 and repaired.after.ok
    assert_consistent(store, clean)


def test_a_search_that_loses_its_server_says_so_and_recovers(corpus, server, fake_embeddings, tmp_path, caplog):
    from evidex.tools.degraded import search_degradations
    from evidex.tools.search import SearchArgs, SearchEngine, SearchError
    from evidex.tools.store import StorePaths

    store = tmp_path / "store"
    ingest_into(store, pdfs(corpus), fake_embeddings, server)
    engine = SearchEngine(StorePaths(store), embeddings=fake_embeddings)
    args = SearchArgs(query="table structure recognition tokens", table="chunks", column="text_content", limit=5)
    whole = engine.search(args)
    assert whole.mode == "hybrid" and not whole.degraded and any(h.dense_rank for h in whole.hits)

    server.stop()
    with search_degradations() as seen:
        first = engine.search(args)
        second = engine.search(args)
    for res in (first, second):
        assert res.degraded and res.mode == "bm25" and res.hits  # keyword hits, said to be only those
        assert res.unavailable[0].part == "dense" and server.where in res.unavailable[0].reason
        assert res.to_text().startswith(f"[Warning]: dense (embedding) search unavailable: the Chroma server at "
                                        f"{server.where} does not answer")
    assert [u.part for u in seen] == ["dense", "dense"]
    warned = [r for r in caplog.records if "search unavailable" in r.getMessage()]
    assert len(warned) == 1  # logged once, not once per search
    with pytest.raises(SearchError, match=rf"dense search of chunks.text_content is unavailable: .*{server.where}"):
        engine.search(args.model_copy(update={"mode": "dense"}))

    server.start()  # back: the same engine searches densely again
    again = engine.search(args)
    assert not again.degraded and [h.primary_key for h in again.hits] == [h.primary_key for h in whole.hits]


def test_a_run_over_a_lost_server_flags_its_items(corpus, server, fake_embeddings, tmp_path):
    """A question-answering run whose store's server is away: the item's hybrid searches answer from BM25, and the
    row says so (degraded, and an error by default), so do its trace and metrics.json; with run.on_degraded:
    warning the answer is kept, still marked."""
    import json

    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.runner import run_task
    from evidex.graphs.tasks import config_for_task
    from evidex.tools.runfolder import read_results

    store = tmp_path / "store"
    f = ingest_into(store, pdfs(corpus)[:1], fake_embeddings, server).files[0]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({
        "uuid": "q-pages", "question": "How many pages does the paper have?", "answer_format": "An integer.",
        "tags": ["single", "metadata", "objective"], "anchor_pdf": [f.paper_id], "reference_pdf": [],
        "conference": [], "evaluator": {"eval_func": "eval_int_exact_match", "eval_kwargs": {"gold": f.pages}}}) + "\n")
    looked_up = f"SELECT num_pages FROM metadata WHERE paper_id = '{f.paper_id}'"

    def reply(prompt: str) -> str:
        if "Reply with one JSON object" in prompt:
            return json.dumps({"answer": f.pages})
        if looked_up not in prompt:
            return json.dumps({"step": {"action": "sql", "thought": "count", "sql": looked_up}})
        return json.dumps({"step": {"action": "answer", "thought": "found", "answer": str(f.pages), "citations": [
            {"pdf_id": f.paper_id, "page_number": 1, "source": "metadata"}]}})

    server.stop()
    for on_degraded in ("error", "warning"):
        cfg = config_for_task("airqa", [f"store.store_dir={store}", f"dataset.file={questions}",
                                        f"run.on_degraded={on_degraded}"])
        run_dir = run_task(cfg, out_dir=tmp_path / on_degraded, llm=ScriptedChatModel(responses=reply),
                           progress=False)
        row = read_results(run_dir / "results.jsonl")[0]
        assert row["prediction"]["answer"] == str(f.pages)  # answered from what was left
        assert row["degraded"][0]["part"] == "dense" and server.where in row["degraded"][0]["reason"]
        if on_degraded == "error":
            assert row["error"].startswith("Degraded: dense search unavailable (the Chroma server at")
        else:
            assert row["error"] is None
        trace = json.loads((run_dir / row["trace"]).read_text())
        assert trace["degraded"] == row["degraded"]
        metrics = json.loads((run_dir / "metrics.json").read_text())
        assert metrics["n_degraded"] == 1 and metrics["degraded"] == {"dense_unavailable": 1}
        assert metrics["n_errors"] == (1 if on_degraded == "error" else 0)

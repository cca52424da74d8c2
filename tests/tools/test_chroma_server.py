"""The paper store's vectors in a Chroma server (``vector: {mode: http}`` / ``--chroma-server``): a real
``chroma run`` on a free loopback port, two small corpus PDFs ingested into it and into an embedded store, and
search returning the same hits in the same order; the server's vectors follow the store (search, removal,
another ingestion without the flag); a server that is gone is one actionable error."""
from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from loopback import free_port, listening_addresses, only_loopback, session_pids, stop_session

PDFS = ["layoutparser-excerpt-2p.pdf", "otsl-table-tokenization-page9-excerpt.pdf"]
QUERIES = [("chunks", "text_content", "table structure recognition tokens"),
           ("chunks", "text_content", "document image layout analysis toolkit"),
           ("metadata", "title", "layout parser"),
           ("chunks", "text_content", "deep learning models for detection")]
CHROMA = str(Path(sys.executable).with_name("chroma"))


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """``chroma run`` on loopback, stopped after the module: (process, host, port)."""
    if not Path(CHROMA).is_file():
        pytest.skip("the chroma command is not installed (it comes with chromadb)")
    folder = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    log = folder / "chroma.log"
    proc = subprocess.Popen([CHROMA, "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)  # noqa: SIM115
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2):  # noqa: S310
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop_session(proc)
                pytest.fail(f"chroma run did not answer on 127.0.0.1:{port}:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)
    yield proc, "127.0.0.1", port
    stop_session(proc)
    assert not session_pids(proc.pid)


def ingest_two(corpus: Path, store: Path, embeddings, **kw):
    from evidex.tools.ingest import ingest

    report = ingest([corpus / "pdfs" / n for n in PDFS], store_dir=store, workers=1, progress=False,
                    embeddings=embeddings, **kw)
    assert not report.failed, report.failed
    return report


def hits(store: Path, embeddings, mode: str = "dense") -> list[list[tuple]]:
    from evidex.tools.search import SearchArgs, SearchEngine
    from evidex.tools.store import StorePaths

    engine = SearchEngine(StorePaths(store), embeddings=embeddings)  # a fresh engine: no cache between stores
    out = []
    for table, column, query in QUERIES:
        res = engine.search(SearchArgs(query=query, table=table, column=column, mode=mode, limit=5))
        out.append([(h.primary_key, h.pdf_id, h.page_number, round(h.score, 4)) for h in res.hits])
    return out


@pytest.mark.shared_data
def test_a_chroma_server_store_searches_like_the_embedded_one(chroma_server, corpus, embedder, tmp_path):
    from evidex.tools.ingest import upkeep
    from evidex.tools.vectorstore import VectorConfig, chroma_client, read_vector_config

    proc, host, port = chroma_server
    assert only_loopback(listening_addresses(session_pids(proc.pid)))
    embedded, served = tmp_path / "embedded", tmp_path / "served"
    ingest_two(corpus, embedded, embedder)
    report = ingest_two(corpus, served, embedder, vector=VectorConfig(mode="http", host=host, port=port))
    assert (embedded / "chroma").is_dir() and not (served / "chroma").exists()  # the vectors are on the server
    assert read_vector_config(served).where() == f"http://{host}:{port}"
    client = chroma_client(served)

    def counts(c):
        return {x.name: c.get_collection(x.name, embedding_function=None).count() for x in c.list_collections()}

    served_counts = counts(client)
    assert served_counts == counts(chroma_client(embedded)) and sum(served_counts.values()) > 10

    for mode in ("dense", "hybrid"):
        want, got = hits(embedded, embedder, mode), hits(served, embedder, mode)
        assert all(want) and got == want, mode  # same hits, same order, same scores

    # the store remembers its server: ingesting again without saying so adds nothing and moves nothing
    again = ingest_two(corpus, served, embedder)
    assert {f.status for f in again.files} == {"skipped"} and not (served / "chroma").exists()
    # removal deletes the paper's vectors on the server
    gone = report.files[0].paper_id
    upkeep.remove([gone], store_dir=served, progress=False)
    left = [client.get_collection(n, embedding_function=None).get(where={"pdf_id": gone})["ids"] for n in served_counts]
    assert left == [[] for _ in served_counts]
    assert upkeep.check_store(store_dir=served).ok


def test_a_server_that_is_gone_is_one_actionable_error(tmp_path):
    from evidex.tools.vectorstore import VectorConfig, VectorStoreError, chroma_client, parse_server

    port = free_port()
    with pytest.raises(VectorStoreError, match=rf"127\.0\.0\.1:{port}.*chroma run --path DIR --host 127\.0\.0\.1"):
        chroma_client(tmp_path, VectorConfig(mode="http", port=port))
    assert parse_server("127.0.0.1:8123") == VectorConfig(mode="http", host="127.0.0.1", port=8123)
    with pytest.raises(VectorStoreError, match="HOST:PORT"):
        parse_server("localhost")


def test_vector_settings_validate_in_the_ingestion_config():
    from evidex.tools.ingest.config import IngestConfigError, config_from_dict

    cfg = config_from_dict({"vector": {"mode": "http", "port": 8001}})
    assert cfg.vector.host == "127.0.0.1" and cfg.vector.port == 8001  # loopback unless told otherwise
    assert config_from_dict({}).vector.mode == "embedded"
    with pytest.raises(IngestConfigError, match="vector.mode"):
        config_from_dict({"vector": {"mode": "cloud"}})

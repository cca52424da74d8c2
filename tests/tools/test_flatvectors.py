"""The flat vector store (no Chroma) answers as Chroma does: the same ids, order and distances for the same
entries and filters, the same get/delete/count behaviour; Chroma itself (the chroma extra) is the reference."""
from __future__ import annotations

import numpy as np
import pytest

from evidex.tools.flatvectors import FlatClient, FlatVectorError, has_flat_vectors

WHERES = [None, {"pdf_id": "p1"}, {"pdf_id": {"$in": ["p0", "p2"]}}, {"page_number": {"$gte": 3}},
          {"$and": [{"pdf_id": {"$ne": "p1"}}, {"page_number": {"$lt": 4}}]},
          {"$or": [{"table_name": "chunks"}, {"page_number": 1}]}, {"pdf_id": {"$nin": ["p0"]}}]


def _entries(n=60, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"chunks:text_content:{i:03d}" for i in range(n)]
    metas = [{"pdf_id": f"p{i % 3}", "page_number": i % 6, "table_name": "chunks" if i % 2 else "pages",
              "primary_key": str(i)} for i in range(n)]
    return ids, vecs, metas


def _fill(client, ids, vecs, metas):
    col = client.get_or_create_collection("col", embedding_function=None, metadata={"hnsw:space": "cosine"})
    col.upsert(ids=ids, embeddings=vecs, metadatas=metas)
    return col


def test_flat_store_answers_like_chroma(tmp_path):
    chromadb = pytest.importorskip("chromadb")
    from chromadb.config import Settings

    ids, vecs, metas = _entries()
    flat = _fill(FlatClient(tmp_path / "flat"), ids, vecs, metas)
    chroma = _fill(chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)),
                   ids, vecs, metas)
    queries = np.random.default_rng(1).normal(size=(5, vecs.shape[1])).astype(np.float32)
    for where in WHERES:
        for q in queries:
            a = flat.query(query_embeddings=[q], n_results=7, where=where, include=["metadatas", "distances"])
            b = chroma.query(query_embeddings=[q], n_results=7, where=where, include=["metadatas", "distances"])
            assert a["ids"] == b["ids"], where
            assert np.allclose(a["distances"][0], b["distances"][0], atol=1e-5)
            assert a["metadatas"] == b["metadatas"]
        ga = flat.get(where=where, include=["metadatas"]) if where else flat.get(include=["metadatas"])
        gb = chroma.get(where=where, include=["metadatas"]) if where else chroma.get(include=["metadatas"])
        assert sorted(ga["ids"]) == sorted(gb["ids"]), where
    got = flat.get(ids=ids[:3], include=["embeddings", "metadatas"])
    want = chroma.get(ids=ids[:3], include=["embeddings", "metadatas"])
    assert got["ids"] == want["ids"] and np.allclose(got["embeddings"], want["embeddings"])
    assert flat.get(include=[], limit=10, offset=55)["ids"] == ids[55:]
    for col in (flat, chroma):
        col.delete(where={"pdf_id": {"$in": ["p0", "p1"]}})
    assert flat.count() == chroma.count() == 20
    assert sorted(flat.get()["ids"]) == sorted(chroma.get()["ids"])


def test_flat_store_persists_and_readers_see_writes(tmp_path):
    ids, vecs, metas = _entries(n=10)
    writer = FlatClient(tmp_path)
    col = _fill(writer, ids, vecs, metas)
    reader = FlatClient(tmp_path).get_collection("col")
    assert has_flat_vectors(tmp_path) and reader.count() == 10
    first = reader.query(query_embeddings=[vecs[0]], n_results=1)
    assert first["ids"] == [[ids[0]]] and abs(first["distances"][0][0]) < 1e-6
    col.add(ids=[ids[0]], embeddings=[vecs[1]], metadatas=[metas[1]])  # add keeps an existing id, as Chroma does
    assert reader.query(query_embeddings=[vecs[0]], n_results=1)["ids"] == [[ids[0]]]
    col.upsert(ids=["new"], embeddings=[-vecs[0]], metadatas=[{"pdf_id": "p9"}])
    hit = reader.query(query_embeddings=[-vecs[0]], n_results=1, where={"pdf_id": "p9"})  # the reader reloads
    assert hit["ids"] == [["new"]]
    assert [c.name for c in writer.list_collections()] == ["col"]
    writer.delete_collection("col")
    with pytest.raises(FlatVectorError, match="does not exist"):
        FlatClient(tmp_path).get_collection("col")


def test_a_new_store_without_chroma_keeps_its_vectors_flat(tmp_path, monkeypatch):
    """Without the chroma extra a new store is flat; a store that has Chroma vectors asks for the extra."""
    import importlib.util

    from evidex.tools.extras import MissingExtraError
    from evidex.tools.vectorstore import VectorConfig, chroma_client, uses_flat, wipe_vectors

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "chromadb" else real(name, *a))
    assert uses_flat(tmp_path / "new", VectorConfig())
    assert chroma_client(tmp_path / "new", create=False) is None
    assert isinstance(chroma_client(tmp_path / "new"), FlatClient)
    wipe_vectors(tmp_path / "new")
    assert not has_flat_vectors(tmp_path / "new")
    (tmp_path / "old" / "chroma").mkdir(parents=True)
    assert not uses_flat(tmp_path / "old", VectorConfig())
    monkeypatch.setitem(__import__("sys").modules, "chromadb", None)  # import chromadb -> ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'evidex\[chroma\]'"):
        chroma_client(tmp_path / "old")
    assert uses_flat(tmp_path / "any", VectorConfig(mode="flat"))


@pytest.mark.shared_data
def test_a_flat_store_ingests_searches_removes_and_checks_like_a_chroma_one(corpus, embedder, tmp_path):
    """Two corpus PDFs into a Chroma store and a flat one: the same dense and hybrid hits, in the same order, with
    the same scores; the flat store remembers its mode, removal deletes a paper's vectors, the check passes."""
    pytest.importorskip("chromadb")
    from test_chroma_server import hits, ingest_two

    from evidex.tools.ingest import upkeep
    from evidex.tools.vectorstore import VectorConfig, chroma_client, read_vector_config

    chroma, flat = tmp_path / "chroma-store", tmp_path / "flat-store"
    ingest_two(corpus, chroma, embedder)
    report = ingest_two(corpus, flat, embedder, vector=VectorConfig(mode="flat"))
    assert (chroma / "chroma").is_dir() and not (flat / "chroma").exists() and has_flat_vectors(flat)
    assert read_vector_config(flat).mode == "flat"
    for mode in ("dense", "hybrid"):
        want, got = hits(chroma, embedder, mode), hits(flat, embedder, mode)
        assert all(want) and got == want, mode
    again = ingest_two(corpus, flat, embedder)  # no flag: the store keeps its flat vectors
    assert {f.status for f in again.files} == {"skipped"} and not (flat / "chroma").exists()
    gone = report.files[0].paper_id
    upkeep.remove([gone], store_dir=flat, progress=False)
    client = chroma_client(flat)
    assert all(not c.get(where={"pdf_id": gone})["ids"] for c in client.list_collections())
    assert upkeep.check_store(store_dir=flat).ok

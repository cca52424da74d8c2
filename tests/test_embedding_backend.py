"""The int8 ONNX embedding backend: built from the local MiniLM weights at first use (no download), vectors close to
torch's with the same neighbours, a signature of its own (a store switching backends is re-embedded), and the
search engine queries a store with the backend the store was embedded with."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest.importorskip("onnx")

SENTENCES = [
    "Rotary position embeddings extend the context window of transformers.",
    "We fine-tune BERT on question answering over scientific papers.",
    "The table reports accuracy of each model on the benchmark.",
    "Pangolins and quokkas are rarely studied in machine learning.",
    "Hallucination detection for neural machine translation.",
    "Chain-of-thought prompting improves arithmetic reasoning.",
    "Evidence paragraphs are retrieved with BM25 and dense vectors.",
    "A short one.",
]


@pytest.fixture(scope="module")
def backends():
    from evidex.tools.embeddings import LocalEmbeddings

    onnx = LocalEmbeddings(backend="onnx-int8", batch_size=4)
    assert onnx.backend == "onnx-int8", "the int8 export could not be built"
    return LocalEmbeddings(precision="fp32"), onnx


def test_int8_vectors_match_torch(backends):
    torch_e, onnx_e = backends
    a, b = torch_e.encode(SENTENCES), onnx_e.encode(SENTENCES)
    assert a.shape == b.shape == (len(SENTENCES), 384)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-4)
    assert (a * b).sum(1).min() > 0.97
    # every sentence's int8 nearest neighbour is torch's, or one torch finds as near (within 0.02: "A short one."
    # has two neighbours at cosine 0.150 and 0.148 under torch, a tie that int8 rounding may break either way)
    sims_torch = a @ a.T - 2 * np.eye(len(a))
    picked = (b @ b.T - 2 * np.eye(len(b))).argmax(1)
    assert (sims_torch[np.arange(len(a)), picked] >= sims_torch.max(1) - 0.02).all()
    assert onnx_e.signature == "all-MiniLM-L6-v2#onnx-int8" and torch_e.signature == "all-MiniLM-L6-v2"
    assert onnx_e.encode([]).shape[0] == 0


def test_store_records_backend_and_search_uses_it(tmp_path, synthetic_dir_for_backend):
    from evidex.tools.ingest import ingest, load_ingest_config
    from evidex.tools.search import SearchArgs, get_engine

    cfg = load_ingest_config()
    cfg = cfg.model_copy(update={"embedding": cfg.embedding.model_copy(update={"backend": "onnx-int8"})})
    store = tmp_path / "store"
    report = ingest([synthetic_dir_for_backend], store_dir=store, config=cfg, progress=False)
    assert not report.failed
    manifest = json.loads((store / "indexes.json").read_text())
    assert manifest["embedding_backend"] == "onnx-int8"
    eng = get_engine(store_dir=store)
    assert eng.embeddings.backend == "onnx-int8"
    res = eng.search(SearchArgs(query="pangolins study", table="chunks", column="text_content", mode="dense", limit=3))
    assert res.hits
    import duckdb

    from evidex.tools.store import close_readonly

    close_readonly(store / "papers.duckdb")
    con = duckdb.connect(str(store / "papers.duckdb"), read_only=True)
    sig = dict(con.execute("SELECT key, value FROM evidex.info").fetchall())["dense_signature"]
    con.close()
    assert json.loads(sig)[0] == "all-MiniLM-L6-v2#onnx-int8"


@pytest.fixture(scope="module")
def synthetic_dir_for_backend(tmp_path_factory):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "tools"))
    from pdfgen_helpers import make_paper_pdf

    d = tmp_path_factory.mktemp("backend_pdfs")
    make_paper_pdf(d / "paper_b.pdf", "A Second Synthetic Study of Pangolins", seed=2)
    return d


def test_fp32_vectors_come_from_the_fp32_export_with_torchs_values():
    """A torch fp32 model's passages and queries are encoded by its fp32 ONNX export: the vectors
    sentence-transformers gives, without loading the torch model."""
    from evidex.tools import embeddings as emb_mod

    torch_e = emb_mod.LocalEmbeddings(precision="fp32")
    want = np.asarray(torch_e.encoder.encode(SENTENCES, normalize_embeddings=True, show_progress_bar=False))
    got = np.stack([torch_e.query_vector(s) for s in SENTENCES])
    docs = torch_e.encode(SENTENCES)
    assert emb_mod._onnx_fp32_encoder(torch_e.model_name, 1) is not None  # the query session was built and used
    assert torch_e._onnx_session(torch_e.threads) is not None
    assert got.shape == want.shape == docs.shape
    assert float((got * want).sum(axis=1).min()) > 0.99999
    assert float((docs * want).sum(axis=1).min()) > 0.99999
    assert torch_e.dimension == 384
    int8 = emb_mod.LocalEmbeddings(backend="onnx-int8")  # other backends keep their own encoder for queries
    assert np.allclose(int8.query_vector(SENTENCES[0]), int8.encode([SENTENCES[0]])[0], atol=1e-6)


def test_an_existing_store_keeps_its_backend_unless_the_config_names_one(tmp_path, synthetic_dir_for_backend, caplog):
    """The default backend became onnx-int8: a store embedded with torch keeps torch when the config leaves the
    backend unset (no unasked re-embedding of a library), and switches when the config names the other one."""
    from evidex.tools.ingest import ingest, load_ingest_config

    default = load_ingest_config()
    assert "backend" not in default.embedding.model_fields_set and default.embedding.backend == "onnx-int8"
    torch_cfg = default.model_copy(update={"embedding": default.embedding.model_copy(update={"backend": "torch"})})
    store = tmp_path / "store"
    ingest([synthetic_dir_for_backend], store_dir=store, config=torch_cfg, progress=False)
    with caplog.at_level("WARNING"):
        ingest([synthetic_dir_for_backend], store_dir=store, config=default, progress=False)
    assert "re-embedding" not in caplog.text
    assert json.loads((store / "indexes.json").read_text())["embedding_backend"] == "torch"
    int8_cfg = default.model_copy(update={"embedding": default.embedding.model_copy(update={"backend": "onnx-int8"})})
    with caplog.at_level("WARNING"):
        ingest([synthetic_dir_for_backend], store_dir=store, config=int8_cfg, progress=False)
    assert "re-embedding every paper" in caplog.text
    assert json.loads((store / "indexes.json").read_text())["embedding_backend"] == "onnx-int8"


def test_threads_encoding_at_once_in_a_fresh_process_all_get_the_onnx_export():
    """Two items in flight encode their first query and passages at the same moment: the export's sessions are
    built one at a time, so none of them fails on transformers' lazy import and falls back to torch."""
    import subprocess
    import sys

    code = """
import threading
from evidex.tools import embeddings as E
e = E.LocalEmbeddings()
ts = [threading.Thread(target=f) for f in (lambda: e.query_vector("what is this"), lambda: e.encode(["a passage"] * 3))
      for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
print("torch model loaded:", E._load.cache_info().currsize)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "torch model loaded: 0" in out.stdout
    assert "computed with torch" not in out.stderr

"""Fixtures for the tools tests: synthetic PDFs written by the tests themselves (good and bad), a fast
store built from them with deterministic fake embeddings, and (marked shared_data) a store built from a few
small real corpus PDFs with the real MiniLM model.

The corpus is read from ``EVIDEX_CORPUS_DIR``, else ``<EVIDEX_DATA_DIR>/../corpus``, else ``../shared/corpus``
next to the repository; tests that need it skip with the reason when it is absent.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pdfgen_helpers import SMALL_CORPUS, FakeEmbeddings, corpus_dir, make_paper_pdf

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture(scope="session")
def corpus() -> Path:
    c = corpus_dir()
    if c is None:
        pytest.skip("shared corpus not found: set EVIDEX_CORPUS_DIR (or EVIDEX_DATA_DIR with ../corpus next to it)")
    return c


@pytest.fixture(scope="session")
def manifest(corpus) -> dict[str, dict]:
    data = json.loads((corpus / "corpus_manifest.json").read_text())
    return {Path(e["file"]).name: e for e in data}


@pytest.fixture(scope="session")
def synthetic_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("synthetic")
    make_paper_pdf(d / "paper_a.pdf", "Synthetic Evidence Paper About Tables", seed=1)
    make_paper_pdf(d / "paper_b.pdf", "A Second Synthetic Study of Pangolins", seed=2)
    return d


@pytest.fixture(scope="session")
def fake_embeddings() -> FakeEmbeddings:
    """The fake embedder, also registered for query encoding: stores built with it search densely wherever they are
    opened (without it their dense search is unavailable, which a run reports as a degraded item)."""
    from evidex.tools.search import register_embeddings

    fake = FakeEmbeddings()
    register_embeddings(fake.model_name, fake)
    return fake


@pytest.fixture(scope="session")
def synthetic_store(synthetic_dir, fake_embeddings, tmp_path_factory):
    """A store from the two synthetic papers, fake embeddings: (store_dir, IngestReport)."""
    from evidex.tools.ingest import ingest

    store = tmp_path_factory.mktemp("synthetic_store")
    report = ingest([synthetic_dir], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert not report.failed, report.failed
    return store, report


@pytest.fixture(scope="session")
def table_paper(synthetic_store) -> tuple[str, str]:
    """(store_dir, the synthetic paper whose Table 1 has Baseline 61.2 and Ours 74.9): the answer-reader
    and ranked-pick tests read it."""
    from evidex.tools.paperstore import PaperStore

    store_dir = str(synthetic_store[0])
    rows = PaperStore(None, store_dir).rows("SELECT CAST(ref_paper_id AS VARCHAR) AS pdf_id FROM tables "
                                            "WHERE table_markdown LIKE '%74.9%'")
    return store_dir, rows[0]["pdf_id"]


@pytest.fixture(scope="session")
def corpus_store(corpus, tmp_path_factory):
    """Real MiniLM store over SMALL_CORPUS, with AirQA metadata (conference_year) from the manifest."""
    from evidex.tools.ingest import ingest

    data = json.loads((corpus / "corpus_manifest.json").read_text())
    meta_dir = tmp_path_factory.mktemp("metadata")
    for e in data:
        name = Path(e["file"]).name
        if name in SMALL_CORPUS and e["airqa"]:
            # only the venue folder: the title must come from the parser for the uuid check to mean something
            (meta_dir / f"{Path(name).stem}.json").write_text(json.dumps({"conference_year": e["airqa"][0]["conference_year"]}))
    store = tmp_path_factory.mktemp("corpus_store")
    files = [corpus / "pdfs" / n for n in SMALL_CORPUS]
    report = ingest(files, store_dir=store, metadata_dir=meta_dir, workers=1, progress=False)
    return store, report

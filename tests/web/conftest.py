"""Fixtures for the web page tests: a store of two synthetic papers (fake embeddings, built in seconds), a copy
of it per test that may change it, and the app over that copy with the scripted agent (web_helpers.py)."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # pdfgen_helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # web_helpers
from pdfgen_helpers import FakeEmbeddings, make_paper_pdf  # noqa: E402
from web_helpers import ScriptedAgent, WebStore  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def _import_anyio_lazy_modules() -> None:
    """Resolve anyio's lazily imported names now, in the main thread.

    anyio ships a pytest plugin, so pytest rewrites (AST-parses) every anyio module when it is first imported.
    Starlette's test client opens files through ``anyio.open_file`` on a worker thread; when that thread was the
    first to import the module, CPython 3.11.7's ``ast`` failed there with "AST constructor recursion depth
    mismatch" (a test-only failure: outside pytest nothing is rewritten), depending on which tests ran before."""
    import anyio

    for name in dir(anyio):
        getattr(anyio, name, None)


_import_anyio_lazy_modules()


@pytest.fixture(scope="session")
def fake_embeddings() -> FakeEmbeddings:
    return FakeEmbeddings()


@pytest.fixture(scope="session")
def web_store(tmp_path_factory, fake_embeddings) -> WebStore:
    from evidex.tools.ingest import ingest
    from evidex.tools.paperstore import PaperStore

    pdfs = tmp_path_factory.mktemp("web_pdfs")
    make_paper_pdf(pdfs / "tables.pdf", "Synthetic Evidence Paper About Tables", seed=1)
    make_paper_pdf(pdfs / "pangolins.pdf", "A Second Synthetic Study of Pangolins", seed=2)
    store = tmp_path_factory.mktemp("web_store")
    report = ingest([pdfs], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert not report.failed, report.failed
    by_title = {f.title: f.paper_id for f in report.files}
    paper_id = by_title["Synthetic Evidence Paper About Tables"]
    papers = PaperStore(None, str(store))
    chunk = papers.page_passages(paper_id, 2)[0]
    (table,) = papers.tables([paper_id], "1")
    return WebStore(store_dir=store, pdf_dir=pdfs, paper_id=paper_id,
                    other_id=by_title["A Second Synthetic Study of Pangolins"],
                    title="Synthetic Evidence Paper About Tables", chunk_id=chunk.key,
                    chunk_box=tuple(float(v) for v in chunk.bbox), table_id=table.key)


@pytest.fixture
def store_copy(web_store, tmp_path) -> Path:
    """A copy of the store a test may change (uploads, history); the original is only ever read."""
    target = tmp_path / "mypapers"
    shutil.copytree(web_store.store_dir, target, ignore=shutil.ignore_patterns("web", "uploads", ".ingest.lock"))
    return target


@pytest.fixture
def make_app(web_store, store_copy, fake_embeddings):
    """``make_app(**WebOptions fields) -> (app, agent)`` over a copy of the store, with the scripted agent."""
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.web.app import WebOptions, create_app

    agents = []

    def make(**options):
        agent = ScriptedAgent(web_store)
        agents.append(agent)
        app = create_app(WebOptions(store_dir=store_copy, **options), llm=ScriptedChatModel(responses=agent),
                         embeddings=fake_embeddings)
        return app, agent

    yield make
    for agent in agents:
        agent.release.set()

"""view_image, schema prompt and the LangChain tool wrappers."""
from __future__ import annotations

import duckdb
import pytest

from evidex.tools.pdf_tools import make_pdf_tools
from evidex.tools.schema_prompt import schema_prompt
from evidex.tools.search import get_engine
from evidex.tools.store import close_readonly, store_paths
from evidex.tools.view_image import ViewImageArgs, ViewImageError, render, view_image_content

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture()
def store(synthetic_store, fake_embeddings):
    store, _ = synthetic_store
    get_engine(store_dir=store, embeddings=fake_embeddings)  # search through the fake model
    return store


def _figure(store):
    close_readonly()
    con = duckdb.connect(str(store_paths(store_dir=store).db), read_only=True)
    try:
        return con.execute(
            "SELECT CAST(i.ref_paper_id AS VARCHAR), p.page_number, i.bounding_box, i.image_caption FROM images i "
            "JOIN pages p ON p.page_id = i.ref_page_id LIMIT 1"
        ).fetchone()
    finally:
        con.close()


def test_view_image_region_and_page(store):
    pid, page, box, caption = _figure(store)
    view = render(ViewImageArgs(paper_id=pid, page_number=page, bounding_box=list(box)), store_dir=store)
    assert view.png.startswith(PNG) and caption in view.captions
    assert abs(view.width / view.height - box[2] / box[3]) < 0.05
    blocks = view_image_content(ViewImageArgs(paper_id=pid, page_number=page, bounding_box=list(box)), store_dir=store)
    assert blocks[0]["type"] == "text" and blocks[1]["image_url"]["url"].startswith("data:image/png;base64,")
    lc = view_image_content(ViewImageArgs(paper_id=pid, page_number=page), store_dir=store, block_format="langchain")
    assert lc[1]["type"] == "image" and lc[1]["mime_type"] == "image/png"
    text = view_image_content(ViewImageArgs(paper_id=pid, page_number=page, bounding_box=list(box)), store_dir=store, multimodal=False)
    assert isinstance(text, str) and caption in text
    whole = view_image_content(ViewImageArgs(paper_id=pid, page_number=2), store_dir=store, multimodal=False)
    assert "Table 1:" in whole and "pangolin" in whole


def test_view_image_errors(store):
    pid, *_ = _figure(store)
    with pytest.raises(ViewImageError, match="has 3 pages"):
        render(ViewImageArgs(paper_id=pid, page_number=9), store_dir=store)
    with pytest.raises(ViewImageError, match="Unknown paper_id"):
        render(ViewImageArgs(paper_id="nope", page_number=1), store_dir=store)
    with pytest.raises(ViewImageError, match="outside page"):
        render(ViewImageArgs(paper_id=pid, page_number=1, bounding_box=[5000, 5000, 10, 10]), store_dir=store)
    with pytest.raises(ValueError, match="x0, y0, w, h"):
        ViewImageArgs(paper_id=pid, page_number=1, bounding_box=[1, 2, 3])


def test_schema_prompt_reflects_live_data(store):
    text = schema_prompt(store_dir=store)
    assert "TABLE metadata (2 rows)" in text and "TABLE chunks (" in text
    assert "bounding_box INTEGER[4]" in text and "paper_id UUID PK" in text
    assert "chunks.text_content: dense+bm25" in text and "pages.page_content: bm25" in text
    assert "page_number <= 3" in text  # filter grammar help
    short = schema_prompt(store_dir=store, comments=False, include_search=False, tables=["pages"])
    assert "--" not in short and "TABLE pages" in short and "TABLE chunks" not in short


def test_langchain_tools(store):
    tools = {t.name: t for t in make_pdf_tools(store_dir=store)}
    assert set(tools) == {"sql", "search", "calculate", "view_image"}
    assert '"n": 2' in tools["sql"].invoke({"sql": "SELECT count(*) AS n FROM metadata"})
    assert tools["sql"].invoke({"sql": "DROP TABLE metadata"}).startswith("[Refused]")
    assert tools["calculate"].invoke({"expression": "(3 + 4) * 6"}) == "The calculated result is: 42"
    assert tools["calculate"].invoke({"expression": "__import__('os')"}).startswith("[Error]")
    out = tools["search"].invoke({"query": "quokkas", "table": "metadata", "column": "abstract", "mode": "bm25"})
    assert "quokkas" in out
    assert tools["search"].invoke({"query": "x", "table": "chunks", "column": "text_content", "filter": "bad ="}).startswith("[Error]")
    bad = tools["search"].invoke({"query": "x", "table": "chunks", "column": "text_content", "limit": 10_000})
    assert isinstance(bad, str) and "limit" in bad  # pydantic validation error returned to the model
    pid, page, box, caption = _figure(store)
    assert caption in tools["view_image"].invoke({"paper_id": pid, "page_number": page, "bounding_box": list(box)})
    schema = tools["search"].args_schema.model_json_schema()
    assert set(schema["properties"]) == {"query", "table", "column", "filter", "mode", "limit"}


def test_plain_help_drops_rst_markup():
    from evidex.tools.cli_help import plain_help

    doc = "Scores with :func:`agents.x.f` and :class:`~a.B`; set ``--json`` to write.\n\nExamples::\n\n    run it\n"
    assert plain_help(doc) == "Scores with agents.x.f and a.B; set --json to write.\n\nExamples:\n\n    run it\n"
    assert plain_help(None) == ""

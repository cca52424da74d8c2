"""The store as the page shows it: its papers, and a cited passage with its page and the box to highlight.

Every query is our own, read-only and parameterised; a citation's ``source`` (``table.key``, written by a model)
only ever selects one of the known tables below and goes into the query as a parameter.
"""
from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from evidex.graphs.qa.store_tools import StoreTools
from evidex.graphs.web.models import CitationView, Paper, Passage
from evidex.tools.qa import CitedPage
from evidex.tools.safe_text import visible_controls

PASSAGE_CHARS = 6000  # the passage text beside the page; a whole page of text is about 4,000 characters
_TOKEN = re.compile(r"\w+(?:[.,]\d+)*")  # words, and numbers with their decimals ("74.9")


class NotFoundError(LookupError):
    """A paper or page that is not in the store; the message says which."""


# table -> (kind shown on the page, primary key, the text of a row), for the rows that have a box on a page
_BOXED = {
    "chunks": ("chunk", "chunk_id", "x.text_content"),
    "tables": ("table", "table_id", "concat_ws(chr(10), x.table_caption, x.table_markdown)"),
    "images": ("figure", "image_id", "coalesce(x.image_caption, '')"),
    "equations": ("equation", "equation_id", "concat_ws(' ', '(' || x.equation_number || ')', x.equation_content)"),
    "reference": ("reference", "reference_id", "x.reference_content"),
}
KINDS = {table: kind for table, (kind, _, _) in _BOXED.items()} | {"sections": "section", "pages": "page",
                                                                     "metadata": "metadata"}


def check_pdf_id(pdf_id: str) -> str:
    """Paper ids are UUIDs; anything else is refused before it reaches a query or a path."""
    try:
        return str(uuid.UUID(pdf_id))
    except (ValueError, TypeError, AttributeError):
        raise NotFoundError(f"{visible_controls(pdf_id)[:80]!r} is not a paper id of this store") from None


def venue(row: dict[str, Any]) -> str:
    name = row.get("conference_abbreviation") or ""
    year = row.get("pub_year")
    if not name and row.get("conference_year") not in (None, "", "uncategorized"):
        return str(row["conference_year"])
    return " ".join(str(p) for p in (name, year) if p)


def list_papers(tools: StoreTools) -> list[Paper]:
    rows = tools.query("SELECT CAST(paper_id AS VARCHAR) AS pdf_id, title, num_pages, conference_abbreviation, "
                       "conference_year, pub_year FROM metadata ORDER BY lower(title)")
    return [Paper(pdf_id=r["pdf_id"], title=visible_controls(r["title"] or "(untitled)"),
                  venue=visible_controls(venue(r)), pages=int(r["num_pages"] or 0)) for r in rows]


def pdf_file(tools: StoreTools, pdf_id: str) -> tuple[Path, int]:
    """The ingested PDF of a paper (as the store recorded it) and its page count."""
    rows = tools.query("SELECT pdf_path, num_pages FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?",
                       [check_pdf_id(pdf_id)])
    if not rows:
        raise NotFoundError(f"paper {pdf_id} is not in this store")
    path = Path(rows[0]["pdf_path"] or "")
    if not rows[0]["pdf_path"] or not path.is_file():
        raise NotFoundError(f"the PDF of paper {pdf_id} is no longer at {path.name or 'its ingested path'}; "
                            "ingest it again to see its pages")
    return path, int(rows[0]["num_pages"] or 0)


def _page(tools: StoreTools, pdf_id: str, page_number: int) -> dict[str, Any]:
    rows = tools.query(
        "SELECT p.page_number, p.page_width, p.page_height, p.page_content, m.title, m.num_pages "
        "FROM pages p JOIN metadata m ON p.ref_paper_id = m.paper_id "
        "WHERE CAST(p.ref_paper_id AS VARCHAR) = ? AND p.page_number = ?", [pdf_id, page_number])
    if not rows:
        raise NotFoundError(f"page {page_number} of paper {pdf_id} is not in this store")
    return rows[0]


def _boxed_row(tools: StoreTools, table: str, key: str, pdf_id: str) -> dict[str, Any] | None:
    kind, primary, text = _BOXED[table]
    rows = tools.query(
        f"SELECT x.bounding_box AS box, {text} AS text, p.page_number FROM {table} x "
        f"JOIN pages p ON x.ref_page_id = p.page_id "
        f"WHERE CAST(x.{primary} AS VARCHAR) = ? AND CAST(x.ref_paper_id AS VARCHAR) = ?", [key, pdf_id])
    return rows[0] if rows else None


def _tokens(text: str, min_len: int) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text or "") if len(t) >= min_len or any(c.isdigit() for c in t)}


def _best_chunk(tools: StoreTools, pdf_id: str, page_number: int, answer: str, question: str) -> dict[str, Any] | None:
    """The chunk of a page that best matches the answer (its words and numbers count three times) and the
    question's longer words: for a citation that names only its page."""
    answer_words, question_words = _tokens(answer, 2), _tokens(question, 4)
    if not answer_words and not question_words:
        return None
    rows = tools.query(
        "SELECT c.bounding_box AS box, c.text_content AS text FROM chunks c JOIN pages p ON c.ref_page_id = p.page_id "
        "WHERE CAST(c.ref_paper_id AS VARCHAR) = ? AND p.page_number = ? ORDER BY c.ordinal", [pdf_id, page_number])

    def score(text: str) -> int:
        words = _tokens(text, 2)
        return 3 * len(answer_words & words) + len(question_words & words)

    scored = [(score(r["text"]), -n, r) for n, r in enumerate(rows)]
    best = max(scored, default=None, key=lambda s: s[:2])
    return best[2] if best and best[0] > 0 else None


def _cut(text: str) -> str:
    text = visible_controls(text or "")
    if len(text) <= PASSAGE_CHARS:
        return text
    return text[:PASSAGE_CHARS] + f"… [{len(text) - PASSAGE_CHARS:,} more characters]"


def passage(tools: StoreTools, pdf_id: str, page_number: int, source: str = "", answer: str = "",
            question: str = "") -> Passage:
    """What a citation points at: the row its ``source`` names (with its box) when the store has it, else the
    passage of the cited page that best matches the answer and the question, else the page's text."""
    pdf_id = check_pdf_id(pdf_id)
    table, _, key = (source or "").strip().partition(".")
    kind, box, text, note = "page", None, None, ""
    row = _boxed_row(tools, table, key.strip(), pdf_id) if table in _BOXED and key.strip() else None
    if row is not None:
        kind, box, text = _BOXED[table][0], row["box"], row["text"]
        if row["page_number"] != page_number:
            note = f"The citation said page {page_number}; this {kind} is on page {row['page_number']}."
            page_number = row["page_number"]
    page = _page(tools, pdf_id, page_number)
    if text is None and table == "metadata":
        meta = tools.query("SELECT title, abstract FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?", [pdf_id])
        kind, text = "metadata", "\n\n".join(filter(None, (meta[0]["title"], meta[0]["abstract"]))) if meta else ""
    if text is None:
        found = _best_chunk(tools, pdf_id, page_number, answer, question)
        if found is not None:
            kind, box, text = "chunk", found["box"], found["text"]
            note = ("The citation names only the page; highlighted is the passage on it that best matches the answer "
                    "and the question.")
        else:
            text = page["page_content"] or ""
            note = "The citation names only the page; its text is shown."
    return Passage(pdf_id=pdf_id, title=visible_controls(page["title"] or ""), page_number=page_number,
                   page_count=int(page["num_pages"] or 0), page_width=float(page["page_width"] or 612),
                   page_height=float(page["page_height"] or 792), kind=kind,
                   box=[float(v) for v in box] if box is not None and len(box) == 4 else None, text=_cut(text),
                   note=note, image_url=f"/api/pages/{pdf_id}/{page_number}.png")


def citation_views(tools: StoreTools, citations: list[CitedPage]) -> list[CitationView]:
    """Citations with their papers' titles and the kind of row they cite, for the answer's chips."""
    ids = sorted({c.pdf_id for c in citations})
    titles: dict[str, str] = {}
    if ids:
        from evidex.graphs.qa.scope import sql_marks

        titles = {r["pdf_id"]: r["title"] for r in tools.query(
            "SELECT CAST(paper_id AS VARCHAR) AS pdf_id, title FROM metadata "
            f"WHERE CAST(paper_id AS VARCHAR) IN ({sql_marks(ids)})", ids)}
    return [CitationView(pdf_id=visible_controls(c.pdf_id), page_number=c.page_number,
                         source=visible_controls(c.source), exists=c.exists,
                         title=visible_controls(titles.get(c.pdf_id) or c.pdf_id),
                         kind=KINDS.get(c.source.partition(".")[0], "page")) for c in citations]

"""The store as the page shows it: its papers, and a cited passage with its page and the box to highlight.

Every read goes through the paper store's typed API (tools.paperstore); a citation's ``source`` (``table.key``,
written by a model) only ever selects one of the store's known tables and goes into the query as a parameter.
"""
from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from evidex.graphs.web.models import CitationView, Paper, Passage
from evidex.tools.paperstore import Equation, Figure, PaperStore, Table
from evidex.tools.paperstore import Passage as StorePassage
from evidex.tools.qa import CitedPage
from evidex.tools.safe_text import visible_controls

PASSAGE_CHARS = 6000  # the passage text beside the page; a whole page of text is about 4,000 characters
_TOKEN = re.compile(r"\w+(?:[.,]\d+)*")  # words, and numbers with their decimals ("74.9")


class NotFoundError(LookupError):
    """A paper or page that is not in the store; the message says which."""


KINDS = {"chunks": "chunk", "tables": "table", "images": "figure", "equations": "equation", "reference": "reference",
         "sections": "section", "pages": "page", "metadata": "metadata"}


def check_pdf_id(pdf_id: str) -> str:
    """Paper ids are UUIDs; anything else is refused before it reaches a query or a path."""
    try:
        return str(uuid.UUID(pdf_id))
    except (ValueError, TypeError, AttributeError):
        raise NotFoundError(f"{visible_controls(pdf_id)[:80]!r} is not a paper id of this store") from None


def venue(paper) -> str:
    if not paper.venue and paper.conference not in (None, "", "uncategorized"):
        return str(paper.conference)
    return " ".join(str(p) for p in (paper.venue, paper.year) if p)


def list_papers(store: PaperStore) -> list[Paper]:
    return [Paper(pdf_id=p.paper_id, title=visible_controls(p.title or "(untitled)"),
                  venue=visible_controls(venue(p)), pages=int(p.num_pages or 0)) for p in store.papers()]


def pdf_file(store: PaperStore, pdf_id: str) -> tuple[Path, int]:
    """The ingested PDF of a paper (as the store recorded it) and its page count."""
    found = store.papers([check_pdf_id(pdf_id)])
    if not found:
        raise NotFoundError(f"paper {pdf_id} is not in this store")
    path = Path(found[0].pdf_path or "")
    if not found[0].pdf_path or not path.is_file():
        raise NotFoundError(f"the PDF of paper {pdf_id} is no longer at {path.name or 'its ingested path'}; "
                            "ingest it again to see its pages")
    return path, int(found[0].num_pages or 0)


def _tokens(text: str, min_len: int) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text or "") if len(t) >= min_len or any(c.isdigit() for c in t)}


def _best_chunk(store: PaperStore, pdf_id: str, page_number: int, answer: str,
                question: str) -> StorePassage | None:
    """The passage of a page that best matches the answer (its words and numbers count three times) and the
    question's longer words: for a citation that names only its page."""
    answer_words, question_words = _tokens(answer, 2), _tokens(question, 4)
    if not answer_words and not question_words:
        return None

    def score(text: str) -> int:
        words = _tokens(text, 2)
        return 3 * len(answer_words & words) + len(question_words & words)

    scored = [(score(p.text), -n, p) for n, p in enumerate(store.page_passages(pdf_id, page_number))]
    best = max(scored, default=None, key=lambda s: s[:2])
    return best[2] if best and best[0] > 0 else None


def _item_text(item) -> str:
    if isinstance(item, Table):
        return f"{item.caption}\n{item.markdown}"
    if isinstance(item, Figure):
        return item.caption
    if isinstance(item, Equation):
        return item.text
    return getattr(item, "text", "")


def _cut(text: str) -> str:
    text = visible_controls(text or "")
    if len(text) <= PASSAGE_CHARS:
        return text
    return text[:PASSAGE_CHARS] + f"… [{len(text) - PASSAGE_CHARS:,} more characters]"


def passage(store: PaperStore, pdf_id: str, page_number: int, source: str = "", answer: str = "",
            question: str = "") -> Passage:
    """What a citation points at: the row its ``source`` names (with its box) when the store has it, else the
    passage of the cited page that best matches the answer and the question, else the page's text."""
    pdf_id = check_pdf_id(pdf_id)
    table = (source or "").strip().partition(".")[0]
    kind, box, text, note = "page", None, None, ""
    item = store.item(source, pdf_id)
    if item is not None:
        kind, box, text = KINDS.get(table, "page"), item.bbox if hasattr(item, "bbox") else None, _item_text(item)
        if item.page != page_number:
            note = f"The citation said page {page_number}; this {kind} is on page {item.page}."
            page_number = item.page
    page = store.page(pdf_id, page_number)
    papers = store.papers([pdf_id])
    if page is None or not papers:
        raise NotFoundError(f"page {page_number} of paper {pdf_id} is not in this store")
    paper = papers[0]
    if text is None and table == "metadata":
        kind, text = "metadata", "\n\n".join(filter(None, (paper.title, paper.abstract)))
    if text is None:
        found = _best_chunk(store, pdf_id, page_number, answer, question)
        if found is not None:
            kind, box, text = "chunk", found.bbox, found.text
            note = ("The citation names only the page; highlighted is the passage on it that best matches the answer "
                    "and the question.")
        else:
            text = page.text
            note = "The citation names only the page; its text is shown."
    return Passage(pdf_id=pdf_id, title=visible_controls(paper.title or ""), page_number=page_number,
                   page_count=int(paper.num_pages or 0), page_width=float(page.width or 612),
                   page_height=float(page.height or 792), kind=kind,
                   box=[float(v) for v in box] if box is not None and len(box) == 4 else None, text=_cut(text),
                   note=note, image_url=f"/api/pages/{pdf_id}/{page_number}.png")


def citation_views(store: PaperStore, citations: list[CitedPage]) -> list[CitationView]:
    """Citations with their papers' titles and the kind of row they cite, for the answer's chips."""
    ids = sorted({c.pdf_id for c in citations})
    titles = {p.paper_id: p.title for p in store.papers(ids)} if ids else {}
    return [CitationView(pdf_id=visible_controls(c.pdf_id), page_number=c.page_number,
                         source=visible_controls(c.source), exists=c.exists,
                         title=visible_controls(titles.get(c.pdf_id) or c.pdf_id),
                         kind=KINDS.get(c.source.partition(".")[0], "page")) for c in citations]

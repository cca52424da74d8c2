"""The store as the page shows it: its papers, and a cited passage with its page, where it is on the page (the cited
row's region and the lines in it that hold the answer) and, for a table, its cells.

Every read goes through the paper store's typed API (tools.paperstore); a citation's ``source`` (``table.key``,
written by a model) only ever selects one of the store's known tables and goes into the query as a parameter.
"""
from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from pathlib import Path

from evidex.graphs.web.models import CitationView, Paper, Passage, TableView
from evidex.graphs.web.page_render import Line
from evidex.tools.paperstore import Equation, Figure, PaperStore, Table
from evidex.tools.paperstore import Passage as StorePassage
from evidex.tools.qa import CitedPage
from evidex.tools.safe_text import visible_controls

log = logging.getLogger(__name__)
PASSAGE_CHARS = 6000  # the passage text beside the page; a whole page of text is about 4,000 characters
FOCUS_LINES = 3  # the answer's own lines: a sentence or two, never a page
CELL_WORDS = 3  # a focus this short is a table cell: widened to its row
TABLE_ROWS, TABLE_COLUMNS, TABLE_CELL_CHARS = 80, 24, 200  # a cited table as the page shows it
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


# words of a question that say nothing about where its answer is
_ASKING = frozenset("what which who whom whose when where why how does did do is are was were the this that these "
                    "those with from into than then there their they them have has had been being paper papers "
                    "reported report according used uses using value values between about".split())


def _tokens(text: str, min_len: int) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text or "")
            if (len(t) >= min_len or any(c.isdigit() for c in t)) and t.lower() not in _ASKING}


def _best_chunk(store: PaperStore, pdf_id: str, page_number: int, answer: str,
                question: str) -> StorePassage | None:
    """The passage of a page that best matches the answer (its words and numbers count three times) and the
    question's longer words: for a citation that names only its page when the page's lines cannot be read."""
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
        return item.caption or item.markdown
    if isinstance(item, Figure):
        return item.caption
    if isinstance(item, Equation):
        return item.text
    return getattr(item, "text", "")


def _inside(line: Line, box: list[float] | None, margin: float = 2.0) -> bool:
    """Whether a line's centre lies in a stored ``[x0, y0, w, h]`` box (any line, without a box)."""
    if box is None:
        return True
    x, y = (line[0] + line[2]) / 2, (line[1] + line[3]) / 2
    return box[0] - margin <= x <= box[0] + box[2] + margin and box[1] - margin <= y <= box[1] + box[3] + margin


def focus_lines(lines: list[Line], answer: str, question: str, region: list[float] | None = None,
                max_lines: int = FOCUS_LINES) -> list[Line]:
    """The few consecutive lines (one block, at most ``max_lines``) the answer was read from: those holding the
    most of the answer's words and numbers (three times each) and of the question's own words, the fewest lines
    on a tie. Only lines inside ``region`` count (a cited chunk or table). Empty when no line holds a word of the
    answer (or, with no answer words, two of the question's)."""
    answer_words, question_words = _tokens(answer, 3), _tokens(question, 4)
    if not answer_words and not question_words:
        return []
    usable = [line for line in lines if _inside(line, region)]
    words = [_tokens(line[5], 2) for line in usable]
    best: tuple[tuple, list[Line]] | None = None
    for i in range(len(usable)):
        seen: set[str] = set()
        for j in range(i, min(i + max_lines, len(usable))):
            if usable[j][4] != usable[i][4]:
                break
            seen |= words[j]
            hits_answer, hits_question = len(answer_words & seen), len(question_words & seen)
            if answer_words and not hits_answer or not answer_words and hits_question < 2:
                continue
            rank = (3 * hits_answer + hits_question, -(j - i), -i)
            if best is None or rank > best[0]:
                best = (rank, usable[i:j + 1])
    return best[1] if best else []


def row_lines(focus: list[Line], lines: list[Line], table_box: list[float] | None) -> list[Line]:
    """Inside a table, the focus widened to its whole row: the lines of the table that share its height band (a
    PDF often sets each cell as a block of its own, so the answer's cell alone would be found)."""
    if not focus or table_box is None:
        return focus
    top, bottom = min(line[1] for line in focus), max(line[3] for line in focus)

    def in_band(line: Line) -> bool:
        overlap = min(bottom, line[3]) - max(top, line[1])
        return overlap >= 0.5 * max(line[3] - line[1], 0.1)

    row = [line for line in lines if _inside(line, table_box) and in_band(line)]
    return sorted(row, key=lambda line: line[0]) if len(row) > len(focus) else focus


def _union(lines: list[Line]) -> list[float]:
    x0, y0 = min(line[0] for line in lines), min(line[1] for line in lines)
    x1, y1 = max(line[2] for line in lines), max(line[3] for line in lines)
    return [round(x0 - 1, 1), round(y0 - 1, 1), round(x1 - x0 + 2, 1), round(y1 - y0 + 2, 1)]


def table_view(table: Table) -> TableView | None:
    """A stored table as rows of cells (its header and body rows as the paper store reads them), cut to a size a
    page shows; None when it holds no rows."""
    header, body = table.header_rows, table.rows
    rows = header + body
    if not rows:
        return None
    width = min(max(len(r) for r in rows), TABLE_COLUMNS)
    cells = [[visible_controls(c)[:TABLE_CELL_CHARS] for c in row[:width]] for row in rows[:TABLE_ROWS]]
    return TableView(caption=visible_controls(table.caption or ""), rows=cells, header_rows=len(header),
                     cut_rows=max(0, len(rows) - TABLE_ROWS), cut_columns=max(0, max(len(r) for r in rows) - width))


def _cut(text: str) -> str:
    text = visible_controls(text or "")
    if len(text) <= PASSAGE_CHARS:
        return text
    return text[:PASSAGE_CHARS] + f"… [{len(text) - PASSAGE_CHARS:,} more characters]"


def _box(value) -> list[float] | None:
    return [float(v) for v in value] if value is not None and len(value) == 4 else None


def passage(store: PaperStore, pdf_id: str, page_number: int, source: str = "", answer: str = "",
            question: str = "", lines_of: Callable[[int], list[Line]] | None = None) -> Passage:
    """What a citation points at, and where on its page: the row its ``source`` names (its box as the region) when
    the store has it, with the lines inside it that hold the answer as the focus; for a citation that names only
    a page, the lines of that page the answer was read from (``lines_of(page)``: the page's text lines), with the
    passage they belong to; else the page's text."""
    pdf_id = check_pdf_id(pdf_id)
    table = (source or "").strip().partition(".")[0]
    kind, region, text, note, cited_table = "page", None, None, "", None
    item = store.item(source, pdf_id)
    if item is not None:
        kind, region, text = KINDS.get(table, "page"), _box(getattr(item, "bbox", None)), _item_text(item)
        if isinstance(item, Table):
            cited_table = table_view(item)
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
    lines: list[Line] = []
    if lines_of is not None and kind != "metadata":
        try:
            lines = lines_of(page_number)
        except Exception as exc:  # noqa: BLE001 - without its lines the passage is still shown, with the region only
            log.info("text lines of %s page %s: %s", pdf_id, page_number, exc)
    focus = focus_lines(lines, answer, question, region) if lines else []
    if focus:
        holder = None
        if text is None:  # a page-only citation: the passage the answer came from, and what holds it
            holder = next((p for p in store.page_passages(pdf_id, page_number)
                           if all(_inside(line, _box(p.bbox)) for line in focus)), None)
            kind, text = ("chunk", holder.text) if holder is not None else ("passage", "\n".join(l[5] for l in focus))
            note = "The citation names only the page; highlighted are the lines on it that hold the answer."
        # a table cell (a PDF often sets each cell as a block of its own): the answer's whole row
        if len(focus) == 1 and len(focus[0][5].split()) <= CELL_WORDS:
            focus = row_lines(focus, lines, region or (_box(holder.bbox) if holder is not None else None))
    elif text is None:
        found = _best_chunk(store, pdf_id, page_number, answer, question) if not lines else None
        if found is not None:  # the page's lines could not be read: the best matching passage, as a region
            kind, region, text = "chunk", _box(found.bbox), found.text
            note = ("The citation names only the page; highlighted is the passage on it that best matches the answer "
                    "and the question.")
        else:
            text = page.text
            note = "The citation names only the page, and no passage on it holds the answer's words: the page is shown."
    return Passage(pdf_id=pdf_id, title=visible_controls(paper.title or ""), page_number=page_number,
                   page_count=int(paper.num_pages or 0), page_width=float(page.width or 612),
                   page_height=float(page.height or 792), kind=kind, box=region,
                   focus=_union(focus) if focus else None,
                   focus_text=visible_controls(" ".join(line[5] for line in focus))[:1000], text=_cut(text),
                   table=cited_table, note=note, image_url=f"/api/pages/{pdf_id}/{page_number}.png")


def citation_views(store: PaperStore, citations: list[CitedPage]) -> list[CitationView]:
    """Citations with their papers' titles and the kind of row they cite, for the answer's chips."""
    ids = sorted({c.pdf_id for c in citations})
    titles = {p.paper_id: p.title for p in store.papers(ids)} if ids else {}
    return [CitationView(pdf_id=visible_controls(c.pdf_id), page_number=c.page_number,
                         source=visible_controls(c.source), exists=c.exists,
                         title=visible_controls(titles.get(c.pdf_id) or c.pdf_id),
                         kind=KINDS.get(c.source.partition(".")[0], "page")) for c in citations]


_FIGURE_LABEL = re.compile(r"^\s*(?:Figure|Fig\.)\s*([A-Z]?\d+(?:\.\d+)?)", re.IGNORECASE)


def source_labels(store: PaperStore, sources: list[tuple[str, str]]) -> dict[str, str]:
    """Short names of cited rows, for the steps' lines: ``(tables.<id>, paper)`` -> ``Table 2``, a figure by its
    caption's number, an equation by its number. Rows without such a name are left out."""
    out: dict[str, str] = {}
    for source, pdf_id in dict.fromkeys(sources):
        if source.partition(".")[0] not in ("tables", "images", "equations"):
            continue
        item = store.item(source, pdf_id)
        label = None
        if isinstance(item, Table):
            label = item.label
        elif isinstance(item, Figure):
            found = _FIGURE_LABEL.match(item.caption or "")
            label = f"Figure {found.group(1)}" if found else None
        elif isinstance(item, Equation) and item.number:
            label = f"Equation ({item.number})"
        if label:
            out[source] = visible_controls(label)
    return out

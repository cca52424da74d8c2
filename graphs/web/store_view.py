"""The store as the page shows it: its papers, and a cited passage with its page and the box to highlight.

Every query is our own, read-only and parameterised; a citation's ``source`` (``table.key``, written by a model)
only ever selects one of the known tables below and goes into the query as a parameter.
"""
from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidex.graphs.qa.store_tools import StoreTools
from evidex.graphs.web.models import CitationView, Paper, Passage, TableView
from evidex.graphs.web.page_render import Line
from evidex.tools.qa import CitedPage
from evidex.tools.safe_text import visible_controls

log = logging.getLogger(__name__)
PASSAGE_CHARS = 6000  # the passage text beside the page; a whole page of text is about 4,000 characters
FOCUS_LINES = 3  # the answer's own lines: a sentence or two, never a page
TABLE_ROWS, TABLE_COLUMNS, TABLE_CELL_CHARS = 80, 24, 200  # a cited table as the page shows it
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
    extra = ", x.table_caption AS caption, x.table_markdown AS markdown" if table == "tables" else ""
    rows = tools.query(
        f"SELECT x.bounding_box AS box, {text} AS text, p.page_number{extra} FROM {table} x "
        f"JOIN pages p ON x.ref_page_id = p.page_id "
        f"WHERE CAST(x.{primary} AS VARCHAR) = ? AND CAST(x.ref_paper_id AS VARCHAR) = ?", [key, pdf_id])
    return rows[0] if rows else None


def _rows_on_page(tools: StoreTools, table: str, pdf_id: str, page_number: int) -> list[dict[str, Any]]:
    """The chunks (or tables) of a page with their boxes, to say which one a highlighted passage belongs to."""
    extra = ", x.table_caption AS caption, x.table_markdown AS markdown" if table == "tables" else ""
    return tools.query(
        f"SELECT x.bounding_box AS box, {_BOXED[table][2]} AS text{extra} FROM {table} x "
        "JOIN pages p ON x.ref_page_id = p.page_id "
        "WHERE CAST(x.ref_paper_id AS VARCHAR) = ? AND p.page_number = ? ORDER BY x.ordinal", [pdf_id, page_number])


# words of a question that say nothing about where its answer is
_ASKING = frozenset("what which who whom whose when where why how does did do is are was were the this that these "
                    "those with from into than then there their they them have has had been being paper papers "
                    "reported report according used uses using value values between about".split())


def _tokens(text: str, min_len: int) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text or "")
            if (len(t) >= min_len or any(c.isdigit() for c in t)) and t.lower() not in _ASKING}


def _best_chunk(tools: StoreTools, pdf_id: str, page_number: int, answer: str, question: str) -> dict[str, Any] | None:
    """The chunk of a page that best matches the answer (its words and numbers count three times) and the
    question's longer words: for a citation that names only its page when its lines cannot be read."""
    answer_words, question_words = _tokens(answer, 2), _tokens(question, 4)
    if not answer_words and not question_words:
        return None
    rows = _rows_on_page(tools, "chunks", pdf_id, page_number)

    def score(text: str) -> int:
        words = _tokens(text, 2)
        return 3 * len(answer_words & words) + len(question_words & words)

    scored = [(score(r["text"]), -n, r) for n, r in enumerate(rows)]
    best = max(scored, default=None, key=lambda s: s[:2])
    return best[2] if best and best[0] > 0 else None


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


def table_view(caption: str | None, markdown: str | None) -> TableView | None:
    """A stored table as rows of cells (read from its markdown by ``tools.table_records``), cut to a size a page
    shows; None when the markdown holds no table."""
    from evidex.tools.table_records import markdown_rows

    rows = markdown_rows(markdown or "")
    if not rows:
        return None
    width = min(len(rows[0]), TABLE_COLUMNS)
    cells = [[visible_controls(c)[:TABLE_CELL_CHARS] for c in row[:width]] for row in rows[:TABLE_ROWS]]
    return TableView(caption=visible_controls(caption or ""), rows=cells, header_rows=1,
                     cut_rows=max(0, len(rows) - TABLE_ROWS), cut_columns=max(0, len(rows[0]) - TABLE_COLUMNS))


def _cut(text: str) -> str:
    text = visible_controls(text or "")
    if len(text) <= PASSAGE_CHARS:
        return text
    return text[:PASSAGE_CHARS] + f"… [{len(text) - PASSAGE_CHARS:,} more characters]"


def _box(value) -> list[float] | None:
    return [float(v) for v in value] if value is not None and len(value) == 4 else None


def passage(tools: StoreTools, pdf_id: str, page_number: int, source: str = "", answer: str = "",
            question: str = "", lines_of: Callable[[int], list[Line]] | None = None) -> Passage:
    """What a citation points at, and where on its page: the row its ``source`` names (its box as the region) when
    the store has it, with the lines inside it that hold the answer as the focus; for a citation that names only
    a page, the lines of that page the answer was read from (``lines_of(page)``: the page's text lines), with the
    chunk or table they belong to; else the page's text."""
    pdf_id = check_pdf_id(pdf_id)
    table, _, key = (source or "").strip().partition(".")
    kind, region, text, note, cited_table = "page", None, None, "", None
    row = _boxed_row(tools, table, key.strip(), pdf_id) if table in _BOXED and key.strip() else None
    if row is not None:
        kind, region, text = _BOXED[table][0], _box(row["box"]), row["text"]
        if table == "tables":
            cited_table, text = table_view(row["caption"], row["markdown"]), row["caption"] or row["text"]
        if row["page_number"] != page_number:
            note = f"The citation said page {page_number}; this {kind} is on page {row['page_number']}."
            page_number = row["page_number"]
    page = _page(tools, pdf_id, page_number)
    if text is None and table == "metadata":
        meta = tools.query("SELECT title, abstract FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?", [pdf_id])
        kind, text = "metadata", "\n\n".join(filter(None, (meta[0]["title"], meta[0]["abstract"]))) if meta else ""
    lines: list[Line] = []
    if lines_of is not None and kind != "metadata":
        try:
            lines = lines_of(page_number)
        except Exception as exc:  # noqa: BLE001 - without its lines the passage is still shown, with the region only
            log.info("text lines of %s page %s: %s", pdf_id, page_number, exc)
    focus = focus_lines(lines, answer, question, region) if lines else []
    if focus:
        # in a table (cited, or the one the lines fall in), the answer's whole row rather than its one cell
        holder_table = row if kind == "table" else _holder(tools, "tables", pdf_id, page_number, focus)
        if holder_table is not None:
            focus = row_lines(focus, lines, _box(holder_table["box"]))
        if text is None:  # a page-only citation: the passage the answer came from, and what holds it
            holder_chunk = _holder(tools, "chunks", pdf_id, page_number, focus) if holder_table is None else None
            if holder_table is not None:
                kind, cited_table = "table", table_view(holder_table["caption"], holder_table["markdown"])
                text = holder_table["caption"] or holder_table["text"]
            elif holder_chunk is not None:
                kind, text = "chunk", holder_chunk["text"]
            else:
                kind, text = "passage", "\n".join(line[5] for line in focus)
            note = "The citation names only the page; highlighted are the lines on it that hold the answer."
    elif text is None:
        found = _best_chunk(tools, pdf_id, page_number, answer, question) if not lines else None
        if found is not None:  # the page's lines could not be read: the best matching chunk, as a region
            kind, region, text = "chunk", _box(found["box"]), found["text"]
            note = ("The citation names only the page; highlighted is the passage on it that best matches the answer "
                    "and the question.")
        else:
            text = page["page_content"] or ""
            note = "The citation names only the page, and no passage on it holds the answer's words: the page is shown."
    return _passage(tools, pdf_id, page, page_number, kind, region, _union(focus) if focus else None, focus, text,
                    note, cited_table)


def _holder(tools: StoreTools, table: str, pdf_id: str, page_number: int, focus: list[Line]) -> dict | None:
    """The chunk (or table) of the page whose box holds all the focus lines."""
    return next((r for r in _rows_on_page(tools, table, pdf_id, page_number)
                 if all(_inside(line, _box(r["box"])) for line in focus)), None)


def _passage(tools, pdf_id, page, page_number, kind, region, focus_box, focus, text, note, cited_table) -> Passage:
    return Passage(pdf_id=pdf_id, title=visible_controls(page["title"] or ""), page_number=page_number,
                   page_count=int(page["num_pages"] or 0), page_width=float(page["page_width"] or 612),
                   page_height=float(page["page_height"] or 792), kind=kind, box=region, focus=focus_box,
                   focus_text=visible_controls(" ".join(line[5] for line in focus))[:1000], text=_cut(text),
                   table=cited_table, note=note, image_url=f"/api/pages/{pdf_id}/{page_number}.png")


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


_LABEL = {  # table -> (primary key, the text a label is read from, the label's pattern)
    "tables": ("table_id", "x.table_caption", re.compile(r"^\s*(Table|Tab\.)\s*([A-Z]?\d+(?:\.\d+)?)", re.I)),
    "images": ("image_id", "x.image_caption", re.compile(r"^\s*(Figure|Fig\.)\s*([A-Z]?\d+(?:\.\d+)?)", re.I)),
    "equations": ("equation_id", "CAST(x.equation_number AS VARCHAR)", None),
    "sections": ("section_id", "x.section_title", None),
}


def source_labels(tools: StoreTools, sources: list[str]) -> dict[str, str]:
    """Short names of cited rows, for the steps' lines: ``tables.<id>`` -> ``Table 2``, a figure by its caption's
    number, an equation by its number, a section by its title. Rows without such a name are left out."""
    wanted: dict[str, list[str]] = {}
    for source in dict.fromkeys(sources):
        table, _, key = source.partition(".")
        if table in _LABEL and key:
            wanted.setdefault(table, []).append(key)
    out: dict[str, str] = {}
    from evidex.graphs.qa.scope import sql_marks

    for table, keys in wanted.items():
        primary, text, pattern = _LABEL[table]
        rows = tools.query(f"SELECT CAST(x.{primary} AS VARCHAR) AS key, {text} AS text FROM {table} x "
                           f"WHERE CAST(x.{primary} AS VARCHAR) IN ({sql_marks(keys)})", keys)
        for row in rows:
            value = " ".join(str(row["text"] or "").split())
            if not value:
                continue
            if table in ("tables", "images"):
                found = pattern.match(value)
                if not found:
                    continue
                label = f"{'Table' if table == 'tables' else 'Figure'} {found.group(2)}"
            elif table == "equations":
                label = f"Equation ({value.strip('()')})"
            else:
                label = f"section “{value[:50]}”"
            out[f"{table}.{row['key']}"] = visible_controls(label)
    return out

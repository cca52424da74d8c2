"""The multiview probe: before the agent's first turn, look up what the question itself points at, in every view
of the store, and show it as the first observation.

A small model writes SQL and search calls badly, and each wasted turn costs a full prompt; but much of what an
AirQA-style question needs is named in the question: the papers in scope (their metadata row answers author,
page-count and venue questions), "Table 2" (its caption and cells), "Figure 3" (its caption and the text inside
its box), "Equation 4" (its content), and passages that match the question's words. These are symbolic look-ups
(exact rows by paper id and number) plus one hybrid search, so the agent starts from evidence in every view and
spends its turns only on what the probe missed.
"""
from __future__ import annotations

import re
from itertools import zip_longest
from typing import TYPE_CHECKING

from evidex.graphs.qa.scope import names_papers, paper_label, sql_marks
from evidex.tools.degraded import search_degradations
from evidex.tools.first_page import corresponding_authors
from evidex.tools.qa import CitedPage, PaperQuestion
from evidex.tools.store import StoreError
from evidex.tools.table_records import table_records

if TYPE_CHECKING:
    from evidex.graphs.qa.store_tools import StoreTools

# "Table 2", "Tab. 2", "Figure 3", "Fig. 3", "Equation 4", "Eq. (4)", "Eqn 4": the objects a question names.
_REFERENCES = {
    "table": re.compile(r"\b(?:Table|Tab\.)\s*(\d+)", re.IGNORECASE),
    "figure": re.compile(r"\b(?:Figure|Fig\.)\s*(\d+)", re.IGNORECASE),
    "equation": re.compile(r"\b(?:Equation|Eqn?\.?)\s*\(?(\d+)\)?", re.IGNORECASE),
}
_FIGURE_TEXT_CHARS = 600  # figure text is OCR/extraction noise past the first labels
# the header line up to its page range, across the line breaks the PDF puts in it; a venue name runs to ~200 chars
_PROCEEDINGS = re.compile(r"(?:Proceedings|Findings) of\b.{0,250}?\bpages\s+\d+\s*[–-]\s*\d+", re.DOTALL)
_PAGE_RANGE = re.compile(r"\bpages\s+(\d+)\s*[–-]\s*(\d+)\s*$")
_MAX_PAPERS = 4  # beyond this the question is a retrieval one; the metadata of many papers says little
# a quoted span with the words that lead into it ('In the paper "X",'): a paper title as questions cite one
_QUOTED = re.compile(r'(?:\b(?:in|of|from|by)\s+)?(?:the\s+)?(?:paper|work|article)?\s*["“]([^"”]{2,})["”],?', re.IGNORECASE)


def referenced(question: str) -> dict[str, list[str]]:
    """The numbers of the tables, figures and equations a question names, in order, without repeats."""
    return {kind: list(dict.fromkeys(pattern.findall(question))) for kind, pattern in _REFERENCES.items()}


def _in_papers(column: str, ids: list[str]) -> str:
    """``column`` is one of the papers' ids (which go in as parameters, never spliced)."""
    return f"CAST({column} AS VARCHAR) IN ({sql_marks(ids)})"


Block = tuple[str, CitedPage]  # a row as the model reads it, and the source to cite for it


def _block(table: str, key: str, pdf_id: str, page: int, text: str, title: str | None = None) -> Block:
    """A row tagged with the source the answer cites for it (``table.key``, paper, page, and the paper's title
    when given)."""
    return (f"[{table}.{key}, {pdf_id} page {page}{paper_label(title)}] {text}",
            CitedPage(pdf_id=pdf_id, page_number=page, source=f"{table}.{key}"))


def proceedings_line(first_page: str | None) -> str:
    """The proceedings header an ACL-style first page prints ("Proceedings of the 61st Annual Meeting ..., Volume 1:
    Long Papers, pages 2649–2664"): the venue, volume and page range that metadata questions ask about and the
    metadata row lacks; "" when the page has none."""
    found = _PROCEEDINGS.search(first_page or "")
    if not found:
        return ""
    line = " ".join(found.group(0).split())
    pages = _PAGE_RANGE.search(line)
    # spelled out: asked "on which page of the proceedings does the paper begin", the 1.5B model answered 15
    return f"{line} (the paper begins on page {pages.group(1)} and ends on page {pages.group(2)})" if pages else line


def _metadata(tools: StoreTools, ids: list[str]) -> list[Block]:
    rows = tools.query("SELECT CAST(m.paper_id AS VARCHAR) AS pdf_id, m.title, m.authors, m.num_pages, "
                       "m.conference_year, p.page_content AS first_page FROM metadata m "
                       "LEFT JOIN pages p ON p.ref_paper_id = m.paper_id AND p.page_number = 1 "
                       f"WHERE {_in_papers('m.paper_id', ids)}", ids)

    def row_text(r: dict) -> str:
        authors = r["authors"] or []
        # counted here: a small model miscounts a list of a dozen names ("how many authors ...")
        named = f"authors ({len(authors)}): {', '.join(authors)}" if authors else "authors: unknown"
        text = (f"[metadata {r['pdf_id']}] title: {r['title']} | {named} | pages: {r['num_pages']} | "
                f"conference: {r['conference_year'] or 'unknown'}")
        header = proceedings_line(r["first_page"])
        # marked on the first page, not in the metadata row: a small model named the first author or all of them
        corresponding = corresponding_authors(r["first_page"], authors)
        return (text + (f" | corresponding authors: {', '.join(corresponding)}" if corresponding else "")
                + (f" | first page header: {header}" if header else ""))

    blocks = [(row_text(r), CitedPage(pdf_id=r["pdf_id"], page_number=1, source=f"metadata.{r['pdf_id']}"))
              for r in rows]
    # "which author appears on both papers": set by code; the 1.5B model named the first author of one of them
    common = _common_authors([r["authors"] or [] for r in rows])
    if len(rows) > 1 and common:
        ids_text = ", ".join(r["pdf_id"] for r in rows)
        blocks.append((f"[metadata {ids_text}] authors on every one of these {len(rows)} papers: {', '.join(common)}",
                       blocks[0][1]))
    return blocks


def _common_authors(lists: list[list[str]]) -> list[str]:
    """The names every list holds (compared without case, accents' spacing or dots), in the first list's order."""
    def key(name: str) -> str:
        return " ".join(name.replace(".", " ").lower().split())
    shared = set.intersection(*({key(a) for a in names} for names in lists)) if lists else set()
    return [a for a in lists[0] if key(a) in shared] if lists else []


def _numbered(tools: StoreTools, table: str, columns: str, ids: list[str], match: str, value: str) -> list[dict]:
    """At most two rows of ``table`` (alias ``x``) in the papers whose ``match`` condition holds for ``value``,
    with ``id``, ``pdf_id`` and ``page_number`` besides ``columns``."""
    key = {"tables": "table_id", "images": "image_id", "equations": "equation_id"}[table]
    return tools.query(
        f"SELECT CAST(x.{key} AS VARCHAR) AS id, CAST(x.ref_paper_id AS VARCHAR) AS pdf_id, p.page_number, {columns} "
        f"FROM {table} x JOIN pages p ON x.ref_page_id = p.page_id "
        f"WHERE {_in_papers('x.ref_paper_id', ids)} AND {match} ORDER BY p.page_number LIMIT 2", [*ids, value])


def _tables(tools: StoreTools, ids: list[str], numbers: list[str], records: bool = False) -> list[Block]:
    def cells(markdown: str | None) -> str:
        return (records and table_records(markdown or "")) or markdown or ""

    return [_block("tables", r["id"], r["pdf_id"], r["page_number"],
                   f"{r['table_caption']}\n{cells(r['table_markdown'])}")
            for n in numbers
            for r in _numbered(tools, "tables", "x.table_caption, x.table_markdown", ids,
                               "regexp_matches(x.table_caption, ?, 'i')", rf"^\s*(table|tab\.)\s*{n}\b")]


def _figure_text(tools: StoreTools, pdf_id: str, page: int, box: list[float] | None) -> str:
    """The words inside a figure's box (axis labels, legends), which its caption lacks; "" when none can be read."""
    from evidex.tools.store import StoreError
    from evidex.tools.view_image import ViewImageArgs, ViewImageError, render

    if not box:
        return ""
    try:
        view = render(ViewImageArgs(paper_id=pdf_id, page_number=page, bounding_box=list(box)), tools.db,
                      tools.store_dir)
    except (ViewImageError, StoreError, ValueError, RuntimeError):  # the caption alone still helps
        return ""
    words = " ".join(view.text.split())[:_FIGURE_TEXT_CHARS]
    return f"\nText inside the figure: {words}" if words else ""


def _figures(tools: StoreTools, ids: list[str], numbers: list[str]) -> list[Block]:
    return [_block("images", r["id"], r["pdf_id"], r["page_number"],
                   r["image_caption"] + _figure_text(tools, r["pdf_id"], r["page_number"], r["bounding_box"]))
            for n in numbers
            for r in _numbered(tools, "images", "x.image_caption, x.bounding_box", ids,
                               "regexp_matches(x.image_caption, ?, 'i')", rf"^\s*(figure|fig\.)\s*{n}\b")]


def _equations(tools: StoreTools, ids: list[str], numbers: list[str]) -> list[Block]:
    return [_block("equations", r["id"], r["pdf_id"], r["page_number"], f"Equation ({n}): {r['equation_content']}")
            for n in numbers
            for r in _numbered(tools, "equations", "x.equation_content", ids, "x.equation_number = ?", n)]


def _letters(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def without_titles(question: str, titles: list[str]) -> str:
    """The question without the quoted titles of ``titles`` (and the "in the paper" that leads into them).

    Once a title is resolved to a pdf_id the search filter keeps to that paper, and its words in the query only
    pull up the passages that repeat them (the title page, figure labels) ahead of the one that answers.
    Other quoted text (a phrase from the paper) stays: it is what to look for."""
    known = [_letters(t) for t in titles if t]

    def cut(match: re.Match) -> str:
        quoted = _letters(match.group(1))
        is_title = quoted and any(quoted == t or (len(quoted) > 20 and (quoted in t or t in quoted)) for t in known)
        return " " if is_title else match.group(0)

    return " ".join(_QUOTED.sub(cut, question).split()) or question


def _interleave(*rankings: list) -> list:
    """The rankings merged by turns (first of each, then second of each, ...), each hit once."""
    seen, out = set(), []
    for hit in (h for tier in zip_longest(*rankings) for h in tier if h is not None):
        if hit.primary_key not in seen:
            seen.add(hit.primary_key)
            out.append(hit)
    return out


def _ranked(tools: StoreTools, q: PaperQuestion, query: str, limit: int, mode: str) -> list:
    try:
        return tools.question_hits(q, query, "chunks", "text_content", limit, mode)
    except (ValueError, StoreError):  # a request the store cannot serve; a lost part of the search is not hidden:
        return []  # the search answers with the other part and reports it (tools/degraded.py)


def _passages(tools: StoreTools, q: PaperQuestion, limit: int) -> list[Block]:
    """The hybrid and the keyword ranking of the question, interleaved: RRF buries a passage only BM25 ranks
    first whenever the embedder ranks number-heavy figure text high, and the words a question quotes from the
    paper are what keywords find (AirQA dev, gold page among 4 passages: 23/27 hybrid alone, 26/27 this way with
    the titles taken out; test, 8 passages: 46/56 -> 51/56)."""
    by_id = tools.title_by_id()
    query = without_titles(q.question, [by_id[i] for i in q.pdf_ids if i in by_id])[:500]
    with search_degradations() as lost:  # a part of the hybrid search that could not run is said, not hidden
        hits = _interleave(_ranked(tools, q, query, limit, "hybrid"), _ranked(tools, q, query, limit, "bm25"))[:limit]
    titles = by_id if names_papers(q) else {}
    blocks = [_block("chunks", h.primary_key, h.pdf_id, h.page_number, h.text, titles.get(h.pdf_id)) for h in hits]
    if lost and blocks:
        warning = "".join(f"[Warning]: {u.text()}; these passages come from the other part only.\n" for u in lost[:1])
        blocks[0] = (warning + blocks[0][0], blocks[0][1])
    return blocks


def probe_blocks(tools: StoreTools, q: PaperQuestion, passages: int = 4, records: bool = False) -> list[Block]:
    """What the probe found, one (text, source to cite) per row: metadata of the papers in scope, the
    tables/figures/equations the question names (tables as records with ``records``), and the passages
    that best match it."""
    ids = list(q.pdf_ids) if len(q.pdf_ids) <= _MAX_PAPERS else []
    refs = referenced(q.question)
    blocks: list[Block] = []
    if ids:
        blocks += _metadata(tools, ids) + _tables(tools, ids, refs["table"], records)
        blocks += _figures(tools, ids, refs["figure"])
        blocks += _equations(tools, ids, refs["equation"])
    if passages:
        blocks += _passages(tools, q, passages)
    return blocks


def as_text(blocks: list[Block]) -> str:
    """The blocks as one observation."""
    return "\n\n".join(text for text, _ in blocks) or "(nothing found)"


def probe(tools: StoreTools, q: PaperQuestion, passages: int = 4) -> tuple[str, list[CitedPage]]:
    """The probe as one observation (rows tagged with their sources) and the sources."""
    blocks = probe_blocks(tools, q, passages)
    return as_text(blocks), [c for _, c in blocks]


__all__ = ["Block", "as_text", "probe", "probe_blocks", "proceedings_line", "referenced", "without_titles"]

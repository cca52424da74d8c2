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
from typing import TYPE_CHECKING

from evidex.graphs.qa.scope import scope_filter, sql_marks
from evidex.tools.qa import CitedPage, PaperQuestion

if TYPE_CHECKING:
    from evidex.graphs.qa.store_tools import StoreTools

# "Table 2", "Tab. 2", "Figure 3", "Fig. 3", "Equation 4", "Eq. (4)", "Eqn 4": the objects a question names.
_REFERENCES = {
    "table": re.compile(r"\b(?:Table|Tab\.)\s*(\d+)", re.IGNORECASE),
    "figure": re.compile(r"\b(?:Figure|Fig\.)\s*(\d+)", re.IGNORECASE),
    "equation": re.compile(r"\b(?:Equation|Eqn?\.?)\s*\(?(\d+)\)?", re.IGNORECASE),
}
_FIGURE_TEXT_CHARS = 600  # figure text is OCR/extraction noise past the first labels
_MAX_PAPERS = 4  # beyond this the question is a retrieval one; the metadata of many papers says little


def referenced(question: str) -> dict[str, list[str]]:
    """The numbers of the tables, figures and equations a question names, in order, without repeats."""
    return {kind: list(dict.fromkeys(pattern.findall(question))) for kind, pattern in _REFERENCES.items()}


def _in_papers(column: str, ids: list[str]) -> str:
    """``column`` is one of the papers' ids (which go in as parameters, never spliced)."""
    return f"CAST({column} AS VARCHAR) IN ({sql_marks(ids)})"


def _metadata(tools: StoreTools, ids: list[str]) -> tuple[list[str], list[CitedPage]]:
    rows = tools.query("SELECT CAST(paper_id AS VARCHAR) AS pdf_id, title, authors, num_pages, conference_year "
                       f"FROM metadata WHERE {_in_papers('paper_id', ids)}", ids)
    lines = []
    for r in rows:
        authors = ", ".join(r["authors"] or [])
        lines.append(f"[metadata {r['pdf_id']}] title: {r['title']} | authors: {authors} | pages: {r['num_pages']} "
                     f"| conference: {r['conference_year'] or 'unknown'}")
    return lines, [CitedPage(pdf_id=r["pdf_id"], page_number=1, source=f"metadata.{r['pdf_id']}") for r in rows]


def _tables(tools: StoreTools, ids: list[str], numbers: list[str]) -> tuple[list[str], list[CitedPage]]:
    lines, cites = [], []
    for n in numbers:
        rows = tools.query(
            "SELECT CAST(t.table_id AS VARCHAR) AS id, CAST(t.ref_paper_id AS VARCHAR) AS pdf_id, p.page_number, "
            "t.table_caption, t.table_markdown FROM tables t JOIN pages p ON t.ref_page_id = p.page_id "
            f"WHERE {_in_papers('t.ref_paper_id', ids)} "
            "AND regexp_matches(t.table_caption, ?, 'i') ORDER BY p.page_number LIMIT 2",
            [*ids, rf"^\s*(table|tab\.)\s*{n}\b"])
        for r in rows:
            lines.append(f"[tables.{r['id']}, {r['pdf_id']} page {r['page_number']}] {r['table_caption']}\n"
                         f"{r['table_markdown'] or ''}")
            cites.append(CitedPage(pdf_id=r["pdf_id"], page_number=r["page_number"], source=f"tables.{r['id']}"))
    return lines, cites


def _figures(tools: StoreTools, ids: list[str], numbers: list[str]) -> tuple[list[str], list[CitedPage]]:
    lines, cites = [], []
    for n in numbers:
        rows = tools.query(
            "SELECT CAST(i.image_id AS VARCHAR) AS id, CAST(i.ref_paper_id AS VARCHAR) AS pdf_id, p.page_number, "
            "i.image_caption, i.bounding_box FROM images i JOIN pages p ON i.ref_page_id = p.page_id "
            f"WHERE {_in_papers('i.ref_paper_id', ids)} "
            "AND regexp_matches(i.image_caption, ?, 'i') ORDER BY p.page_number LIMIT 2",
            [*ids, rf"^\s*(figure|fig\.)\s*{n}\b"])
        for r in rows:
            inside = ""
            if r["bounding_box"]:
                view = tools.run({"action": "view_image", "paper_id": r["pdf_id"], "page_number": r["page_number"],
                                  "bounding_box": list(r["bounding_box"])})
                # the view repeats the caption; keep only the words inside the box, which the caption lacks
                text = view.split("Text in the region", 1)[1].split(":", 1)[-1] if "Text in the region" in view else ""
                words = " ".join(text.split())[:_FIGURE_TEXT_CHARS]
                inside = f"\nText inside the figure: {words}" if words else ""
            lines.append(f"[images.{r['id']}, {r['pdf_id']} page {r['page_number']}] {r['image_caption']}{inside}")
            cites.append(CitedPage(pdf_id=r["pdf_id"], page_number=r["page_number"], source=f"images.{r['id']}"))
    return lines, cites


def _equations(tools: StoreTools, ids: list[str], numbers: list[str]) -> tuple[list[str], list[CitedPage]]:
    lines, cites = [], []
    for n in numbers:
        rows = tools.query(
            "SELECT CAST(e.equation_id AS VARCHAR) AS id, CAST(e.ref_paper_id AS VARCHAR) AS pdf_id, p.page_number, "
            "e.equation_content FROM equations e JOIN pages p ON e.ref_page_id = p.page_id "
            f"WHERE {_in_papers('e.ref_paper_id', ids)} "
            "AND e.equation_number = ? LIMIT 2", [*ids, n])
        for r in rows:
            lines.append(f"[equations.{r['id']}, {r['pdf_id']} page {r['page_number']}] Equation ({n}): "
                         f"{r['equation_content']}")
            cites.append(CitedPage(pdf_id=r["pdf_id"], page_number=r["page_number"], source=f"equations.{r['id']}"))
    return lines, cites


def _passages(tools: StoreTools, q: PaperQuestion, limit: int) -> tuple[list[str], list[CitedPage]]:
    hits = []
    for mode in ("hybrid", "bm25"):  # keywords alone when the store's embedder cannot encode a query here
        try:
            hits = tools.search_hits(q.question[:500], "chunks", "text_content", scope_filter(q.pdf_ids), limit, mode)
            break
        except Exception:  # noqa: BLE001 - the probe is a head start; the agent's own searches report errors
            continue
    lines = [f"[chunks.{h.primary_key}, {h.pdf_id} page {h.page_number}] {h.text}" for h in hits]
    return lines, [CitedPage(pdf_id=h.pdf_id, page_number=h.page_number, source=f"chunks.{h.primary_key}")
                   for h in hits]


def probe_blocks(tools: StoreTools, q: PaperQuestion, passages: int = 4) -> list[tuple[str, CitedPage]]:
    """What the probe found, one (text, source to cite) per row: metadata of the papers in scope, the
    tables/figures/equations the question names, and the passages that best match it."""
    ids = list(q.pdf_ids) if len(q.pdf_ids) <= _MAX_PAPERS else []
    refs = referenced(q.question)
    parts: list[tuple[list[str], list[CitedPage]]] = []
    if ids:
        parts.append(_metadata(tools, ids))
        parts.append(_tables(tools, ids, refs["table"]))
        parts.append(_figures(tools, ids, refs["figure"]))
        parts.append(_equations(tools, ids, refs["equation"]))
    if passages:
        parts.append(_passages(tools, q, passages))
    return [pair for lines, cites in parts for pair in zip(lines, cites)]


def probe(tools: StoreTools, q: PaperQuestion, passages: int = 4) -> tuple[str, list[CitedPage]]:
    """The probe as one observation (rows tagged with their sources) and the sources."""
    blocks = probe_blocks(tools, q, passages)
    return "\n\n".join(text for text, _ in blocks) or "(nothing found)", [c for _, c in blocks]


__all__ = ["probe", "probe_blocks", "referenced"]

"""Typed reads over one paper store (DuckDB rows + Chroma/BM25 indexes): the only place the question-answering
side writes SQL. The agent's own SQL action runs the model's read-only query through :meth:`PaperStore.sql`.

    from evidex.tools.paperstore import PaperStore
    store = PaperStore.open("corpus")                          # a store name (under the cache), or store_dir=...
    store.papers(["<uuid>"])                                   # [Paper(title=..., authors=[...], ...)]
    store.tables(["<uuid>"], label="Table 2")                  # [Table(caption, rows, columns, page, bbox)]
    hits = store.search("training data size", papers=["<uuid>"], k=4, mode="hybrid")
    hits.passages[0].text, hits.passages[0].page, hits.degraded
"""
from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evidex.tools.paperstore.figure_text import FigureText, read_figure
from evidex.tools.paperstore.models import Equation, Figure, Page, Paper, Passage, Reference, SearchHits, Table
from evidex.tools.paperstore.regions import read_region
from evidex.tools.text import QUOTED_SPAN, quoted

_FIGURE_LINES = 150  # a figure with more lines than this is a page of text, not a chart
# table -> (primary key, the text of a row): the rows that have a box on a page
_BOXED = {
    "chunks": ("chunk_id", "x.text_content"),
    "tables": ("table_id", "concat_ws(chr(10), x.table_caption, x.table_markdown)"),
    "images": ("image_id", "coalesce(x.image_caption, '')"),
    "equations": ("equation_id", "concat_ws(' ', '(' || x.equation_number || ')', x.equation_content)"),
    "reference": ("reference_id", "x.reference_content"),
}


class MissingPapersError(LookupError):
    """A question is about papers that are not in the store; the message names them and how to add them."""


def marks(values: Iterable) -> str:
    """Placeholders for an SQL ``IN (...)`` over ``values``, which go in as parameters, never spliced."""
    return ", ".join("?" for _ in values)


def _in_papers(column: str, ids: list[str]) -> str:
    return f"CAST({column} AS VARCHAR) IN ({marks(ids)})"


def scope_filter(paper_ids: list[str]) -> str | None:
    """The search filter that keeps a search on these papers (string literals escaped as the filter grammar reads
    them), or None for no restriction."""
    if not paper_ids:
        return None
    ids = ", ".join("'" + p.replace("\\", "\\\\").replace("'", "\\'") + "'" for p in paper_ids)
    return f"pdf_id in [{ids}]"


class PaperStore:
    """One store, opened read-only on first use (opening costs nothing until a read)."""

    def __init__(self, db: str | None = None, store_dir: str | Path | None = None):
        self.db = db
        self.store_dir = str(store_dir) if store_dir is not None else None
        self._titles: tuple[int, dict[str, str]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def open(cls, db: str | None = None, store_dir: str | Path | None = None) -> PaperStore:
        return cls(db, store_dir)

    @property
    def name(self) -> str:
        return self.db or self.store_dir or "?"

    # -- plumbing -----------------------------------------------------------------------------------------------
    @property
    def db_path(self) -> Path:
        from evidex.tools.store import store_paths

        return store_paths(self.db, Path(self.store_dir) if self.store_dir else None).db

    def rows(self, sql: str, params: list | None = None) -> list[dict[str, Any]]:
        """Rows of a read-only query of evidex's own (never a model's: see :meth:`sql`), as dicts; for the tools
        layer's readers (e.g. tools.qasper_answer), never for graphs."""
        from evidex.tools.store import connect_readonly

        cur = connect_readonly(self.db_path).cursor()
        cur.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def check(self) -> None:
        """Raise :class:`tools.store.StoreError` when the store cannot be read (missing, locked, corrupt)."""
        self.rows("SELECT 1")

    def version(self) -> int:
        """Changes whenever the store file does (an ingest added or removed papers)."""
        try:
            return self.db_path.stat().st_mtime_ns
        except OSError:
            return -1

    # -- papers ------------------------------------------------------------------------------------------------
    def papers(self, ids: list[str] | None = None, *, first_page: bool = False) -> list[Paper]:
        """The metadata rows of ``ids`` (every paper when None), with the first page's text when asked."""
        if ids is not None and not ids:
            return []
        where = f"WHERE {_in_papers('m.paper_id', ids)}" if ids else ""
        page = ", p.page_content AS first_page" if first_page else ""
        join = ("LEFT JOIN pages p ON p.ref_paper_id = m.paper_id AND p.page_number = 1" if first_page else "")
        order = "" if ids else "ORDER BY lower(m.title)"
        rows = self.rows("SELECT CAST(m.paper_id AS VARCHAR) AS pdf_id, m.title, m.authors, m.abstract, m.num_pages, "
                         f"m.conference_year, m.conference_abbreviation, m.pub_year, m.pdf_path{page} "
                         f"FROM metadata m {join} {where} {order}", list(ids or []))
        return [Paper(paper_id=r["pdf_id"], title=r["title"], authors=list(r["authors"] or []),
                      abstract=r["abstract"], num_pages=r["num_pages"], conference=r["conference_year"],
                      venue=r["conference_abbreviation"], year=r["pub_year"], pdf_path=r["pdf_path"],
                      first_page=r.get("first_page")) for r in rows]

    def affiliations(self, paper: Paper) -> dict[str, list[str]]:
        """Each author's affiliations: as the first page's marks give them (:func:`tools.first_page.affiliations`;
        ``paper`` read with ``first_page=True``), else as its layout prints them, read again from the PDF
        (:func:`tools.ingest.parser.first_page_affiliations`: names over their affiliations); {} when neither
        says (no file, or a layout that does not tell)."""
        from evidex.tools.first_page import affiliations

        marked = affiliations(paper.first_page, paper.authors)
        if marked or not paper.pdf_path or not paper.authors:
            return marked
        from evidex.tools.ingest.parser import first_page_affiliations

        return first_page_affiliations(paper.pdf_path, paper.authors)

    def titles(self) -> dict[str, str]:
        """paper id -> title of every paper in the store, read again only when the store file changed (a server's
        store lives as long as it does, and an upload adds papers)."""
        version = self.version()
        with self._lock:
            if self._titles is None or self._titles[0] != version:
                rows = self.rows("SELECT CAST(paper_id AS VARCHAR) AS pdf_id, title FROM metadata "
                                  "WHERE title IS NOT NULL")
                self._titles = (version, {r["pdf_id"]: r["title"] for r in rows})
            return self._titles[1]

    def papers_named_in(self, text: str) -> list[str]:
        """The ids of the store's papers whose whole title the text quotes ('In Table 2 of the paper "<title>"';
        letters and digits compared, case and punctuation aside), in the order the store lists them."""
        said = {title_letters(quoted(m)) for m in re.finditer(QUOTED_SPAN, text or "") if len(quoted(m)) >= 12}
        return [pid for pid, title in self.titles().items() if (key := title_letters(title)) and key in said]

    def missing(self, ids: list[str]) -> list[str]:
        """The ids of ``ids`` that are not papers of the store."""
        if not ids:
            return []
        found = {r["pdf_id"] for r in self.rows("SELECT CAST(paper_id AS VARCHAR) AS pdf_id FROM metadata "
                                                  f"WHERE {_in_papers('paper_id', ids)}", list(ids))}
        return [p for p in ids if p not in found]

    def require(self, ids: list[str]) -> None:
        """Raise :class:`MissingPapersError` naming the ids of ``ids`` the store lacks."""
        missing = self.missing(ids)
        if missing:
            raise MissingPapersError(f"papers not in store {self.name!r}: {', '.join(missing)} (add their PDFs with "
                                     f"evidex ingest PDFS --db {self.db or 'NAME'})")

    def conference_papers(self, conferences: list[str]) -> list[str]:
        """The papers from these venues (``acl2023``; case aside), by id."""
        wanted = [c.strip().lower() for c in conferences if c.strip()]
        if not wanted:
            return []
        return [r["pdf_id"] for r in self.rows(
            "SELECT CAST(paper_id AS VARCHAR) AS pdf_id FROM metadata "
            f"WHERE lower(conference_year) IN ({marks(wanted)}) ORDER BY 1", wanted)]

    # -- pages -------------------------------------------------------------------------------------------------
    def pages(self, ids: list[str]) -> list[Page]:
        """Every page of these papers, in order, with the caption of a table or figure the page holds (a store of
        paragraphs, such as QASPER's, gives each float a page of its own)."""
        if not ids:
            return []
        rows = self.rows("SELECT CAST(p.ref_paper_id AS VARCHAR) AS pdf_id, p.page_number, "
                         "any_value(p.page_content) AS page_content, any_value(p.page_width) AS page_width, "
                         "any_value(p.page_height) AS page_height, "
                         "min(coalesce(t.table_caption, i.image_caption)) AS caption FROM pages p "
                         "LEFT JOIN tables t ON t.ref_page_id = p.page_id "
                         "LEFT JOIN images i ON i.ref_page_id = p.page_id "
                         f"WHERE {_in_papers('p.ref_paper_id', ids)} "
                         "GROUP BY p.ref_paper_id, p.page_number ORDER BY pdf_id, p.page_number", list(ids))
        return [Page(paper_id=r["pdf_id"], page=r["page_number"], text=r["page_content"] or "",
                     width=r["page_width"], height=r["page_height"], caption=r["caption"]) for r in rows]

    def page(self, paper_id: str, number: int) -> Page | None:
        rows = self.rows("SELECT page_number, page_content, page_width, page_height FROM pages "
                         "WHERE CAST(ref_paper_id AS VARCHAR) = ? AND page_number = ?", [paper_id, number])
        if not rows:
            return None
        r = rows[0]
        return Page(paper_id=paper_id, page=r["page_number"], text=r["page_content"] or "", width=r["page_width"],
                    height=r["page_height"])

    def pdf_path(self, paper_id: str) -> str | None:
        """Where the paper's PDF was ingested from; None for a paper the store lacks."""
        rows = self.rows("SELECT pdf_path FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?", [paper_id])
        return rows[0]["pdf_path"] if rows else None

    def page_captions(self, paper_id: str, number: int) -> list[tuple[str, list[int] | None]]:
        """The captions of the figures, then the tables, on one page, each with its float's box."""
        out = []
        for table, column in (("images", "image_caption"), ("tables", "table_caption")):
            out += [(r["caption"], list(r["box"]) if r["box"] else None) for r in self.rows(
                f"SELECT x.{column} AS caption, x.bounding_box AS box FROM {table} x "
                "JOIN pages p ON p.page_id = x.ref_page_id "
                f"WHERE CAST(x.ref_paper_id AS VARCHAR) = ? AND p.page_number = ? AND x.{column} <> ''",
                [paper_id, number])]
        return out

    def page_passages(self, paper_id: str, number: int | None = None) -> list[Passage]:
        """The passages (chunks) of one page, or of the whole paper when ``number`` is None, in reading order, with
        their pages and boxes."""
        page = "" if number is None else "AND p.page_number = ? "
        rows = self.rows("SELECT CAST(c.chunk_id AS VARCHAR) AS id, c.text_content, c.bounding_box, p.page_number "
                         "FROM chunks c JOIN pages p ON c.ref_page_id = p.page_id "
                         f"WHERE CAST(c.ref_paper_id AS VARCHAR) = ? {page}ORDER BY p.page_number, c.ordinal",
                         [paper_id] + ([] if number is None else [number]))
        return [Passage(key=r["id"], paper_id=paper_id, page=r["page_number"], text=r["text_content"] or "",
                        bbox=list(r["bounding_box"]) if r["bounding_box"] else None) for r in rows]

    def item(self, source: str, paper_id: str):
        """The row a source (``table.primary_key``) names in a paper, typed, with its page and box; None when the
        source names no boxed row of that paper. The table name only ever selects one of the known tables and the
        key goes in as a parameter."""
        table, _, key = (source or "").strip().partition(".")
        spec = _BOXED.get(table)
        if spec is None or not key.strip():
            return None
        primary, text = spec
        rows = self.rows(f"SELECT x.bounding_box AS box, {text} AS text, p.page_number FROM {table} x "
                         "JOIN pages p ON x.ref_page_id = p.page_id "
                         f"WHERE CAST(x.{primary} AS VARCHAR) = ? AND CAST(x.ref_paper_id AS VARCHAR) = ?",
                         [key.strip(), paper_id])
        if not rows:
            return None
        r = rows[0]
        box = list(r["box"]) if r["box"] else None
        common = {"key": key.strip(), "paper_id": paper_id, "page": r["page_number"], "bbox": box}
        if table == "tables":
            caption, _, markdown = (r["text"] or "").partition("\n")
            return Table(caption=caption, markdown=markdown, **common)
        if table == "images":
            return Figure(caption=r["text"] or "", **common)
        if table == "equations":
            return Equation(text=r["text"] or "", **common)
        if table == "reference":
            return Reference(text=r["text"] or "", **{k: v for k, v in common.items() if k != "bbox"})
        return Passage(table=table, key=key.strip(), paper_id=paper_id, page=r["page_number"], text=r["text"] or "",
                       bbox=box)

    def pages_exist(self, cites: list[tuple[str, int]]) -> dict[tuple[str, int], bool]:
        out = {}
        for pdf_id, page in cites:
            try:
                n = self.rows("SELECT count(*) AS n FROM pages "
                               "WHERE CAST(ref_paper_id AS VARCHAR) = ? AND page_number = ?", [pdf_id, page])[0]["n"]
            except Exception:  # noqa: BLE001 - a malformed id is simply not a page of the store
                n = 0
            out[(pdf_id, page)] = n > 0
        return out

    # -- numbered objects: tables, figures, equations ----------------------------------------------------------
    def _numbered(self, table: str, columns: str, ids: list[str], match: str, value: str, limit: int) -> list[dict]:
        key = {"tables": "table_id", "images": "image_id", "equations": "equation_id"}[table]
        return self.rows(
            f"SELECT CAST(x.{key} AS VARCHAR) AS id, CAST(x.ref_paper_id AS VARCHAR) AS pdf_id, p.page_number, "
            f"{columns} FROM {table} x JOIN pages p ON x.ref_page_id = p.page_id "
            f"WHERE {_in_papers('x.ref_paper_id', ids)} AND {match} ORDER BY p.page_number LIMIT {int(limit)}",
            [*ids, value])

    def tables(self, ids: list[str], number: str = r"[A-Z]?\d+", limit: int = 2) -> list[Table]:
        """The tables of these papers whose caption begins "Table <number>" (or "Tab. <number>"; by default any
        number), first pages first."""
        if not ids:
            return []
        rows = self._numbered("tables", "x.table_caption, x.table_markdown, x.bounding_box", ids,
                              "regexp_matches(x.table_caption, ?, 'i')", rf"^\s*(table|tab\.)\s*{number}\b", limit)
        return [Table(key=r["id"], paper_id=r["pdf_id"], page=r["page_number"], caption=r["table_caption"] or "",
                      markdown=r["table_markdown"] or "", bbox=list(r["bounding_box"]) if r["bounding_box"] else None)
                for r in rows]

    def figures(self, ids: list[str], number: str, limit: int = 2, *, with_text: bool = True) -> list[Figure]:
        """The figures of these papers whose caption begins "Figure <number>" (or "Fig. <number>"), with the words
        printed inside each one's box (``with_text``)."""
        if not ids:
            return []
        rows = self._numbered("images", "x.image_caption, x.bounding_box", ids,
                              "regexp_matches(x.image_caption, ?, 'i')", rf"^\s*(figure|fig\.)\s*{number}\b", limit)
        return [Figure(key=r["id"], paper_id=r["pdf_id"], page=r["page_number"], caption=r["image_caption"] or "",
                       bbox=list(r["bounding_box"]) if r["bounding_box"] else None,
                       printed=self.region_text(r["pdf_id"], r["page_number"], r["bounding_box"]) if with_text
                       else FigureText())
                for r in rows]

    def equations(self, ids: list[str], number: str, limit: int = 2) -> list[Equation]:
        """The display equations of these papers numbered ``number``."""
        if not ids:
            return []
        rows = self._numbered("equations", "x.equation_content, x.bounding_box", ids, "x.equation_number = ?",
                              number, limit)
        return [Equation(key=r["id"], paper_id=r["pdf_id"], page=r["page_number"], number=number,
                         text=r["equation_content"] or "",
                         bbox=list(r["bounding_box"]) if r["bounding_box"] else None) for r in rows]

    def region_text(self, pdf_id: str, page: int, box) -> FigureText:
        """The words printed inside a region of a page (a figure's axes, labels and legend), grouped as a chart
        prints them (:func:`tools.paperstore.figure_text.read_figure`); empty when none can be read."""
        from evidex.tools.store import StoreError

        if not box:
            return FigureText()
        try:
            pdf = self.pdf_path(pdf_id)
            if pdf is None or not Path(pdf).is_file():
                return FigureText()
            # a region of more lines is text, not a chart: its drawing is not read (nor OCR'd words kept past them)
            found = read_region(pdf, page, list(box), max_lines=_FIGURE_LINES)
        except (StoreError, ValueError, RuntimeError):
            return FigureText()
        return read_figure(found.lines[:_FIGURE_LINES], found.marks, found.below)

    # -- search ------------------------------------------------------------------------------------------------
    def search(self, query: str, *, papers: list[str] | None = None, filter: str | None = None, k: int = 5,
               mode: str = "hybrid", table: str = "chunks", column: str = "text_content") -> SearchHits:
        """The ``k`` passages of ``table.column`` that best match ``query``, within ``papers`` (or a filter in the
        search grammar). Raises on a bad filter or store (the agent's search action turns that into an
        observation)."""
        from evidex.tools.search import SearchArgs, search

        flt = filter if filter is not None else scope_filter(list(papers or []))
        result = search(SearchArgs(query=query, table=table, column=column, filter=flt, mode=mode, limit=k),
                        self.db, self.store_dir)
        return SearchHits(mode=result.mode, note=result.note, degraded=getattr(result, "degraded", None),
                          passages=[Passage(table=h.table_name, column=h.column_name, key=h.primary_key,
                                            paper_id=h.pdf_id, page=h.page_number, text=h.text, score=h.score,
                                            bbox=list(h.bbox) if h.bbox else None) for h in result.hits])

    # -- the agent's own reads ---------------------------------------------------------------------------------
    def sql(self, query: str, *, max_rows: int | None = None, max_chars: int | None = None) -> str:
        """The model's read-only SELECT, as the observation the agent reads (errors included, never raised)."""
        from evidex.tools.sql import DEFAULT_MAX_CHARS, DEFAULT_MAX_ROWS, sql_observation

        return sql_observation(query, self.db, self.store_dir, max_rows=max_rows or DEFAULT_MAX_ROWS,
                               max_chars=max_chars or DEFAULT_MAX_CHARS)

    def schema_text(self) -> str:
        from evidex.tools.schema_prompt import schema_prompt

        return schema_prompt(self.db, self.store_dir, comments=False)


def title_letters(text: str) -> str:
    """A title (or any text) as its lower-case letters and digits, one space apart: titles compared so, case and
    punctuation aside."""
    return " ".join(re.findall(r"[a-z0-9]+", (text or "").lower()))


__all__ = ["MissingPapersError", "PaperStore", "marks", "scope_filter", "title_letters"]

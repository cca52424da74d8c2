"""What a paper store holds, as typed rows: papers and their metadata, pages, passages (search hits), tables
(caption, header rows resolved into column names, body cells, page, box), figures, equations and references.

Every item that can be cited carries ``source`` (``table.primary_key`` in the store), its paper and its page, so
an answer built from items cites exactly the rows it rests on. Items are plain data: how they are shown to a model
is decided once, where the prompt is written (:mod:`agents.qa.render`).
"""
from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from evidex.tools.paperstore.figure_text import FigureText
from evidex.tools.paperstore.table_text import (_LETTER, centred_labels, column_parts, glued_first_column,
                                               joined_names, markdown_rows, rows_markdown)

Box = list[float]


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, ignored_types=(cached_property,))


class Paper(_Row):
    """A paper's metadata row (and its first page's text, where metadata questions look: the proceedings header,
    the corresponding-author marks)."""

    kind: Literal["paper"] = "paper"
    paper_id: str
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    abstract: str | None = None
    num_pages: int | None = None
    conference: str | None = None  # venue+year folder, e.g. acl2023 (metadata.conference_year)
    venue: str | None = None  # the venue's abbreviation, e.g. ACL (metadata.conference_abbreviation)
    year: int | None = None
    pdf_path: str | None = None  # the ingested file
    first_page: str | None = None
    # each author's affiliations, when read for a question about them (PaperStore.affiliations)
    affiliations: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def source(self) -> str:
        return f"metadata.{self.paper_id}"

    @property
    def page(self) -> int:
        return 1


class Page(_Row):
    kind: Literal["page"] = "page"
    paper_id: str
    page: int
    text: str = ""
    width: int | None = None
    height: int | None = None
    caption: str | None = None  # of a table or figure on the page

    @property
    def source(self) -> str:
        return f"pages.{self.paper_id}.{self.page}"


class Passage(_Row):
    """A searchable cell of the store (usually ``chunks.text_content``), as a search found it."""

    kind: Literal["passage"] = "passage"
    table: str = "chunks"
    column: str = "text_content"
    key: str
    paper_id: str
    page: int
    text: str
    score: float = 0.0
    bbox: Box | None = None

    @property
    def source(self) -> str:
        return f"{self.table}.{self.key}"


_TABLE_NUMBER = re.compile(r"\b(?:Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\b")
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")


def table_label(text: str, anywhere: bool = False) -> str:
    """"Table 3" for the table ``text`` names: a caption names it at its start, a question (``anywhere``)
    anywhere; "" when it names none."""
    found = (_TABLE_NUMBER.search if anywhere else _TABLE_NUMBER.match)((text or "").strip())
    return f"Table {found.group(1)}" if found else ""


# a number joined by a hyphen to a word ("16-C", "5-shot", "8-bit") names a split or a setting: a header's word
_NAMED_NUMBER = re.compile(r"\d+-[^\W\d_]")


def has_number(cells: list[str]) -> bool:
    """Whether any cell starts with a number (a sign, "~", "<", ">", "±" or "(" before it allowed), not counting a
    name that starts with one ("16-C", "5-shot": a header row of such names is still a header row)."""
    return any(_NUMBER.match(t := c.strip().lstrip("(~<>±+")) and not _NAMED_NUMBER.match(t) for c in cells if c)


def section_label(row: list[str]) -> str:
    """A section row's label: the one text cell of a row without numbers ("Conversational Search"), else ""."""
    cells = [c for c in row if c]
    return cells[0] if len(cells) == 1 and _LETTER.search(cells[0]) and not has_number(cells) else ""


class Table(_Row):
    """A table: its caption and label ("Table 2"), its printed markdown, and the same read into header rows (with
    each column's full name resolved across them) and body rows of cells."""

    kind: Literal["table"] = "table"
    key: str
    paper_id: str
    page: int
    caption: str = ""
    markdown: str = ""
    bbox: Box | None = None

    @property
    def source(self) -> str:
        return f"tables.{self.key}"

    @property
    def label(self) -> str:
        return table_label(self.caption)

    @cached_property
    def _split(self) -> tuple[list[list[str]], list[list[str]], list[list[str]], str, bool]:
        """(header rows, body rows, column parts, corner, whether the rows differ from the printed markdown: centred
        labels folded into the body, or a first column glued to the next split again)."""
        printed = markdown_rows(self.markdown)
        rows = glued_first_column(printed)
        if len(rows) < 2:
            return rows, [], [], "", False
        # the body starts at the first row holding a number, or at a section row ("Conversational Search" alone
        # over the rows it groups), which belongs to the body, not to the header
        start = next((i for i, r in enumerate(rows) if i and (has_number(r[1:]) or (
            section_label(r) and i + 1 < len(rows) and has_number(rows[i + 1][1:])))), 1)
        body = rows[start:]
        labels = [j for j in range(len(rows[0])) if sum(has_number([r[j]]) for r in body) * 2 < len(body)]
        corner = " ".join(r[j] for r in rows[:start] for j in labels if r[j])
        first_value = next((j for j in range(1, len(rows[0])) if j not in labels), 1)
        folded = centred_labels(body, labels)  # ``body`` itself when there is nothing to fold
        return (rows[:start], folded, column_parts(rows[:start], len(rows[0]), first_value), corner,
                folded is not body or rows is not printed)

    @property
    def header_rows(self) -> list[list[str]]:
        return self._split[0]

    @property
    def rows(self) -> list[list[str]]:
        """Body rows, cells as printed, a label printed centred beside the rows it groups in each of those rows
        (``table_text.centred_labels``; empty for a "table" of fewer than two rows)."""
        return self._split[1]

    @property
    def text(self) -> str:
        """The table as a model reads it: its printed markdown, written again from its rows where a label printed
        centred beside its group was folded into the group's rows or a glued first column was split (:attr:`rows`)."""
        header, body, _, _, folded = self._split
        return rows_markdown(header + body) if folded else self.markdown

    @cached_property
    def columns(self) -> list[str]:
        """Each column's full name (a two-level header joined: "Dataset-X CoT")."""
        return joined_names(self._split[2])

    @property
    def column_parts(self) -> list[list[str]]:
        """Each column's name by header row, top first (["Dataset-X", "CoT"]; [] for a column with none)."""
        return self._split[2]

    @property
    def corner(self) -> str:
        """The header over the label columns ("top-k" over "2 | 3 | 4"): words any column name may use."""
        return self._split[3]


class Figure(_Row):
    kind: Literal["figure"] = "figure"
    key: str
    paper_id: str
    page: int
    caption: str = ""
    bbox: Box | None = None
    printed: FigureText = FigureText()  # the words printed inside the figure's box (axes, legends), when read

    @property
    def text(self) -> str:
        """The printed words as one string."""
        return self.printed.words

    @property
    def source(self) -> str:
        return f"images.{self.key}"


class Equation(_Row):
    kind: Literal["equation"] = "equation"
    key: str
    paper_id: str
    page: int
    number: str | None = None
    text: str = ""
    bbox: Box | None = None

    @property
    def source(self) -> str:
        return f"equations.{self.key}"


class Reference(_Row):
    kind: Literal["reference"] = "reference"
    key: str
    paper_id: str
    page: int
    text: str = ""

    @property
    def source(self) -> str:
        return f"reference.{self.key}"


class Note(_Row):
    """A fact derived from other items by code, shown with them (e.g. the authors several papers share), citing
    the item it came from."""

    kind: Literal["note"] = "note"
    text: str
    paper_ids: list[str] = Field(default_factory=list)
    cites: str = ""  # the source it rests on
    paper_id: str = ""
    page: int = 1

    @property
    def source(self) -> str:
        return self.cites


StoreItem = Annotated[Union[Paper, Passage, Table, Figure, Equation, Reference, Note, Page],  # noqa: UP007
                      Field(discriminator="kind")]


class SearchHits(BaseModel):
    """A search's passages, best first, and whether part of hybrid search was missing (``degraded`` says which
    part and why: the ranking is then keyword-only or dense-only, and the caller must say so)."""

    mode: str
    passages: list[Passage] = Field(default_factory=list)
    degraded: str | None = None
    note: str | None = None


__all__ = ["Box", "Equation", "Figure", "Note", "Page", "Paper", "Passage", "Reference", "SearchHits", "StoreItem",
           "Table", "has_number", "section_label", "table_label"]

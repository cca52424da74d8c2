"""What an answer is read from, and what an answer is, as typed data.

A :class:`Context` is a list of store items (metadata rows, passages, tables, figures, equations, pages, notes
derived by code) with their sources and pages; it is rendered to prompt text once, where a model is called
(:mod:`agents.qa.render`). Answer readers work on the items themselves: a table reader gets :class:`Table` objects,
never a table parsed back out of prompt text. An :class:`Answer` names the reader that gave it and the sources
(``table.primary_key``) it rests on.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field

from evidex.tools.paperstore.models import Equation, Figure, Note, Page, Paper, Passage, Reference, Table
from evidex.tools.qa import CitedPage


class Rows(BaseModel):
    """The rows a read-only SQL query returned (the agent's own query), as columns and values."""

    kind: Literal["rows"] = "rows"
    sql: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated_by: str | None = None
    paper_id: str = ""
    page: int = 0

    @property
    def source(self) -> str:
        return "sql"


ContextItem = Annotated[Union[Paper, Passage, Table, Figure, Equation, Reference, Note, Page, Rows],  # noqa: UP007
                        Field(discriminator="kind")]


class Context(BaseModel):
    """Items in the order they are shown; ``titles`` are shown with passages when the question is not about one
    known paper (retrieval and multi-paper questions)."""

    items: list[ContextItem] = Field(default_factory=list)
    titles: dict[str, str] = Field(default_factory=dict)
    degraded: list[str] = Field(default_factory=list, description="parts of the search that were unavailable")

    @property
    def tables(self) -> list[Table]:
        return [i for i in self.items if isinstance(i, Table)]

    @property
    def papers(self) -> list[Paper]:
        return [i for i in self.items if isinstance(i, Paper)]

    def __bool__(self) -> bool:
        return bool(self.items)

    def plus(self, other: Context) -> Context:
        """This context followed by the items of ``other`` not already in it (by source)."""
        seen = {i.source for i in self.items}
        items = self.items + [i for i in other.items if i.source not in seen]
        return Context(items=items, titles={**self.titles, **other.titles},
                       degraded=list(dict.fromkeys(self.degraded + other.degraded)))


def cited_page(item) -> CitedPage:
    """The page an item is cited as (its paper, page and source)."""
    return CitedPage(pdf_id=item.paper_id, page_number=item.page, source=item.source)


class Answer(BaseModel):
    """An answer read from a context: its value as the text an evaluator reads, the reader that gave it, and the
    sources it rests on (empty: the reader could not tell which; the caller then cites what the context showed)."""

    value: str
    reader: str
    sources: list[str] = Field(default_factory=list)
    quote: str = ""
    expression: str = Field("", description="the arithmetic the value is the result of, or the max(...)/min(...) "
                                             "it was picked by; '' when none")
    by_code: bool = Field(False, description="read by code, without a model call")


__all__ = ["Answer", "Context", "ContextItem", "Equation", "Figure", "Note", "Page", "Paper", "Passage", "Rows", "Table",
           "cited_page"]

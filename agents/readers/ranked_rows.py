"""``ranked_rows``: the item with the highest or lowest value in a column of a named table, picked by code.

Question shape: a name answer picking one row of a named table by an extreme value — "In Table 2, which method
achieves the highest F1 on the test set?", "which baseline (excluding ours) has the lowest error?". Code reads
every row's value under the one column the question's words name best (:func:`tools.qa.cells.column_candidates`)
and picks the extreme, leaving out rows the question excludes. It passes when the column is not clear, fewer than
two rows remain, or the question says both kinds of extreme; the model reader then lists the candidates itself
and code still picks (:func:`ranked_pick`).
"""
from __future__ import annotations

import math
import re

from pydantic import BaseModel, Field

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.calc import format_result
from evidex.tools.qa.cells import column_candidates, named_table
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in


class Candidate(BaseModel):
    name: str = Field(max_length=200, description="The item's name exactly as printed in the context.")
    # a number under the grammar: asked for a string, the 1.5B model copied the column's name
    value: float = Field(description="Its number in the column or measure the question names.")


# a row label's trailing reference: "Method (Author et al., 2022)", "Method [12]"
_CITATION = re.compile(r"\s*(?:\([^()]*(?:et al\.|\b(?:19|20)\d{2}\b)[^()]*\)|\[\d+(?:\s*[,\u2013-]\s*\d+)*\])\s*$")


def _without_citation(name: str) -> str:
    """An item's name without the reference a table prints after it (a name that is only a reference stays)."""
    return _CITATION.sub("", name).strip() or name


def ranked_pick(direction: str, candidates: list[Candidate], question: Question) -> tuple[str, str] | None:
    """The name of the candidate with the highest (or lowest) value, and the ``max(...)``/``min(...)`` over the
    values it was picked from; candidates the question excludes are left out. None when fewer than two named
    candidates remain."""
    valued = [(c.name.strip(), c.value) for c in candidates
              if c.name.strip() and math.isfinite(c.value) and not named_in(c.name, question.excluded)]
    if len(valued) < 2:
        return None
    pick = max if direction == "highest" else min
    name, _ = pick(valued, key=lambda v: v[1])  # the first listed wins a tie
    # whole numbers as a paper prints them (1293247, not 1293247.0, which the operand check would not find)
    return _without_citation(name), f"{pick.__name__}({', '.join(format_result(v) for _, v in valued)})"


def table_candidates(question: Question, context: Context) -> list[Candidate]:
    """The rows of the named table with their values under the column the question names, read by code."""
    return [Candidate(name=name[:200], value=value)
            for name, value in column_candidates(context.tables, question)]


def ranks(question: Question) -> bool:
    """A name picked by an extreme value."""
    return question.kind == "str" and question.says_superlative


class RankedRows:
    name = "ranked_rows"

    def applies(self, question: Question, context: Context) -> bool:
        return ranks(question) and question.superlative is not None and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        q = request.question
        rows = table_candidates(q, request.context)
        picked = ranked_pick(q.superlative, rows, q) if rows else None
        if picked is None:
            return None
        table = named_table(request.context.tables, q)
        return Answer(value=picked[0], reader=self.name, expression=picked[1], by_code=True,
                      sources=[table.source] if table else [])


register_reader(RankedRows())

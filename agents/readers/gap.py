"""``gap``: how far apart two named rows of a table are in one column, worked out by code.

Question shape: "According to Table 1, how many more examples does split A hold than split B?" or "by how many
points does method A beat method B on dataset X in Table 3?" (:attr:`tools.qa.question.Question.difference`), over a
table the question names, whose two rows it says in full (:func:`tools.qa.cells.named_rows`) and whose column it
names, or that has one value column only; or whose two columns it says, and a row (the table read transposed:
"how many more A tokens than B tokens does dataset X hold", A and B printed as columns). A small model asked for
a difference reads the two cells and then subtracts numbers of its own. The answer is the absolute difference, with
as many decimals as the cells print.
Left to the next reader: a ratio or a percentage change ("how many times", "by what percent"), two rows not said
apart, or a column that cannot be told.
"""
from __future__ import annotations

import re

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.qa.cells import cell_value, named_column, named_table, two_named_rows, value_columns
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question

_DECIMALS = re.compile(r"\d\.(\d+)")


class CellGapReader:
    name = "gap"

    def applies(self, question: Question, context: Context) -> bool:
        return question.difference and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        question = request.question
        table = named_table(request.context.tables, question)
        if table is None:
            return None
        table, rows = two_named_rows(table, question)  # the two may be printed as columns
        if len(rows) != 2:
            return None
        values = value_columns(table)
        column = named_column(table, question) if len(values) != 1 else values[0]
        if column is None:
            return None
        (first, a), (second, b) = rows
        cells = [a[column] if column < len(a) else "", b[column] if column < len(b) else ""]
        x, y = (cell_value(c) for c in cells)
        if x is None or y is None:
            return None
        decimals = max((len(m.group(1)) for c in cells if (m := _DECIMALS.search(c))), default=0)
        gap = round(abs(x - y), decimals)
        value = f"{gap:.{decimals}f}"
        return Answer(value=value, reader=self.name, by_code=True, sources=[table.source],
                      quote=f"{table.label}, {table.columns[column]}: {first} {cells[0]}, {second} {cells[1]}",
                      expression=f"abs({x:g} - {y:g})")


register_reader(CellGapReader())

"""``wins``: on how many columns one named row of a table is higher (or lower) than another, counted by code.

Question shape: "In Table 2, on how many of the eight datasets does method A score higher than method B?"
(:attr:`tools.qa.question.Question.beats`), over a table the question names, whose two rows it says in full
(:func:`tools.qa.cells.named_rows`; the first said is the one compared). A small model comparing two rows of a
wide table pair by pair loses its place. The columns compared are the value columns, less those the question leaves
out ("not counting the average column"); when it says how many it counts over ("of the eight datasets"), that must
be the number of columns, else the reader passes. "Better" and "outperforms" are left to the model: their direction
depends on the measure.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.qa.cells import cell_value, named_rows, named_table, value_columns
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in


class ColumnWinsReader:
    name = "wins"

    def applies(self, question: Question, context: Context) -> bool:
        return question.kind == "int" and bool(question.beats) and not question.gap and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        question, tables = request.question, request.context.tables
        table = named_table(tables, question)
        if table is None:
            return None
        rows = named_rows(table, question)
        if len(rows) != 2:
            return None
        (first, a), (second, b) = rows
        columns = [j for j in value_columns(table)
                   if not (question.excluded and named_in(table.columns[j], question.excluded))]
        if question.of_count is not None and question.of_count != len(columns):
            return None
        pairs = [(table.columns[j], cell_value(a[j]), cell_value(b[j])) for j in columns if j < min(len(a), len(b))]
        if not pairs or any(x is None or y is None for _, x, y in pairs):
            return None
        higher = question.beats == "higher"
        won = [(name, x, y) for name, x, y in pairs if (x > y if higher else x < y)]
        sign = ">" if higher else "<"
        # the expression holds the cells compared (every pair when none is won), so its numbers are the table's
        return Answer(value=str(len(won)), reader=self.name, by_code=True, sources=[table.source],
                      quote=f"{table.label}: {first} {question.beats} than {second} on {len(won)} of {len(pairs)} "
                            f"columns ({', '.join(name for name, _, _ in won)})",
                      expression=f"count({', '.join(f'{x:g} {sign} {y:g}' for _, x, y in won or pairs)})")


register_reader(ColumnWinsReader())

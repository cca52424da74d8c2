"""``wins``: on how many (or on which) columns one named row of a table is higher (or lower) than another, by code.

Question shape: "In Table 2, on how many of the eight datasets does method A score higher than method B?" or
"on which of the six datasets does A reach a higher accuracy than B?" (a name: the one column won, as printed)
(:attr:`tools.qa.question.Question.beats`), over a table the question names, whose two rows it says in full
(:func:`tools.qa.cells.named_rows`; the one said before "than" is the one compared), or whose two columns it
names, the things compared being its rows (:func:`tools.qa.cells.two_named_rows`). A small model comparing two
rows of a wide table pair by pair loses its place. The columns compared are the value columns, less those the
question leaves out ("not counting the average column"); when it says how many it counts over ("of the eight
datasets"), that must be the number of columns, else the reader passes. "Better" and "outperforms" are left to the
model: their direction depends on the measure. An aggregate column ("Average", "Overall") is no column of its own
when the question's count leaves it out.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.qa.cells import AGGREGATE, cell_value, label_said, named_table, two_named_rows, value_columns
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in


class ColumnWinsReader:
    name = "wins"

    def applies(self, question: Question, context: Context) -> bool:
        return question.kind in ("int", "str") and bool(question.beats) and not question.gap and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        question, tables = request.question, request.context.tables
        table = named_table(tables, question)
        if table is None:
            return None
        table, rows = two_named_rows(table, question)  # the two may be printed as columns
        if len(rows) != 2:
            return None
        after = question.against
        if label_said(rows[0][0], after) and not label_said(rows[1][0], after):
            rows = rows[::-1]  # "compares A and B: on how many does B score higher than A": B is compared
        (first, a), (second, b) = rows
        columns = [j for j in value_columns(table)
                   if not (question.excluded and named_in(table.columns[j], question.excluded))]
        columns, kept_part = _under_said_name(table, columns, question)
        if question.of_count == len(columns) - 1 and AGGREGATE.search(table.columns[columns[-1]]):
            columns = columns[:-1]  # "of the six datasets" and an average column after them
        if question.of_count is not None and question.of_count != len(columns):
            return None
        pairs = [(table.columns[j], cell_value(a[j]), cell_value(b[j])) for j in columns if j < min(len(a), len(b))]
        if not pairs or any(x is None or y is None for _, x, y in pairs):
            return None
        higher = question.beats == "higher"
        won = [(name, x, y) for name, x, y in pairs if (x > y if higher else x < y)]
        sign = ">" if higher else "<"
        if question.kind == "str":  # which column: one, named as its lowest header cell prints it
            if len(won) != 1:
                return None
            j = next(j for j in columns if table.columns[j] == won[0][0])
            parts = [p for p in table.column_parts[j] if p != kept_part] or [won[0][0]]
            name = parts[-1]
            return Answer(value=name, reader=self.name, by_code=True, sources=[table.source],
                          quote=f"{table.label}: {first} {question.beats} than {second} only on {name}",
                          expression=f"{won[0][1]:g} {sign} {won[0][2]:g}")
        # the expression holds the cells compared (every pair when none is won), so its numbers are the table's
        return Answer(value=str(len(won)), reader=self.name, by_code=True, sources=[table.source],
                      quote=f"{table.label}: {first} {question.beats} than {second} on {len(won)} of {len(pairs)} "
                            f"columns ({', '.join(name for name, _, _ in won)})",
                      expression=f"count({', '.join(f'{x:g} {sign} {y:g}' for _, x, y in won or pairs)})")


def _under_said_name(table, columns: list[int], question: Question) -> tuple[list[int], str]:
    """The columns under the one lowest header name the question says that several columns but not all share
    ("with U-3b as the predictor": the U-3b column of each dataset), and that name; all of them and "" when it
    says none."""
    lowest = {j: table.column_parts[j][-1] for j in columns if table.column_parts[j]}
    shared = {name for name in lowest.values() if 1 < list(lowest.values()).count(name) < len(columns)}
    said = [name for name in shared if named_in(name, question.text)]
    if len(said) != 1:
        return columns, ""
    return [j for j in columns if lowest.get(j) == said[0]], said[0]


register_reader(ColumnWinsReader())

"""``table_gap``: the gap between two values of a table the question names, read by code.

Question shape: a number asked as the difference of two cells of one named table — "In Table 2, how many points
higher is method A's accuracy on X than method B's?", "what is the difference between A and B in Table 4",
"how much does the score rise from A to B (Table 3)". The two cells share a row or a column and differ in one name,
said before the comparison word for the asked cell and after it for the other (:func:`tools.qa.cells.gap_cells`).
The answer is their difference (larger minus smaller, since "how much higher/lower" asks for the size of the gap;
in the question's order after "minus"), computed by the calculator. Without a single best pair, or when the
difference is a fraction where a whole number is asked, it passes.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.calc import CalcError, calculate, format_result
from evidex.tools.qa.cells import gap_cells, named_table
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question
from evidex.tools.text import drop_thousands_commas


def computed_value(expression: str, kind: str) -> str | None:
    """The value an arithmetic ``expression`` comes to, as the answer kind's number (an integer kind gets a whole
    number), by the calculator (never ``eval``); None when it is not arithmetic or not a number of that kind."""
    try:
        value = calculate(drop_thousands_commas(expression))  # "157,212" as papers print it
    except (CalcError, ArithmeticError, ValueError, TypeError):
        return None
    if kind == "int":
        if float(value) != round(float(value)):
            return None  # a fraction where a whole number is asked: the next reader answers
        return str(int(round(float(value))))
    return format_result(value)


def _plain(x: float) -> str:
    return f"{x:.10g}"


class TableGap:
    name = "table_gap"

    def applies(self, question: Question, context: Context) -> bool:
        return question.numeric and question.gap and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        q, tables = request.question, request.context.tables
        found = gap_cells(tables, q)
        if found is None:
            return None
        asked, other = found
        if not q.minus and asked.value < other.value:
            asked, other = other, asked
        expression = f"{_plain(asked.value)} - {_plain(other.value)}"
        value = computed_value(expression, q.kind)
        if value is None:
            return None
        table = named_table(tables, q)
        return Answer(value=value, reader=self.name, expression=expression, by_code=True,
                      sources=[table.source] if table else [])


register_reader(TableGap())

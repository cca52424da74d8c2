"""``count``: how many rows of a named table pass a bound in one column, counted by code.

Question shape: "In Table 2, how many methods reach an accuracy above 80?" or "how many of the 20 tasks (not
counting the mean row) have a score of at most 10?" (:attr:`tools.qa.question.Question.threshold`), over a table
the question names, whose one column it words best (:func:`tools.qa.cells.column_candidates`). A small model
counting a column by eye over a dozen rows miscounts. Left to the next reader: a question that names a row (it
counts across that row's columns, not down a column), leaves out rows the table does not name, says it counts over
a number of rows the column does not hold, or whose column cannot be told.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.qa.cells import column_candidates, named_table, row_named
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in


class ThresholdCountReader:
    name = "count"

    def applies(self, question: Question, context: Context) -> bool:
        return question.kind == "int" and question.threshold is not None and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        question, tables = request.question, request.context.tables
        table = named_table(tables, question)
        if table is None or row_named(table, question, leaving_out=question.excluded):
            return None
        values = column_candidates(tables, question, before=question.threshold.at)
        if question.excluded:
            kept = [(name, v) for name, v in values if not named_in(name, question.excluded)]
            if len(kept) == len(values):  # what it leaves out is no row of the column
                return None
            values = kept
        if not values or (question.of_count is not None and question.of_count != len(values)):
            return None
        bound = question.threshold
        passing = [(name, value) for name, value in values if bound.passes(value)]
        # the expression holds the cells counted (all compared when none passes), so its numbers are the table's
        return Answer(value=str(len(passing)), reader=self.name, by_code=True, sources=[table.source],
                      quote=f"{table.label}: {len(passing)} of {len(values)} rows {bound.op} {bound.value:g} "
                            f"({', '.join(name for name, _ in passing)})",
                      expression=f"count({', '.join(f'{v:g}' for _, v in passing or values)})")


register_reader(ThresholdCountReader())

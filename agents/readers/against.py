"""``against``: how many rows of a table beat one reference row of it in one column, counted by code.

Question shape: "In Table 2, how many of the variants reach a loss strictly lower than the baseline's?" or "how
many of the four small models have an error higher than the average over all models?"
(:attr:`tools.qa.question.Question.beats` with no second row to compare across columns), over a table the question
names. The column is the one the question words most (:func:`tools.qa.cells.column_rows`); the reference is the one
row whose label the question says after "than" (:attr:`~tools.qa.question.Question.against`), or, when it says an
average (mean, overall, total) there, the one aggregate row. The rows counted are the column's other rows, less
aggregate rows (unless the number the question counts over includes them: a method named "Average") and those the
question leaves out; when it says how many it counts over ("of the four models"), that
must be their number, else the reader passes. A small model comparing a dozen cells with one reference by eye
miscounts.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.qa.cells import AGGREGATE, column_rows, label_said, named_table
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in


class ReferenceRowCountReader:
    name = "against"

    def applies(self, question: Question, context: Context) -> bool:
        return question.kind == "int" and bool(question.beats) and not question.gap and bool(context.tables)

    def read(self, request: ReadRequest) -> Answer | None:
        question = request.question
        table = named_table(request.context.tables, question)
        reference_text = question.against
        if table is None or not reference_text:
            return None
        rows = column_rows(table, question)
        aggregate = [i for i, (labels, _, _) in enumerate(rows) if AGGREGATE.search(labels[-1])]
        said = [i for i, (labels, _, _) in enumerate(rows) if label_said(labels[-1], reference_text)]
        if len(said) != 1 and AGGREGATE.search(reference_text):
            said = aggregate
        if len(said) != 1:
            return None
        reference = rows[said[0]]
        kept = [(i, labels[-1], value) for i, (labels, _, value) in enumerate(rows)
                if i != said[0] and not (question.excluded and named_in(labels[-1], question.excluded))]
        counted = [(name, value) for i, name, value in kept if i not in aggregate]
        if question.of_count is not None and len(counted) != question.of_count == len(kept):
            counted = [(name, value) for _, name, value in kept]  # "Average" a row of its own: the count says so
        if len(counted) < 2 or (question.of_count is not None and question.of_count != len(counted)):
            return None
        higher = question.beats == "higher"
        ref = reference[2]
        passing = [(name, v) for name, v in counted if (v > ref if higher else v < ref)]
        sign = ">" if higher else "<"
        # the expression holds the cells compared (all of them when none passes), so its numbers are the table's
        return Answer(value=str(len(passing)), reader=self.name, by_code=True, sources=[table.source],
                      quote=f"{table.label}: {len(passing)} of {len(counted)} rows {question.beats} than "
                            f"{reference[0][-1]} ({ref:g}): {', '.join(name for name, _ in passing)}",
                      expression=f"count({', '.join(f'{v:g} {sign} {ref:g}' for _, v in passing or counted)})")


register_reader(ReferenceRowCountReader())

"""``cell``: a number the question asks for by its table, row and column, read by code.

Question shape: "In Table 4, what F1 does method B reach on domain X?" or "what average accuracy do the
instructions of model M (section S) reach?" over a table whose row label and column name the question says in full
(:func:`tools.qa.cells.named_cell`). Anything less certain (no table named, a row or column not said, two said
alike, a gap, a comparison "than" another value, an extreme or a count asked for) is left to the next reader: "how many
times more sentences per second does A process than B" names A's cell but asks for a ratio.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.qa.cells import named_cell
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question


class NamedCellReader:
    name = "cell"

    def applies(self, question: Question, context: Context) -> bool:
        return (question.numeric and not (question.gap or question.compares or question.says_superlative
                                          or question.threshold or question.beats) and bool(context.tables))

    def read(self, request: ReadRequest) -> Answer | None:
        found = named_cell(request.context.tables, request.question)
        if found is None:
            return None
        return Answer(value=found.value, reader=self.name, by_code=True, sources=[found.table.source],
                      quote=f"{found.table.label}, {found.row}, {found.column}: {found.value}")


register_reader(NamedCellReader())

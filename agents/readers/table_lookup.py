"""``table_lookup``: one text cell a question asks for by its row and column names, read by code.

Question shape: a name or text answer held in one cell of a named table, where the question says the column's
name and the other cells of the row — "In Table 3, which dataset is used for the summarisation task with model
B?" over a table of Model | Task | Dataset. The asked column's name is said and its cell is not; the row is the
one with the most other cells said (:func:`tools.qa.cells.looked_up_cell`). A superlative question picks a row by
its values, not its names (``ranked_rows``), and a row the question excludes is never the one it asks for.
Numbers are left to other readers: a number question names cells in more ways than code reads.
"""
from __future__ import annotations

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.answer_format import answer_type
from evidex.tools.qa.cells import looked_up_cell, named_table
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question


class TableLookup:
    name = "table_lookup"

    def applies(self, question: Question, context: Context) -> bool:
        return (answer_type(question.answer_format) is str and not question.says_superlative
                and bool(context.tables))

    def read(self, request: ReadRequest) -> Answer | None:
        q, tables = request.question, request.context.tables
        found = looked_up_cell(tables, q)
        if found is None:
            return None
        table = named_table(tables, q)
        return Answer(value=found[2], reader=self.name, by_code=True, sources=[table.source] if table else [])


register_reader(TableLookup())

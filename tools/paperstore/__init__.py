"""The paper store's typed API: every read the question-answering side makes, as typed rows (papers, pages,
passages, tables, figures, equations, references). See :mod:`tools.paperstore.store` and
:mod:`tools.paperstore.models`; the DuckDB schema itself is in :mod:`tools.store`."""
from evidex.tools.paperstore.models import (Equation, Figure, Note, Page, Paper, Passage, Reference, SearchHits,
                                            StoreItem, Table, table_label)
from evidex.tools.paperstore.store import MissingPapersError, PaperStore, marks, scope_filter, title_letters

__all__ = ["Equation", "Figure", "MissingPapersError", "Note", "Page", "Paper", "PaperStore", "Passage", "Reference",
           "SearchHits", "StoreItem", "Table", "marks", "scope_filter", "table_label", "title_letters"]

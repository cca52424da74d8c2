"""Table cells found by code from a question's words, in the tables a context holds.

A small model asked "which method has the highest accuracy on the test set" over a wide table lists rows from the wrong
column, or leaves the winner out. The column's name is in the question: code reads every row's value under the
column the question words best (:func:`column_candidates`), for the model reader to pick the extreme from
(:mod:`agents.readers.model`). Tables are the store's typed tables (:class:`tools.paperstore.Table`); the question
is parsed once (:class:`tools.qa.question.Question`).

    column_candidates(context.tables, parse_question(q))      # [(row name, value), ...]
    named_cell(context.tables, parse_question(q))             # NamedCell(table, row, column, value) or None
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from evidex.tools.paperstore.models import Table, has_number, section_label
from evidex.tools.qa.question import Question

_PRINTED_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?")
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_LETTER = re.compile(r"[^\W\d_]")


def named_table(tables: list[Table], question: Question) -> Table | None:
    """The table of ``tables`` the question names anywhere ("In Table 3 of ..."); None when it names none of them."""
    label = _label_key(question.table_label)
    return next((t for t in tables if label and _label_key(t.label) == label), None)


def _stems(text: str) -> list[str]:
    """The text's words without a plural's "s" ("forward passes" says "Forward Pass")."""
    return [_stem(w) for w in _words(text) if w not in _LINKS]


def _stem(word: str) -> str:
    if word.endswith("sses") or (word.endswith("s") and not word.endswith("ss") and len(word) > 3
                                 and not word[-2].isdigit()):
        return word[:-2] if word.endswith("sses") else word[:-1]
    return word


def column_candidates(tables: list[Table], question: Question) -> list[tuple[str, float]]:
    """Every row of the table the question names, as (name, value) under the one column whose name the question
    words most ("which method achieves the highest recall on the hard split": the "hard recall" column, not "easy
    recall"), for code to pick the extreme from. A small model listing the rows itself left out the winner or
    copied another column's numbers. A row's name is its innermost label
    cell (the method under a group label). Empty when the question names no table the context holds, or no one
    column is worded best, or fewer than two rows hold a number there."""
    t = named_table(tables, question)
    if t is None:
        return []
    asked = set(_tokens(question.text))
    scores = [len(set(_tokens(f"{t.corner} {name}")) & asked) if j else 0 for j, name in enumerate(t.columns)]
    best = max(scores, default=0)
    if best == 0 or scores.count(best) > 1:
        return []
    j = scores.index(best)
    found: list[tuple[str, float]] = []
    for r in _rows_in_named_section(t.rows, question.text):
        labels = _row_labels(r, j)
        value = scaled_value(r[j]) if j < len(r) else None
        if labels and value is not None:
            found.append((labels[-1], value))
    return found if len(found) >= 2 else []


@dataclass(frozen=True)
class NamedCell:
    """The one cell a question names by its row and its column, in the table it names."""

    table: Table
    row: str  # the row's labels, section first ("Large models / Method B")
    column: str
    value: str  # the cell's number as printed, without marks ("43.6" of "43.6†")


def named_cell(tables: list[Table], question: Question) -> NamedCell | None:
    """The cell of the named table whose row and column the question both names in full ("what F1 does method
    B reach on domain X": row "B", column "X"), read by code. A small model given the whole table took the value
    beside it, or one a passage repeats for another column. A row is named when every word of its label is said
    (of several, the one with the most words: "Search + rerank" over "Search"); a label printed under two section rows
    needs its section said too; a column when every word of its full name is said (its group's too, for a
    two-level header). None unless exactly one row and one value column are named and the cell holds a number."""
    t = named_table(tables, question)
    if t is None or not t.rows:
        return None
    said = set(_stems(question.text))
    width = len(t.columns)
    values = [j for j in range(1, width) if sum(has_number([r[j]]) for r in t.rows if j < len(r)) * 2 >= len(t.rows)]
    column = _longest_said([(j, t.columns[j]) for j in values], said)
    labelled = [(section, labels[-1].strip(), r) for section, r in _sectioned(t.rows)
                if (labels := _row_labels(r, values[0] if values else 1))]
    rows = _longest_said([(i, label) for i, (_, label, _) in enumerate(labelled)], said, unique=False)
    if len(rows) > 1:  # one label under several sections: the section the question says
        rows = [i for i in rows if _said_in_full(labelled[i][0], said)]
    if column is None or len(rows) != 1:
        return None
    section, label, row = labelled[rows[0]]
    printed = _PRINTED_NUMBER.search((row[column] if column < len(row) else "").replace("−", "-"))
    if printed is None:
        return None
    name = " / ".join(x for x in (section, label) if x)
    return NamedCell(table=t, row=name, column=t.columns[column], value=printed.group(0).replace(",", ""))


def _longest_said(named: list[tuple[int, str]], said: set[str], unique: bool = True):
    """Of (index, name) pairs, the indexes of the names every word of which is said, keeping those with the most
    words; with ``unique`` the one index, or None when none or several tie."""
    full = [(i, len(words)) for i, name in named if (words := set(_stems(name))) and words <= said]
    most = max((n for _, n in full), default=0)
    best = [i for i, n in full if n == most]
    if not unique:
        return best
    return best[0] if len(best) == 1 else None


def _rows_in_named_section(rows: list[list[str]], question: str) -> list[list[str]]:
    """The rows under the section row whose every word the question says ("which Conversational Search dataset"),
    or all rows when it names none."""
    said = set(_stems(question))
    out = _sectioned(rows)
    labels = list(dict.fromkeys(c for c, _ in out if c))
    named = [c for c in labels if _said_in_full(c, said)]
    # one section named; none or several (each word said somewhere): every row
    return [r for c, r in out if len(named) != 1 or c == named[0]]


def _sectioned(rows: list[list[str]]) -> list[tuple[str, list[str]]]:
    """Each body row with the label of the section row over it ("" before the first); section rows left out."""
    current, out = "", []
    for r in rows:
        if label := section_label(r):
            current = label
            continue
        out.append((current, r))
    return out


def _row_labels(row: list[str], upto: int) -> list[str]:
    """The row's label cells before column ``upto``: letters and no number (not a dash for "n/a")."""
    return [c for c in row[:upto] if _LETTER.search(c) and not has_number([c])]


def _said_in_full(name: str, said: set[str]) -> bool:
    """Every word of ``name`` is among the question's words ``said`` (a name of no words is not said)."""
    return bool(words := _stems(name)) and all(w in said for w in words)


_SCALED = re.compile(r"^\s*([-−]?\d[\d,]*(?:\.\d+)?)\s?([KkMB])(?![A-Za-z])")
_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}


def scaled_value(cell: str) -> float | None:
    """A cell's number with its size suffix applied ("586K" -> 586000, "2M" -> 2000000), for ranking cells
    against each other: read bare, "586K" lost to "877"."""
    m = _SCALED.match(cell or "")
    if m:
        return float(m.group(1).replace(",", "").replace("−", "-")) * _SCALE[m.group(2)]
    return cell_value(cell)


def _tokens(text: str) -> list[str]:
    """Words as a header prints them, Greek letters included ("AVG ρ" is not "AVG τ")."""
    return [w for w in re.findall(r"\w+", (text or "").lower()) if w not in _LINKS]


def cell_value(cell: str) -> float | None:
    """A cell's first number ("1,024" -> 1024.0, "−0.5" -> -0.5, "45.41†" -> 45.41); None when it holds none."""
    number = _NUMBER.search((cell or "").replace("−", "-"))
    return float(number.group(0).replace(",", "")) if number else None


def _words(text: str) -> list[str]:
    return _WORD.findall((text or "").lower().replace("_", "-"))


# words a question puts between names ("model A to victim B", "method A on dataset X") that no row label needs
_LINKS = {"to", "of", "the", "with", "from", "vs", "versus", "and", "on", "for", "at", "in", "by", "under"}


def _label_key(label: str) -> str:
    m = re.search(r"([A-Z]?\d+|[IVXLC]+)\s*$", (label or "").strip())
    return m.group(1).upper() if m else ""


__all__ = ["NamedCell", "cell_value", "column_candidates", "named_cell", "named_table", "scaled_value"]

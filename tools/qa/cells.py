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

from evidex.tools.answer_format import without_citations
from evidex.tools.paperstore.models import Table, has_number, section_label
from evidex.tools.paperstore.table_text import rows_markdown
from evidex.tools.qa.question import Question
from evidex.tools.text import QUOTED_SPAN, quoted

_PRINTED_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?")
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_LETTER = re.compile(r"[^\W\d_]")
# a row or column that aggregates the others: "Average", "Avg.", "Mean", "Overall", "Total"
AGGREGATE = re.compile(r"\b(?:avg|average|mean|overall|total)\b", re.IGNORECASE)


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


def column_candidates(tables: list[Table], question: Question, before: int | None = None) -> list[tuple[str, float]]:
    """Every row of the table the question names, as (name, value) under the one column whose name the question
    words most ("which method achieves the highest recall on the hard split": the "hard recall" column, not "easy
    recall"), for code to pick the extreme from. A small model listing the rows itself left out the winner or
    copied another column's numbers. A row's name is its innermost label
    cell (the method under a group label). With ``before`` (an offset in the question), columns worded alike go to
    the one the question words last before it: a counted column stands next to its bound ("how many settings
    (model and α) reach a BLEU above 28": BLEU, not α). Empty when the question names no table the context holds,
    or no one column is worded best, or fewer than two rows hold a number there."""
    t = named_table(tables, question)
    if t is None:
        return []
    return [(labels[-1], value) for labels, _, value in column_rows(t, question, before)]


def row_candidates(tables: list[Table], question: Question) -> list[tuple[str, float]]:
    """The value columns of the table the question names, as (name, value) in the one body row it says in full, for
    code to pick the extreme from when the things compared are printed as columns ("which of the four templates
    gives the highest accuracy on dataset X": X a row, each template a column). When each compared thing spans
    several columns under it ("Template 1" over "PPL | Acc."), its value is the one under the lower header the
    question words (:func:`_worded`: "accuracy" says "Acc."), and its name is its upper header. The question must
    say how many it picks over ("which of the four"), and that must be the number of candidates; aggregate columns
    ("Average") are none. Empty otherwise: no table named, not one row said, the lower header not told, or a name
    printed twice."""
    t = named_table(tables, question)
    if t is None or question.of_count is None:
        return []
    rows = named_rows(t, question)
    if len(rows) != 1:
        return []
    row, parts = rows[0][1], t.column_parts
    values = [j for j in value_columns(t) if not AGGREGATE.search(t.columns[j])]
    lower = {j: parts[j][-1] for j in values if len(parts[j]) > 1}
    names = {j: t.columns[j] for j in values}
    if len(lower) == len(values) and len(set(lower.values())) > 1:  # each thing compared spans a group of columns
        worded = {name: _worded(name, question.text) for name in set(lower.values())}
        best = max(worded.values())
        if best == 0 or list(worded.values()).count(best) > 1:
            return []
        values = [j for j in values if worded[lower[j]] == best]
        names = {j: " ".join(parts[j][:-1]) for j in values}
    found = [(names[j], value) for j in values if j < len(row) and (value := scaled_value(row[j])) is not None]
    if len(found) != question.of_count or len({name for name, _ in found}) != len(found):
        return []
    return found


def _worded(name: str, question: str) -> int:
    """How many words of a header ``name`` the question says: as printed, or, for a word the header prints cut
    short with a full stop ("Acc.", "Prec."), as the start of a longer word ("accuracy", "precision")."""
    asked = set(_tokens(question))
    cut = {w.lower() for w in re.findall(r"([^\W\d_]{2,})\.", name or "")}
    return sum(w in asked or (w in cut and any(a.startswith(w) for a in asked)) for w in set(_tokens(name)))


def column_rows(t: Table, question: Question, before: int | None = None) -> list[tuple[list[str], list[str], float]]:
    """The body rows of ``t`` (in the section the question names, if any) with a number under the column the
    question words most (:func:`column_candidates` says how), as (label cells, row, value); empty when no one
    column is worded best or fewer than two rows hold a number there."""
    asked = set(_tokens(question.text))
    scores = [len(set(_tokens(f"{t.corner} {name}")) & asked) if j else 0 for j, name in enumerate(t.columns)]
    best = max(scores, default=0)
    if best and scores.count(best) > 1 and before is not None:
        said_at = {m.group(0): m.start() for m in re.finditer(r"\w+", question.text[:before].lower())}
        last = [max((said_at.get(w, -1) for w in _tokens(name)), default=-1) if s == best else -1
                for s, name in zip(scores, t.columns)]
        if max(last) >= 0 and last.count(max(last)) == 1:
            scores[last.index(max(last))] += 1
            best += 1
    if best == 0 or scores.count(best) > 1:
        return []
    j = scores.index(best)
    found = []
    for r in _rows_in_named_section(t, question.text):
        labels = _row_labels(r, j)
        value = scaled_value(r[j]) if j < len(r) else None
        if labels and value is not None:
            found.append((labels, r, value))
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
    (of several, the one with the most words: "Search + rerank" over "Search"); a label printed in several rows
    (a metric under each task, a setting under each model) needs more of the row said: its section, or the
    other label cells of the row (the task left of the metric; a cell left empty under a label printed once for
    the rows below it takes that label). A column is named when every word of its full name is said (its
    group's too, for a two-level header); when none is, the one whose lower header rows are said, with the most
    words (a label printed over several groups, "Model" over every model's columns, is seldom said). A word printed
    with a full stop is an abbreviation, said by any word it begins ("Context." by "contextualized"). None unless
    exactly one row and one value column are named and the cell holds a number."""
    t = named_table(tables, question)
    if t is None or not t.rows:
        return None
    said = _said(question.text)
    values = value_columns(t)
    column = named_column(t, question)
    first = _first_value(values)
    labelled = [(section, labels, r) for section, r in _filled_down(_sectioned(t), first)
                if (labels := _row_labels(r, first))]
    rows = _longest_said([(i, labels[-1]) for i, (_, labels, _) in enumerate(labelled)], said, unique=False)
    if len(rows) > 1:  # one label in several rows: the row whose section or other label cells the question says
        in_section = [i for i in rows if _said_in_full(labelled[i][0], said)]
        bases = _variant_bases([labels for _, labels, _ in labelled])
        rows = in_section if len(in_section) == 1 else _most_said(
            rows, [[labelled[i][0], *labelled[i][1][:-1], bases[i]] for i in rows], said)
    if column is None or len(rows) != 1:
        return None
    section, labels, row = labelled[rows[0]]
    printed = _PRINTED_NUMBER.search((row[column] if column < len(row) else "").replace("−", "-"))
    if printed is None:
        return None
    name = " / ".join(x for x in (section, *labels) if x)
    return NamedCell(table=t, row=name, column=t.columns[column], value=printed.group(0).replace(",", ""))


# a row that varies the row above it: "w/ X", "w/o X", "+ X", "- X", "with X", "without X" (an ablation table)
_VARIANT = re.compile(r"^(?:w/o?|with(?:out)?\b|[+\-−–])\s*\S", re.IGNORECASE)


def _variant_bases(labels: list[list[str]]) -> list[str]:
    """For each row (its label cells), the innermost label of the row it varies when its own says "w/ X" or "+ X"
    (the nearest row above that is no variant), else "": "MCAN" for the "w/ CCD" row under it."""
    out, base = [], ""
    for row in labels:
        variant = bool(_VARIANT.match(row[-1]))
        out.append(base if variant else "")
        if not variant:
            base = row[-1]
    return out


def _most_written(columns: list[int], parts: list[list[str]], question: str) -> list[int]:
    """Of ``columns``, those with the most header cells written in the question as printed, in their order of
    words (a transfer "IMDB→SST-2" is not "SST-2→IMDB", though both say the same words)."""
    text = " ".join(question.lower().split())
    counts = [sum(_said_at(p, text) >= 0 for p in parts[j]) for j in columns]
    return [j for j, n in zip(columns, counts) if n == max(counts)]


def named_column(table: Table, question: Question) -> int | None:
    """The one value column of ``table`` the question names (:func:`named_cell` says how), or None."""
    said, values = _said(question.text), value_columns(table)
    named = _longest_said([(j, table.columns[j]) for j in values], said, unique=False)
    if len(named) > 1:  # names of the same words ("A→B" and "B→A"): the one whose header cells are written as said
        named = _most_written(named, table.column_parts, question.text)
    if named:
        return named[0] if len(named) == 1 else None
    return _named_by_lower_rows(table.column_parts, values, said)


def value_columns(table: Table) -> list[int]:
    """The columns (after the first) that hold a number in at least half the body rows."""
    return [j for j in range(1, len(table.columns))
            if sum(has_number([r[j]]) for r in table.rows if j < len(r)) * 2 >= len(table.rows)]


def transposed(table: Table) -> Table:
    """``table`` with rows and columns swapped: each value column a body row named by its full column name, each
    labelled body row a column named by its innermost label. Two methods printed as columns ("Task | A | B") are
    then two rows, compared across the tasks as the columns (:func:`named_rows`). Section rows and rows without a
    label are left out; the key, page and caption stay the table's own."""
    values = value_columns(table)
    first = _first_value(values)
    rows = [(labels[-1], r) for r in table.rows if (labels := _row_labels(r, first))]
    printed = [[table.corner] + [label for label, _ in rows]]
    printed += [[table.columns[j]] + [r[j] if j < len(r) else "" for _, r in rows] for j in values]
    return Table(key=table.key, paper_id=table.paper_id, page=table.page, caption=table.caption,
                 markdown=rows_markdown(printed), bbox=table.bbox)


def two_named_rows(table: Table, question: Question) -> tuple[Table, list[tuple[str, list[str]]]]:
    """The two rows the question says in full (:func:`named_rows`) and the table they are rows of: ``table`` itself,
    or, when it does not say two of its rows, ``table`` :func:`transposed` (two things compared printed as its
    columns). The rows are empty when neither way gives two."""
    rows = named_rows(table, question)
    if len(rows) == 2:
        return table, rows
    turned = transposed(table)
    rows = named_rows(turned, question)
    return (turned, rows) if len(rows) == 2 else (table, [])


def _first_value(values: list[int]) -> int:
    """The first value column of ``values`` (:func:`value_columns`); the label columns stand before it."""
    return values[0] if values else 1


def named_rows(table: Table, question: Question) -> list[tuple[str, list[str]]]:
    """The body rows whose innermost label the question says in full, in the section it names (if it names one),
    as (label, row) in the order the question says them ("does A score higher than B": A first); a label said
    inside a longer said label ("A" in "A-large") is not said on its own. A label printed in several rows (the
    same methods under each setting) is the row whose other label cells the question writes most ("in the
    few-shot setting", "100×10"). Empty when that leaves a label in two rows, or the question's words are said in
    no order (a label not written as printed)."""
    said = _said(question.text)
    first = _first_value(value_columns(table))
    text = " ".join(question.text.lower().split())
    found: dict[str, list[list[str]]] = {}
    for r in _rows_in_named_section(table, question.text):
        labels = _row_labels(r, first)
        if labels and _said_in_full(labels[-1], said):
            found.setdefault(labels[-1], []).append(r)
    for label, rows in found.items():
        if len(rows) > 1:
            written = [sum(_written(c, said, text) for c in r[:first] if c and c != label) for r in rows]
            best = [r for r, n in zip(rows, written) if n == max(written)]
            if max(written) == 0 or len(best) > 1:
                return []
            found[label] = best
    spans = {label: _said_spans(label, text) for label in found}
    at = {label: _said_alone(spans[label], [spans[other] for other in found if other != label]) for label in found}
    kept = [label for label in found if at[label] >= 0]
    return [(label, found[label][0]) for label in sorted(kept, key=at.get)]


def _said_alone(spans: list[tuple[int, int]], others: list[list[tuple[int, int]]]) -> int:
    """Where the first of ``spans`` lies outside every span of the other labels said ("TopK" alone, not inside
    "Ours (TopK+MDL)"); -1 when each lies inside one."""
    inside = [(c, d) for other in others for c, d in other]
    return next((a for a, b in spans if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in inside)), -1)


def _said_spans(label: str, text: str) -> list[tuple[int, int]]:
    """Where ``label`` is written in ``text`` as a whole item, or, when it never is, the label without the citation
    a table prints after a method ("TopK (Liu et al., 2022)" said as "the TopK baseline (Liu et al., 2022)")."""
    for form in dict.fromkeys((label, without_citations(label))):
        pattern = rf"(?<![\w-]){re.escape(' '.join(form.lower().split()))}(?![\w-])"
        found = [(m.start(), m.end()) for m in re.finditer(pattern, text)]
        if found:
            return found
    return []


def _written(cell: str, said: set[str], text: str) -> bool:
    """Whether the question says a label cell: every word of it, or the cell as printed with spaces aside
    ("100 ×10" in "the 100×10 setting")."""
    squeezed = "".join(cell.lower().split())
    return _said_in_full(cell, said) or (len(squeezed) >= 3 and squeezed in "".join(text.split()))


def _said_at(label: str, text: str) -> int:
    """Where ``label`` is written in ``text`` as a whole item (lower case, spaces collapsed); -1 when it is not."""
    m = re.search(rf"(?<![\w-]){re.escape(' '.join(label.lower().split()))}(?![\w-])", text)
    return m.start() if m else -1


def row_named(table: Table, question: Question, leaving_out: str = "") -> bool:
    """Whether the question says some body row's label in full (its innermost label cell), outside the part
    ``leaving_out`` (what it excludes: "not counting the mean row" names no row it asks about)."""
    said = _said(question.text.replace(leaving_out, " ") if leaving_out else question.text)
    first = _first_value(value_columns(table))
    return any(_said_in_full(labels[-1], said) for _, r in _sectioned(table) if (labels := _row_labels(r, first)))


def _longest_said(named: list[tuple[int, str]], said: set[str], unique: bool = True):
    """Of (index, name) pairs, the indexes of the names every word of which is said, keeping those with the most
    words (then the most said as printed); with ``unique`` the one index, or None when none or several tie."""
    full = [(i, score) for i, name in named if (score := _said_words(name, said)) is not None]
    most = max((n for _, n in full), default=0)
    best = [i for i, n in full if n == most]
    if not unique:
        return best
    return best[0] if len(best) == 1 else None


def _named_by_lower_rows(parts: list[list[str]], values: list[int], said: set[str]) -> int | None:
    """The value column whose name, its top header rows left off, is said in full, ranked as
    :func:`_longest_said` ranks names (each column by its longest such lower part); None when none is, or
    several tie."""
    lower: list[tuple[int, str]] = []
    for j in values:
        said_parts = [name for k in range(1, len(parts[j])) if _said_in_full(name := " ".join(parts[j][k:]), said)]
        if said_parts:
            lower.append((j, said_parts[0]))
    return _longest_said(lower, said)


def _most_said(rows: list[int], qualifiers: list[list[str]], said: set[str]) -> list[int]:
    """Of ``rows``, the one with the most of its ``qualifiers`` (section, outer label cells) said in full, as a
    list of one; every row when none is said or several tie."""
    counts = [sum(_said_in_full(q, said) for q in qs if q) for qs in qualifiers]
    most = max(counts, default=0)
    winners = [i for i, n in zip(rows, counts) if n == most]
    return winners if most and len(winners) == 1 else rows


def _filled_down(rows: list[tuple[str, list[str]]], upto: int) -> list[tuple[str, list[str]]]:
    """The rows with an empty label cell (before column ``upto``) given the label above it in the same section,
    when a cell right of it in the row holds a label: a label printed once for the rows it groups."""
    out: list[tuple[str, list[str]]] = []
    for section, r in rows:
        if out and out[-1][0] == section:
            above = out[-1][1]
            r = list(r)
            for j in range(min(upto, len(r)) - 1):
                if not r[j] and j < len(above) and above[j] and any(_LETTER.search(c) for c in r[j + 1:upto]):
                    r[j] = above[j]
        out.append((section, r))
    return out


def _rows_in_named_section(table: Table, question: str) -> list[list[str]]:
    """The rows under the section row whose every word the question says ("which Conversational Search dataset"),
    or all rows when it names none."""
    said = _said(question)
    out = _sectioned(table)
    labels = list(dict.fromkeys(c for c, _ in out if c))
    named = [c for c in labels if _said_in_full(c, said)]
    # one section named; none or several (each word said somewhere): every row
    return [r for c, r in out if len(named) != 1 or c == named[0]]


def _sectioned(table: Table) -> list[tuple[str, list[str]]]:
    """Each body row with the label of the section row over it ("" before the first); section rows left out. A
    table that stacks blocks under their own header ("TACRED | T1 | T2 ..." again inside the body) has a section
    per block, named by the repeated header's first cell, the first block by the header's own."""
    names = table.header_rows[-1][1:] if table.header_rows else []
    repeats = [i for i, r in enumerate(table.rows) if any(names) and r[1:] == names and r[0]]
    current, out = (table.header_rows[-1][0] if repeats else ""), []
    for i, r in enumerate(table.rows):
        if i in repeats:
            current = r[0]
            continue
        if label := section_label(r):
            current = label
            continue
        out.append((current, r))
    return out


def _row_labels(row: list[str], upto: int) -> list[str]:
    """The row's label cells before column ``upto``: letters and no number (not a dash for "n/a")."""
    return [c for c in row[:upto] if _LETTER.search(c) and not has_number([c])]


def label_said(label: str, text: str) -> bool:
    """Whether ``text`` says every word of the row or column label ``label`` (:func:`named_rows` says how)."""
    return _said_in_full(label, _said(text))


def _said_in_full(name: str, said: set[str]) -> bool:
    """Every word of ``name`` is among the question's words ``said`` (a name of no words is not said); a word printed
    with a full stop ("Prec.", "Context.") is said by any word it begins."""
    return _said_words(name, said) is not None


def _said_words(name: str, said: set[str]) -> tuple[int, int] | None:
    """(words of ``name``, of them said as printed) when every word is said (:func:`_said_in_full`), else None: a
    name said word for word ranks over one said only through an abbreviation ("RLR" over "Annot." when the
    question says "RLR" and "annotators")."""
    text = (name or "").lower().replace("_", "-")
    words = {_stem(m.group(0)): text[m.end():m.end() + 1] == "." for m in _WORD.finditer(text)
             if m.group(0) not in _LINKS}
    exact = [w in said for w in words]
    if not words or not all(x or (words[w] and len(w) >= 3 and not w.isdigit() and any(s.startswith(w) for s in said))
                            for w, x in zip(words, exact)):
        return None
    return len(words), sum(exact)


_QUOTED = re.compile(QUOTED_SPAN)


def _said(question: str) -> set[str]:
    """The words of a question that may name a row or a column: its words, less a quoted paper title (a quoted
    span of four words or more: "In Table 2 of the paper "Model M: ..."" names the paper, not a row M)."""
    return set(_stems(_QUOTED.sub(lambda m: " " if len(quoted(m).split()) >= 4 else m.group(0), question or "")))


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


__all__ = ["AGGREGATE", "NamedCell", "cell_value", "column_candidates", "column_rows", "label_said", "named_cell", "named_column", "named_rows", "named_table",
           "row_candidates", "row_named", "scaled_value", "transposed", "two_named_rows",
           "value_columns"]

"""A stored table's markdown read back into rows of cells, and each column's full name resolved across a
multi-level header ("Yelp" over "R", "M" gives "Yelp R", "Yelp M").

A small model reads a wide markdown table badly (it counts columns wrong under a two-level header and reads the
value beside the one asked), so code resolves the header once and readers work on named cells.

    from evidex.tools.paperstore.table_text import column_names, markdown_rows
    rows = markdown_rows("|Metric|AUC|F1|\\n|---|---|---|\\n|Model A|91.7|25.9|")   # [["Metric", "AUC", "F1"], ...]
    column_names(rows[:1], 3)                                                           # ["Metric", "AUC", "F1"]
"""
from __future__ import annotations

import re

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"^\|?(\s*:?-{3,}:?\s*\|)+\s*$")


def _cells(line: str) -> list[str] | None:
    line = line.strip()
    if len(line) < 2 or not (line.startswith("|") and line.endswith("|")) or _SEPARATOR.match(line):
        return None
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line[1:-1])]


_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")


def centred_labels(body: list[list[str]], label_columns: list[int]) -> list[list[str]]:
    """``body`` with labels printed centred beside the rows they group folded into those rows.

    A PDF table often prints a group's label (a model beside its four rows, a dataset beside its two) once, centred
    on the group, and the parse gives it a row of its own between the group's rows: "|seq2seq|||...|" between the
    second and third of its value rows. In a label column, each value row that leaves the column empty takes the
    nearest such label-only row among the rows that leave it empty around it (a value row with its own label in
    the column bounds them). The column is folded only when that reads as centring everywhere: every such value
    row gets a label, none is as near to two, and each label has as many of its rows above it as below (a group
    of an odd number of rows prints its label on its middle row, which is no label-only row). Otherwise (a label
    over the rows it heads, a label broken over two lines, two label columns merged into one) the column is left
    as printed. When no column folds, ``body`` itself is returned."""
    def values(r: list[str]) -> bool:
        return any(_DIGIT.search(c) for j, c in enumerate(r) if j not in label_columns)

    def lone(r: list[str]) -> int | None:
        filled = [j for j, c in enumerate(r) if c]
        return filled[0] if len(filled) == 1 and filled[0] in label_columns and _LETTER.search(r[filled[0]]) else None

    out, gone = [list(r) for r in body], set()
    for j in sorted({j for r in body if (j := lone(r)) is not None}):
        fold = _centred_column(body, j, values, lone)
        if fold is None:
            continue
        for k, i in fold.items():
            out[k][j] = body[i][j]
        gone |= set(fold.values())
    return [r for i, r in enumerate(out) if i not in gone] if gone else body


def _centred_column(body: list[list[str]], j: int, values, lone) -> dict[int, int] | None:
    """For :func:`centred_labels`: value row -> the label-only row whose label it takes in column ``j``, or None
    when the column does not read as centred labels."""
    fold: dict[int, int] = {}
    segment: list[int] = []  # body rows of a run of value rows leaving column j empty, and the label rows among them
    for i, r in enumerate([*body, None]):
        if r is not None and ((values(r) and not r[j]) or lone(r) == j):
            segment.append(i)
            continue
        if r is not None and lone(r) is not None:  # another column's centred label: no bound in this one
            continue
        labels = [i for i in segment if lone(body[i]) == j]
        rows = [i for i in segment if i not in labels]
        if bool(rows) != bool(labels):
            return None
        # where each stands among the segment's value rows: a label-only row half a row before the one after it
        at = {i: sum(k < i for k in rows) - 0.5 for i in labels} | {k: n for n, k in enumerate(rows)}
        above = {i: 0 for i in labels}
        below = dict(above)
        for k in rows:
            near = sorted((abs(at[k] - at[i]), i) for i in labels)
            if len(near) > 1 and near[0][0] == near[1][0]:
                return None
            fold[k] = near[0][1]
            (below if k > near[0][1] else above)[near[0][1]] += 1
        if any(above[i] != below[i] for i in labels):
            return None
        segment = []
    return fold or None


def column_names(header: list[list[str]], width: int, first_value: int = 1) -> list[str]:
    """Each column's full name: its :func:`column_parts` joined (:func:`joined_names`)."""
    return joined_names(column_parts(header, width, first_value))


def joined_names(parts: list[list[str]]) -> list[str]:
    """Each column's name parts joined into its full name ("column j" for a column with none)."""
    return [" ".join(p) or f"column {j}" for j, p in enumerate(parts)]


def column_parts(header: list[list[str]], width: int, first_value: int = 1) -> list[list[str]]:
    """Each value column's name parts, one per header row that names it, top first: its cells down the header
    rows, a spanning cell ("Yelp" over "R", "M") carried right until the next one in its row. When the last header row repeats one group of names ("ACC AOPC PRED"
    under each dataset), a spanning cell names the group it stands over instead: a PDF's centred label ("SST2"
    over the middle of its three columns) carried right would miss the first column and take the next group's.
    Groups are looked for from ``first_value``, the first column of values (label columns, "Model" and "Test"
    left of "BLEU ROUGE-L BLEU ROUGE-L", are no part of them)."""
    groups = _repeated_groups(header[-1], width, first_value, header[:-1]) if len(header) > 1 else None
    # past the last group, the group row's names are not carried on (an average column has none of its own)
    grouped_end = groups[2] if groups else width
    # a group that names each of its columns apart ("D R F", not "EM F1 | EM F1" read as a group of two)
    distinct = bool(groups) and len(set(header[-1][groups[0]:groups[0] + groups[1]])) == groups[1]
    names = [[] for _ in range(width)]
    for depth, row in enumerate(header):
        last = depth == len(header) - 1
        spans = _group_spans(row, groups, repair=distinct) if groups and not last else None
        carried = ""
        for j in range(1, width):
            if spans is not None:
                carried = spans[j] if j >= groups[0] else row[j]  # a label column's own header cell
            else:
                carried = row[j] or ("" if last and j >= grouped_end else carried)
            if carried and (not names[j] or names[j][-1] != carried):
                names[j].append(carried)
    return names


LEADING_COLUMNS = 2  # value columns of their own a header may print before its repeated groups


def _repeated_groups(row: list[str], width: int, first_value: int = 1,
                     above: list[list[str]] = ()) -> tuple[int, int, int] | None:
    """(first column, group width, end of the last group) when ``row`` names its columns as one group of two or more
    names said again and again ("ACC AOPC PRED ACC AOPC PRED"; columns after the last group may have no name here,
    as an average column under its own spanning name; up to :data:`LEADING_COLUMNS` columns before the first group
    keep their own names, as a setting "β" left of "Loss F1 ECE Loss F1 ECE", when the header rows ``above`` print
    nothing over them: a spanning label there makes them a group of their own, "No attack" over "CA PAA" before
    "ASR QC PAA | ASR QC PAA"), else None."""
    named = [j for j in range(max(first_value, 1), width) if row[j]]
    # the groups may start after a value column or two of their own (a setting "β" before "Loss F1 | Loss F1")
    for start in named[:1 + LEADING_COLUMNS]:
        if any(r[j] for r in above for j in range(named[0], start) if j < len(r)):
            break  # a label over the columns before: they are a group, not columns of their own
        names = row[start:named[-1] + 1]
        for size in range(2, len(names) // 2 + 1):
            if len(names) % size == 0 and all(names[i] and names[i] == names[i % size] for i in range(len(names))):
                return start, size, named[-1] + 1
    return None


def _group_spans(row: list[str], groups: tuple[int, int, int], repair: bool = False) -> list[str] | None:
    """Each column's spanning label in ``row``: the one standing over its group ("" for a group with none); a
    label that falls on a group already named goes to the next group when that one has none (a wide label
    centred near a group's edge). With ``repair`` (the groups name each of their columns apart), two more
    readings: the labels over a group are its name read left to right when that leaves a label no group and every
    group has one (a two-word label the parse split, one word over each column: "Exact" | "Match" over
    "r | ρ"), and one cell over the first group holding one word per group is split between them (labels the
    parse glued: "Set-A Set-B" over "D R F | D R F"). None when the labels fall none of these ways."""
    start, size, _ = groups
    count = (len(row) - start + size - 1) // size
    labels = (_glued_labels(row, start, size, count) if repair else None) or _shifted_labels(row, start, size, count)
    if labels is None and repair:
        labels = _joined_labels(row, start, size, count)
    if labels is None:
        return None
    spans = [""] * len(row)
    for g, label in enumerate(labels):
        for k in range(start + g * size, min(start + (g + 1) * size, len(row))):
            spans[k] = label
    return spans


def _shifted_labels(row: list[str], start: int, size: int, count: int) -> list[str] | None:
    """Each group's label, one label to a group, shifted right onto an unnamed group (:func:`_group_spans`); None
    when two labels fall on one group."""
    labels = [""] * count
    for j in range(start, len(row)):  # the label columns' header cells are no group's
        if not row[j]:
            continue
        g = min((j - start) // size, count - 1)
        if labels[g] and labels[g] != row[j]:
            if g + 1 < count and not labels[g + 1]:
                g += 1
            else:
                return None  # two labels over one group
        labels[g] = row[j]
    return labels


def _glued_labels(row: list[str], start: int, size: int, count: int) -> list[str] | None:
    """The words of the row's one cell, one to a group, when that cell stands over the first group and holds one
    word per group (labels the parse glued); else None."""
    cells = [j for j in range(start, len(row)) if row[j]]
    if len(cells) == 1 and cells[0] < start + size and count > 1 and len(words := row[cells[0]].split()) == count:
        return words
    return None


def _joined_labels(row: list[str], start: int, size: int, count: int) -> list[str] | None:
    """Each group's labels joined left to right; None when a group has none."""
    groups = [[row[k] for k in range(start + g * size, min(start + (g + 1) * size, len(row))) if row[k]]
              for g in range(count)]
    return [" ".join(cells) for cells in groups] if all(groups) else None


# a label cell that ends with the first value column's number, glued to it by the parse: "LEAD 18.90", "SSR 30.07†"
_GLUED = re.compile(r"^(?P<label>.*[^\W\d_].*?)\s+(?P<value>[-+\u2212]?\d[\d,]*(?:\.\d+)?%?[\u2020\u2021*\u00a7]*)$")
_DECIMAL = re.compile(r"\d\.\d")


def glued_first_column(rows: list[list[str]]) -> list[list[str]]:
    """``rows`` (header first) with a first column the parse glued to the next one split in two again.

    When a PDF prints the first value column close to the row labels, the parse can miss the boundary: the header
    reads "|Model R1|R2|..." and each value row "|LEAD 18.90|2.68|...", so the first value column is lost and every
    other column shifts by one name. The split is made only when all of this holds: the header's first cell has two
    or more words; every row with values in the other columns has a label cell that ends with a number (a label with
    a letter before it); there are at least three such rows; their labels are not one word repeated ("Layer 1",
    "Layer 2" is a label); and the numbers have decimals when most numbers of the other columns do. Rows without
    values (section labels) keep their label and get an empty cell. The header's first word names the label column,
    the rest the split-off column. Otherwise ``rows`` itself is returned."""
    if len(rows) < 4 or not rows[0] or len(rows[0][0].split()) < 2:
        return rows
    # each valued row (a value in another column) by its index, with its label cell read as label + number
    glued = {i: _GLUED.match(r[0].strip()) for i, r in enumerate(rows) if i and any(c.strip() for c in r[1:])}
    if len(glued) < 3 or not all(glued.values()):
        return rows
    labels = [m.group("label") for m in glued.values()]
    if len(set(labels)) * 2 <= len(labels):
        return rows
    others = [c for i in glued for c in rows[i][1:] if c.strip() and _DIGIT.search(c)]
    if sum(bool(_DECIMAL.search(c)) for c in others) * 2 > len(others) and not all(
            _DECIMAL.search(m.group("value")) for m in glued.values()):
        return rows
    name, _, first = rows[0][0].strip().partition(" ")  # a label column's header is one word more often than a
    # value column's ("Dataset" over "Sampling prop.")
    return [[name, first, *rows[0][1:]]] + [[m.group("label"), m.group("value"), *r[1:]] if (m := glued.get(i))
                                            else [r[0], "", *r[1:]] for i, r in enumerate(rows) if i]


def markdown_rows(markdown: str) -> list[list[str]]:
    """A markdown table's rows (separator line left out), padded to one width."""
    rows = [cells for line in (markdown or "").splitlines() if (cells := _cells(line)) is not None]
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


def rows_markdown(rows: list[list[str]]) -> str:
    """Rows of cells as a markdown table, the first row its header (the inverse of :func:`markdown_rows`)."""
    def line(cells: list[str]) -> str:
        return "|" + "|".join(c.replace("|", "\\|") for c in cells) + "|"
    if not rows:
        return ""
    return "\n".join([line(rows[0]), "|" + "|".join(["---"] * len(rows[0])) + "|", *map(line, rows[1:])])


__all__ = ["centred_labels", "column_names", "column_parts", "glued_first_column", "joined_names", "markdown_rows",
           "rows_markdown"]

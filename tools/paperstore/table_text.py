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


def column_names(header: list[list[str]], width: int) -> list[str]:
    """Each value column's name: its cells down the header rows, a spanning cell ("Yelp" over "R", "M") carried
    right until the next one in its row. When the last header row repeats one group of names ("ACC AOPC PRED"
    under each dataset), a spanning cell names the group it stands over instead: a PDF's centred label ("SST2"
    over the middle of its three columns) carried right would miss the first column and take the next group's."""
    groups = _repeated_groups(header[-1], width) if len(header) > 1 else None
    names = [[] for _ in range(width)]
    for depth, row in enumerate(header):
        spans = _group_spans(row, groups) if groups and depth < len(header) - 1 else None
        carried = ""
        for j in range(1, width):
            carried = spans[j] if spans is not None else row[j] or carried
            if carried and (not names[j] or names[j][-1] != carried):
                names[j].append(carried)
    return [" ".join(parts) or f"column {j}" for j, parts in enumerate(names)]


def _repeated_groups(row: list[str], width: int) -> tuple[int, int] | None:
    """(first column, group width) when ``row`` names its columns as one group of two or more names said again
    and again ("ACC AOPC PRED ACC AOPC PRED"), else None."""
    start = next((j for j in range(1, width) if row[j]), None)
    if start is None:
        return None
    names = row[start:width]
    for size in range(2, len(names) // 2 + 1):
        if len(names) % size == 0 and all(names[i] and names[i] == names[i % size] for i in range(len(names))):
            return start, size
    return None


def _group_spans(row: list[str], groups: tuple[int, int]) -> list[str] | None:
    """Each column's spanning label in ``row``: the one standing over its group (one label per group), or None
    when the row's labels do not fall one to a group."""
    start, size = groups
    spans = [""] * len(row)
    for j in range(1, len(row)):
        if not row[j]:
            continue
        g = max(0, (j - start) // size)
        first = start + g * size
        if spans[first] and spans[first] != row[j]:
            return None  # two labels over one group: not a group header
        for k in range(first, min(first + size, len(row))):
            spans[k] = row[j]
    return spans


def markdown_rows(markdown: str) -> list[list[str]]:
    """A markdown table's rows (separator line left out), padded to one width."""
    rows = [cells for line in (markdown or "").splitlines() if (cells := _cells(line)) is not None]
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


__all__ = ["column_names", "markdown_rows"]

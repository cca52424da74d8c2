"""Table cells looked up by code from a row name and a column name, in the tables a context prints.

A small model asked "how many points higher is MetaGPT's GSM8k score than Task Arithmetic's" in a wide table reads
a number from the wrong column or row (it answered Nor. Avg's 1.12 for GSM8k's 45.41 - 37.53). Naming the row and
the column is easier for it: both are in the question. Code then finds the cells and does the subtraction.

    from evidex.tools.table_cells import context_tables, find_cell
    tables = context_tables(context)               # the "[tables.<id>, ...] Table 1: ...\\n|...|" blocks
    cell = find_cell(tables, "Table 1", "MetaGPT", "GSM8k")
    cell.value                                     # 45.41
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from evidex.tools.table_records import column_names, markdown_rows

# a probe or observation block that holds a table: "[tables.<id>, <pdf_id> page 7] Table 1: caption" then its rows
_TABLE_BLOCK = re.compile(r"^\[tables\.[^\]]*\]\s*(?P<caption>[^\n]*)\n(?P<rows>(?:\|[^\n]*\|\s*(?:\n|$))+)", re.M)
_TABLE_NUMBER = re.compile(r"\b(?:Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\b")
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class ContextTable:
    label: str  # "Table 1", "" when the caption names none
    header: list[str]  # each column's full name (a two-level header joined: "GSM8K CoT")
    rows: list[list[str]]  # body rows, cells as printed
    corner: str = ""  # the header over the label columns ("top-k2" over "2 | 3 | 4"): words any column name may use


@dataclass(frozen=True)
class Cell:
    table: str
    row: str  # the row's label cells, joined
    column: str
    text: str  # the cell as printed
    value: float  # its first number


def context_tables(context: str) -> list[ContextTable]:
    """The markdown tables a context prints under a ``[tables.<id>, ...]`` source line."""
    out = []
    for m in _TABLE_BLOCK.finditer(context or ""):
        rows = markdown_rows(m.group("rows"))
        if len(rows) < 2:
            continue
        start = next((i for i, r in enumerate(rows) if i and _has_number(r[1:])), 1)
        body = rows[start:]
        labels = [j for j in range(len(rows[0])) if sum(_has_number([r[j]]) for r in body) * 2 < len(body)]
        corner = " ".join(r[j] for r in rows[:start] for j in labels if r[j])
        out.append(ContextTable(label=table_label(m.group("caption")),
                                header=column_names(rows[:start], len(rows[0])), rows=body, corner=corner))
    return out


def table_label(text: str, anywhere: bool = False) -> str:
    """"Table 3" for the table ``text`` names: a caption names it at its start, a question (``anywhere``)
    anywhere; "" when it names none."""
    found = (_TABLE_NUMBER.search if anywhere else _TABLE_NUMBER.match)((text or "").strip())
    return f"Table {found.group(1)}" if found else ""


def find_cell(tables: list[ContextTable], table: str, row: str, column: str, question: str = "") -> Cell | None:
    """The cell at ``row`` and ``column`` (names as a question words them), in the table labelled ``table`` when
    the context has it, else in any table. A row matches when every word of ``row`` is in its label cells (the
    shortest such label wins: "BERT" is BERT's row, not SSCL-BERT's); a column likewise in its header name. Of
    equally good cells, the one whose row and column words the ``question`` uses most ("BART" is the victim of
    two transfer rows; the question says "from DialoGPT"). None when no cell, or more than one equally good
    cell, matches, or the cell holds no number."""
    wanted = _label_key(table)
    asked = set(_words(question))
    pool = [t for t in tables if wanted and _label_key(t.label) == wanted] or tables
    found: list[tuple[tuple[int, int], Cell]] = []
    for t in pool:
        for j, name in enumerate(t.header):
            if j == 0 or not (_covers(column, name) or _covers(column, f"{t.corner} {name}")):
                continue
            for r in t.rows:
                # every cell left of the column: a setting printed as a number ("Dimension 256") names the row too
                label = " ".join(c for k, c in enumerate(r) if k < j and c)
                if not _covers(row, label) or j >= len(r):
                    continue
                value = cell_value(r[j])
                if value is None:
                    continue
                # ranked by the names' words (the numbers left of a column differ from column to column) and then
                # by the question's words, a number it quotes ("at dimension 256") counting for its row
                named = _words(" ".join(c for k, c in enumerate(r) if k < j and c and not _has_number([c])))
                quoted = {w for k, c in enumerate(r) if k < j and _has_number([c]) for w in _words(c)} & asked
                extra = len(named) + len(_words(name)) - len(_useful(row)) - len(_useful(column))
                unsaid = len(set(named + _words(name)) - asked) - len(quoted)
                found.append(((extra, unsaid), Cell(t.label, label, name, r[j], value)))
    if not found:
        return None
    found.sort(key=lambda x: x[0])
    best = [c for rank, c in found if rank == found[0][0]]
    return best[0] if len({c.value for c in best}) == 1 else None


def column_candidates(tables: list[ContextTable], question: str) -> list[tuple[str, float]]:
    """Every row of the table the question names, as (name, value) under the one column whose name the question
    words most ("which method achieves the highest P@R90 on fully detached hallucinations": the "detached P@R90"
    column, not "hall. P@R90"), for code to pick the extreme from. A small model listing the rows itself left
    out the winner or copied another column's numbers (ALTI 16.6 for 67.4). A row's name is its innermost label
    cell (the method under a group label). Empty when the question names no table the context holds, or no one
    column is worded best, or fewer than two rows hold a number there."""
    label = _label_key(table_label(question, anywhere=True))
    t = next((t for t in tables if label and _label_key(t.label) == label), None)
    if t is None:
        return []
    asked = set(_tokens(question))
    scores = [len(set(_tokens(f"{t.corner} {name}")) & asked) if j else 0 for j, name in enumerate(t.header)]
    best = max(scores, default=0)
    if best == 0 or scores.count(best) > 1:
        return []
    j = scores.index(best)
    found: list[tuple[str, float]] = []
    for r in t.rows:
        labels = [c for c in r[:j] if _LETTER.search(c) and not _has_number([c])]  # not a dash for "n/a"
        value = cell_value(r[j]) if j < len(r) else None
        if labels and value is not None:
            found.append((labels[-1], value))
    return found if len(found) >= 2 else []


def _tokens(text: str) -> list[str]:
    """Words as a header prints them, Greek letters included ("AVG ρ" is not "AVG τ")."""
    return [w for w in re.findall(r"\w+", (text or "").lower()) if w not in _LINKS]


def cell_value(cell: str) -> float | None:
    """A cell's first number ("1,024" -> 1024.0, "−0.5" -> -0.5, "45.41†" -> 45.41); None when it holds none."""
    number = _NUMBER.search((cell or "").replace("−", "-"))
    return float(number.group(0).replace(",", "")) if number else None


def _words(text: str) -> list[str]:
    return _WORD.findall((text or "").lower().replace("_", "-"))


# words a model puts between names ("DialoGPT to BART", "MetaGPT on GSM8k") that no row label needs
_LINKS = {"to", "of", "the", "with", "from", "vs", "versus", "and", "on", "for", "at", "in", "by", "under"}


def _covers(asked: str, printed: str) -> bool:
    """Every word of ``asked`` is a word of ``printed`` ("SimCSE_large" and "SimCSE-large" are one word, so
    "BERT" is not found in "SSCL-BERT"), or both are the same letters and digits."""
    words = [w for w in _words(asked) if w not in _LINKS]
    have = set(_words(printed))
    if words and all(w in have for w in words):
        return True
    # a subscript run into its word ("SimCSElarge" for SimCSE_large): the same letters without separators
    return bool(words) and _compact(asked) == _compact(printed)


def _useful(text: str) -> list[str]:
    return [w for w in _words(text) if w not in _LINKS]


def _compact(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", (text or "").lower())


def _label_key(label: str) -> str:
    m = re.search(r"([A-Z]?\d+|[IVXLC]+)\s*$", (label or "").strip())
    return m.group(1).upper() if m else ""


def _has_number(cells: list[str]) -> bool:
    return any(_NUMBER.match(c.strip().lstrip("(~<>±+")) for c in cells if c)


__all__ = ["Cell", "ContextTable", "cell_value", "column_candidates", "context_tables", "find_cell", "table_label"]

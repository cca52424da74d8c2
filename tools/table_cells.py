"""Table cells found by code from a question's words, in the tables a context prints.

A small model asked "how many points higher is MetaGPT's GSM8k score than Task Arithmetic's" in a wide table reads
a number from the wrong column or row (it answered Nor. Avg's 1.12 for GSM8k's 45.41 - 37.53), and asked to name
the two cells it named rows by one of their labels. The row and column names are in the question: code finds the
two cells it compares and subtracts; for a superlative question, the column whose rows it ranks.

    from evidex.tools.table_cells import context_tables, gap_cells
    tables = context_tables(context)               # the "[tables.<id>, ...] Table 1: ...\\n|...|" blocks
    asked, other = gap_cells(tables, "In Table 1, how many points higher is MetaGPT's GSM8k than Task Arithmetic's?")
    asked.value, other.value                       # 45.41, 37.53
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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
    return list(_parsed_tables(context or ""))


@lru_cache(maxsize=16)  # one answer asks for its context's tables up to four times (compare, gap, lookup, rank)
def _parsed_tables(context: str) -> tuple[ContextTable, ...]:
    out = []
    for m in _TABLE_BLOCK.finditer(context):
        rows = markdown_rows(m.group("rows"))
        if len(rows) < 2:
            continue
        # the body starts at the first row holding a number, or at a section row ("Conversational Search" alone
        # over the rows it groups), which belongs to the body, not to the header
        start = next((i for i, r in enumerate(rows) if i and (_has_number(r[1:]) or (
            _section(r) and i + 1 < len(rows) and _has_number(rows[i + 1][1:])))), 1)
        body = rows[start:]
        labels = [j for j in range(len(rows[0])) if sum(_has_number([r[j]]) for r in body) * 2 < len(body)]
        corner = " ".join(r[j] for r in rows[:start] for j in labels if r[j])
        out.append(ContextTable(label=table_label(m.group("caption")),
                                header=column_names(rows[:start], len(rows[0])), rows=body, corner=corner))
    return tuple(out)


def table_label(text: str, anywhere: bool = False) -> str:
    """"Table 3" for the table ``text`` names: a caption names it at its start, a question (``anywhere``)
    anywhere; "" when it names none."""
    found = (_TABLE_NUMBER.search if anywhere else _TABLE_NUMBER.match)((text or "").strip())
    return f"Table {found.group(1)}" if found else ""


def named_table(tables: list[ContextTable], question: str) -> ContextTable | None:
    """The table of ``tables`` the question names anywhere ("In Table 3 of ..."); None when it names none of them."""
    label = _label_key(table_label(question, anywhere=True))
    return next((t for t in tables if label and _label_key(t.label) == label), None)


def gap_cells(tables: list[ContextTable], question: str) -> tuple[Cell, Cell] | None:
    """The two cells a gap question compares ("how many points higher is the ASR from DialoGPT to the victim BART
    than to the victim T5"), found by code from the question's words in the table it names: the asked cell
    before the comparison word ("than", "minus", "exceed", "compared with"), the other after it. The two share
    a row or a column and differ in one name: the asked cell's name is said before the comparison word and not
    after it, the other's after it. Of such pairs, the one whose shared names the question says most wins, then
    the one whose asked name is said nearest the comparison word ("MetaGPT than that of Task Arithmetic"), then
    the one whose row labels the question says in the table's order ("from DialoGPT to the victim BART" is the
    row DialoGPT | BART, not BART | DialoGPT).
    A small model naming the cells itself named rows by one of two labels and swapped rows and columns (0/3
    on the dev split). None when the question names no table the context holds, has no comparison word, or
    no single pair is best."""
    t = named_table(tables, question)
    parts = _comparison(_TABLE_NUMBER.sub(" ", _QUOTED.sub(" ", question or "")))
    if t is None or parts is None:
        return None
    before, after = (_stems(p) for p in parts)
    labels = _label_columns(t)
    cells = []  # (column index, names: {dimension: name}, printed, value)
    for r in t.rows:
        names = {k: r[k] for k in labels if k < len(r) and r[k]}
        for j in range(len(r)):
            value = None if j in labels else cell_value(r[j])
            if value is not None:
                column = t.header[j] if _LETTER.search(t.header[j]) else f"{t.corner} {t.header[j]}"
                cells.append((j, {**names, "column": column}, r[j], value))
    # the asked cell has a word said before the comparison word, the other one after it: pairs of those only
    # (every pair of a 40 x 15 table took seconds)
    heard_before, heard_after = set(before) | {_compact(w) for w in before}, set(after) | {_compact(w) for w in after}

    def heard(names: dict, words: set[str]) -> bool:
        return any(_word_heard(w, words) for name in names.values() for w in _name_stems(name))

    asked_cells = [c for c in cells if heard(c[1], heard_before)]
    other_cells = [c for c in cells if heard(c[1], heard_after)]
    ranked: list[tuple[tuple[int, int, int], Cell, Cell]] = []
    for ja, a, ta, va in asked_cells:
        for jb, b, tb, vb in other_cells:
            differ = [k for k in a.keys() | b.keys() if a.get(k) != b.get(k)]
            if len(differ) != 1 or (differ[0] == "column") != (ja != jb):
                continue
            k = differ[0]
            mine, theirs = _name_stems(a.get(k, "")), _name_stems(b.get(k, ""))
            # "GSM8K CoT" than "GSM8K standard": only the words that tell the two apart need saying on each side
            a_only = [w for w in mine if w not in theirs] or mine
            b_only = [w for w in theirs if w not in mine] or theirs
            near = _said_at(a_only, before)
            if near is None or _said_at(a_only, after) is not None or _said_at(b_only, after) is None:
                continue
            common = [w for name in [v for key, v in a.items() if key != k] for w in _name_stems(name)]
            common += [w for w in mine if w in theirs]
            shared = sum(_said_at([w], before + after) is not None for w in common)
            if shared:
                rank = (-shared, len(before) - near, _out_of_order(a, before))
                ranked.append((rank, _cell(t, a, ta, va), _cell(t, b, tb, vb)))
    ranked.sort(key=lambda x: x[0])
    if not ranked or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
        return None
    return ranked[0][1], ranked[0][2]


def looked_up_cell(tables: list[ContextTable], question: str) -> tuple[str, str, str] | None:
    """(row, column, cell as printed): the one cell a lookup question asks for ("which fine-tuned model is used
    for the Mathematical Reasoning task with the Mistral-7b pre-trained model" in a table of Pre-trained Model |
    Task | Fine-tuned-Models), found by code from the question's words in the table it names: the asked column's
    name is said and its cell is not; the row is the one with the most other cells said. A small model read the
    row above or below (MAmmoTH-7B, the LLaMA-2-7b row's). None when the question names no table the context
    holds, or no single (row, column) says most."""
    t = named_table(tables, question)
    if t is None:
        return None
    said = [_compact(w) for w in _stems(_TABLE_NUMBER.sub(" ", _QUOTED.sub(" ", question or "")))]
    best: list[tuple[int, int, list[str]]] = []
    for j, name in enumerate(t.header):
        if not _LETTER.search(name) or not _run_said(name, said):
            continue
        for r in t.rows:
            if j >= len(r) or not r[j].strip() or _run_said(r[j], said):
                continue
            score = sum(_run_said(c, said) for k, c in enumerate(r) if k != j and c.strip())
            if score:
                best.append((score, j, r))
    best.sort(key=lambda x: -x[0])
    if not best or (len(best) > 1 and best[1][0] == best[0][0]):
        return None
    _, j, r = best[0]
    return " | ".join(c for k, c in enumerate(r) if k != j and c), t.header[j], r[j].strip()


def _run_said(name: str, said: list[str]) -> bool:
    """Whether the question's words, run together, say the whole ``name`` ("fine-tuned model" says
    "Fine-tuned-Models", "Mistral-7b" says "Mistral-7b"); whole words only, and not a name of under 3 letters."""
    target = "".join(_compact(w) for w in _stems(_ASIDE.sub(" ", name)))
    if len(target) < 3:
        return False
    for i in range(len(said)):
        run = ""
        for w in said[i:]:
            run += w
            if len(run) >= len(target):
                break
        if run == target:
            return True
    return False


# "A than B", "A minus B", "A exceed that of B", "A compared with B": the asked value is named before the word
_COMPARED = re.compile(r"\b(?:than|minus|exceeds?|compared (?:to|with)|relative to)\b", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\b(?P<a>.*?)\band\b(?P<b>.*)", re.IGNORECASE | re.S)
# "how much does pass@1 rise from before to after the edit": the two values in the order the change runs
_FROM_TO = re.compile(r"\b(?:rises?|increases?|grows?|drops?|decreases?|falls?|improves?|changes?)\b.*?"
                      r"\bfrom\b(?P<a>.*?)\bto\b(?P<b>.*)", re.IGNORECASE | re.S)
_QUOTED = re.compile(r"[\"“][^\"”]{12,}[\"”]")  # a quoted paper title: its words name no cell


def _comparison(question: str) -> tuple[str, str] | None:
    """The question's text before and after its comparison word ("difference between A and B", "rise from A to
    B": A's side is everything before "and" or "to")."""
    found = _COMPARED.search(question)
    if found:
        return question[:found.start()], question[found.end():]
    between = _BETWEEN.search(question) or _FROM_TO.search(question)
    return (question[:between.start("b")], between.group("b")) if between else None


def _stems(text: str) -> list[str]:
    """The text's words without a plural's "s" ("forward passes" says "Forward Pass")."""
    return [_stem(w) for w in _words(text) if w not in _LINKS]


def _stem(word: str) -> str:
    if word.endswith("sses") or (word.endswith("s") and not word.endswith("ss") and len(word) > 3
                                 and not word[-2].isdigit()):
        return word[:-2] if word.endswith("sses") else word[:-1]
    return word


@lru_cache(maxsize=4096)
def _name_stems(name: str) -> tuple[str, ...]:
    """A printed name's words, an aside in brackets left out ("MetaGPT(ours)" is said as "MetaGPT"); a word the
    table cut short ("Compressive Transf.") ends with ``_CUT``: any word it begins says it ("Transformer")."""
    name = _ABBREVIATED.sub(lambda m: f"{m.group(1)}{_CUT}", name)
    return tuple(_stems(_ASIDE.sub(" ", name)) or _stems(name))


_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_ABBREVIATED = re.compile(r"\b([A-Za-z]{3,})\.(?!\w)")
_CUT = "zzcut"  # a mark the word pattern keeps (punctuation would be dropped), read back by _word_is


def _word_is(wanted: str, word: str) -> bool:
    """Whether a question's ``word`` says a name's ``wanted`` word: the same word, the same letters run together
    ("SimCSE_large" / "SimCSElarge"), or, for a word the table cut short, a word it begins."""
    if wanted.endswith(_CUT):
        return word.startswith(wanted[: -len(_CUT)])
    return word == wanted or _compact(word) == _compact(wanted)


def _word_heard(wanted: str, words: set[str]) -> bool:
    if wanted.endswith(_CUT):
        return any(_word_is(wanted, w) for w in words)
    return wanted in words or _compact(wanted) in words


def _said_at(wanted, words: list[str]) -> int | None:
    """Where ``words`` say every one of ``wanted`` (the position after the last word's last mention), else None.
    A word run together as a table prints it ("SimCSElarge") is the question's "SimCSE_large"."""
    if not wanted:
        return None
    at = []
    for w in wanted:
        found = [i for i, x in enumerate(words) if _word_is(w, x)]
        if not found:
            return None
        at.append(found[-1])
    return at[-1] + 1


def _compact(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word)


def _out_of_order(names: dict, words: list[str]) -> int:
    """How many of a cell's row labels the question says before a label left of it in the table."""
    at = [_said_at(_name_stems(name), words) for k, name in sorted((k, v) for k, v in names.items() if k != "column")]
    said = [i for i in at if i is not None]
    return sum(1 for x, y in zip(said, said[1:]) if y < x)


def _label_columns(t: ContextTable) -> set[int]:
    """The leading columns that name rows: most of their body cells hold no number, a size ("137B", "8k") or a
    setting repeated down the rows ("Dimension": 128, 256, 768 for each model)."""
    width = max(len(r) for r in t.rows)
    out: set[int] = set()
    for j in range(width):
        cells = [r[j] for r in t.rows if j < len(r) and r[j]]
        numbers = [c for c in cells if _has_number([c]) and not _SIZE.match(c)]
        if cells and numbers and len(numbers) * 2 >= len(cells) and (j == 0 or len(set(numbers)) * 2 > len(numbers)):
            break
        out.add(j)
    return out


# a size, alone or naming a row with the words after it ("137B", "36L TransformerXL")
_SIZE = re.compile(r"^\d+(?:\.\d+)?\s?[A-Za-z]+(?:\s+[^\s\d][^\s]*)*$")


def _cell(t: ContextTable, names: dict, printed: str, value: float) -> Cell:
    return Cell(t.label, " ".join(v for k, v in names.items() if k != "column"), names["column"], printed, value)


def column_candidates(tables: list[ContextTable], question: str) -> list[tuple[str, float]]:
    """Every row of the table the question names, as (name, value) under the one column whose name the question
    words most ("which method achieves the highest P@R90 on fully detached hallucinations": the "detached P@R90"
    column, not "hall. P@R90"), for code to pick the extreme from. A small model listing the rows itself left
    out the winner or copied another column's numbers (ALTI 16.6 for 67.4). A row's name is its innermost label
    cell (the method under a group label). Empty when the question names no table the context holds, or no one
    column is worded best, or fewer than two rows hold a number there."""
    t = named_table(tables, question)
    if t is None:
        return []
    asked = set(_tokens(question))
    scores = [len(set(_tokens(f"{t.corner} {name}")) & asked) if j else 0 for j, name in enumerate(t.header)]
    best = max(scores, default=0)
    if best == 0 or scores.count(best) > 1:
        return []
    j = scores.index(best)
    found: list[tuple[str, float]] = []
    for r in _rows_in_named_section(t.rows, question):
        labels = [c for c in r[:j] if _LETTER.search(c) and not _has_number([c])]  # not a dash for "n/a"
        value = scaled_value(r[j]) if j < len(r) else None
        if labels and value is not None:
            found.append((labels[-1], value))
    return found if len(found) >= 2 else []


def _section(row: list[str]) -> str:
    """A section row's label: the one text cell of a row without numbers ("Conversational Search"), else ""."""
    cells = [c for c in row if c]
    return cells[0] if len(cells) == 1 and _LETTER.search(cells[0]) and not _has_number(cells) else ""


def _rows_in_named_section(rows: list[list[str]], question: str) -> list[list[str]]:
    """The rows under the section row whose every word the question says ("which Conversational Search dataset"),
    or all rows when it names none."""
    said = set(_stems(question))
    current, out = "", []
    for r in rows:
        label = _section(r)
        if label:
            current = label
            continue
        out.append((current, r))
    labels = list(dict.fromkeys(c for c, _ in out if c))
    named = [c for c in labels if (words := _stems(c)) and all(w in said for w in words)]
    # one section named; none or several (each word said somewhere): every row
    return [r for c, r in out if len(named) != 1 or c == named[0]]


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


# words a model puts between names ("DialoGPT to BART", "MetaGPT on GSM8k") that no row label needs
_LINKS = {"to", "of", "the", "with", "from", "vs", "versus", "and", "on", "for", "at", "in", "by", "under"}


def _label_key(label: str) -> str:
    m = re.search(r"([A-Z]?\d+|[IVXLC]+)\s*$", (label or "").strip())
    return m.group(1).upper() if m else ""


def _has_number(cells: list[str]) -> bool:
    return any(_NUMBER.match(c.strip().lstrip("(~<>±+")) for c in cells if c)


__all__ = ["Cell", "ContextTable", "cell_value", "column_candidates", "context_tables", "gap_cells", "looked_up_cell",
           "named_table", "table_label"]

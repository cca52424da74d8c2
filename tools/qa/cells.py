"""Table cells found by code from a question's words, in the tables a context holds.

A small model asked "how many points higher is A's score on X than B's" in a wide table reads a number from the
wrong column or row, and asked to name the two cells it names rows by one of their labels. The row and column
names are in the question: code finds the two cells it compares (:func:`gap_cells`), the one cell a lookup asks
for by its row and column names (:func:`looked_up_cell`), or the column whose rows a superlative question ranks
(:func:`column_candidates`). Tables are the store's typed tables (:class:`tools.paperstore.Table`); the question
is parsed once (:class:`tools.qa.question.Question`).

    asked, other = gap_cells(context.tables, parse_question(q))      # Cell(row, column, text, value) x 2
    asked.value - other.value
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from evidex.tools.paperstore.models import Table, has_number, section_label
from evidex.tools.qa.question import Question

_TABLE_NUMBER = re.compile(r"\b(?:Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\b")
_NUMBER = re.compile(r"[-−]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class Cell:
    table: str
    row: str  # the row's label cells, joined
    column: str
    text: str  # the cell as printed
    value: float  # its first number


def named_table(tables: list[Table], question: Question) -> Table | None:
    """The table of ``tables`` the question names anywhere ("In Table 3 of ..."); None when it names none of them."""
    label = _label_key(question.table_label)
    return next((t for t in tables if label and _label_key(t.label) == label), None)


def gap_cells(tables: list[Table], question: Question) -> tuple[Cell, Cell] | None:
    """The two cells a gap question compares ("how many points higher is the success rate from model A to the
    victim B than to the victim C"), found by code from the question's words in the table it names: the asked cell
    before the comparison word ("than", "minus", "exceed", "compared with"), the other after it. The two share
    a row or a column and differ in one name: the asked cell's name is said before the comparison word and not
    after it, the other's after it. Of such pairs, the one whose shared names the question says most wins, then
    the one whose asked name is said nearest the comparison word ("method A than that of method B"), then the one
    whose row labels the question says in the table's order ("from A to the victim B" is the row A | B, not
    B | A).
    A small model naming the cells itself named rows by one of two labels and swapped rows and columns (0/3
    on the dev split). None when the question names no table the context holds, has no comparison word, or
    no single pair is best."""
    t = named_table(tables, question)
    parts = question.comparison
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
                column = t.columns[j] if _LETTER.search(t.columns[j]) else f"{t.corner} {t.columns[j]}"
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
            # "X CoT" than "X standard": only the words that tell the two apart need saying on each side
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


def looked_up_cell(tables: list[Table], question: Question) -> tuple[str, str, str] | None:
    """(row, column, cell as printed): the one cell a lookup question asks for ("which fine-tuned model is used
    for the summarisation task with the base model X" in a table of Base Model | Task | Fine-tuned Models), found by
    code from the question's words in the table it names: the asked column's name is said and its cell is not;
    the row is the one with the most other cells said (a small model read the row above or below). None when the
    question names no table the context holds, or no single (row, column) says most."""
    t = named_table(tables, question)
    if t is None:
        return None
    # the words it says, without what it excludes ("excluding A": A is never the row it asks for)
    text = question.text.replace(question.excluded, " ") if question.excluded else question.text
    said = [_compact(w) for w in _stems(_TABLE_NUMBER.sub(" ", _QUOTED.sub(" ", text)))]
    best: list[tuple[int, int, list[str]]] = []
    for j, name in enumerate(t.columns):
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
    return " | ".join(c for k, c in enumerate(r) if k != j and c), t.columns[j], r[j].strip()


def _run_said(name: str, said: list[str]) -> bool:
    """Whether the question's words, run together, say the whole ``name`` ("fine-tuned model" says
    "Fine-tuned-Models", "Model-7b" says "Model-7b"); whole words only, and not a name of under 3 letters."""
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


_QUOTED = re.compile(r"[\"“][^\"”]{12,}[\"”]")  # a quoted paper title: its words name no cell


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
    """A printed name's words, an aside in brackets left out ("Method(ours)" is said as "Method"); a word the
    table cut short ("Long Transf.") ends with ``_CUT``: any word it begins says it ("Transformer")."""
    name = _ABBREVIATED.sub(lambda m: f"{m.group(1)}{_CUT}", name)
    return tuple(_stems(_ASIDE.sub(" ", name)) or _stems(name))


_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_ABBREVIATED = re.compile(r"\b([A-Za-z]{3,})\.(?!\w)")
_CUT = "zzcut"  # a mark the word pattern keeps (punctuation would be dropped), read back by _word_is


def _word_is(wanted: str, word: str) -> bool:
    """Whether a question's ``word`` says a name's ``wanted`` word: the same word, the same letters run together
    ("Model_large" / "Modellarge"), or, for a word the table cut short, a word it begins."""
    if wanted.endswith(_CUT):
        return word.startswith(wanted[: -len(_CUT)])
    return word == wanted or _compact(word) == _compact(wanted)


def _word_heard(wanted: str, words: set[str]) -> bool:
    if wanted.endswith(_CUT):
        return any(_word_is(wanted, w) for w in words)
    return wanted in words or _compact(wanted) in words


def _said_at(wanted, words: list[str]) -> int | None:
    """Where ``words`` say every one of ``wanted`` (the position after the last word's last mention), else None.
    A word run together as a table prints it ("Modellarge") is the question's "Model_large"."""
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


def _label_columns(t: Table) -> set[int]:
    """The leading columns that name rows: most of their body cells hold no number, a size ("137B", "8k") or a
    setting repeated down the rows ("Dimension": 128, 256, 768 for each model)."""
    width = max(len(r) for r in t.rows)
    out: set[int] = set()
    for j in range(width):
        cells = [r[j] for r in t.rows if j < len(r) and r[j]]
        numbers = [c for c in cells if has_number([c]) and not _SIZE.match(c)]
        if cells and numbers and len(numbers) * 2 >= len(cells) and (j == 0 or len(set(numbers)) * 2 > len(numbers)):
            break
        out.add(j)
    return out


# a size, alone or naming a row with the words after it ("137B", "36L TransformerXL")
_SIZE = re.compile(r"^\d+(?:\.\d+)?\s?[A-Za-z]+(?:\s+[^\s\d][^\s]*)*$")


def _cell(t: Table, names: dict, printed: str, value: float) -> Cell:
    return Cell(t.label, " ".join(v for k, v in names.items() if k != "column"), names["column"], printed, value)


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
        labels = [c for c in r[:j] if _LETTER.search(c) and not has_number([c])]  # not a dash for "n/a"
        value = scaled_value(r[j]) if j < len(r) else None
        if labels and value is not None:
            found.append((labels[-1], value))
    return found if len(found) >= 2 else []


def _rows_in_named_section(rows: list[list[str]], question: str) -> list[list[str]]:
    """The rows under the section row whose every word the question says ("which Conversational Search dataset"),
    or all rows when it names none."""
    said = set(_stems(question))
    current, out = "", []
    for r in rows:
        label = section_label(r)
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


# words a question puts between names ("model A to victim B", "method A on dataset X") that no row label needs
_LINKS = {"to", "of", "the", "with", "from", "vs", "versus", "and", "on", "for", "at", "in", "by", "under"}


def _label_key(label: str) -> str:
    m = re.search(r"([A-Z]?\d+|[IVXLC]+)\s*$", (label or "").strip())
    return m.group(1).upper() if m else ""


__all__ = ["Cell", "cell_value", "column_candidates", "gap_cells", "looked_up_cell", "named_table", "scaled_value"]

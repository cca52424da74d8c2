"""Bring a model's answer into the shape its question's answer format asks for, without changing its content.

Small models often get the content right and the shape wrong: ``Retrieval Enhancement, Aspect Enhancement`` where
the format asks for a Python list, ``The model has 12 layers.`` where it asks for an integer. AirQA's evaluation
functions read the answer literally, so the shape decides the score. :func:`conform` only reshapes what is
there: a list format gets a JSON list (of the items the answer already lists), an integer or float format gets
the single number the answer states, a true/false format gets ``true``/``false``. Anything ambiguous (no
number, several numbers) is left exactly as it was. Parsing never uses ``eval``.
"""
from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from typing import Any, Literal, get_args

_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w.])|(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def _literal(text: str) -> Any:
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _numbers(text: str) -> list[str]:
    return [m.group().replace(",", "") for m in _NUMBER.finditer(text)]


AnswerKind = Literal["dict", "list", "int", "float", "bool", "str"]
_DICT = re.compile(r"\bdict(?:ionary)?\b")
_INTEGER = re.compile(r"\bint\b|integer")
_FLOAT = re.compile(r"float|decimal")
_BOOL = re.compile(r"\bbool(?:ean)?\b|true or false")
# an element that is text: "the first is a string, the name of the method, and the second is a float"
_TEXT_ITEM = re.compile(r"string|\bstr\b|name|text|title|word")
_VALUE_KINDS = ((int, _INTEGER), (float, _FLOAT), (bool, _BOOL))
_KINDS = (*_VALUE_KINDS, (str, _TEXT_ITEM))  # numbers first


def answer_kind(answer_format: str) -> AnswerKind:
    """The shape an answer format asks for: a dictionary, a list, an integer, a float, true/false, or free text
    (a dictionary first: "a Python dictionary ... and a boolean value" is a dictionary, not a boolean)."""
    fmt = answer_format.lower()
    if _DICT.search(fmt):
        return "dict"
    if "list" in fmt:
        return "list"
    if _INTEGER.search(fmt):
        return "int"
    if _FLOAT.search(fmt):
        return "float"
    if _BOOL.search(fmt) or "yes or no" in fmt:
        return "bool"
    return "str"


def answer_type(answer_format: str) -> Any:
    """The JSON-schema type a constrained answer takes for this format: the grammar then only lets a model write
    a number where an integer is asked (a small model otherwise writes a word from the format, "strings"). A list
    whose elements are of one kind gets that kind; a list of mixed elements ("the first is a string, ... the
    second is a float") gets each position's kind (typing all as numbers would forbid the string), or lets each
    element be any kind when the positions are not spelled out; a list holding lists ("the second is a python
    list of strings", "e.g. [[...], [...]]") and a dictionary take any JSON value inside."""
    kind = answer_kind(answer_format)
    if kind == "dict":
        return dict[str, Any]
    if kind == "list":
        fmt = answer_format.lower()
        if _nested(fmt):
            return list[Any]
        positions = _positional_kinds(fmt)
        if positions and len(set(positions)) > 1:
            return tuple[positions]
        kinds = [t for t, pattern in _KINDS if pattern.search(fmt)]
        if len(kinds) > 1:
            return list[str | int | float | bool]
        return list[kinds[0] if kinds else str]
    return {"int": int, "float": float, "bool": bool, "str": str}[kind]


_ORDINALS = tuple(re.compile(rf"\b{word}\b") for word in ("first", "second", "third", "fourth", "fifth"))


def _positional_kinds(fmt: str) -> tuple[type, ...] | None:
    """The kind of each element of a list format that describes its elements by position ("a Python list of 2
    elements, the first is the combination and the second is the accuracy, rounded to one decimal place": str,
    float), read from the words between one ordinal and the next; a position that names no kind has the kind the
    list names before "first" ("a list of two floats, the first is precision"), else text. None unless "first" and
    "second" are both there, in that order. A number word wins over a text word in a position (its description may
    go on about names: "use the same names as in the table")."""
    marks, start = [], 0
    for ordinal in _ORDINALS:
        found = ordinal.search(fmt, start)
        if not found:
            break
        marks.append(found)
        start = found.end()
    if len(marks) < 2:
        return None
    head = fmt[:marks[0].start()]
    default = next((t for t, pattern in _KINDS if pattern.search(head)), str)
    ends = [m.start() for m in marks[1:]] + [len(fmt)]
    return tuple(next((t for t, pattern in _VALUE_KINDS if pattern.search(fmt[m.end():end])), default)
                 for m, end in zip(marks, ends))


_LIST_OF = re.compile(r"\blist (?:of|with|containing)\b")
_TYPED_LIST = re.compile(r"\b(?:string|integer|int|float|name) list\b")  # "the fourth one should be a string list"


def _nested(fmt: str) -> bool:
    """Whether a list format asks for lists inside the list: a second "list of" ("..., the second is a python list
    of strings", "a string list"), sublists, or an example that opens with "[["."""
    return (len(_LIST_OF.findall(fmt)) > 1 or "sublist" in fmt or "[[" in fmt.replace(" ", "")
            or _TYPED_LIST.search(fmt) is not None)


_PAIR = re.compile(r"\b(?:two|2|pair)\b")


def pair_kinds(answer_format: str) -> tuple[Any, Any] | None:
    """The kinds of the two elements of a list format that asks for exactly two ("a Python list of two integers",
    "a list of 2 elements, the first is a string and the second is a float"); None for any other format."""
    fmt = answer_format.lower()
    if answer_kind(answer_format) != "list" or _nested(fmt):
        return None
    positions = _positional_kinds(fmt)
    if positions is not None:
        return positions if len(positions) == 2 else None
    if not _PAIR.search(fmt):
        return None
    element = get_args(answer_type(answer_format))[0]
    return element, element


def answer_text(value: Any) -> str:
    """A typed answer as the text an evaluator reads: JSON for lists, dictionaries and booleans, plain for numbers
    and text."""
    if isinstance(value, (list, tuple, dict, bool)):
        return json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False)
    return str(value)


# an in-text citation copied with a name or a number from a paper: "(Wang et al., 2020)", "(Smith and Lee 2019a;
# Li, 2021)", or a numbered one right after a word ("BERT [12]"); it is no part of the answer
_CITATION = re.compile(r"\s*\((?:[^()]*?(?:\bet al\.?|[A-Z][\w'-]+),?\s+(?:19|20)\d{2}[a-z]?\b[^()]*?)\)"
                       r"|(?<=[^\W\d_])\s*\[\d+(?:\s*[,\u2013-]\s*\d+)*\]")


def without_citations(text: str) -> str:
    """``text`` without the in-text citations it copied from a paper; ``text`` itself when nothing else is left."""
    cut = _CITATION.sub("", text).strip()
    return cut if cut else text


def conform(answer: str | None, answer_format: str) -> str | None:
    """``answer`` reshaped to ``answer_format`` when the shape is clear (in-text citations dropped); otherwise
    unchanged."""
    if answer is None:
        return None
    kind = answer_kind(answer_format)
    text = answer.strip() if kind in ("dict", "bool") else without_citations(answer.strip())
    value = _literal(text) if len(text) < 20_000 else None
    if kind == "dict":
        return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else text
    if kind == "list":
        if isinstance(value, (list, tuple)):
            return json.dumps(list(value), ensure_ascii=False)
        if text.startswith("[") or not text:
            return text
        items = [s.strip().strip("'\"").strip() for s in re.split(r"\s*[;\n]\s*|,\s+", text)]
        return json.dumps([s for s in items if s], ensure_ascii=False)
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        numbers = _numbers(text)
        if len(set(numbers)) == 1 and "." not in numbers[0]:
            return numbers[0]
        return text
    if kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        numbers = _numbers(text)
        return numbers[0] if len(set(numbers)) == 1 else text
    if kind == "bool":
        word = text.lower().strip(" .!")
        if word in ("true", "yes"):
            return "true"
        if word in ("false", "no"):
            return "false"
    return text


def asks_for_title(answer_format: str) -> bool:
    """The format asks for papers' titles (AirQA's retrieval questions: "the title of the paper ...")."""
    fmt = answer_format.lower()
    return "title" in fmt and "paper" in fmt


def title_key(text: str) -> str:
    """A title compared with case, punctuation and spacing aside."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def snap_title(answer: str, titles: Iterable[str], min_ratio: float = 0.85) -> str:
    """The store title ``answer`` names, written exactly as the store has it; ``answer`` unchanged when it names
    none. Title-matching evaluators compare characters (AirQA: ratio >= 95), so a small model that found the right
    paper loses it to a dropped colon, a trailing period or "The paper is ..." around the title. A title counts
    as named when the answer contains it (the longest such title wins) or, failing that, when the closest title
    matches at ``min_ratio`` or more, punctuation and case aside. A JSON list answer is snapped item by item."""
    keyed = [(t, title_key(t)) for t in dict.fromkeys(t for t in titles if t and t.strip())]  # once, for every item
    value = _literal(answer.strip()) if answer.strip().startswith("[") else None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return json.dumps([_snap_one(v, keyed, min_ratio) for v in value], ensure_ascii=False)
    return _snap_one(answer, keyed, min_ratio)


def _snap_one(answer: str, keyed: list[tuple[str, str]], min_ratio: float) -> str:
    """``snap_title`` for one answer, over (title, title key) pairs."""
    key = title_key(answer)
    if not key:
        return answer
    inside = [t for t, k in keyed if k and len(k) >= 12 and f" {k} " in f" {key} "]
    if inside:
        return max(inside, key=len)
    best, best_ratio = None, 0.0
    for title, k in keyed:
        m = SequenceMatcher(None, key, k, autojunk=False)
        if m.real_quick_ratio() < min_ratio or m.quick_ratio() < min_ratio:
            continue
        r = m.ratio()
        if r > best_ratio:
            best, best_ratio = title, r
    return best if best is not None and best_ratio >= min_ratio else answer


# "e.g. 0.5.", "for example 'ACL 2023'.": the example runs to the end of its sentence (a period before a space or the
# end; the period inside 0.5 is neither)
_EXAMPLE = re.compile(r"\b(?:e\.g\.|for example|for instance)[,:]?\s*(.+?)(?:\.(?=\s)|\.?$)", re.IGNORECASE)


def _comparable(value: Any) -> Any:
    """A value as the example check compares it: numbers as floats, text without case, quotes or spacing."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return tuple(_comparable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k).lower(), _comparable(v)) for k, v in value.items()))
    return " ".join(str(value).strip().strip("'\"").lower().split())


def copies_example(answer: str, answer_format: str) -> bool:
    """Whether ``answer`` is the example its format gives ("Your answer should be a Python float, e.g. 0.5." answered
    0.5): a small model that finds nothing copies the example it was shown, and an example is chosen not to be
    the answer (in none of the AirQA sample's or the benchmark's 28 formats with one is it)."""
    given = _literal(answer.strip()) if answer and answer.strip() else None
    given = _comparable(answer if given is None else given)
    for found in _EXAMPLE.finditer(answer_format or ""):
        text = found.group(1).strip()
        example = _literal(text)
        if given == _comparable(text if example is None else example):
            return True
    return False


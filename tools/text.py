"""Plain-text helpers shared by the writers and the scorers."""
from __future__ import annotations

import re

_SENTENCE_SPLIT = re.compile(
    r"\n\s*\n|(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bal\.)(?<!\bFig\.)(?<!\bDr\.)(?<!\bNo\.)"
    r"\s+(?=[A-Z0-9(\[\"])"
)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (abbreviations such as "e.g." do not end one)."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text or "") if s and s.strip()]


_WORD = re.compile(r"\w+")


def quote_in(quote: str, context: str, *, min_words: int = 2, coverage: float = 0.9) -> bool:
    """Whether ``quote`` was copied from ``context``: its words appear there in order as a run, case and spacing
    aside, or (for quotes a model copied with small slips: a dropped symbol, a fixed hyphen) at least
    ``coverage`` of its words are words of the context. Too short a quote proves nothing."""
    words = [w.lower() for w in _WORD.findall(quote or "")]
    if len(words) < min_words:
        return False
    text = " ".join(w.lower() for w in _WORD.findall(context or ""))
    if " ".join(words) in text:
        return True
    vocabulary = set(text.split())
    return sum(w in vocabulary for w in words) / len(words) >= coverage and len(words) >= 2 * min_words


_UNITS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_TENS = {w: 10 * n for n, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if n > 1}
# a number written as words below a hundred: "eight", "Twenty two", "twenty-five"
SPELLED_NUMBER = re.compile(r"\b(?:(" + "|".join(_TENS) + r")(?:[\s-](" + "|".join(list(_UNITS)[1:10]) + r"))?|("
                            + "|".join(_UNITS) + r"))\b", re.IGNORECASE)


def spelled_value(found: re.Match) -> int:
    """The number a :data:`SPELLED_NUMBER` match writes."""
    tens, unit, alone = found.groups()
    if alone:
        return _UNITS[alone.lower()]
    return _TENS[tens.lower()] + (_UNITS[unit.lower()] if unit else 0)


def numerals(text: str) -> str:
    """``text`` with the numbers it writes as words from two to ninety-nine in digits ("across eight different
    datasets" -> "across 8 different datasets", "twenty-five annotators" -> "25 annotators"); "zero" and "one" stay
    words, since "one" is more often a pronoun ("one of the baselines") than a count."""
    return SPELLED_NUMBER.sub(lambda m: str(n) if (n := spelled_value(m)) >= 2 else m.group(), text or "")


def _number_words(text: str) -> list[str]:
    """``text``'s words, lower-cased, its numbers in digits (:func:`numerals`) and without thousands separators
    ("10,907" -> "10907")."""
    return [w.lower() for w in _WORD.findall(drop_thousands_commas(numerals(text)))]


def value_in(answer: str, context: str) -> bool:
    """Whether an answer's value can be read in ``context``: every item of a JSON list answer, or the answer itself,
    appears there as a run of words (numbers as whole tokens: "6" is not found in "16"; thousands separators aside
    on both sides, since answer formats ask for none: "10907" is found in "10,907"; a number written as a word is
    its digits: "8" is found in "eight datasets"). Yes/no answers cannot be checked this way and count as found."""
    import json

    try:
        value = json.loads(answer)
    except (ValueError, TypeError):
        value = answer
    items = value if isinstance(value, list) else [value]
    if not items or isinstance(value, bool):
        return isinstance(value, bool)
    text = f" {' '.join(_number_words(context or ''))} "
    for item in items:
        words = _number_words(str(item))
        if not words or f" {' '.join(words)} " not in text:
            return False
    return True


_OPERAND = re.compile(r"\d+(?:\.\d+)?")  # read after drop_thousands_commas
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# a number standing alone, not part of a word, with the thousand/million/billion suffix tables print ("586K")
_PRINTED_NUMBER = re.compile(r"(?<![A-Za-z\d.])(\d+(?:\.\d+)?)\s?([kKmMbB])?(?![A-Za-z])")
_SCALES = {"k": 1e3, "m": 1e6, "b": 1e9}
_SCALE_CONSTANTS = {"1", "2", "10", "100", "1000"}  # a percentage's "* 100", a mean's "/ 2": not read from a paper


def drop_thousands_commas(text: str) -> str:
    """``text`` with the thousands separators papers print ("157,212" -> "157212"); other commas, such as a
    function's ("max(1, 2)"), stay."""
    return _THOUSANDS_COMMA.sub("", text or "")


def operands_in(expression: str, context: str) -> bool:
    """Whether the numbers an arithmetic ``expression`` uses were read from ``context``, compared as numbers
    (thousands separators aside: "157212" is found in "157,212"; "64.9" in "64.90", which a grammar-typed number
    loses; "6" is not found in "16" nor "90" in "R@90"); at least one must be, and small scale constants need not
    be; a number the context writes as a word counts as printed: "8" is read from "eight datasets")."""
    read = [n for n in _OPERAND.findall(drop_thousands_commas(expression)) if n not in _SCALE_CONSTANTS]
    printed = set()
    for number, scale in _PRINTED_NUMBER.findall(drop_thousands_commas(numerals(context))):
        printed.add(float(number))
        if scale:  # "586K" is also 586000, which is how a grammar-typed number writes it
            printed.add(round(float(number) * _SCALES[scale.lower()], 6))
    return bool(read) and all(float(n) in printed or round(float(n), 6) in printed for n in read)


# Marks printed after an author's name on a first page. An affiliation mark is a number, one of these symbols or a
# Greek letter ("Lee1,2", "Levy♡♠", "Loα") and points to an affiliation spelled out below the names; a note mark
# (a star, an envelope) flags equal contribution or the corresponding author. Ingest (author lists) and the
# first-page reader (affiliations, corresponding authors) both read marks from here.
AFFILIATION_SYMBOLS = "†‡§¶♠♣♥♦♡♢⋄◦•▲△▼★☆✝⋆♮♭♯○●■□◇◆"
GREEK_MARKS = "\u0370-\u03ff\u00b5"  # a character-class range: Greek and Coptic, and the micro sign
NOTE_MARKS = "∗*⁎✉"


# a span a question quotes (a paper's title, a phrase of the paper): in double quotes (straight ones may hold curly
# ones: "Humor “Understanding” Benchmarks"), or in single quotes that open after no letter and close before none, so
# "the paper's" and "authors' data" quote nothing and an apostrophe between letters stays inside ('Don't Stop
# Pretraining'); the span is the group "dq", "cq" or "sq" (:func:`quoted`)
QUOTED_SPAN = (r"(?:\"(?P<dq>[^\"]{2,})\"|[\"“](?P<cq>[^\"”]{2,})[\"”]"
               r"|(?<!\w)['‘](?P<sq>(?:[^'‘’]|(?<=\w)['’](?=\w))+?)['’](?!\w))")


def quoted(match: re.Match) -> str:
    """The text inside a :data:`QUOTED_SPAN` match."""
    return match.group("dq") or match.group("cq") or match.group("sq") or ""

"""Filter grammar: examples from neusym.md §1.5, precise errors, Chroma translation, and a seeded fuzz of
1,500 strings built from the grammar's tokens plus mutations: nothing may raise except FilterSyntaxError."""
from __future__ import annotations

import random

import pytest

from evidex.tools.filters import FilterSyntaxError, parse_filter

REC = {
    "pdf_id": "abc-123",
    "page_number": 3,
    "table_name": "chunks",
    "column_name": "text_content",
    "primary_key": "123",
    "bbox": [50, 100, 200, 40],
}
NO_BOX = {**REC, "bbox": None}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("table_name == 'chunks' and column_name == 'text_content'", True),
        ("table_name == 'chunks' and primary_key in ['123', '456']", True),
        ("bbox[0] + bbox[2] <= 250 and bbox[1] + bbox[3] <= 300 and pdf_id == 'abc-123' and page_number == 3", True),
        ("bbox[0] + bbox[2] <= 100", False),
        ("not (page_number > 3 or page_number in [1, 2])", True),
        ("page_number not in [1, 2, 3]", False),
        ("array_length(bbox) == 4 and array_contains(bbox, 100)", True),
        ("array_contains_any(bbox, [1, 2, 40])", True),
        ("array_contains_all(bbox, [50, 41])", False),
        ("pdf_id like 'abc%'", True),
        ("pdf_id like 'a_c-12_'", True),
        ("page_number * 2 ** 2 % 5 == 2", True),
        ("-page_number < 0 && !(page_number != 3) || false", True),
        ("(((page_number >= 3)))", True),
        ("page_number / 0 == 1", False),
        ("PAGE_NUMBER == 3".replace("PAGE_NUMBER", "page_number") + " AND table_name == \"chunks\"", True),
    ],
)
def test_examples_evaluate(text, expected):
    assert parse_filter(text).matches(REC) is expected


def test_missing_box_is_false_not_an_error():
    f = parse_filter("bbox[0] > 10")
    assert f.matches(NO_BOX) is False
    assert parse_filter("not (bbox[0] > 10)").matches(NO_BOX) is True


@pytest.mark.parametrize(
    "text, position, fragment",
    [
        ("page_number = 1", 12, "two equal signs"),
        ("paper_id == 'x'", 0, "use pdf_id"),
        ("page_id == 3", 0, "page_number"),
        ("page_number == ", 15, "ends too early"),
        ("page_number == 1 and", 20, "ends too early"),
        ("bbox == 1", 5, "whole array"),
        ("bbox[7] > 1", 4, "index from 0 to 3"),
        ("2 ** 1000 > 1", 5, "exponent too large"),
        ("page_number", 0, "must be a condition"),
        ("pdf_id > 3", 7, "cannot compare"),
        ("foo(bbox)", 0, "unknown function"),
        ("page_number in 3", 15, "expected '['"),
        ("'unterminated", 0, "unterminated string"),
        ("page_number == 1 $", 17, "unexpected character"),
        ("1 < page_number < 5", 16, "chained comparisons"),
        ("array_contains(bbox)", 0, "takes 2 argument"),
        ("page_number == 1)", 16, "unexpected"),
    ],
)
def test_errors_name_the_position(text, position, fragment):
    with pytest.raises(FilterSyntaxError) as info:
        parse_filter(text)
    assert info.value.position == position, str(info.value)
    assert fragment in str(info.value)
    assert f"position {position}" in str(info.value)


def test_blank_filter_is_none():
    assert parse_filter(None) is None
    assert parse_filter("   ") is None


def test_limits():
    with pytest.raises(FilterSyntaxError, match="too long"):
        parse_filter("page_number == 1 and " * 200 + "true")
    with pytest.raises(FilterSyntaxError, match="nested too deeply"):
        parse_filter("(" * 200 + "page_number == 1" + ")" * 200)
    with pytest.raises(FilterSyntaxError, match="nested too deeply"):
        parse_filter("not " * 300 + "page_number == 1")


def test_chroma_translation_exact_and_partial():
    where, exact = parse_filter("pdf_id == 'a' and page_number >= 2").chroma_where()
    assert exact and where == {"$and": [{"pdf_id": {"$eq": "a"}}, {"page_number": {"$gte": 2}}]}
    where, exact = parse_filter("page_number in [1, 2.0]").chroma_where()
    assert exact and where == {"page_number": {"$in": [1, 2]}}
    where, exact = parse_filter("not (page_number < 2 or pdf_id != 'a')").chroma_where()
    assert exact and where == {"$and": [{"page_number": {"$gte": 2}}, {"pdf_id": {"$eq": "a"}}]}
    where, exact = parse_filter("bbox[0] < 100").chroma_where()
    assert exact and where == {"bbox_0": {"$lt": 100}}
    # arithmetic cannot go to Chroma: keep the translatable conjunct, post-filter the rest
    where, exact = parse_filter("pdf_id == 'a' and bbox[0] + bbox[2] < 100").chroma_where()
    assert not exact and where == {"pdf_id": {"$eq": "a"}}
    # an untranslatable OR branch could match anything: no where clause at all
    where, exact = parse_filter("pdf_id == 'a' or pdf_id like 'b%'").chroma_where()
    assert where is None and not exact
    where, exact = parse_filter("5 > page_number").chroma_where()
    assert exact and where == {"page_number": {"$lt": 5}}


# ------------------------------------------------------------------------------------------------ fuzzing

FIELDS = ["pdf_id", "page_number", "table_name", "column_name", "primary_key", "bbox", "bbox[0]", "bbox[3]", "paper_id"]
VALUES = ["1", "0", "-3", "2.5", "1e3", "'abc-123'", '"chunks"', "true", "false", "[1, 2]", "['a', 'b']", "[]"]
OPS = ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "like", "+", "-", "*", "/", "%", "**"]
LOGIC = ["and", "or", "&&", "||"]
FUNCS = ["array_length(bbox)", "array_contains(bbox, 100)", "array_contains_all(bbox, [1])", "array_contains_any(bbox, [2, 3])"]
JUNK = ["(", ")", "[", "]", ",", "=", "!", "'", '"', "$", "not", "\\", "\x00", "é", "🙂", "bbox[", "9" * 50, " "]


def _gen(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 3 or r < 0.3:
        return f"{rng.choice(FIELDS)} {rng.choice(OPS)} {rng.choice(VALUES)}"
    if r < 0.45:
        return rng.choice(FUNCS) + rng.choice(["", " == 4", " > 1", ""])
    if r < 0.6:
        return f"not ({_gen(rng, depth + 1)})"
    if r < 0.75:
        return f"({_gen(rng, depth + 1)})"
    return f"{_gen(rng, depth + 1)} {rng.choice(LOGIC)} {_gen(rng, depth + 1)}"


def _mutate(rng: random.Random, s: str) -> str:
    for _ in range(rng.randint(1, 3)):
        k = rng.random()
        i = rng.randint(0, len(s))
        if k < 0.3 and s:
            j = min(len(s), i + rng.randint(1, 5))
            s = s[:i] + s[j:]  # delete
        elif k < 0.6:
            s = s[:i] + rng.choice(JUNK) + s[i:]  # insert junk
        elif k < 0.8 and s:
            s = s[:i] + s[i:][::-1]  # reverse a tail
        else:
            s = s + " " + rng.choice(OPS + LOGIC)  # dangling operator
    return s


def test_fuzz_only_filter_syntax_errors():
    rng = random.Random(20241121)
    parsed = errors = 0
    for n in range(1500):
        s = _gen(rng)
        if n % 2:
            s = _mutate(rng, s)
        try:
            f = parse_filter(s)
        except FilterSyntaxError as exc:
            errors += 1
            assert 0 <= exc.position <= len(s)
            continue
        if f is None:
            continue
        parsed += 1
        # a parsed filter never raises when evaluated or translated
        assert f.matches(REC) in (True, False)
        assert f.matches(NO_BOX) in (True, False)
        where, exact = f.chroma_where()
        assert where is None or isinstance(where, dict)
        assert isinstance(exact, bool)
    assert parsed > 100 and errors > 500  # both paths were exercised

"""Answers reshaped to the format asked, content untouched; ambiguous answers left alone."""
from __future__ import annotations

import json

import pytest

from evidex.tools.answer_format import conform

LIST = "Your answer should be a python list of strings."
INT = "Your answer should be a single integer."
FLOAT = "Your answer should be a Python float rounded to 2 decimal places."
BOOL = "Answer true or false."


@pytest.mark.parametrize("answer, fmt, expected", [
    ("Retrieval Enhancement, Aspect Enhancement, Joint Enhancement Transformers", LIST,
     json.dumps(["Retrieval Enhancement", "Aspect Enhancement", "Joint Enhancement Transformers"])),
    ("['a', 'b']", LIST, json.dumps(["a", "b"])),
    ("[8, 32]", "A Python list of two integers.", "[8, 32]"),
    ("BLEU; ROUGE", LIST, json.dumps(["BLEU", "ROUGE"])),
    ("[unclosed", LIST, "[unclosed"),
    ("The model has 12 layers.", INT, "12"),
    ("1,024", INT, "1024"),
    ("12 or 24", INT, "12 or 24"),          # two numbers: ambiguous, unchanged
    ("about k", INT, "about k"),            # no number: unchanged
    ("3.5", INT, "3.5"),                    # not an integer: the evaluator decides
    ("The gap is 2.16 points.", FLOAT, "2.16"),
    ("0.2344", FLOAT, "0.2344"),
    ("Yes.", BOOL, "true"),
    ("no", BOOL, "false"),
    ("LaBSE", "A single string.", "LaBSE"),
    (None, INT, None),
])
def test_conform(answer, fmt, expected):
    assert conform(answer, fmt) == expected


def test_conform_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    conform(f"__import__('pathlib').Path('{marker}').touch()", LIST)
    conform(f"__import__('pathlib').Path('{marker}').touch()", INT)
    assert not marker.exists()


TITLES = ["Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
          "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
          "Attention Is All You Need", "Attention"]
TITLE_FORMAT = "Your answer should be the title of the paper WITHOUT ANY EXPLANATION."


def test_title_formats_are_recognised():
    from evidex.tools.answer_format import asks_for_title

    assert asks_for_title(TITLE_FORMAT)
    assert asks_for_title("Your answer should be a Python list of paper titles.")
    assert not asks_for_title("Your answer should be a single integer.")
    assert not asks_for_title("A single string, the title of the table.")  # a table's title is no paper


@pytest.mark.parametrize("answer, expected", [
    # a dropped colon, other case, a trailing period: the store's spelling
    ("mamba linear-time sequence modeling with selective state spaces.", TITLES[0]),
    # the title inside a sentence: the longest title contained wins ("Attention" is inside too)
    ('The paper is "Attention Is All You Need".', TITLES[2]),
    # a near miss (one word wrong) is still that title
    ("FlashAttention-2: Faster Attention with Better Parallelism and Work Partition", TITLES[1]),
    # a title of no paper in the store is left as written
    ("Retentive Network: A Successor to Transformer for Large Language Models",
     "Retentive Network: A Successor to Transformer for Large Language Models"),
    ("", ""),
    ('["attention is all you need", "Mamba Linear Time Sequence Modeling with Selective State Spaces"]',
     json.dumps([TITLES[2], TITLES[0]])),
])
def test_a_title_answer_is_written_as_the_store_has_it(answer, expected):
    from evidex.tools.answer_format import snap_title

    assert snap_title(answer, TITLES) == expected


def test_a_short_title_inside_a_long_answer_is_not_taken_for_it():
    """"Attention" (9 characters) inside an unrelated answer is no evidence the answer names that paper."""
    from evidex.tools.answer_format import snap_title

    answer = "Sparse attention for long documents"
    assert snap_title(answer, TITLES) == answer

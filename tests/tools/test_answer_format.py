"""Answers reshaped to the format asked, content untouched; ambiguous answers left alone."""
from __future__ import annotations

import json

import pytest

from typing import Any

from evidex.tools.answer_format import answer_text, answer_type, conform

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
    # an in-text citation copied with the answer is dropped (and no longer splits a list or adds a year)
    ("Byte-level BPE (Wang et al., 2020)", "A single string.", "Byte-level BPE"),
    ("BERT (Devlin et al., 2019), RoBERTa (Liu et al. 2019a; Ott, 2020)", LIST, json.dumps(["BERT", "RoBERTa"])),
    ("The encoder has 12 layers (Vaswani et al., 2017).", INT, "12"),
    ("ResNet [14]", "A single string.", "ResNet"),
    ("(Wang et al., 2020)", "A single string.", "(Wang et al., 2020)"),  # nothing else: unchanged
    ("Transformer (base)", "A single string.", "Transformer (base)"),    # no year: no citation
    ("GPT-3 (2020)", "A single string.", "GPT-3 (2020)"),                # a year alone names no source
    ("[1, 2]", "A Python list of integers.", "[1, 2]"),
    (None, INT, None),
])
def test_conform(answer, fmt, expected):
    assert conform(answer, fmt) == expected


# formats as the AirQA sample writes them (../shared/data/airqa/airqa_dev_sample.jsonl), with the type the grammar
# must allow for the gold answer to be writable at all
@pytest.mark.parametrize("fmt, expected", [
    ("Your answer should be a python list of strings, every element of the list is the name of the component.",
     list[str]),
    ("Your answer should be a Python list of two integers [r, alpha], e.g. [8, 32].", list[int]),
    ("Your answer should be a python list of two float, e.g [0.35,0.4]", list[float]),
    ("Your answer should be a Python list of two floats, the first is precision and the second is recall.",
     list[float]),
    # gold ['Reflexion+LDB(GPT-4)', 96.9]: all-float typing ("decimal") forbade the name
    ("Your answer should be a Python List of 2 elements, the first is the combination and the second is the exact "
     "accuracy value, rounded to one decimal places. Note that you should use the same names as in the question.",
     tuple[str, float]),
    # gold ['MAVEN-ERE', 103193]
    ("Your answer should be a python list of two strings, the first element is the dataset name(abbrievation), and "
     "the second element is an integer number.", tuple[str, int]),
    ("Your answer should be a Python list holding a model name and its accuracy as a float.",
     list[str | int | float | bool]),
    # gold ['Beihang University', ['The University of Sydney', ...]]
    ("Your answer should be a Python list of length 2 containing the institution names respectively, e.g., "
     "[\"first\", \"corr\"]. If there are several, use a name list, e.g., [[\"a1\", \"a2\"], [\"c1\"]].", list[Any]),
    ("Your answer should be a Python list of 2 elements, the first is the name of the method, the second is a "
     "python list of strings.", list[Any]),
    ("Your answer should be a Python list. The first element is an integer indicating the total task number. The "
     "second one is a boolean. The fourth one should be a string list storing the class names.", list[Any]),
    # gold {'datasets': [...], ...: True}: typed as the boolean it mentions, no dictionary could be written
    ("Your answer should be a Python dictionary, containing the names of datasets for the first question and a "
     "boolean value for the second question.", dict[str, Any]),
    ("Your answer should be a Python dictionary of entries, each dictionary key is a string, the benchmark name, "
     "and each value an integer.", dict[str, Any]),
    ("Your answer should be a single integer.", int),
    ("Your answer should be a Python bool.", bool),
    ("Answer true or false.", bool),
])
def test_the_answer_type_lets_the_asked_shape_be_written(fmt, expected):
    assert answer_type(fmt) == expected


def test_dictionaries_and_tuples_are_written_as_json():
    assert answer_text(("MAVEN-ERE", 103193)) == '["MAVEN-ERE", 103193]'
    assert answer_text({"L": 24, "H": 1024}) == '{"L": 24, "H": 1024}'
    fmt = "Your answer should be a python dictionary with keys 'L' and 'H'."
    assert json.loads(conform("{'L': 24, 'H': 1024}", fmt)) == {"L": 24, "H": 1024}
    assert conform("L is 24", fmt) == "L is 24"  # not a dictionary: unchanged, the evaluator decides


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


def test_an_answer_that_copies_the_format_s_example_is_recognised():
    """DecompX on the test split: "Your answer should be a Python float, e.g. 0.5." answered 0.5 (gold 0.1). The
    example is compared as a value (0.50 is 0.5; quotes and case aside), and only the example, not any number in
    the format."""
    from evidex.tools.answer_format import copies_example

    floats = "Your answer should be a Python float, e.g. 0.5."
    assert copies_example("0.5", floats) and copies_example("0.50", floats) and not copies_example("0.1", floats)
    venue = "Your answer should be a string, the abbreviation and year, e.g. 'ACL 2023'."
    assert copies_example("ACL 2023", venue) and copies_example("acl  2023", venue)
    assert not copies_example("EMNLP 2024", venue)
    pair = "Your answer should be a Python list of two integers, e.g. [8, 32]."
    assert copies_example("[8, 32]", pair) and not copies_example("[4, 16]", pair)
    assert copies_example("20.3", "A float rounded to 1 decimal place, for example 20.3")
    assert not copies_example("A", "e.g. ['A', 'B', ...].") and not copies_example("", floats)
    assert not copies_example("2", "A single integer, rounded to 2 decimal places.")  # no example given

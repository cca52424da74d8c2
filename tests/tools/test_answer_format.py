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

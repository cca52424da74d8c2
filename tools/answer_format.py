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
from typing import Any

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


def conform(answer: str | None, answer_format: str) -> str | None:
    """``answer`` reshaped to ``answer_format`` when the shape is clear; otherwise unchanged."""
    if answer is None:
        return None
    text = answer.strip()
    fmt = answer_format.lower()
    value = _literal(text) if len(text) < 20_000 else None
    if "list" in fmt:
        if isinstance(value, (list, tuple)):
            return json.dumps(list(value), ensure_ascii=False)
        if text.startswith("[") or not text:
            return text
        items = [s.strip().strip("'\"").strip() for s in re.split(r"\s*[;\n]\s*|,\s+", text)]
        return json.dumps([s for s in items if s], ensure_ascii=False)
    if "integer" in fmt or re.search(r"\bint\b", fmt):
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        numbers = _numbers(text)
        if len(set(numbers)) == 1 and "." not in numbers[0]:
            return numbers[0]
        return text
    if "float" in fmt or "decimal" in fmt:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        numbers = _numbers(text)
        return numbers[0] if len(set(numbers)) == 1 else text
    if "true or false" in fmt or "boolean" in fmt or "yes or no" in fmt:
        word = text.lower().strip(" .!")
        if word in ("true", "yes"):
            return "true"
        if word in ("false", "no"):
            return "false"
    return text

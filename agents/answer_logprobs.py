"""How sure the model was of its JSON answer, read from the reply's token log-probabilities.

A small model that writes an answer has often weighed abstaining, or another answer, and picked by a hair; the
argmax hides that, the probabilities keep it. Everything here reads OpenAI-style ``logprobs`` (the local
llama.cpp server reports them before its grammar masks tokens, which is what is wanted: the model's own lean) and
returns None for a reply without them (hosted models that give none, scripted models).

* :func:`start_probability`: at the first token of a JSON string field's value, the mass of the alternatives
  that begin a given word ("Unanswerable"; the server's top-k alternatives, so a lower bound);
* :func:`value_confidence`: the chosen first token's probability and the mean log-probability of the value's
  tokens;
* :func:`true_probability`: P(true) against P(false) at a JSON boolean field's value.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

MIN_PREFIX = 2  # "U" alone starts too many answers to count as the word


class _Value(NamedTuple):
    tokens: list[dict]  # the reply's tokens from the one holding the value's first character
    cut: int  # characters of the first of them that come before the value
    length: int  # characters of the value (for a string, without its quotes)


def _token_logprobs(message: Any) -> list[dict]:
    meta = getattr(message, "response_metadata", None) or {}
    return list((meta.get("logprobs") or {}).get("content") or [])


def _value(message: Any, field: str, string: bool) -> _Value | None:
    tokens = _token_logprobs(message)
    text = "".join(t.get("token", "") for t in tokens)
    found = re.search(r'"' + re.escape(field) + r'"\s*:\s*' + ('"' if string else ""), text)
    if not found:
        return None
    offset = found.end()
    try:  # where the value ends: decode it from its first character (a string from its opening quote)
        _, end = json.JSONDecoder().raw_decode(text, offset - 1 if string else offset)
    except ValueError:
        end = len(text)
    start = 0
    for i, tok in enumerate(tokens):
        stop = start + len(tok.get("token", ""))
        if stop > offset:
            return _Value(tokens[i:], offset - start, end - offset - (1 if string else 0))
        start = stop
    return None


def _alternatives(tok: dict) -> list[dict]:
    return tok.get("top_logprobs") or [{"token": tok.get("token", ""), "logprob": tok.get("logprob")}]


def _begins(value_start: str, word: str) -> bool:
    head = value_start.strip()
    return len(head) >= MIN_PREFIX and (word.startswith(head) or head.startswith(word))


def start_probability(message: Any, field: str, word: str) -> float | None:
    """Probability (0-1) that the string value of ``field`` begins with ``word``; None when unreadable."""
    value = _value(message, field, string=True)
    if value is None:
        return None
    first = value.tokens[0]  # alternatives share the chosen token's text up to the value (cut)
    return min(1.0, sum(math.exp(a["logprob"]) for a in _alternatives(first)
                        if a.get("logprob") is not None and _begins(a.get("token", "")[value.cut:], word)))


class ValueConfidence(NamedTuple):
    first_token_p: float  # probability of the value's first token as written
    mean_logprob: float  # mean log-probability of the tokens that write the value


def value_confidence(message: Any, field: str) -> ValueConfidence | None:
    """How sure the model was of the string value of ``field`` as written; None when unreadable."""
    value = _value(message, field, string=True)
    if value is None or value.tokens[0].get("logprob") is None:
        return None
    used, seen = [], -value.cut
    for tok in value.tokens:
        if seen >= value.length:
            break
        if tok.get("logprob") is not None:
            used.append(tok["logprob"])
        seen += len(tok.get("token", ""))
    return ValueConfidence(math.exp(value.tokens[0]["logprob"]), sum(used) / len(used))


def true_probability(message: Any, field: str) -> float | None:
    """P(true) / (P(true) + P(false)) at the boolean value of ``field``; None when unreadable or neither is seen."""
    value = _value(message, field, string=False)
    if value is None:
        return None
    mass = {"true": 0.0, "false": 0.0}
    for a in _alternatives(value.tokens[0]):
        word = a.get("token", "")[value.cut:].strip()
        for key in mass:
            if word and key.startswith(word) and a.get("logprob") is not None:
                mass[key] += math.exp(a["logprob"])
    total = mass["true"] + mass["false"]
    return mass["true"] / total if total else None


__all__ = ["ValueConfidence", "start_probability", "true_probability", "value_confidence"]

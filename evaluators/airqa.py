"""AirQA scoring: the 21 evaluation functions of NeuSym-RAG, re-implemented from the spec (shared/specs/neusym.md §3).

Every AirQA question carries ``evaluator = {"eval_func": NAME, "eval_kwargs": {...}}``; the gold answer lives in
``eval_kwargs`` (``gold``, ``reference_answer``, ``scoring_points``, ``formulas``, ...). :func:`evaluate` runs one
question, :func:`score_predictions` joins a prediction file to the gold file by uuid (the original paired them
by position) and averages overall and per tag.

Differences from the original, on purpose:

* predictions are parsed with ``json.loads`` then ``ast.literal_eval``, never ``eval()``;
* questions whose evaluator needs an LLM judge are not scored when no judge is given: they are reported under
  ``needs_judge`` instead of silently counting as 0 or 1;
* fuzzy matching uses ``difflib`` (fuzzywuzzy's pure-Python fallback), so no extra dependency.

Usage::

  python -m evidex.evaluators.airqa --pred result.jsonl --gold airqa_dev_sample.jsonl
  python -m evidex.evaluators.airqa --pred result.jsonl --gold gold.jsonl --out metrics.json --llm openai:gpt-4o-mini

PRED is JSON lines of ``{"uuid": ..., "answer": ...}``; GOLD is AirQA JSON lines (``uuid``, ``tags``,
``evaluator``). Scores are 0-1. Without ``--llm`` the LLM-judged (mostly subjective) questions are listed as
needs_judge and left out of the means. Bad input files exit with code 2.
"""
from __future__ import annotations

import argparse
import ast
import json
import math
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evidex.tools.cli_help import plain_help

# ================================================================================================ results


class EvalResult(BaseModel):
    """One question's outcome. ``score`` is None exactly when ``needs_judge`` is True (no judge was given)."""

    eval_func: str
    score: float | None = None
    needs_judge: bool = False
    error: str | None = None  # an exception inside the evaluator (the score is then 0)


class JudgeRequired(RuntimeError):
    """An LLM-judged eval function was called without a judge model."""


class JudgeReplyError(ValueError):
    """The judge's reply holds no verdict we can read (scores 0, as in the original)."""


# ================================================================================================ parsing
# Fenced blocks: ```lang\n...``` (multi-line, the first line is a language tag) or ```...``` on one line.
_FENCE_BLOCK = re.compile(r"```[ \t]*[\w+\-.#]*[ \t]*\r?\n(.*?)```", re.S)
_FENCE_INLINE = re.compile(r"```(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
# ast.literal_eval builds the whole AST first; a model can emit megabytes, so very long text stays a string.
_LITERAL_EVAL_MAX_CHARS = 200_000
ERROR_PREFIX = "[ERROR]:"


def strip_fences(text: str) -> str:
    """The content of the last fenced code block in ``text`` (models often wrap answers in one), else ``text``."""
    text = text.strip()
    blocks = _FENCE_BLOCK.findall(text) or _FENCE_INLINE.findall(text)
    return blocks[-1].strip() if blocks else text


def parse_prediction(pred: Any) -> Any:
    """A model's answer as a Python value: fences stripped, then JSON, then a Python literal, else the text.

    Never ``eval``: ``literal_eval`` only builds literals (strings, numbers, lists, dicts, ...), so a hostile
    answer such as ``__import__('os').system(...)`` stays an inert string. Non-strings are returned unchanged
    (conjunction elements arrive already parsed)."""
    if not isinstance(pred, str):
        return pred
    text = strip_fences(pred)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) <= _LITERAL_EVAL_MAX_CHARS:
        try:
            with warnings.catch_warnings():  # "invalid escape sequence" noise from LaTeX-ish answers
                warnings.simplefilter("ignore")
                return ast.literal_eval(text)
        except Exception:  # noqa: BLE001 - SyntaxError, ValueError, MemoryError, RecursionError...: not a literal
            pass
    return text


def _as_text(pred: Any) -> str:
    """A prediction as a string for string comparisons: a quoted answer (``"Italian"``) loses its quotes, a fenced
    one its fences; anything that parses to a non-string (``[1, 2]``, ``42``) keeps its original text."""
    if pred is None:
        return ""
    if isinstance(pred, str):
        text = strip_fences(pred)
        value = parse_prediction(text)
        return value if isinstance(value, str) else text
    return str(pred)


_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}


def _to_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = _as_text(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


def _to_int(value: Any) -> int | None:
    """An integer, or None. Integral floats (``4.0``) count; ``4.7`` does not (the original's ``int("4.7")``
    raised; silently truncating to 4 would reward a wrong answer). Booleans are not integers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    text = _as_text(value).strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _to_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(_as_text(value).strip())
    except ValueError:
        return None


# ================================================================================================ fuzzy matching
# fuzzywuzzy's algorithms on difflib (its pure-Python fallback). autojunk is off: difflib's "popular character"
# heuristic for strings of 200+ characters would drop spaces and common letters and under-score long golds.


def _ratio(a: str, b: str) -> int:
    if a == b:  # fuzzywuzzy returns 0 for two empty strings; identical strings are a full match here
        return 100
    if not a or not b:
        return 0
    return round(100 * SequenceMatcher(None, a, b, autojunk=False).ratio())


def _partial_ratio(a: str, b: str) -> int:
    """Best ratio of the shorter string against any same-length window of the longer one (fuzzywuzzy's way:
    windows are anchored at difflib's matching blocks)."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    blocks = SequenceMatcher(None, shorter, longer, autojunk=False).get_matching_blocks()
    best = 0.0
    for s_start, l_start, _ in blocks:
        start = max(0, l_start - s_start)
        window = longer[start:start + len(shorter)]
        r = SequenceMatcher(None, shorter, window, autojunk=False).ratio()
        if r > 0.995:
            return 100
        best = max(best, r)
    return round(100 * best)


def _full_process(s: str) -> str:
    """fuzzywuzzy's default token preprocessing: non-alphanumerics -> spaces, lower-case, trimmed."""
    return re.sub(r"\W+", " ", s, flags=re.UNICODE).lower().strip()


def _token_sort_ratio(a: str, b: str) -> int:
    return _ratio(" ".join(sorted(_full_process(a).split())), " ".join(sorted(_full_process(b).split())))


def _token_set_ratio(a: str, b: str) -> int:
    ta, tb = set(_full_process(a).split()), set(_full_process(b).split())
    if not ta or not tb:
        return 100 if ta == tb else 0
    sect = " ".join(sorted(ta & tb))
    with_a = (sect + " " + " ".join(sorted(ta - tb))).strip()
    with_b = (sect + " " + " ".join(sorted(tb - ta))).strip()
    return max(_ratio(sect, with_a), _ratio(sect, with_b), _ratio(with_a, with_b))


FUZZ_METHODS: dict[str, Callable[[str, str], int]] = {
    "ratio": _ratio, "partial_ratio": _partial_ratio,
    "token_sort_ratio": _token_sort_ratio, "token_set_ratio": _token_set_ratio,
}


def fuzz_score(a: str, b: str, method: str = "ratio") -> int:
    """0-100 similarity with a fuzzywuzzy method name; an unknown name raises (a bad evaluator, not a bad answer)."""
    if method not in FUZZ_METHODS:
        raise ValueError(f"unknown fuzz_method {method!r}; known: {', '.join(FUZZ_METHODS)}")
    return FUZZ_METHODS[method](a, b)


# ================================================================================================ matching core


@dataclass(frozen=True)
class MatchOptions:
    """The keyword arguments shared by the structured and set functions."""

    lowercase: bool = False
    ignore_blank: bool = False
    threshold: float = -1  # > 0: strings match by fuzzy score >= threshold (0-100 scale), else exactly
    fuzz_method: str = "ratio"
    ndigits: int | None = None
    tolerance: float | None = 1e-6
    ignore_order: bool = False

    def norm(self, text: str) -> str:
        text = text.strip()
        if self.lowercase:
            text = text.lower()
        if self.ignore_blank:
            text = re.sub(r"\s+", "", text)
        return text

    def str_eq(self, pred: Any, gold: Any) -> bool:
        p, g = self.norm(_as_text(pred)), self.norm(str(gold))
        if self.threshold is not None and self.threshold > 0:
            return fuzz_score(p, g, self.fuzz_method) >= self.threshold
        return p == g

    def float_eq(self, pred: Any, gold: Any) -> bool:
        p, g = _to_float(pred), float(gold)
        if p is None or math.isnan(p):
            return False
        if self.ndigits is not None:
            p, g = round(p, int(self.ndigits)), round(g, int(self.ndigits))
        return math.isclose(p, g, rel_tol=1e-6 if self.tolerance is None else float(self.tolerance))

    def int_eq(self, pred: Any, gold: Any) -> bool:
        p = _to_int(pred)
        return p is not None and p == int(gold)

    def obj_eq(self, pred: Any, gold: Any) -> bool:
        """Recursive match driven by the gold value's type (the structured-object semantics)."""
        if isinstance(gold, (list, tuple)):
            return self._list_eq(pred, list(gold))
        if isinstance(gold, dict):
            return self._dict_eq(pred, gold)
        if isinstance(gold, bool):  # before int: bool is an int subclass
            return _to_bool(pred) is gold
        if isinstance(gold, int):
            return self.int_eq(pred, gold)
        if isinstance(gold, float):
            return self.float_eq(pred, gold)
        if isinstance(gold, str):
            return self.str_eq(pred, gold)
        return pred == gold

    def _list_eq(self, pred: Any, gold: list) -> bool:
        pred = parse_prediction(pred)
        if isinstance(pred, (set, frozenset)) and self.ignore_order:
            pred = list(pred)
        if not isinstance(pred, (list, tuple)) or len(pred) != len(gold):
            return False
        if not self.ignore_order:
            return all(self.obj_eq(p, g) for p, g in zip(pred, gold))
        # Order-free: a perfect one-to-one matching, not sort-then-compare. Sorting breaks as soon as matching
        # is looser than ==, e.g. "apple" < "Banana" flips under lowercase, and fuzzy or nested elements.
        return max_matching(list(pred), gold, self.obj_eq) == len(gold)

    def _dict_eq(self, pred: Any, gold: dict) -> bool:
        pred = parse_prediction(pred)
        if not isinstance(pred, dict):
            return False

        def key(k: Any) -> Any:
            return self.norm(k) if isinstance(k, str) else k

        p = {key(k): v for k, v in pred.items()}
        g = {key(k): v for k, v in gold.items()}
        return len(p) == len(pred) and set(p) == set(g) and all(self.obj_eq(p[k], g[k]) for k in g)

    def element_eq(self, pred: Any, gold: Any, element_type: str) -> bool:
        if element_type == "str":
            return self.str_eq(pred, gold)
        if element_type == "int":
            return self.int_eq(pred, gold)
        if element_type == "float":
            return self.float_eq(pred, gold)
        return self.obj_eq(pred, gold)


def max_matching(left: Sequence[Any], right: Sequence[Any], eq: Callable[[Any, Any], bool]) -> int:
    """Size of a maximum one-to-one matching between ``left`` and ``right`` under ``eq`` (Kuhn's algorithm; the
    lists are answer-sized, so O(n^3) is nothing)."""
    edges = [[j for j, r in enumerate(right) if eq(item, r)] for item in left]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(left)))


def _as_list(pred: Any) -> list:
    """A list prediction; a lone value counts as a one-element list."""
    value = parse_prediction(pred)
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return [value]


def _set_options(ndigits: int | None, tolerance: float | None, fuzz_method: str, threshold: float,
                 lowercase: bool, ignore_blank: bool) -> MatchOptions:
    return MatchOptions(lowercase=lowercase, ignore_blank=ignore_blank, threshold=threshold,
                        fuzz_method=fuzz_method, ndigits=ndigits, tolerance=tolerance)


# ================================================================================================ match functions
# Every function takes the prediction first and the question's eval_kwargs as keywords; unknown keywords are
# ignored (**_), like the original, so kwarg typos in the data ("nidigits") do not crash a question.


def eval_string_exact_match(pred: Any, gold: str | list[str], lowercase: bool = False, ignore_blank: bool = False,
                            **_: Any) -> float:
    """Strip both, then ``==``; optionally case-folded and with all whitespace removed. A list ``gold`` means
    any of its strings is accepted."""
    opts = MatchOptions(lowercase=lowercase, ignore_blank=ignore_blank)
    golds = gold if isinstance(gold, list) else [gold]
    return float(any(opts.str_eq(pred, g) for g in golds))


def eval_string_fuzzy_match(pred: Any, gold: str | list[str], fuzz_method: str = "ratio", threshold: float = 95,
                            ignore_blank: bool = False, lowercase: bool = False, **_: Any) -> float:
    """fuzzywuzzy-style score (``ratio``, ``partial_ratio``, ``token_sort_ratio``, ``token_set_ratio``) >= threshold."""
    opts = MatchOptions(lowercase=lowercase, ignore_blank=ignore_blank)
    text = opts.norm(_as_text(pred))
    golds = gold if isinstance(gold, list) else [gold]
    return float(any(fuzz_score(text, opts.norm(str(g)), fuzz_method) >= threshold for g in golds))


def eval_bool_exact_match(pred: Any, gold: Any, **_: Any) -> float:
    """true/1/yes/y/t or false/0/no/n/f (any case) against the gold boolean."""
    want = _to_bool(gold)
    if want is None:
        raise ValueError(f"gold {gold!r} is not a boolean")
    return float(_to_bool(pred) is want)


def eval_int_exact_match(pred: Any, gold: Any, **_: Any) -> float:
    """``int(pred) == int(gold)``."""
    return float(MatchOptions().int_eq(pred, gold))


def eval_float_exact_match(pred: Any, gold: Any, ndigits: int | None = None, tolerance: float = 1e-6,
                           **_: Any) -> float:
    """Both rounded to ``ndigits`` when given, then ``math.isclose(rel_tol=tolerance)``."""
    return float(MatchOptions(ndigits=ndigits, tolerance=tolerance).float_eq(pred, gold))


def eval_structured_object_exact_match(pred: Any, gold: Any, ignore_order: bool = False, tolerance: float = 1e-6,
                                       ndigits: int | None = None, lowercase: bool = False,
                                       ignore_blank: bool = False, threshold: float = -1,
                                       fuzz_method: str = "ratio", **_: Any) -> float:
    """Recursive: lists of equal length (any order with ``ignore_order``), dicts with the same keys (lower-cased
    with ``lowercase``), then bool/int/float/str by the gold value's type; strings fuzzy when threshold > 0."""
    opts = MatchOptions(lowercase=lowercase, ignore_blank=ignore_blank, threshold=threshold,
                        fuzz_method=fuzz_method, ndigits=ndigits, tolerance=tolerance, ignore_order=ignore_order)
    return float(opts.obj_eq(parse_prediction(pred), gold))


# ================================================================================================ set functions


def eval_element_included(pred: Any, gold: list, element_type: str = "str", ndigits: int | None = 2,
                          tolerance: float = 1e-6, fuzz_method: str = "ratio", threshold: float = -1,
                          lowercase: bool = False, ignore_blank: bool = False, **_: Any) -> float:
    """The prediction equals one of the gold elements."""
    opts = _set_options(ndigits, tolerance, fuzz_method, threshold, lowercase, ignore_blank)
    value = pred if element_type == "str" else parse_prediction(pred)
    return float(any(opts.element_eq(value, g, element_type) for g in gold))


def eval_element_list_included(pred: Any, gold: list, element_type: str = "str", ndigits: int | None = 2,
                               tolerance: float = 1e-6, fuzz_method: str = "ratio", threshold: float = -1,
                               lowercase: bool = False, ignore_blank: bool = False, **_: Any) -> float:
    """Every predicted element appears in gold (subset). An empty prediction scores 0, not vacuously 1."""
    opts = _set_options(ndigits, tolerance, fuzz_method, threshold, lowercase, ignore_blank)
    items = _as_list(pred)
    return float(bool(items) and all(any(opts.element_eq(p, g, element_type) for g in gold) for p in items))


def eval_element_list_overlap(pred: Any, gold: list, count: int = 1, element_type: str = "str",
                              ndigits: int | None = 2, tolerance: float = 1e-6, fuzz_method: str = "ratio",
                              threshold: float = -1, lowercase: bool = False, ignore_blank: bool = False,
                              **_: Any) -> float:
    """At least ``count`` distinct predicted elements appear in gold. Counted as a one-to-one matching, so
    repeating one right element (or fuzzy variants of it) does not count twice."""
    opts = _set_options(ndigits, tolerance, fuzz_method, threshold, lowercase, ignore_blank)
    matched = max_matching(_as_list(pred), list(gold), lambda p, g: opts.element_eq(p, g, element_type))
    return float(matched >= int(count))


# ================================================================================================ retrieval


def eval_paper_relevance_with_reference_answer(pred: Any, reference_answer: str | list[str],
                                               question: str | None = None, threshold: float = 95,
                                               **_: Any) -> float:
    """Title match, despite the name: ``ratio(pred.lower(), title.lower()) >= threshold`` for any reference
    title. ``question`` is accepted and unused, as in the original."""
    titles = reference_answer if isinstance(reference_answer, list) else [reference_answer]
    text = _as_text(pred).strip().lower()
    return float(any(_ratio(text, str(t).strip().lower()) >= threshold for t in titles))


# ================================================================================================ LLM judges


def _reply_text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, list):  # content blocks: keep the text parts
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                       if isinstance(b, str) or isinstance(b, dict))
    return str(content)


def _ask_judge(llm: Any, prompt: str, **values: Any) -> str:
    if llm is None:
        raise JudgeRequired("this eval function needs an LLM judge (llm=...)")
    from langchain_core.messages import HumanMessage, SystemMessage

    from evidex.agents.prompts import load_prompt, render

    messages = [SystemMessage(content=load_prompt("airqa_judge_system")),
                HumanMessage(content=render(prompt, **values))]
    return _reply_text(llm.invoke(messages))


_VERDICT = re.compile(r"\b(true|false|yes|no)\b", re.I)


def parse_verdict(reply: str) -> bool:
    """True/False from a judge reply: the verdict in the last code block if there is one, else the last
    true/false/yes/no word of the reply (reasoning comes first, the verdict last). Raises if there is none."""
    text = _THINK.sub("", reply)
    blocks = _FENCE_BLOCK.findall(text) or _FENCE_INLINE.findall(text)
    for block in reversed(blocks):
        words = _VERDICT.findall(block)
        if words:
            return words[0].lower() in ("true", "yes")
    words = _VERDICT.findall(text)
    if not words:
        raise JudgeReplyError(f"no True/False verdict in the judge reply: {reply[:200]!r}")
    return words[-1].lower() in ("true", "yes")


def _numbered(items: Iterable[Any]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))


def _order_note(ignore_order: bool) -> str:
    return ("The order in which they appear does not matter." if ignore_order
            else "They must appear in the same order as listed.")


def eval_reference_answer_with_llm(pred: Any, reference_answer: str, question: str, *, llm: Any = None,
                                   **_: Any) -> float:
    """Judge: does the prediction mean the same as the reference answer? (``llm_model``/``temperature`` kwargs
    of the original are ignored: the judge is the model passed in.)"""
    reply = _ask_judge(llm, "airqa_judge_reference", question=question, reference_answer=reference_answer,
                       pred=_as_text(pred))
    return float(parse_verdict(reply))


def eval_candidate_reference_answer_with_llm(pred: Any, candidate_reference_answers: list[str], question: str, *,
                                             llm: Any = None, **_: Any) -> float:
    """Judge: does the prediction match any of the candidate answers?"""
    reply = _ask_judge(llm, "airqa_judge_candidates", question=question,
                       candidates=_numbered(candidate_reference_answers), pred=_as_text(pred))
    return float(parse_verdict(reply))


def eval_scoring_points_with_llm(pred: Any, scoring_points: list[str], question: str, ignore_order: bool = True, *,
                                 llm: Any = None, **_: Any) -> float:
    """Judge: does the prediction mention all scoring points?"""
    reply = _ask_judge(llm, "airqa_judge_scoring_points", question=question, scoring_points=_numbered(scoring_points),
                       order_note=_order_note(ignore_order), pred=_as_text(pred))
    return float(parse_verdict(reply))


def eval_partial_scoring_points_with_llm(pred: Any, scoring_points: list[str], question: str, count: int = 1, *,
                                         llm: Any = None, **_: Any) -> float:
    """Judge: does the prediction mention at least ``count`` of the points? Requires 0 < count < len(points)."""
    if not 0 < int(count) < len(scoring_points):
        raise ValueError(f"count must satisfy 0 < count < {len(scoring_points)} (the number of points), got {count}")
    reply = _ask_judge(llm, "airqa_judge_partial_scoring_points", question=question,
                       scoring_points=_numbered(scoring_points), count=int(count), total=len(scoring_points),
                       pred=_as_text(pred))
    return float(parse_verdict(reply))


def eval_reference_answer_and_scoring_points_with_llm(pred: Any, reference_answer: str, scoring_points: list[str],
                                                      question: str, ignore_order: bool = True, *, llm: Any = None,
                                                      **_: Any) -> float:
    """Judge: same meaning as the reference AND all scoring points mentioned."""
    reply = _ask_judge(llm, "airqa_judge_reference_and_points", question=question, reference_answer=reference_answer,
                       scoring_points=_numbered(scoring_points), order_note=_order_note(ignore_order),
                       pred=_as_text(pred))
    return float(parse_verdict(reply))


def eval_complex_math_formula_with_llm(pred: Any, formulas: str | list[str], question: str, ignore_order: bool = True,
                                       *, llm: Any = None, **_: Any) -> float:
    """Judge: is the predicted LaTeX mathematically equivalent to every gold formula?"""
    golds = formulas if isinstance(formulas, list) else [formulas]
    reply = _ask_judge(llm, "airqa_judge_formula", question=question, formulas=_numbered(golds),
                       order_note=_order_note(ignore_order), pred=_as_text(pred))
    return float(parse_verdict(reply))


_SELECTION = re.compile(r"""["']?selection["']?\s*[:=]\s*["']?(1(?:\.0)?|0\.5|0(?:\.0)?)\b""", re.I)


def eval_m3sciqa(pred: Any, question: str, reference_answer: str, *, llm: Any = None, **_: Any) -> float:
    """Judge with partial credit: ``{"selection": "1" | "0.5" | "0"}`` (the last one in the reply counts)."""
    reply = _THINK.sub("", _ask_judge(llm, "airqa_judge_m3sciqa", question=question,
                                      reference_answer=reference_answer, pred=_as_text(pred)))
    found = _SELECTION.findall(reply)
    if not found:
        raise JudgeReplyError(f"no selection in the judge reply: {reply[:200]!r}")
    return float(found[-1])


_SCIDQA_KEYS = ("relevance", "accuracy", "completeness", "conciseness")


def eval_scidqa(pred: Any, reference_answer: str, question: str, *, llm: Any = None, **_: Any) -> float:
    """Judge rates relevance, accuracy, completeness and conciseness 1-10; the score is their mean / 10 (0.1-1).
    The original extracted the mean with a second LLM call; here the code averages the four numbers."""
    reply = _THINK.sub("", _ask_judge(llm, "airqa_judge_scidqa", question=question,
                                      reference_answer=reference_answer, pred=_as_text(pred)))
    ratings = []
    for key in _SCIDQA_KEYS:
        found = re.findall(rf"""["']?{key}["']?\s*[:=]\s*(\d+(?:\.\d+)?)""", reply, re.I)
        if not found:
            raise JudgeReplyError(f"no {key} rating in the judge reply: {reply[:200]!r}")
        ratings.append(min(10.0, max(1.0, float(found[-1]))))
    return sum(ratings) / len(ratings) / 10


# ================================================================================================ logical


def _sub_score(func: str, pred: Any, kwargs: dict[str, Any], llm: Any) -> float:
    if func not in EVAL_FUNCS:
        raise KeyError(f"unknown eval_func {func!r}")
    if not isinstance(kwargs, dict):
        raise TypeError(f"eval_kwargs for {func} must be a dict, got {type(kwargs).__name__}")
    return EVAL_FUNCS[func](pred, **kwargs, llm=llm)


def _paired(eval_func_list: list[str], eval_kwargs_list: list[dict]) -> list[tuple[str, dict]]:
    if len(eval_func_list) != len(eval_kwargs_list):
        raise ValueError(f"{len(eval_func_list)} eval functions but {len(eval_kwargs_list)} kwargs dicts")
    return list(zip(eval_func_list, eval_kwargs_list))


def eval_conjunction(pred: Any, eval_func_list: list[str], eval_kwargs_list: list[dict], *, llm: Any = None,
                     **_: Any) -> float:
    """The prediction is a list with one element per sub-evaluator; 1 when every sub-score is >= 0.5.
    A prediction that is not such a list scores 0."""
    pairs = _paired(eval_func_list, eval_kwargs_list)
    items = parse_prediction(pred)
    if not isinstance(items, (list, tuple)) or len(items) != len(pairs):
        return 0.0
    for item, (func, kwargs) in zip(items, pairs):
        if _sub_score(func, item, kwargs, llm) < 0.5:
            return 0.0  # later sub-evals (maybe judge calls) cannot change the outcome
    return 1.0


def eval_disjunction(pred: Any, eval_func_list: list[str], eval_kwargs_list: list[dict], *, llm: Any = None,
                     **_: Any) -> float:
    """Alternative evaluators of the same (whole) prediction; 1 when any sub-score is > 0.5."""
    for func, kwargs in _paired(eval_func_list, eval_kwargs_list):
        if _sub_score(func, pred, kwargs, llm) > 0.5:
            return 1.0
    return 0.0


def eval_negation(pred: Any, eval_func: str, eval_kwargs: dict, *, llm: Any = None, **_: Any) -> float:
    """``1 - sub-score`` of the same prediction."""
    return 1.0 - _sub_score(eval_func, pred, eval_kwargs, llm)


# ================================================================================================ registry

EVAL_FUNCS: dict[str, Callable[..., float]] = {f.__name__: f for f in (
    eval_string_exact_match, eval_string_fuzzy_match, eval_bool_exact_match, eval_int_exact_match,
    eval_float_exact_match, eval_structured_object_exact_match,
    eval_element_included, eval_element_list_included, eval_element_list_overlap,
    eval_paper_relevance_with_reference_answer,
    eval_reference_answer_with_llm, eval_candidate_reference_answer_with_llm, eval_scoring_points_with_llm,
    eval_partial_scoring_points_with_llm, eval_reference_answer_and_scoring_points_with_llm,
    eval_complex_math_formula_with_llm,
    eval_conjunction, eval_disjunction, eval_negation,
    eval_m3sciqa, eval_scidqa,
)}
LLM_FUNCS = frozenset({
    "eval_reference_answer_with_llm", "eval_candidate_reference_answer_with_llm", "eval_scoring_points_with_llm",
    "eval_partial_scoring_points_with_llm", "eval_reference_answer_and_scoring_points_with_llm",
    "eval_complex_math_formula_with_llm", "eval_m3sciqa", "eval_scidqa",
})
LOGICAL_FUNCS = frozenset({"eval_conjunction", "eval_disjunction", "eval_negation"})


def requires_judge(evaluator: dict[str, Any]) -> bool:
    """Whether the evaluator tree contains an LLM-judged function. Decided from the evaluator alone, never from
    the prediction, so the set of judge-free questions is the same for every method being compared."""
    try:
        func, kwargs = evaluator["eval_func"], evaluator.get("eval_kwargs") or {}
        if func in LLM_FUNCS:
            return True
        if func in ("eval_conjunction", "eval_disjunction"):
            return any(requires_judge({"eval_func": f, "eval_kwargs": k})
                       for f, k in zip(kwargs.get("eval_func_list", []), kwargs.get("eval_kwargs_list", [])))
        if func == "eval_negation":
            return requires_judge({"eval_func": kwargs.get("eval_func"), "eval_kwargs": kwargs.get("eval_kwargs")})
    except (TypeError, AttributeError, KeyError):
        pass  # a malformed evaluator: evaluate() reports it as an error
    return False


def evaluate(pred: Any, evaluator: dict[str, Any], *, llm: Any = None) -> EvalResult:
    """Score one prediction with its question's evaluator. Never raises: an exception scores 0 with ``error``
    set; without ``llm`` an LLM-judged evaluator gives ``needs_judge=True`` and ``score=None``."""
    name = str(evaluator.get("eval_func")) if isinstance(evaluator, dict) else "?"
    if llm is None and isinstance(evaluator, dict) and requires_judge(evaluator):
        return EvalResult(eval_func=name, needs_judge=True)
    if isinstance(pred, str) and pred.lstrip().startswith(ERROR_PREFIX):
        return EvalResult(eval_func=name, score=0.0)  # the agent failed; no judge call needed to know that
    try:
        if not isinstance(evaluator, dict):
            raise TypeError(f"evaluator must be a dict, got {type(evaluator).__name__}")
        score = _sub_score(evaluator["eval_func"], pred, evaluator.get("eval_kwargs") or {}, llm)
        return EvalResult(eval_func=name, score=float(score))
    except Exception as exc:  # noqa: BLE001 - the contract: any failure scores 0 and is recorded
        return EvalResult(eval_func=name, score=0.0, error=f"{type(exc).__name__}: {exc}")


# ================================================================================================ scoring a run


def score_predictions(preds: list[dict[str, Any]], gold: list[dict[str, Any]], *, llm: Any = None) -> dict[str, Any]:
    """Join predictions to gold questions by ``uuid`` and average.

    Returns ``overall`` (mean 0-1 over scored questions), ``n`` (scored), ``n_gold``, ``per_tag``
    ({tag: {score, n, needs_judge}}; a question counts under each of its tags), ``needs_judge`` (uuids left
    unscored for lack of a judge), ``errors`` ({uuid: message}, scored 0), ``missing`` (gold uuids without a
    prediction, scored 0), ``extra`` (prediction uuids not in gold) and ``scores`` ({uuid: score or None})."""
    answers = {str(p["uuid"]): p.get("answer") for p in preds}
    scores: dict[str, float | None] = {}
    needs_judge: list[str] = []
    errors: dict[str, str] = {}
    missing: list[str] = []
    tag_scores: dict[str, list[float]] = {}
    tag_judge: dict[str, int] = {}
    for question in gold:
        uuid = str(question["uuid"])
        tags = [str(t) for t in question.get("tags") or []]
        if uuid not in answers:
            missing.append(uuid)
            score: float | None = 0.0
        else:
            answer = answers[uuid]
            result = evaluate("" if answer is None else answer, question.get("evaluator") or {}, llm=llm)
            if result.error:
                errors[uuid] = result.error
            if result.needs_judge:
                needs_judge.append(uuid)
            score = result.score
        scores[uuid] = score
        for tag in tags:
            if score is None:
                tag_judge[tag] = tag_judge.get(tag, 0) + 1
                tag_scores.setdefault(tag, [])
            else:
                tag_scores.setdefault(tag, []).append(score)
    scored = [s for s in scores.values() if s is not None]
    per_tag = {tag: {"score": _mean(tag_scores[tag]), "n": len(tag_scores[tag]), "needs_judge": tag_judge.get(tag, 0)}
               for tag in sorted(tag_scores, key=_tag_order)}
    gold_ids = set(scores)
    return {"overall": _mean(scored), "n": len(scored), "n_gold": len(gold), "per_tag": per_tag,
            "needs_judge": needs_judge, "errors": errors, "missing": missing,
            "extra": [u for u in answers if u not in gold_ids], "scores": scores}


# Task type, then capability, then evaluation type (the paper's table order); other tags follow alphabetically.
TAG_ORDER = ("single", "multiple", "retrieval", "comprehensive", "text", "table", "image", "formula", "metadata",
             "objective", "subjective")


def _tag_order(tag: str) -> tuple[int, str]:
    return (TAG_ORDER.index(tag) if tag in TAG_ORDER else len(TAG_ORDER), tag)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# ================================================================================================ CLI


class InputError(ValueError):
    """A bad input file: reported on one line, exit code 2."""


def read_jsonl(path: Path, *, required: Sequence[str]) -> list[dict[str, Any]]:
    """JSON objects, one a line (blank lines skipped), each with the ``required`` keys."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc.strerror if isinstance(exc, OSError) else exc}") from exc
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        absent = [k for k in required if k not in row]
        if absent:
            raise InputError(f"{path}:{number}: missing key(s) {', '.join(absent)}")
        rows.append(row)
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m evidex.evaluators.airqa", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pred", type=Path, required=True, metavar="PRED.jsonl",
                   help='predictions, one JSON object a line: {"uuid": ..., "answer": ...}')
    p.add_argument("--gold", type=Path, required=True, metavar="GOLD.jsonl",
                   help="AirQA questions (JSON lines with uuid, tags and evaluator)")
    p.add_argument("--out", type=Path, metavar="metrics.json", help="also write the metrics as JSON here")
    p.add_argument("--llm", metavar="SPEC",
                   help="judge model for the LLM-judged questions, e.g. openai:gpt-4o-mini, local, "
                        "scripted:replies.json (default: none; those questions are listed as needs_judge)")
    return p.parse_args(argv)


def print_metrics(metrics: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    from evidex.tools.safe_text import terminal_text

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    table = Table(title="AirQA scores (%)")
    table.add_column("subset")
    table.add_column("score", justify="right")
    table.add_column("n scored", justify="right")
    table.add_column("needs judge", justify="right")
    table.add_row("overall", pct(metrics["overall"]), str(metrics["n"]), str(len(metrics["needs_judge"])),
                  style="bold")
    for tag, row in metrics["per_tag"].items():
        table.add_row(terminal_text(tag), pct(row["score"]), str(row["n"]), str(row["needs_judge"]))
    console.print(table)
    console.print(f"questions {metrics['n_gold']} | scored {metrics['n']} | needs_judge {len(metrics['needs_judge'])}"
                  f" | errors {len(metrics['errors'])} | missing {len(metrics['missing'])}"
                  f" | extra predictions {len(metrics['extra'])}")
    for uuid, message in list(metrics["errors"].items())[:10]:
        console.print(f"  error {terminal_text(uuid)}: {terminal_text(message[:200])}")


def main(argv: Sequence[str] | None = None, console: Any = None) -> int:
    from rich.console import Console

    args = parse_args(argv)
    console = console or Console()
    try:
        gold = read_jsonl(args.gold, required=("uuid", "evaluator"))
        preds = read_jsonl(args.pred, required=("uuid", "answer"))
        llm = None
        if args.llm:
            from evidex.agents.models import make_chat_model

            try:
                llm = make_chat_model(args.llm, temperature=0.0, max_tokens=512)
            except Exception as exc:  # noqa: BLE001 - a bad spec or a missing key: one line, exit 2
                raise InputError(f"cannot build the judge {args.llm!r}: {exc}") from exc
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics = score_predictions(preds, gold, llm=llm)
    print_metrics(metrics, console)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

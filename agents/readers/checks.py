"""Whether an answer read from a context may be taken as final without the agent's turns (NeuSym's early answer):
what it rests on must be in the context, and it must not be an answer the question rules out.

- grounded: the numbers its arithmetic used (a gap, a pick by code, an equation with the question's values put
  in), else its value, occur in a context item or, for an equation's values, in the question itself;
- not an item the question excludes ("excluding A" answered "A");
- not a list stuck repeating one item (["X", "Y", "Y", "Y"]): a small model that loses its place repeats the last;
- not the answer format's own example ("e.g. 0.5" answered 0.5);
- for a gap question, not one of the table's own cells: a model that copied a cell instead of subtracting two.
"""
from __future__ import annotations

import json

from evidex.agents.qa.render import render_item
from evidex.tools.answer_format import copies_example
from evidex.tools.qa.cells import cell_value
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in
from evidex.tools.text import operands_in, value_in


def _holds(answer: Answer, text: str) -> bool:
    return operands_in(answer.expression, text) if answer.expression else value_in(answer.value, text)


def _texts(context: Context) -> list[tuple[str, str]]:
    return [(i.source, render_item(i, titles=context.titles)) for i in context.items]


def grounded(answer: Answer, context: Context, given: str = "") -> bool:
    """What ``answer`` rests on (the numbers its arithmetic used, else its value; every item of a list) occurs in
    the context; numbers of its arithmetic may also be ``given`` (the question's own: "when alpha = 2")."""
    text = "\n\n".join(text for _, text in _texts(context))
    return _holds(answer, f"{text}\n\n{given}" if answer.expression and given else text)


def grounding(answer: Answer, context: Context, fallback: int = 3) -> list[str]:
    """The sources of the items that hold what ``answer`` rests on, in context order (a list answer: the items
    holding any of its elements); the first ``fallback`` items when none holds it alone."""
    texts = _texts(context)
    try:
        parts = json.loads(answer.value)
    except (ValueError, TypeError):
        parts = None
    if isinstance(parts, list) and not answer.expression:
        held = [s for s, t in texts if any(value_in(json.dumps(p) if not isinstance(p, str) else p, t)
                                           for p in parts)]
    else:
        held = [s for s, t in texts if _holds(answer, t)]
    return held or [s for s, _ in texts[:fallback]]


def looped_list(value: str) -> bool:
    """A list answer ending in the same text item three times over; repeated numbers can be real values."""
    try:
        items = json.loads(value)
    except (ValueError, TypeError):
        return False
    if not isinstance(items, list) or len(items) < 3:
        return False
    tail = [" ".join(str(i).lower().split()) for i in items[-3:] if isinstance(i, str)]
    return len(tail) == 3 and len(set(tail)) == 1


def printed_cell(answer: Answer, question: Question, context: Context) -> bool:
    """A gap question answered with one of the tables' own values (not computed from two)."""
    if answer.expression or not (question.gap and question.numeric and context.tables):
        return False
    try:
        value = float(answer.value)
    except (TypeError, ValueError):
        return False
    return any(cell_value(c) == value for t in context.tables for r in t.rows for c in r[1:])


def rejects(answer: Answer, question: Question, context: Context) -> str | None:
    """Why ``answer`` cannot be taken as final from ``context`` alone, or None when it can."""
    if not grounded(answer, context, given=question.text if question.applies_formula else ""):
        return "not found in the context"
    if answer.value.strip() and named_in(answer.value, question.excluded):
        return "an item the question excludes"
    if looped_list(answer.value):
        return "a list repeating one item"
    if copies_example(answer.value, question.answer_format):
        return "the answer format's example"
    if printed_cell(answer, question, context):
        return "one table cell given for the gap between two"
    return None


__all__ = ["grounded", "grounding", "looped_list", "printed_cell", "rejects"]

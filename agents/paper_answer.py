"""One constrained answer to a question about papers, from a given context (the single-call baselines, and the
NeuSym agent's answer step when it is set to answer from what it gathered).

The answer's JSON type follows the question's answer format (an integer format gets an integer under the
grammar, a list format a list), and with ``quote`` the model first copies the sentence or table row the answer
rests on: a small model that has to point at its evidence first answers from it instead of from the format's
words.
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

from evidex.agents.answer_logprobs import start_probability, true_probability, value_confidence
from evidex.agents.prompts import load_prompt, render
from evidex.agents.structured import StructuredOutputError, call_structured_reply
from evidex.tools.qa import AnswerConfidence
from evidex.tools.answer_format import answer_kind, answer_text, answer_type
from evidex.tools.table_cells import cell_value, column_candidates, context_tables, gap_cells, looked_up_cell
from evidex.tools.text import drop_thousands_commas

QUOTE_CHARS = 400
EXPRESSION_CHARS = 200
TOP_LOGPROBS = 10  # alternatives read per token (the abstain word's mass is a lower bound)


MAX_CANDIDATES = 40
# "which method has the highest P@R90": a question that picks one item by its extreme value
_SUPERLATIVE = re.compile(r"\b(highest|lowest|largest|smallest|greatest|fewest|maximum|minimum)\b",
                          re.IGNORECASE)


def computes(answer_format: str, computed: bool) -> bool:
    """Whether an answer to this format is written as arithmetic first: numbers only (a list or text is not)."""
    return computed and answer_kind(answer_format) in ("int", "float")


# "how many points higher is A than B", "by how much is ... lower": a question about the gap between two values
_COMPARES = re.compile(r"\bhow (?:many|much) (?:more|fewer|less|higher|lower|points?|percentage points?)\b"
                       r"|\bby how (?:much|many)\b|\bdifference\b|\bminus\b", re.IGNORECASE)


def compares(question: str, answer_format: str, context: str, table_cells: bool) -> bool:
    """Whether a number answer is the gap between two table cells that code reads: the question asks how much
    one value exceeds another, the format is a number and the context prints tables."""
    return (table_cells and answer_kind(answer_format) in ("int", "float") and bool(_COMPARES.search(question))
            and bool(context_tables(context)))


def looked_up(question: str, answer_format: str, context: str, table_cells: bool) -> str | None:
    """The cell a question asks for by its row and column names, when the answer is text ("which fine-tuned model
    is used for the Mathematical Reasoning task with the Mistral-7b pre-trained model" in the table it names),
    as code finds it (:func:`tools.table_cells.looked_up_cell`); None when the answer is not text or no single
    cell is found. Numbers are left to the model: a number question names cells in more ways than code reads. A
    superlative question ("which baseline achieves the highest Passage EM") picks a row by its values, not by its
    name (:func:`ranked_pick`), and a row the question excludes ("excluding COS") is never the one it asks for:
    the lookup had answered COS's 88.89 for "which baseline, i.e. excluding COS, ..."."""
    if not table_cells or answer_type(answer_format) is not str or _SUPERLATIVE.search(question):
        return None
    excluded = excluded_text(question)
    found = looked_up_cell(context_tables(context), question.replace(excluded, " ") if excluded else question)
    return found[2] if found else None


def printed_gap(question: str, answer_format: str, context: str, answer: str, table_cells: bool) -> bool:
    """Whether the answer to a gap question ("how much higher is A than B") is one of the compared table's own
    values: the model copied a cell instead of subtracting two (White-Box Table 6: 55.81, the larger ASR itself),
    which the early answer must not take as grounded."""
    if not compares(question, answer_format, context, table_cells):
        return False
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return False
    return any(cell_value(c) == value for t in context_tables(context) for r in t.rows for c in r[1:])


def ranks(question: str, answer_format: str, ranked: bool) -> bool:
    """Whether the answer is picked by code from candidates the model lists: one name, chosen by the highest or
    lowest value, which a small model reads off a table badly (it names a row near the top, not the maximum)."""
    return ranked and answer_kind(answer_format) == "str" and bool(_SUPERLATIVE.search(question))


class Candidate(BaseModel):
    name: str = Field(max_length=200, description="The item's name exactly as printed in the context.")
    # a number under the grammar: asked for a string, the 1.5B model copied the column's name ("P@R90")
    value: float = Field(description="Its number in the column or measure the question names.")


@lru_cache(maxsize=64)
def answer_schema(answer_format: str, typed: bool = True, quote: bool = False,
                  computed: bool = False, ranked: bool = False) -> type[BaseModel]:
    """``{"quote"?: str, "expression"?: str, "direction"?, "candidates"?, "answer": <type the format asks
    for>}``; untyped, the answer is a string. ``expression`` (numeric formats, with ``computed``) comes before the
    answer, so the grammar has the model write the arithmetic before the number; ``direction`` and ``candidates``
    (with ``ranked``) likewise come before the name they decide."""
    fields: dict[str, Any] = {}
    if quote:
        fields["quote"] = (str, Field(max_length=QUOTE_CHARS, description="The sentence or table row from the "
                                                                          "context that gives the answer, copied."))
    if computes(answer_format, computed):
        fields["expression"] = (str, Field(max_length=EXPRESSION_CHARS, description="The arithmetic over numbers "
                                                                                   "of the context, or the number."))
    if ranked:
        fields["direction"] = (Literal["highest", "lowest"], Field(description="Which extreme the question asks."))
        # at least two under the grammar: left free, the local model listed only the row it had already chosen
        fields["candidates"] = (list[Candidate], Field(min_length=2, max_length=MAX_CANDIDATES,
                                                       description="Every item the question compares."))
    kind = answer_type(answer_format) if typed else str
    spec = Field(max_length=2000, description="Exactly in the requested answer format.") if kind is str else Field(
        description="Exactly in the requested answer format.")
    fields["answer"] = (kind, spec)
    return create_model("Answer", **fields)


class ContextAnswer(NamedTuple):
    answer: str  # as the text an evaluator reads
    quote: str  # what the model copied as its evidence ("" without ``quote``)
    confidence: AnswerConfidence | None = None  # with ``abstain_word`` or ``check``: how sure the model was
    expression: str = ""  # the arithmetic the answer is the result of (``computed``), or the max/min it was picked
    # by (``ranked``); "" when none was used


def answer_from_context(llm: BaseChatModel, question: str, answer_format: str, scope: str, context: str, *,
                        typed: bool = True, quote: bool = False, max_tokens: int = 700,
                        name: str = "answer", abstain_word: str | None = None,
                        check: bool = False, question_last: bool = False,
                        computed: bool = False, ranked: bool = False, table_cells: bool = False) -> ContextAnswer:
    """The model's answer to ``question`` from ``context`` (and, with ``quote``, the evidence it copied).

    With ``abstain_word`` (e.g. "Unanswerable") and a model that reports log-probabilities, also how sure it was of
    a string answer: its first token's probability, its mean log-probability and how likely it was to begin with
    that word instead. With ``check``, one more short call in the same conversation (the server reuses the cached
    prompt) asks whether the context answers the question, read as P(true). ``question_last`` asks the question
    again after the context (the quote prompt always does). With ``computed``, a numeric answer is written as
    arithmetic first and the calculator's result is the answer (:func:`computed_value`). With ``ranked``, a
    question that picks one item by its highest or lowest value has the model list the items with their values,
    and the answer is the one code finds at that extreme (:func:`ranked_pick`). With ``table_cells``, a number
    question about the gap between two values of a table in the context is answered by code when it finds the
    two cells from the question's words (:func:`cell_gap`), and a text question asking for one cell by its row
    and column names by the cell code finds (:func:`looked_up`), without a model call unless a confidence is
    asked for; else as without it."""
    gap = cell_gap(question, context) if compares(question, answer_format, context, table_cells) else None
    by_code = computed_value(gap, answer_format) if gap else None  # None: a fraction where a whole number is asked
    if by_code is not None and not (abstain_word or check):
        return ContextAnswer(by_code, "", None, gap)
    cell = looked_up(question, answer_format, context, table_cells)
    if cell is not None and not (abstain_word or check):
        return ContextAnswer(cell, "", None)
    ranking = ranks(question, answer_format, ranked)
    rows = table_candidates(question, context) if ranking else []  # read once: the model's list is the fallback
    # the rows and the direction both read by code: the model's list and its direction would not be used
    direction = asked_direction(question) if rows else None
    picked = ranked_pick(direction, rows, question) if direction else None
    if picked is not None and not (abstain_word or check):
        return ContextAnswer(picked[0], "", None, picked[1])
    template = "qa_answer_quote" if quote else "qa_answer_question_last" if question_last else "qa_answer"
    body = render(template, question=question, answer_format=answer_format,
                  scope=scope, context=context or "(none)")
    computing = computes(answer_format, computed)
    if computing:
        body += "\n" + load_prompt("qa_answer_computed")
    if ranking:
        body += "\n" + load_prompt("qa_answer_ranked")
    messages = [SystemMessage(content=load_prompt("qa_system")), HumanMessage(content=body)]
    schema = answer_schema(answer_format, typed, quote, computing, ranking)
    out, reply = call_structured_reply(llm, schema, messages,
                                       name=name, max_tokens=max_tokens,
                                       top_logprobs=TOP_LOGPROBS if abstain_word else 0)
    confidence = None
    if abstain_word or check:
        sure = value_confidence(reply, "answer") if abstain_word else None
        confidence = AnswerConfidence(
            first_token_p=sure.first_token_p if sure else None, mean_logprob=sure.mean_logprob if sure else None,
            abstain_p=start_probability(reply, "answer", abstain_word) if abstain_word else None,
            check_p=answer_check(llm, messages, reply, name=f"{name}_check") if check else None)
    picked = ranked_pick(out.direction, rows or out.candidates, question) if ranking else None
    if picked is not None:
        return ContextAnswer(picked[0], getattr(out, "quote", ""), confidence, picked[1])
    if by_code is not None:
        return ContextAnswer(by_code, getattr(out, "quote", ""), confidence, gap)
    if cell is not None:
        return ContextAnswer(cell, getattr(out, "quote", ""), confidence)
    expression = getattr(out, "expression", "").strip()
    value = computed_value(expression, answer_format) if expression else None
    if value is None:
        return ContextAnswer(answer_text(out.answer), getattr(out, "quote", ""), confidence)
    return ContextAnswer(value, getattr(out, "quote", ""), confidence, expression)


def cell_gap(question: str, context: str) -> str | None:
    """``"45.41 - 37.53"``: the two cells the question compares, as code finds them in the table it names
    (:func:`tools.table_cells.gap_cells`); larger first, since "how much higher/lower/more" asks for the size of
    the gap, but the asked one first after "minus" (a sign the question may want); None when no pair is found
    for sure."""
    found = gap_cells(context_tables(context), question)
    if found is None:
        return None
    asked, other = found
    if not _MINUS.search(question) and asked.value < other.value:
        asked, other = other, asked
    return f"{_plain(asked.value)} - {_plain(other.value)}"


_MINUS = re.compile(r"\bminus\b", re.IGNORECASE)


def _plain(x: float) -> str:
    return f"{x:.10g}"


def computed_value(expression: str, answer_format: str) -> str | None:
    """The answer an arithmetic ``expression`` comes to, as the format's number (an integer format gets a whole
    number), by the calculator (never ``eval``); None when it is not arithmetic or its result is not a number
    of that kind."""
    from evidex.tools.calc import CalcError, calculate, format_result

    try:
        value = calculate(drop_thousands_commas(expression))  # "157,212" as papers print it
    except (CalcError, ArithmeticError, ValueError, TypeError):
        return None
    if answer_kind(answer_format) == "int":
        if float(value) != round(float(value)):
            return None  # a fraction where a whole number is asked: the model's own answer stands
        return str(int(round(float(value))))
    return format_result(value)


_HIGH = {"highest", "largest", "greatest", "maximum"}


def asked_direction(question: str) -> str | None:
    """"highest" or "lowest", as the question's one kind of superlative word says; None when it says both."""
    said = {w.lower() for w in _SUPERLATIVE.findall(question)}
    kinds = {"highest" if w in _HIGH else "lowest" for w in said}
    return kinds.pop() if len(kinds) == 1 else None


def table_candidates(question: str, context: str) -> list[Candidate]:
    """The rows of the table the question names, with their values under the column it names, read by code
    (:func:`evidex.tools.table_cells.column_candidates`); empty when that is not clear, and the model's own list
    stands. The 1.5B model listed two of eight rows, or copied the numbers of another column."""
    return [Candidate(name=name[:200], value=value) for name, value in column_candidates(context_tables(context), question)]


def ranked_pick(direction: str, candidates: list[Candidate], question: str = "") -> tuple[str, str] | None:
    """The name of the candidate with the highest (or lowest) value, and the ``max(...)``/``min(...)`` over the
    values it was picked from (the numbers an early answer is grounded on and cites the rows of); candidates the
    question excludes ("which baseline (i.e. excluding ERRA)") are left out, as the model often keeps them. None
    when fewer than two named candidates remain (the model's own answer then stands)."""
    excluded = excluded_text(question)
    valued = [(c.name.strip(), c.value) for c in candidates
              if c.name.strip() and math.isfinite(c.value) and not _named_in(c.name, excluded)]
    if len(valued) < 2:
        return None
    pick = max if direction == "highest" else min
    name, _ = pick(valued, key=lambda v: v[1])  # the first listed wins a tie
    from evidex.tools.calc import format_result

    # whole numbers as a paper prints them (1293247, not 1293247.0, which the operand check would not find)
    return _without_citation(name), f"{pick.__name__}({', '.join(format_result(v) for _, v in valued)})"


# a row label's trailing reference: "ALTI (Ferrando et al., 2022)", "GlobEnc [12]"
_CITATION = re.compile(r"\s*(?:\([^()]*(?:et al\.|\b(?:19|20)\d{2}\b)[^()]*\)|\[\d+(?:\s*[,\u2013-]\s*\d+)*\])\s*$")


def _without_citation(name: str) -> str:
    """An item's name without the reference a table prints after it (the name is what is asked; a name that is
    only a reference stays as it is)."""
    return _CITATION.sub("", name).strip() or name


_EXCLUDING = re.compile(r"\b(?:excluding|except(?: for)?|other than|apart from|not counting)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"\?|\b(?:which|what|who)\b", re.IGNORECASE)


def excluded_text(question: str) -> str:
    """The part of ``question`` that names what it excludes: from "excluding" (or "except", "other than" ...)
    to the question word after it, the end of the sentence, or the bracket it stands in ("(i.e. excluding ERRA)");
    "" when it excludes nothing."""
    found = _EXCLUDING.search(question or "")
    if not found:
        return ""
    depth, start = 0, found.end()
    for i in range(start, len(question)):
        ch = question[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return question[start:i]
            depth -= 1
        elif depth == 0 and _CLAUSE_END.match(question, i) and (ch == "?" or not question[i - 1].isalnum()):
            return question[start:i]
    return question[start:]


def excluded_answer(answer: str, question: str) -> bool:
    """Whether ``answer`` is an item ``question`` rules out ("excluding G-EVAL-3.5, G-EVAL-4 ..." answered
    "G-EVAL-4"): such an answer is never right, however well the context holds it."""
    return _named_in(answer, excluded_text(question)) if answer.strip() else False


def looped_list(answer: str) -> bool:
    """Whether a list answer ends in the same text item three times over (["GSM8K", "AQuA", "AQuA", "AQuA",
    "AQuA"]): a small model that loses its place in a list repeats the last item until the list is full, and the
    context holds that item, so the answer would pass as found there. Repeated numbers can be real values."""
    try:
        items = json.loads(answer)
    except (ValueError, TypeError):
        return False
    if not isinstance(items, list) or len(items) < 3:
        return False
    tail = [" ".join(str(i).lower().split()) for i in items[-3:] if isinstance(i, str)]
    return len(tail) == 3 and len(set(tail)) == 1


def _named_in(name: str, text: str) -> bool:
    """Whether ``name`` is written in ``text`` as a whole item ("G-EVAL-4" in "G-EVAL-3.5, G-EVAL-4 and ...",
    but "G-EVAL" is not, being only the start of "G-EVAL-4")."""
    if not text:
        return False
    item = re.escape(" ".join(name.lower().split()))
    return re.search(rf"(?:^|[\s(,;]){item}(?=$|[\s),;.])", " ".join(text.lower().split())) is not None


class _Answered(BaseModel):
    answered: bool


def answer_check(llm: BaseChatModel, messages: list, reply: AIMessage, *, name: str) -> float | None:
    """P(true) that the context answers the question, asked after ``reply`` in the same conversation; None when
    the model reports no log-probabilities or its reply is unreadable (a check is advice, never an item error)."""
    asked = messages + [AIMessage(content=str(reply.content)), HumanMessage(content=render("qa_answer_check"))]
    try:
        _, checked = call_structured_reply(llm, _Answered, asked, name=name, max_tokens=16, repair=False,
                                           top_logprobs=TOP_LOGPROBS)
    except StructuredOutputError:
        return None
    return true_probability(checked, "answered")


__all__ = ["Candidate", "ContextAnswer", "answer_check", "answer_from_context", "answer_kind", "answer_schema",
           "computed_value", "computes", "excluded_answer", "excluded_text", "looked_up", "looped_list", "ranked_pick",
           "ranks", "asked_direction", "table_candidates"]

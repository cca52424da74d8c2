"""``model``: the chat model answers from the context, in the type the answer format asks for.

Every question shape; it is the last reader in the list. The reply is one JSON object decoded under a grammar, so
its ``answer`` has the format's type (an integer format gets an integer, a list format a list). For a name picked by
an extreme value ("which method has the highest F1") the model first lists the candidates with their values and the
extreme they ask for, and code picks the answer from them (or from the table's own rows when code could read them,
or its columns in the one row the question names):
a small model names a row near the top, not the maximum. For a number asked as the gap between two values ("how many
more runs does A report than B"), as how many times one is the other ("how many times more parameters does A have
than B") or as a total of values stated apart ("the total number of datasets across the two papers") the model first
copies the values and code subtracts, divides or adds them: a small model that reads both right still subtracts
wrong, and for a total gave one paper's number. For a number asked as the value an equation takes on values the
question gives ("what score does Equation 1 give when alpha = 2") the model writes the equation with the values put
in as one arithmetic expression, and code computes it (:func:`tools.calc.calculate`): a small model writes the
expression right more often than it works it out. The grammar admits numbers, signs and the calculator's names in
it, no other letter: left free, the model copied the equation's symbols, which nothing can compute. For a count
("how many triggers are inserted ...") a number the context prints before nothing the question counts is replaced by
the one it binds to the counted noun (:func:`tools.qa.bound.rebound`): a small model reading the right sentence
takes its neighbouring number.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Callable, Literal, NamedTuple

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

from evidex.agents.prompts import load_prompt, render
from evidex.agents.qa.render import paper_aliases, render_context, scope_line
from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.agents.structured import call_structured
from evidex.tools.answer_format import answer_text, answer_type, asks_for_title, title_key
from evidex.tools.calc import CalcError, calculate, expression_pattern, format_result, pattern_chars
from evidex.tools.paperstore import Passage
from evidex.tools.qa.bound import paper_count, rebound
from evidex.tools.qa.cells import column_candidates, row_candidates
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import Question, named_in

MAX_CANDIDATES = 40
MAX_CHOICES = 4  # papers a question may name and ask which of them (more: a retrieval question)
EXPRESSION_PARTS = 150  # numbers, signs and function names of the formula's expression
MAX_ANSWER_CHARS = 2000  # an answer's cap when the call has no token budget
CHARS_PER_TOKEN = 3  # at least this many characters a token (English averages about 4), so a capped string fits
REPLY_OVERHEAD_TOKENS = 16  # the reply's key, quotes and braces around the answer


def answer_chars(max_tokens: int | None) -> int:
    """The longest answer string that still fits a reply of ``max_tokens``: the grammar closes the string at this
    cap, so a long answer ends cut short instead of the reply being cut off mid-JSON (which fails the call)."""
    if not max_tokens:
        return MAX_ANSWER_CHARS
    return max(16, min(MAX_ANSWER_CHARS, CHARS_PER_TOKEN * (max_tokens - REPLY_OVERHEAD_TOKENS)))


class Candidate(BaseModel):
    name: str = Field(max_length=200, description="The item's name exactly as printed in the context.")
    # a number under the grammar: asked for a string, the 1.5B model copied the column's name
    value: float = Field(description="Its number in the column or measure the question names.")


class Operand(BaseModel):
    name: str = Field(max_length=200, description="What the value is: its item, row or paper, as the context says.")
    value: float = Field(description="The number, copied from the context.")


# a row label's trailing reference: "Method (Author et al., 2022)", "Method [12]"
_CITATION = re.compile(r"\s*(?:\([^()]*(?:et al\.|\b(?:19|20)\d{2}\b)[^()]*\)|\[\d+(?:\s*[,\u2013-]\s*\d+)*\])\s*$")


def _without_citation(name: str) -> str:
    """An item's name without the reference a table prints after it (a name that is only a reference stays)."""
    return _CITATION.sub("", name).strip() or name


def ranked_pick(direction: str, candidates: list[Candidate], question: Question) -> tuple[str, str] | None:
    """The name of the candidate with the highest (or lowest) value, and the ``max(...)``/``min(...)`` over the
    values it was picked from; candidates the question excludes are left out. None when fewer than two named
    candidates remain."""
    valued = [(c.name.strip(), c.value) for c in candidates
              if c.name.strip() and math.isfinite(c.value) and not named_in(c.name, question.excluded)]
    if len(valued) < 2:
        return None
    pick = max if direction == "highest" else min
    name, _ = pick(valued, key=lambda v: v[1])  # the first listed wins a tie
    # whole numbers as a paper prints them (1293247, not 1293247.0, which the operand check would not find)
    return _without_citation(name), f"{pick.__name__}({', '.join(format_result(v) for _, v in valued)})"


def table_candidates(question: Question, context: Context) -> list[Candidate]:
    """The rows of the named table with their values under the column the question names, read by code
    (:func:`tools.qa.cells.column_candidates`), or, when no column is named, the columns with their values in the
    one row it names (:func:`tools.qa.cells.row_candidates`); empty when neither is clear."""
    found = column_candidates(context.tables, question) or row_candidates(context.tables, question)
    return [Candidate(name=name[:200], value=value) for name, value in found]


def _finite(compared: list[Operand], count: int | None = None) -> list[float] | None:
    values = [c.value for c in compared]
    if not values or (count is not None and len(values) != count) or not all(map(math.isfinite, values)):
        return None
    return values


def _quotient(a: float, b: float) -> tuple[str, str] | None:
    """``a / b`` and the expression it is; None when ``b`` is 0 or they are one number (then the model did not
    tell the two apart)."""
    if b == 0 or a == b:
        return None
    return format_result(round(a / b, 9)), f"{format_result(a)} / {format_result(b)}"


def times(compared: list[Operand]) -> tuple[str, str] | None:
    """How many times the larger value is the smaller: "how many times more A than B" is at least 1 in whichever
    order the model copied them."""
    values = _finite(compared, 2)
    return None if values is None else _quotient(max(values), min(values))


def ratio(compared: list[Operand]) -> tuple[str, str] | None:
    """The first value over the second (:func:`_quotient`)."""
    values = _finite(compared, 2)
    return None if values is None else _quotient(*values)


def total(compared: list[Operand]) -> tuple[str, str] | None:
    """The sum of the values and the ``a + b + ...`` it is."""
    if (values := _finite(compared)) is None:
        return None
    return format_result(round(sum(values), 9)), " + ".join(format_result(v) for v in values)


def difference(compared: list[Operand]) -> tuple[str, str] | None:
    """The absolute difference of the two compared values and the ``abs(a - b)`` it is, or None when they are the
    same number (then the model did not tell the two apart)."""
    if (values := _finite(compared, 2)) is None or values[0] == values[1]:
        return None
    a, b = values
    return format_result(round(abs(a - b), 9)), f"abs({format_result(a)} - {format_result(b)})"


def put_in(expression: str, values: dict[str, float]) -> str:
    """``expression`` with the symbols the question set to numbers replaced by them ("l_a = 2" puts 2 for "l_a" or
    "la"), longest symbol first, each only where it stands as a whole name."""
    for symbol in sorted(values, key=len, reverse=True):
        number = f"({format_result(values[symbol])})"
        for form in dict.fromkeys((symbol, symbol.replace("_", ""), re.sub(r"[^\w\u0370-\u03ff]", "", symbol))):
            if form:
                expression = re.sub(rf"(?<![\w.]){re.escape(form)}(?![\w(\[])", lambda _: number, expression)
    return expression


def computed(expression: str, kind: str, values: dict[str, float] | None = None) -> tuple[str, str] | None:
    """The value of the model's arithmetic ``expression``, printed as a paper prints numbers, and the expression it
    is the value of; None when it is no valid expression or, for an integer answer, not a whole number (then the
    model's own answer stands). Symbols the model left in are given the numbers the question set them to
    (``values``: "x = 9"), and the expression returned has them put in."""
    try:
        value = float(calculate(expression))
    except CalcError:
        if not values:
            return None
        expression = put_in(expression, values)
        try:
            value = float(calculate(expression))
        except CalcError:
            return None
    if kind == "int":
        return (str(round(value)), expression) if abs(value - round(value)) < 1e-6 else None
    return format_result(round(value, 9)), expression


def ranks(question: Question) -> bool:
    """A name picked by an extreme value."""
    return question.kind == "str" and question.says_superlative


class Arithmetic(NamedTuple):
    values: str  # what the model lists: the schema's description of ``compared``
    most: int  # at most this many values
    prompt: str  # the prompt added after the answer prompt
    apply: Callable[[list[Operand]], tuple[str, str] | None]  # the value and the expression it is, or None
    # a paper may print the result itself before the counted noun ("fall 30 points behind"), which the count
    # binding then answers; no paper prints a total or a quotient of values it states apart
    printed: bool = False


# the arithmetic a number is asked as (Question.arithmetic): the model copies the values, code does the sum
ARITHMETIC = {
    "difference": Arithmetic("The two values the question asks the gap of.", 2, "qa_answer_gap", difference,
                             printed=True),
    "times": Arithmetic("The two values the question compares.", 2, "qa_answer_times", times),
    "ratio": Arithmetic("The two values the question compares, in the order it names them.", 2, "qa_answer_ratio",
                        ratio),
    "sum": Arithmetic("Every value the question asks the total of.", 8, "qa_answer_sum", total),
}


def paper_named(name: str, context: Context) -> str | None:
    """The id of the one paper of ``context`` an operand's ``name`` names: its title (or a title it is part of, or
    that is part of it, word for word: "MUST" is not part of "MUSTIE: ..."), or the alias the prompt calls it by
    ("paper 2"); None when it names none or several."""
    key = title_key(name)
    if not key:
        return None
    named = {pid for pid, alias in paper_aliases(context).items() if title_key(alias) == key}
    named |= {p.paper_id for p in context.papers
              if p.title and (f" {key} " in f" {title_key(p.title)} " or f" {title_key(p.title)} " in f" {key} ")}
    return next(iter(named)) if len(named) == 1 else None


def paper_counts(q: Question, context: Context, compared: list[Operand]) -> list[Operand]:
    """``compared`` with each value copied for one of the question's papers that its paper's passages do not print
    as a count of what the question counts replaced by the one such count they do print, or the one whose clause
    says most of what the question says (:func:`tools.qa.bound.paper_count`): asked the total of "the law school students recruited in A and the
    annotators of B", the model took A's "five annotators" for both papers where B's passages print "three
    annotators". The values of a question about one paper, or counting nothing, stay."""
    if len(set(q.papers)) < 2 or not q.counts_of:
        return compared
    out = []
    for c in compared:
        paper = paper_named(c.name, context)
        mine = [i for i in context.items if isinstance(i, Passage) and i.paper_id == paper] if paper else []
        count = paper_count(c.value, mine, q) if mine else None
        out.append(c if count is None else c.model_copy(update={"value": float(count)}))
    return out


def paper_choices(q: Question, context: Context) -> tuple[str, ...]:
    """The titles a question that asks which of its two to :data:`MAX_CHOICES` named papers answers with one of
    ("which of the two papers reports the smaller value?"): the papers' titles as the context's metadata rows write
    them; empty for any other question, or when a paper's title is not in the context. Left free, the small model
    answered such a question with the name of the thing compared ("Prompt Pruned Ratio")."""
    if not (2 <= len(q.papers) <= MAX_CHOICES and q.kind == "str" and asks_for_title(q.answer_format)):
        return ()
    names = {p.paper_id: p.title for p in context.papers if p.title}
    return tuple(names[p] for p in q.papers) if all(p in names for p in q.papers) else ()


@lru_cache(maxsize=64)
def answer_schema(answer_format: str, ranked: bool = False, max_chars: int = MAX_ANSWER_CHARS,
                  arithmetic: str | None = None, formula: bool = False, fewest: int = 2,
                  choices: tuple[str, ...] = ()) -> type[BaseModel]:
    """``{"expression"?, "compared"?, "direction"?, "candidates"?, "answer": <type the format asks for>}``: with
    ``ranked`` the direction and the candidates come before the name they decide, with ``arithmetic`` (an
    :data:`ARITHMETIC` name) the values it is done on before its result (at least ``fewest`` for a sum), with
    ``formula`` the equation with the question's values put in before its value, so the grammar has the model write
    them first. A text answer is capped at ``max_chars`` (:func:`answer_chars` of the call's token budget); with
    ``choices`` (:func:`paper_choices`) the answer is one of them."""
    fields: dict[str, Any] = {}
    if formula:
        # the pattern goes to the grammar only: a model decoding without one may still leave a symbol the question
        # gives the number of (put in by code, :func:`put_in`)
        fields["expression"] = (str, Field(min_length=1, max_length=pattern_chars(EXPRESSION_PARTS),
                                           json_schema_extra={"pattern": expression_pattern(EXPRESSION_PARTS)},
                                           description="The equation with the values put in, as one arithmetic "
                                                       "expression."))
    if arithmetic:
        spec = ARITHMETIC[arithmetic]
        fields["compared"] = (list[Operand], Field(min_length=min(fewest, spec.most), max_length=spec.most,
                                                   description=spec.values))
    if ranked:
        fields["direction"] = (Literal["highest", "lowest"], Field(description="Which extreme the question asks."))
        # at least two under the grammar: left free, the local model listed only the row it had already chosen
        fields["candidates"] = (list[Candidate], Field(min_length=2, max_length=MAX_CANDIDATES,
                                                       description="Every item the question compares."))
    kind = Literal[choices] if choices else answer_type(answer_format)
    spec = Field(max_length=max_chars, description="Exactly in the requested answer format.") if kind is str else Field(
        description="Exactly in the requested answer format.")
    fields["answer"] = (kind, spec)
    return create_model("Answer", **fields)


class ModelReader:
    name = "model"

    def applies(self, question: Question, context: Context) -> bool:
        return True

    def read(self, request: ReadRequest) -> Answer | None:
        q = request.question
        ranking, arithmetic, formula = ranks(q), q.arithmetic, q.applies_formula  # code does the arithmetic
        ids = request.paper_ids
        body = render("qa_answer", question=q.text, answer_format=q.answer_format,
                      papers=f"[Papers]: {scope_line(q)}\n" if ids else "",
                      context=render_context(request.context, tags="ids" if ids else "aliases",
                                             limit=request.limit, empty="(none)"))
        if ranking:
            body += "\n" + load_prompt("qa_answer_ranked")
        if arithmetic:
            body += "\n" + load_prompt(ARITHMETIC[arithmetic].prompt)
        if formula:
            body += "\n" + load_prompt("qa_answer_formula")
        messages = [SystemMessage(content=load_prompt("qa_system")), HumanMessage(content=body)]
        # a total over the papers a question names takes a value of each (left free, the model gave one paper's)
        choices = paper_choices(q, request.context)
        schema = answer_schema(q.answer_format, ranking, answer_chars(request.max_tokens), arithmetic, formula,
                               fewest=2 if arithmetic != "sum" or len(q.papers) > 1 else 1, choices=choices)
        out = call_structured(request.llm, schema, messages, name=request.name, max_tokens=request.max_tokens)
        if ranking:
            # the question's own word over the model's: asked for the lowest, the model said "highest" 2 times in 34
            picked = ranked_pick(q.extreme or out.direction, table_candidates(q, request.context) or out.candidates, q)
            if picked is not None and (not choices or title_key(picked[0]) in {title_key(c) for c in choices}):
                return Answer(value=picked[0], reader=self.name, expression=picked[1])
        if formula and (worked := computed(out.expression, q.kind, q.values)) is not None:
            return Answer(value=worked[0], reader=self.name, expression=worked[1])
        answer = Answer(value=answer_text(out.answer), reader=self.name)
        if arithmetic and (worked := ARITHMETIC[arithmetic].apply(paper_counts(q, request.context,
                                                                              out.compared))) is not None:
            value = worked[0] if q.kind != "int" else str(round(float(worked[0])))
            answer = Answer(value=value, reader=self.name, expression=worked[1])
            if not ARITHMETIC[arithmetic].printed:
                return answer
        if q.counted and (bound := rebound(answer.value, q, request.context)) is not None:
            # the model's number is bound to nothing the question counts; the context binds this one to it
            return Answer(value=str(bound.value), reader=self.name, sources=[bound.source], quote=bound.sentence)
        return answer


register_reader(ModelReader())

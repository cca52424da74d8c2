"""``each_paper``: a question that needs one value from each of two named papers, read one paper at a time.

Shapes: the two values as a list ("what batch size does A use, and what batch size does B use?"), whether one is
larger than, smaller than or the same as the other ("is the number of annotators in A larger than the number of
tasks in B?"), and which paper has the larger or smaller value ("which paper uses more training epochs: A or B?").
The model is shown one paper's part of the context at a time and copies the one value the question asks of that
paper, under a grammar that admits the value's type only; code then lists, compares or picks. A small model shown
both papers at once answered yes/no and which-paper questions at chance. The values are paired with the papers in
the order the question names them (by title), else the order of its paper ids. A gap, ratio or total of the two
stays with the model reader, which copies both values in one call (:data:`agents.readers.model.ARITHMETIC`): read
one paper at a time it lost three blind questions and gained two dev ones, and tried again with each paper's own
clause and count binding, 18 -> 14 of 28 read questions (each paper's value in its own scale, "7 million" against
"1.9M"; docs/results.md).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

from evidex.agents.prompts import load_prompt, render
from evidex.agents.qa.render import item_papers, render_context
from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.agents.structured import StructuredOutputError, call_structured
from evidex.tools.answer_format import answer_text, asks_for_title, pair_kinds, title_key
from evidex.tools.calc import format_result
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.bound import rebound
from evidex.tools.qa.question import NEXT_CLAUSE, Question, counted_in, paper_clauses, references
from evidex.tools.text import operands_in, value_in

Shape = Literal["list", "compare", "which"]
# a list whose elements are the papers' own values: "[value in the first paper, value in the second paper]", "what
# does each paper report", or the question asking of one paper, then ", and what ..." of the other
_PER_PAPER = re.compile(r"\b(?:first|second) paper\b|\beach (?:paper|of the two)\b|\bboth papers\b|\brespectively\b",
                        re.IGNORECASE)


def shape(q: Question, names: dict[str, str]) -> Shape | None:
    """How the two papers' values make the answer, or None when the question is not one of these shapes
    (``names``: the papers' titles)."""
    if len(q.papers) != 2:
        return None
    if q.kind == "list":
        return "list" if pair_kinds(q.answer_format) and per_paper(q, names) else None
    if q.kind == "bool":
        return "compare" if q.relation else None
    return "which" if q.kind == "str" and asks_for_title(q.answer_format) and q.picks else None


def per_paper(q: Question, names: dict[str, str]) -> bool:
    """A two-element list asked of each paper in turn: its format or question says so, or the question names one
    paper's title, then asks a clause of the other ("in A, how many ..., and how many ... in B")."""
    if _PER_PAPER.search(q.answer_format) or _PER_PAPER.search(q.text):
        return True
    text = q.text.lower()
    spans = sorted((text.find(names[p].lower()), len(names[p])) for p in q.papers if names.get(p))
    if len(spans) != 2 or spans[0][0] < 0:
        return False
    (first, length), (second, _) = spans
    return bool(NEXT_CLAUSE.search(q.text[first + length:second]))


def titles(context: Context) -> dict[str, str]:
    """Each paper's title as the store has it (its metadata row, else the context's titles)."""
    found = dict(context.titles)
    found.update({p.paper_id: p.title for p in context.papers if p.title})
    return found


def in_order(q: Question, names: dict[str, str]) -> list[str]:
    """The question's two papers in the order its text names their titles; its id order when it names fewer."""
    text = title_key(q.text)
    where = {pid: text.find(title_key(names.get(pid) or "\0")) for pid in q.papers}
    if any(at < 0 for at in where.values()):
        return list(q.papers)
    return sorted(q.papers, key=where.__getitem__)


def clauses(q: Question, names: dict[str, str]) -> dict[str, str]:
    """The part of the question asked of each of its two papers (:func:`tools.qa.question.paper_clauses`)."""
    return paper_clauses(q.text, {p: names.get(p, "") for p in q.papers})


def names_object(clause: str) -> bool:
    """The clause names a table, figure or equation ("how many rows remain in Table 4 of B"): a count read there."""
    return any(references(clause, kind) for kind in ("tables", "figures", "equations"))


def paper_part(context: Context, paper_id: str) -> Context:
    """The items of ``context`` that belong to one paper (a note shared by several papers belongs to each)."""
    return Context(items=[i for i in context.items if paper_id in item_papers(i)],
                   titles={k: v for k, v in context.titles.items() if k == paper_id})


@lru_cache(maxsize=16)
def value_schema(kind: type) -> type[BaseModel]:
    return create_model("PaperValue", value=(kind, Field(description="The value the question asks of this paper, "
                                                                      "copied from the context.")))


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-−+]?\d+)(?!\w)")  # "5e-5", "1E-4"


def printed(value: Any, text: str) -> bool:
    """The value occurs in ``text``: a number as a paper prints it (thousands separators, "586K" or a number word
    aside), a name as a run of its words; a small model asked for one paper's value may write the whole question's
    answer instead (a total, a difference) or a number of its own."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        number = format_result(value)
        return (operands_in(number, text) or value_in(number, text)
                or any(math.isclose(float(m.group(1)) * 10 ** int(m.group(2).replace("−", "-")), value)
                       for m in _SCIENTIFIC.finditer(text)))
    return bool(str(value).strip()) and value_in(str(value), text)


def combine(kind: Shape, q: Question, values: list[Any], names: list[str]) -> Answer | None:
    """The answer the two values (in the question's order) make: the list, the comparison's truth, or the title of
    the paper picked; None when they cannot decide it."""
    if kind == "list":
        return Answer(value=answer_text(values), reader=EachPaper.name)
    numbers = [_number(v) for v in values]
    if any(n is None for n in numbers):
        return None
    a, b = numbers
    shown = f"{format_result(a)}, {format_result(b)}"
    if kind == "compare":
        holds, sign = {"same": (a == b, "=="), "more": (a > b, ">"), "less": (a < b, "<")}[q.relation]
        return Answer(value=answer_text(holds), reader=EachPaper.name,
                      expression=f"{format_result(a)} {sign} {format_result(b)}")
    if a == b:  # "which": a tie decides nothing
        return None
    larger = q.picks == "more"
    pick = 0 if (a > b) == larger else 1
    return Answer(value=names[pick], reader=EachPaper.name, expression=f"{'max' if larger else 'min'}({shown})")


class EachPaper:
    name = "each_paper"

    def applies(self, question: Question, context: Context) -> bool:
        return (shape(question, titles(context)) is not None
                and all(paper_part(context, p).items for p in question.papers))

    def read(self, request: ReadRequest) -> Answer | None:
        q, context = request.question, request.context
        names = titles(context)
        kind = shape(q, names)
        if kind is None:
            return None
        order = in_order(q, names)
        kinds = pair_kinds(q.answer_format) if kind == "list" else (float, float)
        values, asked = [], clauses(q, names)
        for n, (pid, value_kind) in enumerate(zip(order, kinds), 1):
            title = names.get(pid) or f"paper {n}"
            shown = render_context(paper_part(context, pid), tags="aliases", limit=request.limit, empty="(none)")
            body = render("qa_answer_each_paper", question=q.text, title=title, context=shown)
            messages = [SystemMessage(content=load_prompt("qa_system")), HumanMessage(content=body)]
            try:
                out = call_structured(request.llm, value_schema(value_kind), messages,
                                      name=f"{request.name}_paper{n}", max_tokens=request.max_tokens)
            except StructuredOutputError:
                return None  # no readable value even after the repair: the model reader answers from both papers
            value = out.value
            clause = asked.get(pid, "")
            if value_kind is not str and (counted := counted_in(clause)) and not names_object(clause):
                # a count from the text (not from a table or figure the clause names): the number this paper's
                # passages bind to the counted noun, when the model's is bound to none
                part = q.model_copy(update={"text": clause, "kind": "int", "counted": counted})
                if (bound := rebound(str(value), part, paper_part(context, pid))) is not None:
                    value = bound.value
            if not printed(value, shown):
                return None  # a value the paper does not print: worked out, or another paper's
            values.append(value)
        return combine(kind, q, values, [names.get(pid, pid) for pid in order])


register_reader(EachPaper())

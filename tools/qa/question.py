"""A question about papers, parsed once into what every answer reader asks of it.

The answer's kind comes from the answer format (a number, a name, a list, true/false); the question's own words
say whether it compares two values ("how many points higher is A than B"), picks one item by an extreme value
("which method has the highest accuracy"), leaves items out ("excluding the baselines"), and which tables, figures
and equations it names ("in Table 3"). Readers decide whether they apply from these fields, never by matching the
question again.

    from evidex.tools.qa.question import parse_question
    q = parse_question(PaperQuestion(id="1", question="In Table 2, which model has the highest F1?",
                                     answer_format="Your answer should be a string."))
    q.kind, q.superlative, q.table_label        # ("str", "highest", "Table 2")
"""
from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from evidex.tools.answer_format import AnswerKind, answer_kind
from evidex.tools.paperstore.models import table_label
from evidex.tools.qa import PaperQuestion

# "Table 2", "Tab. 2", "Figure 3", "Fig. 3", "Equation 4", "Eq. (4)", "Eqn 4": the objects a question names.
_REFERENCES = {
    "tables": re.compile(r"\b(?:Table|Tab\.)\s*(\d+)", re.IGNORECASE),
    "figures": re.compile(r"\b(?:Figure|Fig\.)\s*(\d+)", re.IGNORECASE),
    "equations": re.compile(r"\b(?:Equation|Eqn?\.?)\s*\(?(\d+)\)?", re.IGNORECASE),
}
_SUPERLATIVE = re.compile(r"\b(highest|lowest|largest|smallest|greatest|fewest|maximum|minimum)\b", re.IGNORECASE)
_HIGH = {"highest", "largest", "greatest", "maximum"}
# "how many points higher is A than B", "by how much is ... lower": a question about the gap between two values
_GAP = re.compile(r"\bhow (?:many|much) (?:more|fewer|less|higher|lower|points?|percentage points?)\b"
                  r"|\bby how (?:much|many)\b|\bdifference\b|\bminus\b", re.IGNORECASE)
_MINUS = re.compile(r"\bminus\b", re.IGNORECASE)
# "A than B", "A minus B", "A exceed that of B", "A compared with B": the asked value is named before the word
_COMPARED = re.compile(r"\b(?:than|minus|exceeds?|compared (?:to|with)|relative to)\b", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\b(?P<a>.*?)\band\b(?P<b>.*)", re.IGNORECASE | re.S)
# "how much does pass@1 rise from before to after the edit": the two values in the order the change runs
_FROM_TO = re.compile(r"\b(?:rises?|increases?|grows?|drops?|decreases?|falls?|improves?|changes?)\b.*?"
                      r"\bfrom\b(?P<a>.*?)\bto\b(?P<b>.*)", re.IGNORECASE | re.S)
_QUOTED_SPAN = re.compile(r"[\"“][^\"”]{12,}[\"”]")  # a quoted paper title: its words name no table cell
_TABLE_NUMBER = re.compile(r"\b(?:Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\b")
_EXCLUDING = re.compile(r"\b(?:excluding|except(?: for)?|other than|apart from|not counting)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"\?|\b(?:which|what|who)\b", re.IGNORECASE)


class Question(BaseModel):
    """A question and everything readers decide by, parsed once."""

    id: str
    text: str
    answer_format: str
    papers: list[str] = Field(default_factory=list)
    conferences: list[str] = Field(default_factory=list)
    kind: AnswerKind = "str"
    tables: list[str] = Field(default_factory=list, description="numbers of the tables it names, in order")
    figures: list[str] = Field(default_factory=list)
    equations: list[str] = Field(default_factory=list)
    table_label: str = Field("", description='"Table 3" when it names a table anywhere, else ""')
    superlative: Literal["highest", "lowest"] | None = Field(
        None, description="the one kind of extreme it picks an item by; None when it says none or both")
    says_superlative: bool = Field(False, description="it says a superlative word at all")
    gap: bool = Field(False, description="it asks for the gap between two values (how much higher, difference)")
    minus: bool = Field(False, description="the gap is asked as 'A minus B' (its sign matters)")
    comparison: tuple[str, str] | None = Field(
        None, description="its words before and after the comparison word ('A than B'), quoted titles and table "
                          "numbers left out")
    excluded: str = Field("", description="the part that names what it leaves out ('excluding A and B')")

    @property
    def question(self) -> PaperQuestion:
        return PaperQuestion(id=self.id, question=self.text, answer_format=self.answer_format,
                             pdf_ids=list(self.papers), conferences=list(self.conferences))

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")


def parse_question(q: PaperQuestion) -> Question:
    text = q.question or ""
    said = {w.lower() for w in _SUPERLATIVE.findall(text)}
    kinds = {"highest" if w in _HIGH else "lowest" for w in said}
    refs = {kind: list(dict.fromkeys(p.findall(text))) for kind, p in _REFERENCES.items()}
    return Question(id=q.id, text=text, answer_format=q.answer_format, papers=list(q.pdf_ids),
                    conferences=list(q.conferences), kind=answer_kind(q.answer_format), **refs,
                    table_label=table_label(text, anywhere=True),
                    superlative=kinds.pop() if len(kinds) == 1 else None, says_superlative=bool(said),
                    gap=bool(_GAP.search(text)), minus=bool(_MINUS.search(text)),
                    comparison=_comparison(_TABLE_NUMBER.sub(" ", _QUOTED_SPAN.sub(" ", text))),
                    excluded=excluded_text(text))


def _comparison(question: str) -> tuple[str, str] | None:
    """The question's text before and after its comparison word ("difference between A and B", "rise from A to
    B": A's side is everything before "and" or "to")."""
    found = _COMPARED.search(question)
    if found:
        return question[:found.start()], question[found.end():]
    between = _BETWEEN.search(question) or _FROM_TO.search(question)
    return (question[:between.start("b")], between.group("b")) if between else None


def excluded_text(question: str) -> str:
    """The part of ``question`` that names what it excludes: from "excluding" (or "except", "other than" ...)
    to the question word after it, the end of the sentence, or the bracket it stands in ("(i.e. excluding A)");
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


def named_in(name: str, text: str) -> bool:
    """Whether ``name`` is written in ``text`` as a whole item ("B-2" in "A-1, B-2 and ...", but "B" is not,
    being only the start of "B-2")."""
    if not text:
        return False
    item = re.escape(" ".join(name.lower().split()))
    return re.search(rf"(?:^|[\s(,;]){item}(?=$|[\s),;.])", " ".join(text.lower().split())) is not None


__all__ = ["Question", "excluded_text", "named_in", "parse_question"]

"""``affiliation``: the organization one named author of a paper is at, read by code.

Question shape: "Which organization is the third author, Jane Doe, affiliated with?", "Which institution is the
second author at?" over a paper whose affiliations the store read (:meth:`tools.paperstore.PaperStore.affiliations`:
the first page's marks, else names printed over their affiliations). The author is the one the question names
(every word of the name as the paper lists it), else the one its ordinal says ("second", "last"). A small model given
"A: Lab X; B: Univ Y; C: Lab X" answered with the affiliation most authors share. Left to the model: an author
with several affiliations or none read, a question about more than one paper, or one that names no single author.
"""
from __future__ import annotations

import re

from evidex.agents.readers.base import ReadRequest, register_reader
from evidex.tools.first_page import asks_affiliation
from evidex.tools.qa.context import Answer, Context, Paper
from evidex.tools.qa.question import Question

_ORDINALS = {w: i for i, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth".split())}
_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)[\s-]+"
                      r"(?:listed\s+)?(?:co-?)?author\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'’.-]*")


def _words(text: str) -> set[str]:
    return {w.lower().strip(".") for w in _WORD.findall(text)}


def named_author(question: str, authors: list[str]) -> str | None:
    """The one author of ``authors`` the question names in full, else the one its ordinal points to ("the second
    author", "the last author"); None when neither says one."""
    said = _words(question)
    named = [a for a in authors if _words(a) and _words(a) <= said]
    if len(named) == 1:
        return named[0]
    if named:
        return None
    found = _ORDINAL.findall(question)
    if len(found) != 1 or not authors:
        return None
    at = len(authors) - 1 if found[0].lower() == "last" else _ORDINALS[found[0].lower()]
    return authors[at] if at < len(authors) else None


class AffiliationReader:
    name = "affiliation"

    def applies(self, question: Question, context: Context) -> bool:
        return (question.kind == "str" and asks_affiliation(question.text)
                and any(p.affiliations for p in context.papers))

    def read(self, request: ReadRequest) -> Answer | None:
        papers = [p for p in request.context.papers if p.paper_id in request.question.papers] or \
            request.context.papers
        if len(papers) != 1:
            return None
        paper: Paper = papers[0]
        author = named_author(request.question.text, paper.authors)
        places = paper.affiliations.get(author, []) if author else []
        if len(places) != 1:
            return None
        return Answer(value=places[0], reader=self.name, by_code=True, sources=[paper.source],
                      quote=f"{author}: {places[0]}")


register_reader(AffiliationReader())

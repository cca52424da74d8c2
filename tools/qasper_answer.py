"""The QASPER answer contract, applied to any QA graph's answer, and its evidence read back from the store.

QASPER scores answers by token F1 against short references, so the shape decides the score (ZeroSCROLLS: a
verbose GPT-4 lost F1 to a terse Flan-UL2). :func:`shape_answer` turns a model's answer into the contract:

* exactly ``Unanswerable`` when the answer says the paper does not answer (``not mentioned``, ``the paper does not
  say``, ``cannot be determined`` ...) or is empty;
* exactly ``Yes`` / ``No`` when the question asks whether something holds and the answer starts with yes/no
  (or true/false), or the answer is only that word;
* otherwise the answer itself, with a bulleted or line-broken enumeration joined with ``", "`` and wrapping
  quotes, an ``Answer:`` prefix and a trailing full stop removed.

:func:`page_evidence` maps a QASPER paper's store pages (``tools.ingest.qasper`` layout) to the evidence string
each stands for: the verbatim paragraph, ``FLOAT SELECTED: <caption>`` for a figure/table page, nothing for the
abstract page.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evidex.tools.qasper_data import FLOAT_PREFIX

if TYPE_CHECKING:
    from evidex.tools.paperstore.models import Page

UNANSWERABLE = "Unanswerable"
_AUX = ("is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "had", "will", "would",
        "should", "shall", "may", "might", "must", "am")
_NONE_PATTERNS = [re.compile(p) for p in (
    r"^(unanswerable|not answerable|cannot be answered|can ?not answer)\b",
    r"^(unknown|n/?a|none|none given|no answer|not applicable)$",
    r"\b(is|are|was|were) not (explicitly )?(mentioned|stated|specified|provided|reported|given|discussed|described)"
    r"( in the (given |provided )?(paper|context|text|passages?))?$",
    r"\b(paper|context|text|passage|article|authors|it|they) (does|do|did) not (explicitly )?(mention|state|specify|"
    r"provide|report|say|discuss|describe|contain|include|give)\b",
    r"\bno (information|mention|details?|answer) (is |are )?(given|provided|available|about|on|of)\b",
    r"\b(cannot|can't|can not) be (determined|answered|found|inferred)\b",
    r"\bnot (enough|sufficient) information\b",
    r"^the (context|paper|text) (does not|doesn't)\b",
)]
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def is_boolean_question(question: str) -> bool:
    """A question that asks whether something holds ("Do they ...?", "Is the dataset ...?")."""
    words = re.findall(r"[a-z']+", question.lower())
    return bool(words) and words[0] in _AUX


def says_unanswerable(answer: str) -> bool:
    text = " ".join(answer.lower().replace("’", "'").split()).strip(" .!\"'")
    return not text or any(p.search(text) for p in _NONE_PATTERNS)


def _yes_no(answer: str, question: str) -> str | None:
    words = re.findall(r"[a-z]+", answer.lower())
    if not words:
        return None
    first = words[0]
    mapped = {"yes": "Yes", "true": "Yes", "no": "No", "false": "No"}.get(first)
    if mapped is None:
        return None
    if len(words) == 1 or is_boolean_question(question):
        return mapped
    return None


def shape_answer(answer: str | None, question: str) -> str:
    """A QA graph's answer in the QASPER answer contract (see the module docstring)."""
    if answer is None:
        return UNANSWERABLE
    text = answer.strip()
    text = re.sub(r"^(final )?answer\s*:\s*", "", text, flags=re.I).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    yn = _yes_no(text, question)
    if yn is not None:
        return yn
    if says_unanswerable(text):
        return UNANSWERABLE
    lines = [_BULLET.sub("", ln).strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:
        text = ", ".join(ln.rstrip(",;") for ln in lines)
    if text.endswith(".") and not text.endswith("..") and text.count(".") == 1:
        text = text[:-1]
    return text


def page_evidence(pages: list[Page]) -> dict[int, str | None]:
    """page number -> the evidence string that page stands for, for one QASPER paper's pages
    (``PaperStore.pages``): a float's caption after :data:`FLOAT_PREFIX`, else the paragraph; None for the
    abstract and blank pages."""
    from evidex.tools.ingest.qasper import ABSTRACT_PAGE

    out: dict[int, str | None] = {}
    for p in pages:
        if p.page == ABSTRACT_PAGE:
            out[p.page] = None
        elif p.caption is not None:
            out[p.page] = FLOAT_PREFIX + p.caption
        else:
            out[p.page] = p.text if p.text.strip() else None
    return out


def evidence_from_pages(pages: list[int], evidence: dict[int, str | None],
                        limit: int | None = None) -> list[tuple[int, str]]:
    """(page, evidence string) for ``pages`` in order, without repeated strings or pages that stand for none (the
    abstract), at most ``limit``."""
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for p in pages:
        if limit is not None and len(out) >= limit:
            break
        text = evidence.get(p)
        if text and text not in seen:
            seen.add(text)
            out.append((p, text))
    return out


_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of in on for to and or is are was were be by with as at from that this these those it its "
                  "they their we our which what how".split())


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def overlap_scores(answer: str, texts: list[str]) -> list[float] | None:
    """The share of the answer's content words each text contains; None for an answer without content words
    (Yes/No/Unanswerable, stopwords only)."""
    words = _content_words(answer)
    if not words or answer in ("Yes", "No", UNANSWERABLE):
        return None
    return [len(words & set(_WORD.findall(t.lower()))) / len(words) for t in texts]


def strip_format_echo(answer: str, answer_format: str) -> str:
    """``answer`` without a leading copy of the answer-format instructions ("The words of the context that answer
    the question, copied exactly: pre-ordering ..."): a small model sometimes writes the format out before its
    answer. The echo must run at least four words from the format's start and end at a colon or a full stop."""
    words = answer.split()
    fmt = answer_format.split()
    same = 0
    while same < min(len(words), len(fmt)) and words[same].lower().strip(".,:;") == fmt[same].lower().strip(".,:;"):
        same += 1
    if same < 4:
        return answer
    for i in range(same - 1, len(words) - 1):  # the echo ends where its sentence or clause does
        if words[i].endswith((":", ".")):
            return " ".join(words[i + 1:])
    return answer


def non_answer(answer: str, question: str, answer_format: str = "") -> str | None:
    """Why a shaped answer answers nothing, or None. A small model, short of an answer, tends to echo: a bare
    Yes/No to a question that does not ask whether something holds ("What biases are found?" -> "Yes"), a phrase
    of the question itself ("what are the pivot-based baselines?" -> "pivot-based baselines"; a choice question
    "X or Y?" is exempt, its answer is one of the two), or words of the answer-format instructions ("a few words
    or a short phrase"). Each scores 0 against any reference except "Unanswerable"."""
    if answer == UNANSWERABLE:
        return None
    if answer in ("Yes", "No"):
        return None if is_boolean_question(question) else "a bare Yes/No to a question that does not ask whether"
    words = _content_words(answer)
    if not words:
        return None
    if words <= _content_words(question) and " or " not in f" {question.lower()} ":
        return "it only repeats words of the question"
    if answer_format and len(words) >= 3 and len(words & _content_words(answer_format)) >= 0.6 * len(words):
        return "it repeats the answer-format instructions"
    return None


def overlap_order(answer: str, texts: list[str]) -> list[int]:
    """Indices of ``texts`` by the share of the answer's content words each contains (most first; ties keep the
    given order). A Yes/No/Unanswerable answer has no content words: the given order is kept."""
    scores = overlap_scores(answer, texts)
    if scores is None:
        return list(range(len(texts)))
    return sorted(range(len(texts)), key=lambda i: -scores[i])

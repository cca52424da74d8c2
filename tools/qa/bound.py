"""Numbers bound to what a question counts.

"How many triggers are inserted for the spam detection datasets?" counts *triggers*; a passage answers it with a
number printed just before that noun ("we insert 1 trigger for sentiment classification and 10 triggers for
spam detection"). Of several such numbers, the one the question means is the one whose clause (the words between it
and the numbers on either side) says what else the question says ("spam detection"). A small model reading the
right passage often takes a neighbouring number instead: the other dataset's count, the number a sentence narrows
down *to*, the total a sentence contrasts it with. The counted noun must be printed as the question writes it (its
plural aside): "trigger words" is not "triggers".

    bound = bound_counts(question, context)       # [Bound(value=10, source="chunks.<id>", support=7.0, ...), ...]
    rebound("5", question, context)               # Bound(value=10, ...): 5 is bound to no counted noun
    rebound("1", question, context)               # None: 1 is bound too ("1 trigger"), so the model's reading stands

:func:`rebound` is how the model reader uses it: the model's number stands when the context binds it to the counted
noun (or binds nothing); only a number bound nowhere is replaced, and only by a number whose binding is clearly the
best (:data:`MIN_SUPPORT`, a clause that shares a word with the question, no tie).
"""
from __future__ import annotations

import re

from pydantic import BaseModel

from evidex.tools.paperstore import Passage
from evidex.tools.qa.context import Context
from evidex.tools.qa.question import Question
from evidex.tools.text import SPELLED_NUMBER, spelled_value

# support a binding needs before it replaces the model's number: 3 a modifier of the counted noun between the number
# and the noun ("758 unique medical concepts"), 2 a word of the question in the number's clause, 1 in its sentence,
# 0.5 in the sentences around it
MIN_SUPPORT = 5.0
MAX_GAP_WORDS = 4  # words allowed between a number and its noun ("5 different random seeds")
_WORD = r"[^\W\d_][\w\-]*"
# a number may carry its magnitude ("400k steps", "1.5M images"): one token, so "k" is not a word between it and
# its noun and the count is 400,000, not 400
_TOKEN = re.compile(rf"\d[\d,]*(?:\.\d+)?[kKMB](?![\w-])|{_WORD}|\d[\d,]*(?:\.\d+)?|[^\w\s]")
_INTEGER = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")
_MAGNITUDE = re.compile(r"(\d+(?:\.\d+)?)([kKMB])")
_TIMES = {"k": 1_000, "K": 1_000, "M": 1_000_000, "B": 1_000_000_000}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\d])")
_ASKING = {"many", "paper", "use", "used"}  # words any question about a paper may say, which bind nothing
_LABELS = {"table", "tab", "figure", "fig", "section", "equation", "eq", "appendix"}  # "Table 3" numbers no count
_SIGNS = {"-", "\u2212", "e", "^", "\u00d7"}  # "-5", "2e-5", "10^4", "5 × 10": no count


class Bound(BaseModel):
    """A number printed before the noun a question counts, with how much of the question its clause repeats."""

    value: int
    source: str
    sentence: str
    support: float
    clause_words: int


def singular(word: str) -> str:
    """A noun's singular as far as counting needs it: "triggers" -> "trigger", "studies" -> "study"."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _words(text: str) -> set[str]:
    from evidex.tools.kb_index import STOPWORDS

    return {singular(w) for w in re.findall(_WORD, text) if len(w) > 1 and w.lower() not in STOPWORDS}


def _value(token: str) -> int | None:
    if magnitude := _MAGNITUDE.fullmatch(token):
        value = float(magnitude.group(1)) * _TIMES[magnitude.group(2)]
        return int(value) if value.is_integer() else None
    if _INTEGER.fullmatch(token):
        return int(token.replace(",", ""))
    spelled = SPELLED_NUMBER.fullmatch(token)
    return spelled_value(spelled) if spelled else None


def _is_number(token: str) -> bool:
    return token[0].isdigit()


def _bindings(tokens: list[str], noun: str):
    """``(i, end, value)`` for each whole number ``tokens[i]`` printed before ``noun`` (a singular), at
    ``tokens[end]``, with at most :data:`MAX_GAP_WORDS` words between them."""
    for i, token in enumerate(tokens):
        value = _value(token)
        if value is None:
            continue
        end = next((k for k in range(i + 1, min(i + 2 + MAX_GAP_WORDS, len(tokens)))
                    if not tokens[k][0].isalpha() or singular(tokens[k]) == noun), None)
        if end is not None and singular(tokens[end]) == noun:
            yield i, end, value


def counts_stated(text: str, nouns: list[str]) -> set[int]:
    """The counts of ``nouns`` that ``text`` prints, as :func:`bound_counts` reads them ("we evaluate on 24 tasks",
    "eight different NLP datasets", "400k steps", "2000 examples"): not a year ("the ACE 2005 datasets"), the number of a table,
    figure or section ("Table 3 tasks"), nor the end of a negative number or an exponent ("2e-5 learning rate
    warmup steps")."""
    tokens = _TOKEN.findall(text or "")
    return {value for noun in {singular(n) for n in nouns} for i, end, value in _bindings(tokens, noun)
            if not (1900 <= value < 2100 and tokens[i].isdigit() and not _counts_not_year(tokens, i, end))
            and (i == 0 or tokens[i - 1].lower() not in _LABELS | _SIGNS)}


def _counts_not_year(tokens: list[str], i: int, end: int) -> bool:
    """A number that reads like a year counts the lower-case noun right after it unless a name comes before it:
    "we collect 2000 examples" counts examples; "the ACE 2005 datasets" names a year's edition, "in 2023 Task 3" a
    year and a task's name."""
    return end == i + 1 and tokens[end][:1].islower() and (i == 0 or not tokens[i - 1][:1].isupper())


def states_count(text: str, nouns: list[str]) -> bool:
    """Whether ``text`` prints a count of one of ``nouns`` (:func:`counts_stated`)."""
    return bool(counts_stated(text, nouns))


def paper_count(value: float, passages: list[Passage], question: Question) -> int | None:
    """The count to take instead of ``value``, read from one paper's ``passages``: of the counts they print of what
    ``question`` counts (:attr:`~tools.qa.question.Question.counts_of`, :func:`counts_stated`), the only one, or the
    one whose clause says most of what the question says (:func:`bound_counts`' support, no tie); None when they
    print ``value`` as such a count, none, or several none of which is clearly best. A small model copying one value
    from each of two papers often takes the first paper's number, or a number next to the right one, for the
    second."""
    counts = set().union(*(counts_stated(p.text, question.counts_of) for p in passages))
    if not counts or value in counts:
        return None
    if len(counts) == 1:
        return next(iter(counts))
    support: dict[int, float] = {}
    context = Context(items=passages)
    for noun in question.counts_of:
        for b in bound_counts(question.model_copy(update={"counted": [noun]}), context):
            if b.value in counts:
                support[b.value] = max(support.get(b.value, -1.0), b.support)
    ranked = sorted(support.items(), key=lambda kv: -kv[1])
    return ranked[0][0] if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) else None


def bound_counts(question: Question, context: Context) -> list[Bound]:
    """Every whole number the context's passages print before the noun ``question`` counts (its
    :attr:`~tools.qa.question.Question.counted` phrase), each with its support; empty when the question counts
    nothing."""
    if not question.counted:
        return []
    noun, modifiers = singular(question.counted[-1]), _words(" ".join(question.counted[:-1]))
    asked = _words(question.text) - _words(" ".join(question.counted)) - _ASKING
    found = []
    for item in context.items:
        if not isinstance(item, Passage):
            continue
        sentences = _SENTENCE_END.split(item.text)
        for at, sentence in enumerate(sentences):
            tokens = _TOKEN.findall(sentence)
            # the question's words in this sentence and in the sentences around it, counted once per sentence
            in_sentence = len(asked & _words(sentence))
            around = len(asked & _words(" ".join(sentences[max(0, at - 1):at + 2])))
            for i, end, value in _bindings(tokens, noun):
                start = next((k for k in range(i - 1, -1, -1) if _is_number(tokens[k])), -1)
                stop = next((k for k in range(end + 1, len(tokens)) if _is_number(tokens[k])), len(tokens))
                clause = len(asked & _words(" ".join(tokens[start + 1:stop])))
                support = (3 * len(modifiers & _words(" ".join(tokens[i + 1:end]))) + 2 * clause + in_sentence
                           + 0.5 * around)
                found.append(Bound(value=value, source=item.source, sentence=sentence, support=support,
                                   clause_words=clause))
    return found


def rebound(answer: str, question: Question, context: Context) -> Bound | None:
    """The number to answer instead of the model's ``answer``: None when the context binds the model's number to
    the counted noun, binds nothing, or binds no other number clearly best (a tie, under :data:`MIN_SUPPORT`, or no
    word of the question in its clause)."""
    bound = bound_counts(question, context) if question.kind == "int" else []  # a count is one whole number
    if not bound:
        return None
    best: dict[int, Bound] = {}
    for b in bound:
        if b.value not in best or b.support > best[b.value].support:
            best[b.value] = b
    try:
        given = float(answer)
    except (TypeError, ValueError):
        given = None
    if given is not None and given in best:
        return None
    ranked = sorted(best.values(), key=lambda b: -b.support)
    top = ranked[0]
    if top.support < MIN_SUPPORT or top.clause_words < 1 or (len(ranked) > 1 and ranked[1].support == top.support):
        return None
    return top

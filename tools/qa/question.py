"""A question about papers, parsed once into what every answer reader asks of it.

The answer's kind comes from the answer format (a number, a name, a list, true/false); the question's own words
say whether it asks for the gap between two values ("how many points higher is A than B"), the value of an
equation on numbers it gives ("what does Equation 1 give at x = 9", with the symbols it sets), says a superlative
("which method has the highest accuracy"), compares two values ("is X in A larger than Y in B?") or picks one of two
by a larger or smaller value ("which paper uses more epochs?"), leaves items out ("excluding the baselines"), and
which tables, figures and equations it names ("in Table 3"). Readers and the early-answer checks decide from these
fields, never by matching the question again.

    from evidex.tools.qa.question import parse_question
    q = parse_question(PaperQuestion(id="1", question="In Table 2, which model has the highest F1?",
                                     answer_format="Your answer should be a string."))
    q.kind, q.says_superlative, q.table_label        # ("str", True, "Table 2")
"""
from __future__ import annotations

import operator
import re
from typing import Literal

from pydantic import BaseModel, Field

from evidex.tools.answer_format import AnswerKind, answer_kind
from evidex.tools.paperstore.models import table_label
from evidex.tools.qa import PaperQuestion
from evidex.tools.text import QUOTED_SPAN, SPELLED_NUMBER, spelled_value

# "Table 2", "Tab. 2", "Figure 3", "Fig. 3", "Equation 4", "Eq. (4)", "Eqn 4": the objects a question names.
_REFERENCES = {
    "tables": re.compile(r"\b(?:Table|Tab\.)\s*(\d+)", re.IGNORECASE),
    "figures": re.compile(r"\b(?:Figure|Fig\.)\s*(\d+)", re.IGNORECASE),
    "equations": re.compile(r"\b(?:Equation|Eqn?\.?)\s*\(?(\d+)\)?", re.IGNORECASE),
}
_SUPERLATIVE = re.compile(r"\b(highest|lowest|largest|smallest|greatest|fewest|maximum|minimum)\b", re.IGNORECASE)
# the extreme a question asks for, when its words say one only ("best" and "worst" depend on the measure)
_HIGHEST = re.compile(r"\b(?:highest|largest|greatest|maximum|most)\b", re.IGNORECASE)
_LOWEST = re.compile(r"\b(?:lowest|smallest|least|fewest|minimum)\b", re.IGNORECASE)
# "how many points higher is A than B", "by how much is ... lower": a question about the gap between two values
_POINTS = r"(?:percentage )?points?"  # the unit a gap may be asked in
_GAP = re.compile(r"\bhow (?:many|much) (?:(?:thousand|million|billion)s? )?"
                  rf"(?:more|fewer|less|higher|lower|{_POINTS})\b"
                  r"|\bby how (?:much|many)\b|\bdifference\b|\bminus\b", re.IGNORECASE)
# "how many times larger", "by what percent": a relative change, not a difference of two values; not the unit of a
# gap ("by how many percentage points") nor a number's own percent sign ("at 3% remaining weights": what a value is)
_RELATIVE = re.compile(r"\b(?:times|percent|percentage(?! points?\b)|ratio|relative|fold)\b|(?<![\d\s])\s*%",
                       re.IGNORECASE)
# a gap asked in points ("by how many percentage points does A exceed B's percentage"): a difference, whatever percent
# its values are
_GAP_IN_POINTS = re.compile(rf"\bhow (?:many|much) {_POINTS}\b", re.IGNORECASE)
# "the total number of datasets across the two papers", "how many ... in total if you add ...", "combined": a total
_TOTAL = re.compile(r"\bin total\b|\btotal (?:number|count|amount)\b|\b(?:combined|altogether|sum of)\b"
                    r"|\bif you add\b|\badd(?:ing)? (?:up )?the\b", re.IGNORECASE)
# "how many times more parameters does A have than B", "the ratio of A's learning rate to B's": one value over another
_TIMES = re.compile(r"\bhow many times\b|\btimes (?:more|larger|bigger|higher|greater|smaller|fewer|less|as)\b",
                    re.IGNORECASE)
_RATIO_OF = re.compile(r"\bratio of\b.+\bto\b", re.IGNORECASE)
# "the formula", "an equation": a question may name the equation it applies without its number
_FORMULA = re.compile(r"\b(?:formula|equation)\b", re.IGNORECASE)
# a number the question states itself ("when alpha = 2", "24 tokens", "probability 0.6"), read after the objects it
# names ("Equation 1", "Table 2") are taken out
_STATED_NUMBER = re.compile(r"(?<![A-Za-z\d_^.-])\d+(?:\.\d+)?(?![A-Za-z\d])")
_NAMED_OBJECT = re.compile(r"\b(?:Table|Tab\.|Figure|Fig\.|Equation|Eqn?\.?|Section|Sec\.|Appendix)\s*\(?[A-Z]?\d+"
                           r"(?:\.\d+)*\)?", re.IGNORECASE)
# a symbol the question sets to a number: "x = 9", "Avg[G_p] = 0.6", "P0(Xi) equals 0.2", "α = 2"
_SETS_SYMBOL = re.compile(r"(?<![\w\[])([A-Za-z\u0370-\u03ff][\w\u0370-\u03ff]*(?:[\[(^{][^\s=]*?[\])}]|\^\w+)?)"
                          r"\s*(?:=|\bequals\b)\s*([-−]?\d+(?:\.\d+)?)(?![\d.]*\s*[/*^])")
# a yes/no question comparing two values: "is X in A larger than Y in B" (not "larger than 16": a stated number),
# "is X in A the same as in B"; and which of two has the larger or smaller value ("which paper uses more epochs")
_MORE = r"larger|greater|higher|more|bigger|longer|wider|deeper"
_LESS = r"smaller|lower|fewer|less|shorter|narrower|shallower"
_MORE_LESS_THAN = re.compile(rf"\b(?:(?P<more>{_MORE})|(?P<less>{_LESS}))\b(?:\s+[\w-]+){{0,4}}?\s+than\b"
                             r"(?!\s*[-−]?\d)", re.IGNORECASE)
_SAME = re.compile(r"\b(?:the same as|equal to|identical to)\b", re.IGNORECASE)
_PICK_MORE = re.compile(rf"\b(?:{_MORE}|largest|greatest|highest|most|biggest|longest)\b", re.IGNORECASE)
_PICK_LESS = re.compile(rf"\b(?:{_LESS}|smallest|lowest|fewest|least|shortest)\b", re.IGNORECASE)
_WHICH = re.compile(r"\bwhich\b", re.IGNORECASE)
_QUOTED = re.compile(QUOTED_SPAN)
_EXCLUDING = re.compile(r"\b(?:excluding|except(?: for)?|other than|apart from|not counting)\b", re.IGNORECASE)
_INCLUDING = re.compile(r"\s*(?:including|incl\.|counting)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"\?|\b(?:which|what|who)\b", re.IGNORECASE)
# "how many rows have an F1 above 80": a count of what passes a threshold
_HOW_MANY = re.compile(r"\bhow many\b", re.IGNORECASE)
_THRESHOLD = re.compile(r"\b(above|over|more than|greater than|higher than|exceeding|at least|no less than|below|"
                        r"under|less than|lower than|fewer than|at most|no more than)\s+([-−]?\d[\d,]*(?:\.\d+)?)(?![\d.])"
                        r"(?!\s*(?:%\s*)?(?:points?|pp|percentage points?|times)\b)",
                        re.IGNORECASE)
_COMPARE = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_THRESHOLD_OPS = {"above": ">", "over": ">", "more than": ">", "greater than": ">", "higher than": ">",
                  "exceeding": ">", "at least": ">=", "no less than": ">=", "below": "<", "under": "<",
                  "less than": "<", "lower than": "<", "fewer than": "<", "at most": "<=", "no more than": "<="}

# "on how many of the eight tasks does A score higher than B": a count of the columns where one row beats another
_BEATS = re.compile(r"\b(higher|greater|larger|lower|smaller)\b(?:\s+[\w-]+){0,3}?\s+than\s+(?![-−]?\d)",
                    re.IGNORECASE)
_OF_HOW_MANY = re.compile(r"\b(?:how many|which) of the (\w+)\b", re.IGNORECASE)
# "on which of the datasets does A score higher than B": the columns where one row beats another, by name
_ON_WHICH = re.compile(r"\b(?:on|in|for) which\b|\bwhich of the\b", re.IGNORECASE)
# "how many trigger words are inserted ...": the noun phrase a question counts, up to the verb or preposition after it;
# in one paper's clause of a two-paper question also "the number of annotators" (:func:`counted_in`)
_COUNTED = re.compile(r"\bhow many\s+([^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*)*)", re.IGNORECASE)
_NUMBER_OF = re.compile(r"\bthe number of\s+([^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*)*)", re.IGNORECASE)
# a participle after the counted noun ("how many models probed in ...", "trained on"), not a noun ("seed", "speed")
_PARTICIPLE = re.compile(r"[a-z-]+[^e\W]ed", re.IGNORECASE)
_THAN = re.compile(r"\bthan\b", re.IGNORECASE)
_NOT_COUNTED = {"more", "fewer", "less", "of", "times", "million", "billion", "thousand", "percent"}
_COUNTED_ENDS = {"are", "is", "was", "were", "do", "does", "did", "have", "has", "had", "can", "could", "will",
                 "would", "should", "in", "of", "per", "for", "from", "on", "at", "to", "by", "with", "than", "that",
                 "which", "who", "whose", "when", "where", "across", "into", "after", "before", "during", "between",
                 "under", "over", "about", "as", "the", "a", "an"}


class Threshold(BaseModel):
    """A bound a counted value must pass: ``op`` one of ">", ">=", "<", "<=", and the number."""

    op: str
    value: float
    at: int = Field(0, description="where the bound starts in the question")

    def passes(self, x: float) -> bool:
        return _COMPARE[self.op](x, self.value)


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
    says_superlative: bool = Field(False, description="it says a superlative word at all")
    extreme: Literal["highest", "lowest"] | None = Field(None, description="the extreme it asks for when its words "
                                                                          "say one only ('highest', 'fewest'); "
                                                                          "else None")
    gap: bool = Field(False, description="it asks for the gap between two values (how much higher, difference)")
    relative: bool = Field(False, description="it asks for a ratio or a relative change (times, percent, fold)")
    total: bool = Field(False, description="it asks for a total ('in total', 'the total number of', 'combined')")
    times: bool = Field(False, description="it asks how many times one value is another ('how many times more')")
    ratio: bool = Field(False, description="it says 'the ratio of A to B' (over one paper that names a table, a "
                                           "'ratio' the table prints is a value: :attr:`arithmetic`)")
    formula: bool = Field(False, description="it names an equation or formula ('Equation 2', 'the formula')")
    states_numbers: bool = Field(False, description="it states numbers of its own, beyond the numbers of the "
                                                    "tables, figures, equations and sections it names ('when "
                                                    "alpha = 2', '24 tokens')")
    values: dict[str, float] = Field(default_factory=dict, description="symbols it sets to numbers ('x = 9', "
                                                                        "'alpha = 2'), as written")
    excluded: str = Field("", description="the part that names what it leaves out ('excluding A and B')")
    beats: str = Field("", description="it asks on how many (or on which) columns one row is 'higher' or 'lower' "
                                        "than another "
                                        "('on how many of the tasks does A score higher than B'); else ''")
    against: str = Field("", description="with beats: the words after its 'than', what the one row is compared "
                                          "against ('B' and what follows); else ''")
    of_count: int | None = Field(None, description="how many things it says it counts or picks over ('how many "
                                                     "of the eight tasks', 'which of the eight tasks': 8); else "
                                                     "None")
    threshold: Threshold | None = Field(None, description="it asks how many pass a bound ('how many ... above "
                                                          "28'): the bound; else None")
    compares: bool = Field(False, description="it compares with 'than' (a gap, a ratio, a win), so it asks for no "
                                               "one printed value")
    relation: Literal["same", "more", "less"] | None = Field(None, description="a yes/no question comparing two "
                                                                               "values: whether they are the same, "
                                                                               "or the first is more (less) than the "
                                                                               "second; else None")
    picks: Literal["more", "less"] | None = Field(None, description="a 'which' question picking by a larger or "
                                                                     "smaller value ('which paper uses more "
                                                                     "epochs'): which; else None")
    counted: list[str] = Field(default_factory=list, description="the words of what it counts ('how many trigger "
                                                                  "words are inserted': ['trigger', 'words']); "
                                                                  "empty for a gap, a count over a list or a bound")
    counts_of: list[str] = Field(default_factory=list, description="the nouns of every count it asks, a gap's "
                                                                    "and a total's too ('how many more test tasks "
                                                                    "... than the number of datasets': ['tasks', "
                                                                    "'datasets']), what a passage stating such a "
                                                                    "count names")

    @property
    def question(self) -> PaperQuestion:
        return PaperQuestion(id=self.id, question=self.text, answer_format=self.answer_format,
                             pdf_ids=list(self.papers), conferences=list(self.conferences))

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def one_paper(self) -> bool:
        """It names one paper or none: what it says of a value (a superlative, a named table) is what it asks; over
        two or more papers such words say what one of the values is ("the maximum number of epochs in A plus ...",
        "the ratio of the songs in A to the sentences in Table 14 of B")."""
        return len(set(self.papers)) < 2

    @property
    def picks_extreme(self) -> bool:
        """It asks for an extreme ("the highest score in Table 2"), which the model picks (:attr:`one_paper`)."""
        return self.says_superlative and self.one_paper

    @property
    def difference(self) -> bool:
        """A number asked as the difference of two values: a gap, not a ratio or percent change, no extreme picked
        (:attr:`picks_extreme`)."""
        return self.numeric and self.gap and not (self.relative or self.picks_extreme)

    @property
    def arithmetic(self) -> Literal["difference", "times", "ratio", "sum"] | None:
        """The arithmetic a number is asked as, which code does on the values the model copies: the ``difference``
        of two values (:attr:`difference`), how many ``times`` the larger is the smaller (whichever order the
        question names them in), the ``ratio`` of the first value named to the second, the ``sum`` of values stated
        apart (a total the question gives no numbers of itself); None for any other question."""
        if self.difference:
            return "difference"
        if not self.numeric or self.picks_extreme or self.gap:
            return None
        ratio = self.ratio and not (self.tables and self.one_paper)  # else a "ratio" the named table prints
        if (self.times or ratio) and not (self.formula and self.states_numbers):  # an equation's: its own
            return "times" if self.times else "ratio"
        if self.total and not (self.relative or self.formula or self.states_numbers):
            return "sum"
        return None

    @property
    def applies_formula(self) -> bool:
        """A number asked as the value an equation takes on values the question gives ("what score does Equation
        1 give a sentence at position 9 when alpha = 2"); not a gap, which has its own arithmetic."""
        return self.numeric and self.formula and self.states_numbers and not self.difference


def parse_question(q: PaperQuestion) -> Question:
    text = q.question or ""
    unquoted = _QUOTED.sub(" ", text)  # a quoted title's own words ("Less Is More") compare and pick nothing
    refs = {kind: references(text, kind) for kind in _REFERENCES}
    return Question(id=q.id, text=text, answer_format=q.answer_format, papers=list(q.pdf_ids),
                    conferences=list(q.conferences), kind=answer_kind(q.answer_format), **refs,
                    table_label=table_label(text, anywhere=True),
                    says_superlative=bool(_SUPERLATIVE.search(text)), extreme=_one_only(unquoted, _HIGHEST, _LOWEST, "highest", "lowest"),
                    gap=bool(_GAP.search(text)),
                    relative=bool(_RELATIVE.search(text) and not _GAP_IN_POINTS.search(text)),
                    total=bool(_TOTAL.search(text)),
                    times=bool(_TIMES.search(text)), ratio=bool(_RATIO_OF.search(text)),
                    formula=bool(refs["equations"] or _FORMULA.search(text)),
                    states_numbers=bool(_STATED_NUMBER.search(_NAMED_OBJECT.sub(" ", text))),
                    values={m.group(1): float(m.group(2).replace("−", "-")) for m in _SETS_SYMBOL.finditer(text)},
                    excluded=excluded_text(text), threshold=(bound := _threshold(text)),
                    **(_beats(text) if bound is None else {}), of_count=_of_count(text),
                    compares=bool(_THAN.search(text)), **_relation(unquoted, answer_kind(q.answer_format)),
                    counted=_counted(text) if bound is None else [], counts_of=counts_of(unquoted))


def _relation(words: str, kind: AnswerKind) -> dict:
    """``relation`` and ``picks`` of the question's ``words`` outside the spans it quotes: a yes/no question with
    one "larger than" / "fewer than" compares "more" / "less", one with none and "the same as" compares "same"; a
    "which" question saying only larger words (or only smaller ones) picks "more" ("less")."""
    if kind == "bool":
        found = list(_MORE_LESS_THAN.finditer(words))
        if len(found) == 1:
            return {"relation": "more" if found[0].group("more") else "less"}
        return {"relation": "same"} if not found and _SAME.search(words) else {}
    picks = _one_only(words, _PICK_MORE, _PICK_LESS, "more", "less")
    return {"picks": picks} if picks and _WHICH.search(words) else {}


def _counted(text: str, pattern: re.Pattern = _COUNTED) -> list[str]:
    """The noun phrase after "how many" (``pattern``), up to its verb or preposition and without a participle after
    the noun; empty when it counts more or fewer of something, over a list ("how many of the"), times or millions."""
    found = pattern.search(text)
    if not found:
        return []
    words = found.group(1).split()
    return [] if words[0].lower() in _NOT_COUNTED else _noun_phrase(words)


def _noun_phrase(words: list[str], ends: set[str] = _COUNTED_ENDS) -> list[str]:
    """``words`` up to the first of ``ends`` (a verb or preposition after the counted noun), without a participle
    after the noun ("models probed in ...")."""
    phrase = []
    for word in words:
        if word.lower() in ends:
            break
        phrase.append(word)
    while len(phrase) > 1 and _PARTICIPLE.fullmatch(phrase[-1]):
        phrase.pop()
    return phrase


# the next clause of a question that asks something of each of two papers: ", and in B, how many ..."
NEXT_CLAUSE = re.compile(r",?\s+and\s+(?:what|how|which|who|whom|where|when|in|on|for|by|according)\b", re.IGNORECASE)
# a question that names its papers first and then asks of them by position
_BY_POSITION = re.compile(r"\b(?:first|second|former|latter) (?:paper|one|work|study)\b|\bthe (?:former|latter)\b|"
                          r"\bboth\b|\beach (?:paper|of the two)\b|\brespectively\b", re.IGNORECASE)
_NOT_ASKING = {"the", "paper", "papers", "work", "study", "article", "according", "and", "both", "from"}
_CLOSING_QUOTE = "\"'\u201d\u2019"


def paper_clauses(text: str, titles: dict[str, str]) -> dict[str, str]:
    """The part of a question about two papers that is asked of each (``titles``: paper id -> title): cut at the
    next clause after the title written first (", and in B, how many ..."), else just after that title ("is the
    number of X in A | the same as the number of Y in B"); empty unless the text writes both titles, and when it
    speaks of the papers by position ("A evaluates X and B trains Y. How many more layers does the first paper's
    model have ..."), puts what it asks of a paper after its title ("A (its layers) or B (its blocks)"), or names
    a paper first as the subject of what follows ("A states how many X, and B lists ...")."""
    if _BY_POSITION.search(text):
        return {}
    lower = text.lower()
    spans = sorted((lower.find(title.lower()), len(title), pid) for pid, title in titles.items() if title)
    if len(spans) != 2 or spans[0][0] < 0 or spans[0][0] + spans[0][1] > spans[1][0]:
        return {}
    (first, length, a), (second, _, b) = spans
    end = first + length
    if text[end:end + 3].lstrip(_CLOSING_QUOTE + " ").startswith("("):
        return {}  # "A" (what is asked of A) or "B" (...): the words after a title are its own
    after = NEXT_CLAUSE.search(text, end, second)
    if not after and not set(re.findall(r"[a-z]{3,}", lower[:first])) - _NOT_ASKING:
        return {}  # "A states how many X, and B lists ...": a title said first is the subject of the words after it
    closing = end < len(text) and text[end] in _CLOSING_QUOTE
    cut = after.start() if after else end + int(closing)
    return {a: text[:cut], b: text[cut:]}


def references(text: str, kind: str) -> list[str]:
    """The numbers of the tables (``kind`` "tables"), figures or equations ``text`` names, in order, once each."""
    return list(dict.fromkeys(_REFERENCES[kind].findall(text)))


# every count a question asks: "how many (more) X", "the (total) number of X"
_ANY_COUNT = re.compile(r"\b(?:how many\s+(?:more\s+|fewer\s+|less\s+)?|number of\s+)"
                        r"([^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*){0,5})", re.IGNORECASE)
# the subject of the verb after the counted noun ("how many conversations its dataset comprises")
_PRONOUNS = {"its", "their", "his", "her", "our", "my", "your", "it", "they", "we", "he", "she", "this", "these",
             "those", "each", "all", "both"}
_NOT_A_NOUN = {"the", "a", "an", "these", "those", "its", "their", "times", "million", "billion", "thousand",
               "percent", "percentage", "points", "more", "fewer", "less"}


def counts_of(text: str) -> list[str]:
    """The noun each count in ``text`` counts, once each in order: the last word of the phrase after "how many" (a
    gap's "how many more" too) or "number of", up to its verb or preposition and without a participle after it
    ("how many more test tasks does ..." -> "tasks", "the number of datasets on which ..." -> "datasets", "how many
    conversations its dataset comprises" -> "conversations"); none for "how many times", "how many points" or "the
    number of the ...". """
    nouns = []
    for found in _ANY_COUNT.finditer(text):
        phrase = _noun_phrase(found.group(1).split(), _COUNTED_ENDS | _PRONOUNS)
        noun = phrase[-1].lower() if phrase and phrase[0].lower() not in _NOT_A_NOUN else ""
        if len(noun) > 2 and noun not in _NOT_A_NOUN:
            nouns.append(noun)
    return list(dict.fromkeys(nouns))


def counted_in(clause: str) -> list[str]:
    """What one clause of a question counts: "how many annotators ...", else "the number of annotators ..." (one
    paper's part of "is the number of X in A the same as the number of Y in B"); empty when it counts nothing."""
    return _counted(clause) or _counted(clause, _NUMBER_OF)


def _beats(text: str) -> dict[str, str]:
    """``beats``: "higher" or "lower" when the question asks on how many (or on which) things one named item is
    higher (lower) than another ("on how many of the tasks does A score higher than B", "on which datasets does A
    reach a higher accuracy than B"), with ``against``, the words after that "than"; nothing otherwise, and for
    "better" or "outperforms", whose direction depends on the measure."""
    if not (_HOW_MANY.search(text) or _ON_WHICH.search(text)):
        return {}
    found = list(_BEATS.finditer(text))
    if len(found) != 1:
        return {}
    word = found[0].group(1).lower()
    return {"beats": "higher" if word in ("higher", "greater", "larger") else "lower", "against": text[found[0].end():]}


def _of_count(text: str) -> int | None:
    """The number a question says it counts over ("how many of the eight datasets": 8, "of the 20 tasks": 20)."""
    found = _OF_HOW_MANY.search(text)
    if not found:
        return None
    word = found.group(1).lower()
    if word.isdigit():
        return int(word)
    spelled = SPELLED_NUMBER.fullmatch(word)
    return spelled_value(spelled) if spelled else None


def _threshold(text: str) -> Threshold | None:
    """The one bound a "how many" question counts against ("how many rows reach a score above 28"); None when it
    asks no count, or says no bound or two (a bound on a gap or a ratio, "more than 2 points", "over 3 times", is
    not one)."""
    if not _HOW_MANY.search(text):
        return None
    found = list(_THRESHOLD.finditer(text))
    if len(found) != 1:
        return None
    word, number = found[0].groups()
    return Threshold(op=_THRESHOLD_OPS[" ".join(word.lower().split())],
                     value=float(number.replace(",", "").replace("−", "-")), at=found[0].start())


def _one_only(words: str, up: re.Pattern, down: re.Pattern, if_up: str, if_down: str) -> str | None:
    """``if_up`` when ``words`` say ``up`` and not ``down``, ``if_down`` the other way round, else None: the
    direction a question asks for when it says one only (the extreme it ranks by, the way it picks)."""
    said_up, said_down = bool(up.search(words)), bool(down.search(words))
    return if_up if said_up and not said_down else if_down if said_down and not said_up else None


def excluded_text(question: str) -> str:
    """The part of ``question`` that names what it excludes: from "excluding" (or "except", "other than" ...)
    to the question word after it, the end of the sentence, the bracket it stands in ("(i.e. excluding A)"), or a
    bracket that says what is counted ("other than A (including the B variants)"); "" when it excludes nothing."""
    found = _EXCLUDING.search(question or "")
    if not found:
        return ""
    depth, start = 0, found.end()
    for i in range(start, len(question)):
        ch = question[i]
        if ch == "(" and depth == 0 and _INCLUDING.match(question, i + 1):
            return question[start:i]  # "other than A (including the B variants)": what it counts, not excludes
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


__all__ = ["Question", "Threshold", "excluded_text", "named_in", "parse_question"]

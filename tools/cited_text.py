"""Rules for reading cited prose (no model): which ids a sentence cites, where sentences end, whether a
sentence is finished, and which side of a claim it takes by keyword cues.

Shared by the claim writer's post-write check (``agents``) and the trust metrics (``evaluators.trust``), so the
pipeline and the metrics agree on what "cited", "complete" and "contradicts" mean.
"""
from __future__ import annotations

import re
from typing import Literal

Stance = Literal["supports", "contradicts", "neutral"]

# -- citations ------------------------------------------------------------------------------------------------
CITATION = re.compile(r"\[([^\[\]]{1,120})\]")
_ID = re.compile(r"[A-Za-z0-9_.:-]+")


def parse_citations(text: str) -> list[str]:
    """Ids cited as ``[1122]`` or ``[528, 529]``, in order of first appearance."""
    seen: dict[str, None] = {}
    for group in CITATION.findall(text):
        for token in re.split(r"[,;\s]+", group):
            token = token.strip().removeprefix("ID").removeprefix("id").strip(": ")
            if token and _ID.fullmatch(token):
                seen.setdefault(token, None)
    return list(seen)


# -- sentences ------------------------------------------------------------------------------------------------
# A bracket group counts as a citation when the writer's own parser finds an id in it, so these metrics and the
# pipeline agree on what "cited" means.
_BRACKET = re.compile(r"\s*\[[^\[\]]{1,120}\]")
# A sentence may end after . ! ? plus closing quotes/brackets and a citation group written after the full stop
# ("... response. [529] Next"); the next one starts with a capital, a digit or an opening quote/bracket.
_BOUNDARY = re.compile(r"[.!?][\"')\]]*(?:\s*\[[^\[\]]{1,120}\])?(?=\s+[\"'(\[]?[A-Z0-9])|\n\s*\n")
# A full stop after these does not end a sentence (lower-cased, leading punctuation removed).
ABBREVIATIONS = frozenset({
    "e.g.", "i.e.", "vs.", "v.", "al.", "fig.", "figs.", "dr.", "no.", "nos.", "approx.", "ca.", "cf.",
    "ref.", "refs.", "eq.", "tab.", "vol.", "pp.", "p.", "resp.", "incl.", "st.", "mr.", "ms.", "u.s.", "u.k.",
})


def strip_citations(text: str) -> str:
    """``text`` without its citation groups, so word rules and judges see only the prose."""
    return _BRACKET.sub(lambda m: "" if parse_citations(m.group()) else m.group(), text or "").strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``. Unlike ``tools.text.split_sentences`` a citation written after the full stop stays
    with the sentence it backs, abbreviations ("e.g.", "vs.", "Fig.") are looked up as whole words, and a
    name's initial ("directed by M. Night Shyamalan", "Amy J. Berg") ends no sentence."""
    text = text or ""
    sentences, start = [], 0
    for match in _BOUNDARY.finditer(text):
        if match.group().strip() and (_ends_in_abbreviation(text[start:match.start() + 1])
                                      or _initial_before(text[start:match.start() + 1], text[match.end():])):
            continue
        sentences.append(text[start:match.end()])
        start = match.end()
    sentences.append(text[start:])
    return [s.strip() for s in sentences if s.strip()]


def _ends_in_abbreviation(chunk: str) -> bool:
    words = chunk.split()
    return bool(words) and words[-1].lstrip("\"'([").lower() in ABBREVIATIONS


# Words that open a sentence after a one-letter word ("... hepatitis B. The ..."), so that word ended it
_OPENERS = frozenset("""
a an the this these that those it its in on at of for from with by as and or but so he she they we his her their
there then after before during while when where which who however although also both each some many most all one
""".split())
# A one-letter capital word (not a Roman numeral I, V or X) and its full stop, after a capitalised word (a first
# name: "Amy J.") or a word a name follows ("by M.")
_INITIAL = re.compile(r"(?:^|(?:^|\s)(?:[A-Z][\w.'-]*|by|and|as|with|of|to|from|&)\s)[A-HJ-UWYZ]\.$")


def _initial_before(chunk: str, rest: str) -> bool:
    """Whether ``chunk`` ends in a name's initial, followed by a word that does not open a sentence ("directed by
    M. Night", "Amy J. Berg"; not "hepatitis B. The", "vitamin C. Patients" or "Plan B. Then")."""
    following = rest.split(maxsplit=1)
    return bool(_INITIAL.search(chunk)) and bool(following) \
        and following[0].strip("\"'([").lower() not in _OPENERS


# -- completeness ---------------------------------------------------------------------------------------------
# A sentence ending in one of these was cut mid-phrase ("... was higher in"). Extended beyond the articles and
# prepositions with a few words that also never close an English sentence.
DANGLING_WORDS = frozenset({
    "in", "of", "the", "and", "to", "with", "for", "a", "an", "by", "on", "at", "or",
    "from", "than", "versus", "vs", "between", "into",
})
# A measured result stated with its number: a percentage, n of N or n/N, a survival time, a concentration, a hazard
# or odds ratio or an IC50 ("65% vs 20%", "9 of 9", "7.7 months", "2.5 nM", "HR 0.49"); a year, a count of
# patients, an age ("a 10 year old", "62 years of age"), a trial phase or a time point in weeks or days is not one
_MEASURE = re.compile(r"\d\s?%|(?<![\w./])\d+\s?(?:/|of)\s?\d+(?![\w/])"
                      r"|(?<![\w.])\d+(?:\.\d+)?\s?(?:months?|years?(?![\s-]+old\b)(?!\s+of\s+age\b)|[nµu]M)\b"
                      r"|\b(?:HR|hazard ratio|odds ratio|IC50s?)\b\W{0,4}\d")


def states_measure(text: str) -> bool:
    """Whether ``text`` states a measured result with its number (see ``_MEASURE``)."""
    return _MEASURE.search(text) is not None


_END = re.compile(r"[.!?][\"')\]]*$")
_CUT_MARK = re.compile(r"(?:…|\.\.\.)[\s.!?\"')\]]*$")
_WORD = re.compile(r"\w+")


def is_complete_sentence(text: str, max_words: int = 25, quoted: str = "") -> bool:
    """Whether ``text`` reads as one finished sentence: it starts with a capital letter or digit, ends with
    . ! or ? (closing quotes/brackets after it are fine), carries no "…"/"..." cut mark, does not end in a
    dangling function word, and has at most ``max_words`` words. ``quoted``: a finished sentence ``text`` may end
    by restating (the claim a reason links to, "... the city where Shelly Hruska is from"): its last word is its
    own, not a cut.

    Tolerance, chosen so the rule flags cut or run-on text and not style: citations are removed first and only
    tokens with a letter or digit count as words (a "–" or a stray "(" does not), but the limit itself is hard.
    A first word that carries a capital or digit anywhere also counts as a capital start, because gene and
    protein names begin lower-case ("p53 loss ...", "mTOR ...")."""
    text = re.sub(r"\s+([.!?])", r"\1", strip_citations(text))  # "finding [529]." -> "finding."
    words = [token for token in text.split() if _WORD.search(token)]  # "HER2-positive" is one word, "–" none
    if not words or not any(c.isupper() or c.isdigit() for c in words[0]):  # "\u00c6lfgifu" opens one too
        return False
    if not _END.search(text) or _CUT_MARK.search(text):
        return False
    if len(words) > max_words:
        return False
    return _WORD.findall(words[-1])[-1].lower() not in DANGLING_WORDS or _ends_with(text, quoted)


def _ends_with(text: str, quoted: str) -> bool:
    """Whether ``text`` ends with the last words of ``quoted`` (at least its last four, or all of it)."""
    tail = [w.lower() for w in _WORD.findall(strip_citations(quoted))][-4:]
    return bool(tail) and [w.lower() for w in _WORD.findall(text)][-len(tail):] == tail


# -- stance ---------------------------------------------------------------------------------------------------
# Keyword cues, matched on lower-cased text without citations. Limits, on purpose: no parsing and no look at the
# claim, so double negation ("contradicts the claim that X is not sensitive") reads as contradicts; for a claim
# that a variant confers resistance, "resistance" is the supporting finding but reads as contradicts; a cue about
# another arm or earlier therapy ("after chemotherapy failed", "response was higher with alectinib") counts;
# comparative wording ("shorter", "worse") is no cue at all. Good enough to flag an explanation for a human
# reader, not a verdict.
CONTRADICT_CUES = (
    r"\b(?:does|do|did) not support", r"\bnot supported\b", r"\bcontradict\w*", r"\brefut\w*",
    r"\boppos\w*", r"\binconsistent with\b", r"\bagainst the claim\b", r"\bnot the case\b",
    r"\bresistan\w*", r"\binsensitiv\w*", r"\bineffective\b", r"\bfail(?:s|ed)?\b",
    r"\bno (?:\w+ )?(?:benefit|response|improvement|association|activity|effect)\b",
    r"\bnot (?:be )?associated\b", r"\bnot (?:\w+ )?(?:sensitive|effective|responsive|a reliable)\b",
    r"\bdid not (?:respond|improve|show|reach|meet)\b", r"\black of (?:\w+ )?(?:response|efficacy|benefit)\b",
    r"\b(?:however|but)\b[^.;]*\b(?:not|no|never|neither|nor|without)\b",  # "However, X did not ..."
)
SUPPORT_CUES = (
    r"\bsupport\w*", r"\bconfirm\w*", r"\bconsistent with\b", r"\bsensitiv\w*", r"\brespon\w*",
    r"\bimprov\w*", r"\bbenefi\w*", r"\beffective\b", r"\befficacy\b", r"\bprolong\w*", r"\blonger\b",
    r"\bassociated with\b",
)
# "The claim states that X ..." only repeats the claim: it takes no side unless a contrast follows.
_CLAIM_RESTATEMENT = re.compile(r"^the claim (?:states|says|reads) that\b")
_CONTRAST = re.compile(r"\b(?:but|however|whereas|while|although)\b")
_SUPPORTS = re.compile("|".join(SUPPORT_CUES))
# A negation and the word it negates ("not diagnostic", "no significant response", "never a driver"): a sentence
# that negates a word of the claim itself goes against it ("TFEB fusions are not diagnostic" for "TFEB fusions are
# diagnostic for ..."). Words compare by their first 6 letters ("sensitive" / "sensitivity").
_NEGATED = re.compile(r"\b(?:not|no|never|nor|neither|without)\s+(?:(?:a|an|the|be|been|as|very|significantly)\s+)?"
                      r"([a-z][a-z0-9-]{3,})")
_CONTENT = re.compile(r"[a-z][a-z0-9-]{3,}")
_FUNCTION_WORDS = frozenset({"with", "that", "this", "from", "have", "been", "were", "into", "than", "also", "which",
                             "their", "these", "those", "more", "less", "only", "other", "such", "both", "each"})


def negates_claim(text: str, claim: str) -> bool:
    """Whether lower-cased ``text`` negates a content word of lower-cased ``claim`` that the claim itself does not
    negate."""
    own = {m.group(1)[:6] for m in _NEGATED.finditer(claim)}
    words = {w[:6] for w in _CONTENT.findall(claim) if w not in _FUNCTION_WORDS} - own
    return any(m.group(1)[:6] in words for m in _NEGATED.finditer(text))


def sentence_stance(sentence: str, claim: str | None = None) -> Stance:
    """The side a sentence takes, from keyword cues. Contrary cues are checked first because a positive word
    in such a sentence is usually the one being negated or contrasted ("no improvement in response",
    "resistance despite an initial response").

    With ``claim``, a contrary cue the claim itself contains is the claim's subject, not a side: for "T790M
    confers resistance to erlotinib", a sentence about resistance repeats the claim rather than opposing it; and
    a sentence that negates a word of the claim (:func:`negates_claim`) goes against it."""
    text = strip_citations(sentence).lower()
    if _CLAIM_RESTATEMENT.search(text) and not _CONTRAST.search(text):
        return "neutral"
    claim_text = (claim or "").lower()
    if any(re.search(cue, text) and not (claim_text and re.search(cue, claim_text)) for cue in CONTRADICT_CUES):
        return "contradicts"
    if claim_text and negates_claim(text, claim_text):
        return "contradicts"
    if _SUPPORTS.search(text):
        return "supports"
    return "neutral"

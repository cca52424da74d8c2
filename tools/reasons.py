"""Is a reason a reason? Model-free checks of the one sentence that says why an evidence item was kept or set aside.

A reason for a kept item links the item's finding to the claim: it states the finding's key fact (design,
population, measure, effect size) and says how that bears on the claim. :func:`kept_reason_problem` checks the
three things a reader can check without a model:

    facts      every number and every name it states (a token with a digit or an inner capital, a capitalised
               word inside the sentence) occurs in the evidence item, the claim or the claim's context
    entity     it names the claim's entity: one of the claim's own names (``claim_names``)
    copy       it is not a copy of one evidence sentence: at most ``COPY_SHARE`` of its words lie in runs of
               ``COPY_RUN`` or more words that one sentence of the item has in the same order

A reason for a discarded item names what the item is about instead (:func:`names_other`): a name of the item's
own that the claim and its context never use.

Before the check, :func:`evidence_spelling` writes the model's words as the item writes them where the model slipped
("pheochromoctoma", "21. 1%", "cellularMN"): the reasons call decodes with a penalty on retelling the item's
sentences, which now and then bends a word it should have kept whole.

Shared by the writer (``agents.grounded_writer``: a model reason that fails falls back to an honest short one)
and the trust metrics (``evaluators.trust``), so both mean the same thing by "a reason".
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from evidex.tools.cited_text import is_complete_sentence, split_sentences
from evidex.tools.text import SPELLED_NUMBER, spelled_value

MAX_REASON_WORDS = 40
COPY_RUN = 4  # a shared run of at least this many words counts towards a copy
COPY_SHARE = 0.7  # a reason with this share of its words in such runs of one evidence sentence is a copy

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")
# A number standing on its own ("186 patients", "57%", "1,500"), not part of a variant or gene name (V600E,
# c.208G>A, Ba/F3) or a 3'/5' end.
_NUMBER = re.compile(r"(?<![\w.,'/>])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w'/]|\.\d|,\d{3})")
_ROMAN_PHASE = re.compile(r"\bphase[\s-]*(i{1,3}|iv)\b(?![\w-])", re.I)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}
# Capitalised words that start clauses or are plain English, never a name on their own.
_PLAIN_CAPITALS = frozenset("""
a an the this these that those it its in on at of for from with by as and or but so thus this
phase study trial patients patient cells cell overall among after before during while when where which who
one two three four five six seven eight nine ten
""".split())


def _words(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def numbers(text: str) -> set[str]:
    """The stand-alone numbers of ``text`` (thousands separators removed; "phase III" also gives "3")."""
    found = {m.replace(",", "") for m in _NUMBER.findall(text or "")}
    found.update(_ROMAN[m.group(1).lower()] for m in _ROMAN_PHASE.finditer(text or ""))
    return found


def names(text: str) -> list[str]:
    """The name-like tokens of ``text``, in order: a token with a digit and a letter (L858R, HER2), an inner
    capital (ErbB, NSCLC, PROFILE) or a capitalised word that does not open its sentence (Trastuzumab, Hippel)."""
    out: list[str] = []
    for sentence in split_sentences(text or ""):
        for n, w in enumerate(_words(sentence)):
            has_digit, has_alpha = any(c.isdigit() for c in w), any(c.isalpha() for c in w)
            inner_capital = any(c.isupper() for c in w[1:])
            capitalised = w[:1].isupper() and n > 0 and w.lower() not in _PLAIN_CAPITALS
            if (has_digit and has_alpha) or inner_capital or capitalised:
                out.append(w)
    return out


# Drugs and diseases are written in lower case; these word shapes mark them (INN drug stems; -oma/-emia nouns).
_TERM = re.compile(r"\b[a-z]\w*(?:nib|mab|lisib|parib|ciclib|platin|taxel|rubicin|tecan|trexed|citabine|mustine|"
                   r"degib|zomib|limus|oma|omas|emia|aemia)\b", re.I)


def terms(text: str) -> list[str]:
    """:func:`names` plus the lower-case words shaped like a drug (crizotinib, trastuzumab) or a disease noun
    (carcinoma, leukemia): what a reason may state only when the evidence states it."""
    return names(text) + _TERM.findall(text or "")


def _lower_words(*texts: str) -> set[str]:
    return {w.lower() for t in texts for w in _words(t)}


def claim_names(claim: str) -> set[str]:
    """The claim's own names, lower-cased (its entity: variant, gene, drug, person, place). A claim without
    any name-like token falls back to its first word when that is capitalised ("Eenasul ...")."""
    found = {w.lower() for w in names(claim)}
    if not found:
        first = _words(claim)[:1]
        found = {w.lower() for w in first if w[:1].isupper() and w.lower() not in _PLAIN_CAPITALS}
    return found


def _context_text(context: Mapping[str, str] | None) -> str:
    return " ".join((context or {}).values())


_STOP_INITIALS = frozenset({"of", "the", "and", "with", "in", "for", "to", "a", "an"})


def spelled_numbers(text: str) -> set[str]:
    """Numbers written as words ("Twenty two cases", "six families"), as digits."""
    return {str(spelled_value(m)) for m in SPELLED_NUMBER.finditer(text or "")}


def _acronyms(text: str) -> set[str]:
    """Initials of runs of 2-6 words of ``text`` ("clear cell sarcoma of kidney" -> ccsk, ccs, cs, ...), lower-cased,
    skipping small words, so an abbreviation the evidence spells out counts as stated."""
    words = [w.lower() for w in _words(text) if w.lower() not in _STOP_INITIALS]
    return {"".join(w[0] for w in words[i: i + n]) for n in range(2, 7) for i in range(len(words) - n + 1)}


_ALL_PERCENT = re.compile(r"\b100\s*%")
_ALL = re.compile(r"\b(?:all|every)\b", re.I)


def _abbreviation(word: str) -> str:
    """An abbreviation's letters ("CCSK"; "DAs", a plural, gives "DA"), else ""."""
    stem = word.removesuffix("s") if len(word) > 2 else word
    return stem if stem.isupper() and stem.isalpha() else ""


# A measure's number written against its unit ("2.5nM", "12mg"): the number is stated
_UNIT = re.compile(r"(?<=\d)(?=(?:nM|uM|µM|mM|pM|mg|kg|ml|mL|ng|ug|µg|mo|h|d)\b)")
# Letters of scripts a word of another language is written in (CJK, kana, hangul): a model bent off a word writes
# them now and then ("淋巴oid"), and they are facts the evidence does not state unless it uses them itself
_FOREIGN = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


_RATIO = re.compile(r"(?<![\w./])(\d+)/(\d+)(?![\w/])")


def _ratio_parts(text: str) -> set[str]:
    """The two numbers of each "n/N" of ``text`` ("102/1291 samples" states 102 samples of 1291)."""
    return {n for m in _RATIO.finditer(text) for n in m.groups()}


def unbacked_facts(reason: str, evidence: str, claim: str = "", context: Mapping[str, str] | None = None) -> list[str]:
    """The numbers and names ``reason`` states that neither the evidence, the claim nor its context state. A number
    may be spelled out there ("twenty two"), an abbreviation spelled out in full ("CCSK", and its plural "DAs" for
    "diffuse astrocytomas"), and "100%" stated as "all" or "every"."""
    source = " ".join([evidence, claim, _context_text(context)])
    unit_apart = _UNIT.sub(" ", source)
    reason = _UNIT.sub(" ", reason)  # "2.5nM" states 2.5, in nM
    have_numbers = numbers(unit_apart) | spelled_numbers(source) | _ratio_parts(source)  # unit_apart has source's
    have_words = _lower_words(unit_apart)
    missing = sorted(numbers(reason) - have_numbers)
    if "100" in missing and _ALL_PERCENT.search(reason) and _ALL.search(source):  # "all 26 cases" stated as "100%"
        missing.remove("100")
    unknown = [w for w in dict.fromkeys(terms(reason)) if w.lower() not in have_words
               and not (w[:-1].lower() in have_words and w.endswith("s"))  # "EGFRs" for "EGFR"
               and f"{w.lower()}s" not in have_words  # "astrocytoma" for "astrocytomas"
               and w.lower().removesuffix("'s") not in have_words]  # "Goldsmith's" for "Goldsmith"
    if unknown:
        initials = _acronyms(source)
        unknown = [w for w in unknown if not ((letters := _abbreviation(w)) and letters.lower() in initials)]
    foreign = [w for w in dict.fromkeys(_FOREIGN.findall(reason)) if w not in source]
    return missing + unknown + foreign


# A word this long that is one slip away from a word of the evidence is that word misspelt (a name, capitalised,
# from NAME_SPELLING_MIN letters: "Bawen" for "Bawden"; a plain word only when long, so "former" is never "farmer")
SPELLING_MIN = 8
NAME_SPELLING_MIN = 5


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter inserted, dropped or replaced, or two neighbours swapped."""
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    if len(long) - len(short) != 1:
        return False
    i = next((k for k, (x, y) in enumerate(zip(short, long)) if x != y), len(short))
    return short[i:] == long[i + 1:]


_WORD = re.compile(r"[A-Za-z]+")
_ALNUM = re.compile(r"[^\W_]+")


# Cyrillic and Greek letters drawn like Latin ones: bent off a word, the model now and then writes one inside a
# Latin word ("Caus\u0430" with a Cyrillic a for "Causa")
_LOOKALIKE = str.maketrans("\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0410\u0412\u0415\u041a\u041c"
                           "\u041d\u041e\u0420\u0421\u0422\u0425\u03bf\u0391\u0392\u0395\u0397\u0399\u039a\u039c\u039d"
                           "\u039f\u03a1\u03a4\u03a5\u03a7",
                           "aeopcyxijsABEKMHOPCTXoABEHIKMNOPTYX")
_MIXED = re.compile(r"[A-Za-z\u0370-\u03ff\u0400-\u04ff]+")


def _latin_letters(text: str, evidence: str) -> str:
    """``text`` with each look-alike letter inside a Latin word written in Latin, unless the evidence writes the
    word that way itself."""
    def latin(match: re.Match) -> str:
        word = match.group(0)
        plain = word.translate(_LOOKALIKE)
        return plain if plain != word and re.search(r"[A-Za-z]", word) and word not in evidence else word
    return _MIXED.sub(latin, text)


def evidence_spelling(text: str, evidence: str) -> str:
    """``text`` with each word the evidence spells otherwise written as the evidence writes it: a Cyrillic or Greek
    look-alike letter inside a Latin word in Latin ("Caus\u0430" -> "Causa"), the same letters in another case
    ("LindAU" -> "Lindau"), or, for a word of at least ``SPELLING_MIN`` letters (a capitalised one:
    ``NAME_SPELLING_MIN``), one slip away ("pheochromoctoma" -> "pheochromocytoma", "Bawen" -> "Bawden"; never a
    plural or other ending: "patient" stays "patient")."""
    text = _latin_letters(text, evidence or "")
    own = set(_WORD.findall(evidence or ""))
    by_lower: dict[str, set[str]] = {}
    for word in own:
        by_lower.setdefault(word.lower(), set()).add(word)

    def spelt(match: re.Match) -> str:
        word = match.group(0)
        if word in own or len(word) < 4:
            return word
        if len(same := by_lower.get(word.lower(), set())) == 1:
            form = next(iter(same))
            return form if word[1:] != form[1:] else word  # "Nonsense" opening a sentence stays
        if len(word) < (NAME_SPELLING_MIN if word[:1].isupper() else SPELLING_MIN):
            return word
        low = word.lower()
        near = {w for w in own if abs(len(w) - len(word)) <= 1 and _one_slip(low, w.lower())
                and not _endings_differ(low, w.lower())}
        if len(near) != 1:
            return word
        form = next(iter(near))
        return form[:1].upper() + form[1:] if word[:1].isupper() else form
    return _spacing(_WORD.sub(spelt, text), evidence or "")


def _spacing(text: str, evidence: str) -> str:
    """``text`` with the spacing of the evidence where the model split or joined what it writes whole or apart: a
    number, name or long word broken by a space ("21. 1%" for "21.1%", "family 37 08", "SMAD1/5/ 8", "L184 P",
    "c.764 T > C", "chondro sarcoma"), two of its words or a number and a word run together ("cellularMN" for
    "cellular MN", "100Victories", "G\u00e9rardDepardieu")."""
    lower = evidence.lower()
    out: list[str] = []
    for chunk in text.split(" "):
        left = out[-1] if out else ""
        right = re.match(r"[^\s,;)\]]*", chunk).group(0).rstrip(".:")
        if left and right and _broken(left, right) and f"{left} {right}".lower() not in lower \
                and re.search(r"(?<![^\W_])" + re.escape((left + right).lower()), lower):
            out[-1] = left + chunk
        else:
            out.append(chunk)
    text = " ".join(out)
    words = _ALNUM.findall(evidence)
    apart = {(a + b).lower(): f"{a} {b}" for a, b in zip(words, words[1:]) if f"{a} {b}" in evidence}
    own = {w.lower() for w in words}

    def split(match: re.Match) -> str:
        word = match.group(0).lower()
        return apart[word] if word in apart and word not in own else match.group(0)
    return _ALNUM.sub(split, text)


def _broken(left: str, right: str) -> bool:
    """Whether a space between ``left`` and ``right`` may have broken one token: a number or identifier (a digit on
    either side, or a symbol of one: "c.764 T > C") or a word of at least ``SPELLING_MIN`` letters."""
    joined = left + right
    return not joined.isalpha() or len(joined) >= SPELLING_MIN


def _endings_differ(a: str, b: str) -> bool:
    """Whether two words differ only in an ending ("patient"/"patients", "relapsed"/"relapses")."""
    short, long = sorted((a, b), key=len)
    return long in (short + "s", short + "d") or (len(long) == len(short) and long[:-1] == short[:-1])


def names_claim(reason: str, claim: str) -> bool:
    """Whether ``reason`` names one of the claim's own names (any claim without names: always)."""
    wanted = claim_names(claim)
    return not wanted or bool(wanted & _lower_words(reason))


LEAD_WORDS = 5  # "Supports the claim: <sentence>" is a copy of the sentence: a short lead before a colon is skipped


def _runs(words: list[str], other: list[str], run: int) -> tuple[int, int]:
    """How many of ``words`` and how many of ``other`` lie in runs of at least ``run`` words the two share in order."""
    mine, theirs = [False] * len(words), [False] * len(other)
    at: dict[tuple[str, ...], list[int]] = {}
    for j in range(len(other) - run + 1):
        at.setdefault(tuple(other[j: j + run]), []).append(j)
    for i in range(len(words) - run + 1):
        for j in at.get(tuple(words[i: i + run]), ()):
            mine[i: i + run] = [True] * run
            theirs[j: j + run] = [True] * run
    return sum(mine), sum(theirs)


_ASIDE = re.compile(r"\s*[(\[][^()\[\]]*[)\]]")


def _sentence_runs(text: str, evidence: str, run: int, asides: bool = True) -> list[tuple[float, float]]:
    """For each sentence of ``evidence``: the share of ``text``'s words and the share of the sentence's words that
    lie in runs of at least ``run`` words they share in order (``asides=False``: the sentence without its
    bracketed asides)."""
    words = [w.lower() for w in _words(text)]
    out = []
    for sentence in split_sentences(evidence or ""):
        other = [w.lower() for w in _words(sentence if asides else _ASIDE.sub("", sentence))]
        if words and other:
            mine, theirs = _runs(words, other, run)
            out.append((mine / len(words), theirs / len(other)))
    return out


def copied_share(reason: str, evidence: str, run: int = COPY_RUN) -> float:
    """The largest share of ``reason``'s words that lie in runs of at least ``run`` words, in order, of one
    sentence of ``evidence`` (0 = nothing copied, 1 = a verbatim sentence or part of one). A lead of at most
    ``LEAD_WORDS`` words before a colon ("Supports the claim: ...") is not counted."""
    lead, colon, rest = reason.partition(":")
    if colon and len(_words(lead)) <= LEAD_WORDS and _words(rest):
        reason = rest
    return max((mine for mine, _ in _sentence_runs(reason, evidence, run)), default=0.0)


def is_copy(reason: str, evidence: str) -> bool:
    return copied_share(reason, evidence) >= COPY_SHARE


def copies_sentence(fact: str, evidence: str) -> bool:
    """Whether a key fact is one evidence sentence retold word for word: at least ``COPY_SHARE`` of its words and
    of that sentence's words (its bracketed asides aside) lie in shared runs. A short phrase lifted from a long
    sentence ("six VHL type 2 families") is the fact, not a copy of the sentence."""
    return any(mine >= COPY_SHARE and theirs >= COPY_SHARE
               for mine, theirs in _sentence_runs(fact, evidence, COPY_RUN, asides=False))


# What :func:`kept_reason_problem` says (the writer mends some of these by their name)
UNBACKED = "states what the evidence does not"  # followed by ": <the facts>"
NO_ENTITY = "does not name the claim's entity"
COPY = "copies an evidence sentence"


def kept_reason_problem(reason: str, evidence: str, claim: str,
                        context: Mapping[str, str] | None = None) -> str | None:
    """Why ``reason`` cannot stand as the reason of a kept item (None: it can)."""
    if not is_complete_sentence(reason, max_words=MAX_REASON_WORDS, quoted=claim):
        return "not a finished sentence"
    if missing := unbacked_facts(reason, evidence, claim, context):
        return f"{UNBACKED}: {', '.join(missing[:4])}"
    if not names_claim(reason, claim):
        return NO_ENTITY
    if is_copy(reason, evidence):
        return COPY
    return None


def other_names(text: str, claim: str, context: Mapping[str, str] | None = None) -> list[str]:
    """The terms of ``text`` (:func:`terms`) that the claim and its context never use, most frequent first (ties:
    first seen)."""
    known = _lower_words(claim, _context_text(context))
    found = [w for w in terms(text) if w.lower() not in known and not w.isdigit()]
    counts: dict[str, int] = {}
    for w in found:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], found.index(w)))


# what may stand between two words of one name ("New York", "FLT3-ITD", "Ba/F3", "EWSR1::ERG")
_JOIN = re.compile(r"\s+|\s*[/-]\s*|::?")
_ROMAN_NUMERAL = re.compile(r"[IVX]+")  # "phase III": a number, not a subject
_MEASURE = re.compile(r"\d+(?:[nuµm]?M|[mk]?g|[mµ]?[lL]|[cmn]m|m?s|h|min|bp|kb|Mb|Gy|x|fold)")  # "2.5nM", "10mg"
_DEMONYM = re.compile(r"[A-Z][a-z]+(?:ican|ian|ean|ese|ish)")  # "an American magician", "Korean patients"
_INITIAL = re.compile(r"\.\s*")
MAX_PHRASE_WORDS = 5
# Capitalised words of dates: a date is not what an item is about
_DATE_WORDS = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())


def _is_term(word: str, n: int) -> bool:
    return bool(names(word if n == 0 else f"A {word}") or _TERM.fullmatch(word))


def name_phrases(text: str) -> list[str]:
    """The names of ``text`` as written, in order, a name of several words kept whole ("Criss Angel", "New York",
    "EGFR L858R", "FLT3-ITD"): runs of adjacent terms (:func:`terms`); a capitalised first word of a sentence
    starts a run when a term follows it ("Clifford Smith (born ...)"). A possessive "'s" is dropped."""
    out: list[str] = []
    for sentence in split_sentences(text or ""):
        tokens = list(_TOKEN.finditer(sentence))
        run: list[re.Match] = []

        def close() -> None:
            if run:
                out.append(re.sub(r"'s$", "", sentence[run[0].start(): run[-1].end()]))
                run.clear()
        for n, m in enumerate(tokens):
            word = m.group()
            suffix = run and word.isdigit() and sentence[run[-1].end(): m.start()] in ("-", "/")  # "MCF-7"
            term = suffix or _is_term(word, n) or (n == 0 and word[:1].isupper() and word.lower() not in _PLAIN_CAPITALS
                                         and n + 1 < len(tokens) and _is_term(tokens[1].group(), 1)
                                         and _JOIN.fullmatch(sentence[m.end(): tokens[1].start()]) is not None)
            gap = sentence[run[-1].end(): m.start()] if run else ""
            initial = run and len(run[-1].group()) == 1 and run[-1].group().isupper()  # "James P. Comer"
            joined = run and (_JOIN.fullmatch(gap) is not None or (initial and _INITIAL.fullmatch(gap) is not None)) \
                and not run[-1].group().endswith("'s") and len(run) < MAX_PHRASE_WORDS
            if not term or not joined:
                close()
            if term:
                run.append(m)
        close()
    return out


def other_phrases(text: str, claim: str, context: Mapping[str, str] | None = None, limit: int = 3) -> list[str]:
    """What ``text`` is about that the claim is not: its names (:func:`name_phrases`) with a word the claim and
    its context never use, most frequent first (ties: first seen), at most ``limit``, none part of another
    chosen one ("Criss Angel" and "Criss Angel Mindfreak" name one thing). A date, a Roman numeral ("phase III"),
    a measure ("2.5nM") or a nationality ("American") is not what an item is about."""
    known = _lower_words(claim, _context_text(context))
    found = [p for p in name_phrases(text) if len(p) > 2 and not _ROMAN_NUMERAL.fullmatch(p)
             and not _DEMONYM.fullmatch(p) and not _MEASURE.fullmatch(p)
             and any(w.lower() not in known and not w.isdigit() and w.lower() not in _DATE_WORDS for w in _words(p))]
    counts: dict[str, int] = {}
    for p in found:
        counts[p] = counts.get(p, 0) + 1
    chosen: list[str] = []
    for p in sorted(counts, key=lambda p: (-counts[p], found.index(p))):
        words = f" {' '.join(_words(p)).lower()} "
        if not any(words in f" {' '.join(_words(c)).lower()} " or f" {' '.join(_words(c)).lower()} " in words
                   for c in chosen):
            chosen.append(p)
        if len(chosen) == limit:
            break
    return chosen


def names_other(reason: str, text: str, claim: str, context: Mapping[str, str] | None = None) -> bool:
    """Whether a discard ``reason`` names something the item is about that the claim is not: a name of the
    item's own text (a name, a drug, a disease) that the claim and its context never use."""
    mentioned = _lower_words(reason)
    return any(w.lower() in mentioned for w in other_names(text, claim, context))


def share(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return sum(flags) / len(flags) if flags else None

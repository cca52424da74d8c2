"""Facts a paper's first page prints that its metadata row lacks: the corresponding authors, each author's
affiliation and the proceedings header (venue, volume, page range).

A paper marks them with a symbol after the name in the author block and a footnote that says what the symbol
means ("Ge Li∗, Zhi Jin∗" ... "∗Corresponding authors"), or names them in a footnote ("Sujian Li is the
corresponding author"). A small model asked "who is the corresponding author" named the first author or all of
them; code reads the marks.

    from evidex.tools.first_page import corresponding_authors, proceedings_line
    corresponding_authors(page_1_text, ["Ann Lee", "Bo Chen", "Cy Diaz"])   # ['Bo Chen'] when "Bo Chen*" is marked
    affiliations(page_1_text, ["Ann Lee", "Bo Chen"])  # {'Ann Lee': ['Univ A'], 'Bo Chen': ['Univ A', 'Lab B']}
    proceedings_line(page_1_text)  # 'Proceedings of ..., pages 101–112 (the paper begins on page 101 and ends ...)'
    asks_first_page("Which institution is Bo Chen at?", ["Ann Lee", "Bo Chen"])  # True: the question wants them
"""
from __future__ import annotations

import re

from evidex.tools.text import AFFILIATION_SYMBOLS, GREEK_MARKS, NOTE_MARKS

# the footnote: a mark, then "Corresponding author(s)" (the mark's meaning); "Correspondence to" names emails
_MARKED = re.compile(rf"(?P<mark>[{NOTE_MARKS}{AFFILIATION_SYMBOLS}])\s*(?:Equal contribution[.;,]?\s*)?"
                     r"Corresponding\s+authors?\b", re.IGNORECASE)
_NAMED = re.compile(r"(?P<names>[A-Z][^\n.;:]{2,80}?)\s+(?:is|are)\s+the\s+corresponding\s+authors?\b")
# what may stand between a name and its marks in the author block: affiliation numbers, commas, other marks
_AFTER_NAME = rf"[\s\d,{NOTE_MARKS}{AFFILIATION_SYMBOLS}{GREEK_MARKS}]{{0,12}}?"
_HEADER_END = re.compile(r"\n\s*Abstract\b|\bABSTRACT\b")
# the header line up to its page range, across the line breaks the PDF puts in it; a venue name runs to ~200 chars
_PROCEEDINGS = re.compile(r"(?:Proceedings|Findings) of\b.{0,250}?\bpages\s+\d+\s*[–-]\s*\d+", re.DOTALL)
_PAGE_RANGE = re.compile(r"\bpages\s+(\d+)\s*[–-]\s*(\d+)\s*$")


def proceedings_line(first_page: str | None) -> str:
    """The proceedings header a first page prints ("Proceedings of the Nth Annual Meeting ..., Volume 1: Long Papers,
    pages 101–112"): the venue, volume and page range that metadata questions ask about and the metadata row lacks,
    with the range spelled out; "" when the page has none."""
    found = _PROCEEDINGS.search(first_page or "")
    if not found:
        return ""
    line = " ".join(found.group(0).split())
    pages = _PAGE_RANGE.search(line)
    # spelled out: asked "on which page of the proceedings does the paper begin", the 1.5B model answered 15
    return f"{line} (the paper begins on page {pages.group(1)} and ends on page {pages.group(2)})" if pages else line


def _header(text: str) -> str:
    """The author block: a first page up to its abstract (the first 1,500 characters when it has none)."""
    end = _HEADER_END.search(text)
    return text[: end.start()] if end else text[:1500]


def corresponding_authors(first_page: str | None, authors: list[str]) -> list[str]:
    """The ``authors`` the first page marks as corresponding, in author order; [] when it marks none (the
    question is then the model's)."""
    text = first_page or ""
    named = _NAMED.search(text)
    if named:
        found = [a for a in authors if a and a in named.group("names")]
        names = named.group("names").strip()
        if not found and not authors and len(names.split()) <= 4 and all(w[:1].isupper() for w in names.split()):
            found = [names]  # a paper whose metadata lists no authors: the footnote's own words
        if found:
            return found
    marked = _MARKED.search(text)
    if not marked:
        return []
    header = _header(text)
    mark = re.escape(marked.group("mark"))
    star = "[∗*]" if marked.group("mark") in "∗*" else mark  # "*" and "∗" are the same mark in extracted text
    return [a for a in authors if a and re.search(re.escape(a) + _AFTER_NAME + star, header)]


# an affiliation mark: a number, a symbol (not "∗", which marks equal contribution or correspondence) or a Greek
# letter; after a name several, with commas ("Bi1,2,∗", "Levy♡♠")
_MARK = rf"(?:\d{{1,2}}|[{AFFILIATION_SYMBOLS}{GREEK_MARKS}])"
_MARKS_AFTER_NAME = rf"[ \t]?((?:,?[ \t]?(?:{_MARK}|[{NOTE_MARKS}]))+)"  # on the name's line, after re.escape(name)
_CONTACT = re.compile(r"[{<]|\S+@\S+|https?://")


def _marks(run: str) -> list[str]:
    return re.findall(_MARK, run)


def affiliations(first_page: str | None, authors: list[str]) -> dict[str, list[str]]:
    """Each author's affiliations as the first page's marks give them ("Ann Lee1,2 ... 1Univ A, 2Lab B"), in author
    order; authors with no mark, or whose marks the page does not spell out, are left out, and a page without
    marks gives {} (a layout that puts each name above its affiliation says nothing in its text order)."""
    header = _header(first_page or "")
    marks: dict[str, list[str]] = {}
    block_end = 0
    for a in authors:
        found = re.search(re.escape(a) + _MARKS_AFTER_NAME, header) if a else None
        own = _marks(found.group(1)) if found else []
        if own:
            marks[a] = list(dict.fromkeys(own))
            block_end = max(block_end, found.end())
    used = {m for ms in marks.values() for m in ms}
    if not used:
        return {}
    rest = header[block_end:]
    # a mark the authors use, at the start of a line or after a comma or space, before a capital: a definition
    starts = [(m.start(1), m.end(), m.group(1)) for m in re.finditer(rf"(?:^|[\s,])({_MARK})\s?(?=[A-Z])", rest)
              if m.group(1) in used]
    spelled: dict[str, str] = {}
    for i, (_, body, mark) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(rest)
        contact = _CONTACT.search(rest, body, stop)
        words = " ".join(rest[body: contact.start() if contact else stop].split()).strip(" ,;")
        words = re.sub(r",?\s+and$", "", words)
        if len(words) > 100:  # an address runs on: cut at a comma
            words = words[:100].rsplit(",", 1)[0]
        if words and mark not in spelled:
            spelled[mark] = words
    return {a: [spelled[m] for m in ms if m in spelled] for a, ms in marks.items() if any(m in spelled for m in ms)}


# the words of a question about these facts: who wrote the paper and where they work, who corresponds, the header
_ASKS = re.compile(r"\b(?:authors?|institutions?|affiliat\w*|universit(?:y|ies)|compan(?:y|ies)|organi[sz]ations?|"
                   r"corresponding|e-?mails?|header|proceedings|volume|first page|conference|venue|findings|"
                   r"(?:long|short) papers?)\b", re.IGNORECASE)
_NAME_WORD = re.compile(r"[^\W\d_]{3,}")


# the words of a question about where an author is
_ASKS_PLACE = re.compile(r"\b(?:affiliat\w*|institutions?|organi[sz]ations?|universit(?:y|ies)|compan(?:y|ies)|"
                         r"employer)\b", re.IGNORECASE)


def asks_affiliation(question: str) -> bool:
    """Whether a question asks where an author is (affiliation, institution, organization, university, company):
    only then are affiliations the marks do not give read off the first page's layout."""
    return bool(_ASKS_PLACE.search(question or ""))


def asks_first_page(question: str, authors: list[str]) -> bool:
    """Whether a question asks for what these functions read off the first page: it uses the words of those facts
    (author, institution, affiliation, corresponding, proceedings, venue, long paper, first page ...) or names one of
    the ``authors`` (a word of a name, as written). The affiliations and the header are some 7% of a one-paper
    answer prompt, shown to every question otherwise."""
    if _ASKS.search(question):
        return True
    words = set(_NAME_WORD.findall(question))
    return any(w in words for a in authors for w in _NAME_WORD.findall(a))


__all__ = ["affiliations", "asks_affiliation", "asks_first_page", "corresponding_authors", "proceedings_line"]

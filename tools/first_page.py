"""Facts a paper's first page prints that its metadata row lacks: the corresponding authors and the proceedings
header (venue, volume, page range).

A paper marks them with a symbol after the name in the author block and a footnote that says what the symbol
means ("Ge Li∗, Zhi Jin∗" ... "∗Corresponding authors"), or names them in a footnote ("Sujian Li is the
corresponding author"). A small model asked "who is the corresponding author" named the first author or all of
them; code reads the marks.

    from evidex.tools.first_page import corresponding_authors, proceedings_line
    corresponding_authors(page_1_text, ["Ann Lee", "Bo Chen", "Cy Diaz"])   # ['Bo Chen'] when "Bo Chen*" is marked
    proceedings_line(page_1_text)  # 'Proceedings of ..., pages 101–112 (the paper begins on page 101 and ends ...)'
"""
from __future__ import annotations

import re

# the footnote: a mark, then "Corresponding author(s)" (the mark's meaning); "Correspondence to" names emails
_MARKED = re.compile(r"(?P<mark>[∗*†‡§¶♠♣♡♢✉])\s*(?:Equal contribution[.;,]?\s*)?Corresponding\s+authors?\b",
                     re.IGNORECASE)
_NAMED = re.compile(r"(?P<names>[A-Z][^\n.;:]{2,80}?)\s+(?:is|are)\s+the\s+corresponding\s+authors?\b")
# what may stand between a name and its marks in the author block: affiliation numbers, commas, other marks
_AFTER_NAME = r"[\s\d,∗*†‡§¶♠♣♡♢✉]{0,12}?"
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
    end = _HEADER_END.search(text)
    header = text[: end.start()] if end else text[:1500]
    mark = re.escape(marked.group("mark"))
    star = "[∗*]" if marked.group("mark") in "∗*" else mark  # "*" and "∗" are the same mark in extracted text
    return [a for a in authors if a and re.search(re.escape(a) + _AFTER_NAME + star, header)]


__all__ = ["corresponding_authors"]

"""Document structure over the reading-ordered lines: headings -> nested sections, and the bibliography.

Headings come from the PDF outline (TOC) when it has one that we can locate on the pages; otherwise from
typography: a short bold or larger-than-body line that is numbered ("3.1 Data", "A Proofs", "IV. RESULTS")
or is a standard name ("Abstract", "References", ...).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from evidex.tools.ingest.layout import Line, join_lines, union_rect

KNOWN_HEADINGS = {
    "abstract", "introduction", "related work", "related works", "background", "preliminaries", "method",
    "methods", "methodology", "approach", "model", "experiments", "experiment", "experimental setup",
    "experimental results", "results", "evaluation", "discussion", "analysis", "conclusion", "conclusions",
    "conclusion and future work", "conclusions and future work", "future work", "limitations", "limitation",
    "ethics statement", "ethical considerations", "ethics", "broader impact", "broader impacts",
    "acknowledgements", "acknowledgments", "acknowledgement", "acknowledgment", "references", "bibliography",
    "appendix", "appendices", "supplementary material", "summary", "overview", "impact statement",
}
REFERENCE_HEADINGS = {"references", "bibliography", "reference", "literature cited", "works cited"}
NUMBERED_RE = re.compile(r"^((?:\d{1,2}|[A-H])(?:\.\d{1,2}){0,3})\.?\s+([A-Z(\"'“].{1,118})$")
ROMAN_RE = re.compile(r"^((?:X{0,2})(?:IX|IV|V?I{0,3}))\.\s+([A-Z].{1,118})$")


@dataclass
class Heading:
    line_index: int  # index into the document's reading-ordered line list
    title: str
    level: int
    page_number: int


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _plain(s: str) -> str:
    return re.sub(r"[\s:.]+$", "", re.sub(r"\s+", " ", s)).strip()


def classify_heading(ln: Line, body_size: float, seen_appendix: bool) -> tuple[str, int] | None:
    """(title, level) if the line looks like a heading, else None."""
    text = _plain(ln.text)
    if ln.kind not in ("text",) or not (2 <= len(text) <= 120) or len(text.split()) > 15:
        return None
    emphasised = ln.bold or ln.size >= body_size + 0.9
    upper = text.isupper() and len(text) > 3
    m = NUMBERED_RE.match(text)
    if m and (emphasised or upper):
        num, rest = m.group(1), m.group(2)
        if num[0].isalpha() and not seen_appendix:
            return None  # "A Simple Baseline" in the body text is not an appendix heading
        if num[0].isdigit() and int(num.split(".")[0]) > 30:
            return None
        letters = sum(c.isalpha() for c in rest)
        if letters < 2 or rest.rstrip().endswith((",", ";")) or re.search(r"\d{3,}", rest):
            return None
        return text, num.count(".") + 1
    m = ROMAN_RE.match(text)
    if m and m.group(1) and (emphasised or upper):
        return text, 1
    bare = re.sub(r"^\d+(\.\d+)*\.?\s*", "", text).lower()
    if bare in KNOWN_HEADINGS and (emphasised or upper):
        return text, 1
    return None


def headings_from_typography(lines: list[Line], body_size: float) -> list[Heading]:
    out: list[Heading] = []
    seen_appendix = False
    for i, ln in enumerate(lines):
        got = classify_heading(ln, body_size, seen_appendix)
        if got is None:
            continue
        title, level = got
        # a long heading may wrap onto a second emphasised line
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if (
            nxt is not None
            and nxt.kind == "text"
            and nxt.bold == ln.bold
            and abs(nxt.size - ln.size) < 0.4
            and 0 <= nxt.y0 - ln.y1 < 0.6 * ln.size
            and len(title) >= 25
            and len(nxt.text) < 80
            and not NUMBERED_RE.match(nxt.text)
        ):
            title = f"{title} {_plain(nxt.text)}"
            nxt.kind = "heading"
        ln.kind = "heading"
        low = re.sub(r"^[\dA-Z](\.\d+)*\.?\s+", "", title).lower()
        if _norm(low) in {_norm(x) for x in REFERENCE_HEADINGS} or low.startswith(("appendix", "appendices", "supplementary")):
            seen_appendix = True
        out.append(Heading(i, title, level, ln.page_number))
    return out


def add_reference_heading(headings: list[Heading], lines: list[Line], body_size: float) -> list[Heading]:
    """Outlines often omit the bibliography; find its heading typographically and slot it in."""
    if any(_is_reference_title(h.title) for h in headings):
        return headings
    for i, ln in enumerate(lines):
        if ln.kind not in ("text", "heading") or not _is_reference_title(ln.text):
            continue
        if ln.bold or ln.size >= body_size + 0.9 or ln.text.strip().isupper():
            ln.kind = "heading"
            out = [h for h in headings if h.line_index != i] + [Heading(i, _plain(ln.text), 1, ln.page_number)]
            return sorted(out, key=lambda h: h.line_index)
    return headings


def _is_reference_title(title: str) -> bool:
    bare = re.sub(r"^([\dA-Z]+(\.\d+)*\.?\s+)", "", _plain(title)).strip().lower().rstrip(":")
    return bare in REFERENCE_HEADINGS


def headings_from_toc(toc: list, lines: list[Line]) -> list[Heading] | None:
    """Locate outline entries on their pages; None if the outline is unusable (too few entries found)."""
    entries = [(lvl, title.strip(), page) for lvl, title, page, *_ in toc if title.strip() and page >= 1]
    if len(entries) < 3:
        return None
    by_page: dict[int, list[int]] = {}
    for i, ln in enumerate(lines):
        by_page.setdefault(ln.page_number, []).append(i)
    out: list[Heading] = []
    found = 0
    last_index = -1
    for lvl, title, page in entries:
        target = _norm(title)
        best, best_score = None, 0.0
        for p in (page, page + 1):
            for i in by_page.get(p, []):
                if i <= last_index or lines[i].kind not in ("text", "heading"):
                    continue
                cand = _norm(lines[i].text)
                if not cand:
                    continue
                if cand == target or (len(cand) >= 6 and target.startswith(cand)) or (len(target) >= 6 and cand.startswith(target)):
                    score = 1.0
                else:
                    score = difflib.SequenceMatcher(None, cand[: len(target) + 10], target).ratio()
                if score > best_score:
                    best, best_score = i, score
            if best_score >= 0.85:
                break
        if best is not None and best_score >= 0.85:
            found += 1
            lines[best].kind = "heading"
            last_index = best
            out.append(Heading(best, title, lvl, lines[best].page_number))
        else:
            first = next((i for i in by_page.get(page, []) if i > last_index), None)
            if first is not None:
                out.append(Heading(first, title, lvl, page))
                last_index = first - 1  # the content starts at this line, which is not the heading itself
    if found < 0.6 * len(entries):
        for h in out:
            if lines[h.line_index].kind == "heading":
                lines[h.line_index].kind = "text"
        return None
    return out


@dataclass
class Section:
    heading: Heading
    parent: int | None
    content: str
    page_numbers: list[int]
    end_index: int


def build_sections(headings: list[Heading], lines: list[Line]) -> list[Section]:
    sections: list[Section] = []
    stack: list[int] = []
    for k, h in enumerate(headings):
        end = len(lines)
        for h2 in headings[k + 1 :]:
            if h2.level <= h.level:
                end = h2.line_index
                break
        start = h.line_index + (1 if lines[h.line_index].kind == "heading" else 0)
        body = [ln for ln in lines[start:end] if ln.kind not in ("furniture", "figure")]
        while stack and headings[stack[-1]].level >= h.level:
            stack.pop()
        parent = stack[-1] if stack else None
        stack.append(k)
        pages = sorted({h.page_number, *(ln.page_number for ln in body)})
        text = text_with_headings(body)
        sections.append(Section(h, parent, text, pages, end))
    return sections


def text_with_headings(lines: list[Line]) -> str:
    """Running text, with each (sub)heading on a line of its own."""
    blocks: list[str] = []
    run: list[str] = []
    for ln in lines:
        if ln.kind == "heading":
            if run:
                blocks.append(join_lines(run))
                run = []
            blocks.append(ln.text.strip())
        else:
            run.append(ln.text)
    if run:
        blocks.append(join_lines(run))
    return "\n".join(b for b in blocks if b)


# ------------------------------------------------------------------------------------------------ references

BRACKET_RE = re.compile(r"^\s*\[(\d{1,3}|[A-Za-z][A-Za-z+\-]*\d{0,4}[a-z]?)\]\s*")
NUMBERED_REF_RE = re.compile(r"^\s*(\d{1,3})\.\s+[A-Z]")


@dataclass
class RefEntry:
    lines: list[Line]

    @property
    def text(self) -> str:
        return join_lines([ln.text for ln in self.lines])


def reference_lines(headings: list[Heading], lines: list[Line]) -> list[Line]:
    for k, h in enumerate(headings):
        if _is_reference_title(h.title):
            end = len(lines)
            for h2 in headings[k + 1 :]:
                if h2.level <= h.level:
                    end = h2.line_index
                    break
            return [ln for ln in lines[h.line_index + 1 : end] if ln.kind in ("text", "equation", "caption")]
    return []


def split_references(lines: list[Line]) -> list[RefEntry]:
    if not lines:
        return []
    n = len(lines)
    bracket = sum(1 for ln in lines if BRACKET_RE.match(ln.text))
    numbered = sum(1 for ln in lines if NUMBERED_REF_RE.match(ln.text))
    if bracket >= 0.15 * n and bracket >= 2:
        starts = [bool(BRACKET_RE.match(ln.text)) for ln in lines]
    elif numbered >= 0.15 * n and numbered >= 2:
        starts = [bool(NUMBERED_REF_RE.match(ln.text)) for ln in lines]
    else:
        starts = _hanging_indent_starts(lines)
    entries: list[RefEntry] = []
    for ln, is_start in zip(lines, starts):
        if is_start or not entries:
            entries.append(RefEntry([ln]))
        else:
            entries[-1].lines.append(ln)
    return [e for e in entries if len(e.text) >= 12]


def _hanging_indent_starts(lines: list[Line]) -> list[bool]:
    """Author-year bibliographies: an entry's first line is flush left, its continuation lines are indented;
    without indentation, a larger vertical gap separates entries."""
    left: dict[tuple[int, int], float] = {}
    for ln in lines:
        key = (ln.page_number, ln.col)
        left[key] = min(left.get(key, 1e9), ln.x0)
    indented = sum(1 for ln in lines if ln.x0 > left[(ln.page_number, ln.col)] + 3)
    starts: list[bool] = []
    if indented >= 0.2 * len(lines):
        for ln in lines:
            starts.append(ln.x0 <= left[(ln.page_number, ln.col)] + 3)
        return starts
    gaps = [b.y0 - a.y1 for a, b in zip(lines, lines[1:]) if b.page_number == a.page_number and b.col == a.col and b.y0 > a.y0]
    typical = sorted(gaps)[len(gaps) // 3] if gaps else 0.0
    prev: Line | None = None
    for ln in lines:
        if prev is None or ln.page_number != prev.page_number or ln.col != prev.col or ln.y0 < prev.y0:
            starts.append(prev is None or prev.text.rstrip().endswith("."))
        else:
            starts.append(ln.y0 - prev.y1 > typical + 0.35 * ln.size)
        prev = ln
    return starts


def entry_box(entry: RefEntry) -> tuple[float, float, float, float]:
    first_page = entry.lines[0].page_number
    first_col = entry.lines[0].col
    return union_rect(ln.bbox for ln in entry.lines if ln.page_number == first_page and ln.col == first_col)

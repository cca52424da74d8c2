"""Page text geometry: PyMuPDF fragments -> visual lines in reading order, with columns and page furniture.

PyMuPDF's "lines" are often word fragments (PDFium output splits every justified word), so we rebuild visual
lines ourselves: fragments of one column that share a baseline band are one line. Two-column pages are
detected from a vertical gutter that (almost) no text crosses; reading order is band by band, left column
before right column, where full-width lines (titles, wide captions) cut the page into bands.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from statistics import median

import numpy as np
import pymupdf

# Dict extraction without images (faster) and without ligature preservation (so "ﬁ" becomes "fi").
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE

MATH_FONT_RE = re.compile(
    r"(^|[+,-])(CMMI|CMSY|CMEX|CMBSY|CMMIB|MSBM|MSAM|EUFM|EUSM|RSFS|STIXMath|txsy|txex|txmi|rtxmi|ntxmi|ntxsy|"
    r"pxsy|pxmi|LibertineMath|LMMath|Cambria.?Math|XITSMath|Asana|esint|wasy|stmary|Symbol|MathJax|NewCMMath|"
    r"LatinModernMath|FdSymbol|MnSymbol)",
    re.I,
)
BOLD_FONT_RE = re.compile(r"(Bold|Medi|Semibold|SemiBold|Black|Heavy|CMBX|TB$|-B$|,B$|Demi)", re.I)
MONO_FONT_RE = re.compile(r"(Courier|Mono|Consol|Inconsolata|CMTT|SFTT|Menlo|Typewriter)", re.I)
MATH_CHARS = set("∑∏∫√∞≤≥≠≈≡∈∉∀∃∂∇±×÷·∘⊕⊗⊂⊆⊃⊇∪∩→←↔⇒⇐⇔↦∝∼≃≅‖ˆ˜¯′″⟨⟩⌊⌋⌈⌉∥⊤⊥∗⋆∧∨¬")


@dataclass
class Frag:
    """One PyMuPDF line fragment (a run of spans on one baseline)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    bold: bool
    mono: bool
    math_chars: int
    fonts: tuple[str, ...]
    # each span's type size and letters: a title line with words in small capitals ("Science Journalism: SELECT,
    # SIMPLIFY and REWRITE") averages below the title's size, though its full-size words are the title's (Line.top_size)
    letter_sizes: tuple[tuple[float, int], ...] = ()

    @property
    def nchars(self) -> int:
        return len(self.text.strip())

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 0.1)


def run_text(frags: list[Frag]) -> str:
    """The text of a run of fragments (a line, or a part of one), one space between fragments."""
    return " ".join(f.text.strip() for f in frags if f.text.strip())


def run_size(frags: list[Frag]) -> float:
    """The type size of a run of fragments, weighted by characters."""
    n = sum(f.nchars for f in frags) or 1
    return sum(f.size * f.nchars for f in frags) / n


def run_bold(frags: list[Frag]) -> bool:
    """Whether a run is bold: every fragment with a letter or digit is."""
    alnum = [f for f in frags if any(c.isalnum() for c in f.text)]
    return bool(alnum) and all(f.bold for f in alnum)


@dataclass
class Line:
    """A visual line: fragments of one column on one baseline band, left to right."""

    frags: list[Frag]
    page_number: int
    col: int  # 0 = left/only column, 1 = right column, -1 = spans the gutter
    kind: str = "text"  # text | furniture | caption | table | figure | equation | heading
    index: int = -1  # position in the document's reading order (set by the parser)
    _text: str | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        if self._text is None:
            out = ""
            prev: Frag | None = None
            for f in self.frags:
                t = f.text.strip()
                if not t:
                    continue
                if prev is not None and out and not out.endswith(" "):
                    gap = f.x0 - prev.x1
                    # a real gap (or a column break inside the row) is a space; touching glyph runs are glued
                    if gap > 0.15 * min(prev.size, f.size) or f.size < 0.8 * prev.size and gap > 0.5:
                        out += " "
                out += t
                prev = f
            self._text = unicodedata.normalize("NFC", out)
        return self._text

    @property
    def frag_groups(self) -> list[list[Frag]]:
        """The fragments in runs separated by wide horizontal gaps."""
        groups: list[list[Frag]] = []
        for f in self.frags:
            if groups and f.x0 - groups[-1][-1].x1 <= 1.2 * f.size:
                groups[-1].append(f)
            else:
                groups.append([f])
        return groups

    @property
    def parts(self) -> list[str]:
        """Text runs separated by wide horizontal gaps (table cells, author name groups)."""
        return [run_text(g) for g in self.frag_groups]

    @property
    def x0(self) -> float:
        return min(f.x0 for f in self.frags)

    @property
    def x1(self) -> float:
        return max(f.x1 for f in self.frags)

    @property
    def y0(self) -> float:
        return min(f.y0 for f in self.frags)

    @property
    def y1(self) -> float:
        return max(f.y1 for f in self.frags)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)

    @property
    def size(self) -> float:
        return run_size(self.frags)

    @property
    def top_size(self) -> float:
        """Its size by its largest words (:func:`run_top_size`): a title line with words in small capitals is as
        large as the title lines around it."""
        return run_top_size(self.frags)

    @property
    def bold(self) -> bool:
        return run_bold(self.frags)

    @property
    def math_ratio(self) -> float:
        n = sum(f.nchars for f in self.frags) or 1
        return sum(f.math_chars for f in self.frags) / n


@dataclass
class PageLayout:
    page_number: int
    width: float
    height: float
    lines: list[Line]
    gutter: float | None
    ocr: bool = False
    scanned: bool = False  # image-only page (OCR'd if ocr is True, else empty)

    def column_extent(self, col: int) -> tuple[float, float]:
        if self.gutter is None or col == -1:
            return (0.0, self.width)
        return (0.0, self.gutter) if col == 0 else (self.gutter, self.width)


def _is_bold(span: dict) -> bool:
    return bool(span["flags"] & 16) or bool(BOLD_FONT_RE.search(span["font"]))


def _math_count(span: dict, body_is_cmr: bool) -> int:
    text = span["text"]
    font = span["font"]
    if MATH_FONT_RE.search(font) or (not body_is_cmr and re.match(r"(^|\+)CMR\d", font)):
        return len(text.strip())
    return sum(1 for c in text if c in MATH_CHARS)


def extract_fragments(textdict: dict, body_is_cmr: bool = False, matrix: pymupdf.Matrix | None = None) -> list[Frag]:
    """Horizontal text fragments. ``matrix`` (page.rotation_matrix) maps the coordinates of a rotated page
    (/Rotate 90/270: text is extracted in unrotated space) into the page as displayed."""
    frags: list[Frag] = []
    rotated = matrix is not None
    for block in textdict.get("blocks", []):
        if block.get("type") != 0:
            continue
        for line in block["lines"]:
            dx, dy = line["dir"]
            if rotated:
                dx, dy = dx * matrix.a + dy * matrix.c, dx * matrix.b + dy * matrix.d
            if abs(dx - 1) > 0.02 or abs(dy) > 0.02:
                continue  # rotated text: arXiv side stamps, axis labels
            spans = [s for s in line["spans"] if s["text"].strip()]
            if not spans:
                continue
            text = "".join(s["text"] for s in line["spans"])
            boxes = [pymupdf.Rect(s["bbox"]) * matrix if rotated else pymupdf.Rect(s["bbox"]) for s in spans]
            x0 = min(b.x0 for b in boxes)
            x1 = max(b.x1 for b in boxes)
            y0 = min(b.y0 for b in boxes)
            y1 = max(b.y1 for b in boxes)
            n = sum(len(s["text"].strip()) for s in spans) or 1
            size = sum(s["size"] * len(s["text"].strip()) for s in spans) / n
            frags.append(
                Frag(
                    text=text,
                    x0=x0,
                    y0=y0,
                    x1=x1,
                    y1=y1,
                    size=size,
                    bold=all(_is_bold(s) for s in spans if any(c.isalnum() for c in s["text"])),
                    mono=all(bool(MONO_FONT_RE.search(s["font"])) for s in spans),
                    math_chars=sum(_math_count(s, body_is_cmr) for s in spans),
                    fonts=tuple(sorted({s["font"] for s in spans})),
                    letter_sizes=tuple((s["size"], sum(c.isalpha() for c in s["text"])) for s in spans),
                )
            )
    return frags


def run_top_size(frags: list[Frag]) -> float:
    """The type size of a run of fragments by its largest words: the largest size whose spans (at that size or
    larger) hold at least a third of the run's letters, else its average size (:func:`run_size`)."""
    size = run_size(frags)
    letters = [pair for f in frags for pair in f.letter_sizes]
    total = sum(n for _, n in letters)
    for top in sorted({round(z, 1) for z, n in letters if n}, reverse=True):
        if top > size and 3 * sum(n for z, n in letters if z >= top - 0.05) >= total:
            return top
    return size


def find_gutter(frags: list[Frag], width: float) -> float | None:
    """x of the column gutter of a two-column page, or None.

    Weighted by characters: on a two-column page only titles, wide captions/tables and footers cross the
    gutter (a small share of the text); on a one-column page nearly all running text crosses the middle.
    A page whose upper part is full-width (a wide table, figure or example) over two columns of text has more
    text crossing the middle than that; it is two-column when, without its wide lines, two columns of text lines
    stand either side of a gutter (:func:`_columns_under_wide_lines`), else its columns would be read line by line
    across the gutter, each line half of one column and half of the other.
    """
    body = [f for f in frags if f.nchars >= 1 and f.size >= 5]
    return _gutter(body, width) or _columns_under_wide_lines(body, width)


_COLUMN_LINES = 6  # text lines a column of a page with wide content has at least, each side of the gutter


def _columns_under_wide_lines(body: list[Frag], width: float) -> float | None:
    """The gutter of the page's lines no wider than half the page, when at least :data:`_COLUMN_LINES` of them
    each side are column-wide (a third of the page or more) and most of each side's start at one x (justified
    columns). A one-column page's narrow lines (a paragraph's last line, a heading, a table's cells) are not two
    such columns."""
    narrow = [f for f in body if f.x1 - f.x0 <= 0.5 * width]
    gutter = _gutter(narrow, width)
    if gutter is None:
        return None
    left = [f for f in narrow if f.x1 <= gutter + 1 and f.x1 - f.x0 >= width / 3]
    right = [f for f in narrow if f.x0 >= gutter - 1 and f.x1 - f.x0 >= width / 3]
    for side in (left, right):
        if len(side) < _COLUMN_LINES:
            return None
        start = median(f.x0 for f in side)
        if sum(abs(f.x0 - start) <= 2 for f in side) < 0.6 * len(side):
            return None
    return gutter


def _gutter(body: list[Frag], width: float) -> float | None:
    """The gutter of ``body`` as :func:`find_gutter` weighs it, or None (fewer than 8 fragments tell nothing)."""
    if len(body) < 8:
        return None
    x0 = np.array([f.x0 for f in body])
    x1 = np.array([f.x1 for f in body])
    w = np.array([f.nchars for f in body], dtype=float)
    total = w.sum()
    xs = np.arange(width * 0.36, width * 0.64, 1.5)
    cross = (((x0[None, :] < xs[:, None] - 1) & (x1[None, :] > xs[:, None] + 1)) * w).sum(axis=1)
    left = ((x1[None, :] <= xs[:, None] + 1) * w).sum(axis=1)
    right = ((x0[None, :] >= xs[:, None] - 1) * w).sum(axis=1)
    ok = (left >= 0.15 * total) & (right >= 0.15 * total)
    if not ok.any():
        return None
    cross = np.where(ok, cross, np.inf)
    best = cross.min()
    if best > 0.35 * total:
        return None
    # the middle of the widest run of equally good x values is the gutter centre
    idx = np.flatnonzero(cross <= best + 1e-9)
    runs = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    run = max(runs, key=len)
    return float(xs[run[len(run) // 2]])


def _column_of(f: Frag, gutter: float | None) -> int:
    if gutter is None:
        return 0
    if f.x1 <= gutter + 1:
        return 0
    if f.x0 >= gutter - 1:
        return 1
    return -1


def build_lines(frags: list[Frag], page_number: int, gutter: float | None) -> list[Line]:
    """Group fragments into visual lines per column, then order lines band by band."""
    by_col: dict[int, list[Frag]] = {-1: [], 0: [], 1: []}
    for f in frags:
        by_col[_column_of(f, gutter)].append(f)
    lines: list[Line] = []
    for col, items in by_col.items():
        items.sort(key=lambda f: (f.y0 + f.y1) / 2)
        rows: list[list[Frag]] = []
        row_band: list[tuple[float, float, float]] = []  # (core y0, core y1, main font size)
        for f in items:
            # compare "core bands" (centre +- half the font size), not bboxes: a tall delimiter or a big
            # sigma inflates its bbox and must not swallow the text line below it
            cy = (f.y0 + f.y1) / 2
            c0, c1 = cy - 0.5 * f.size, cy + 0.5 * f.size
            placed = False
            for r in range(len(rows) - 1, max(-1, len(rows) - 4), -1):
                r0, r1, rsize = row_band[r]
                overlap = min(r1, c1) - max(r0, c0)
                if overlap >= 0.5 * min(c1 - c0, r1 - r0):
                    rows[r].append(f)
                    if f.size >= 0.8 * rsize:  # sub/superscripts must not move the band
                        row_band[r] = (min(r0, c0), max(r1, c1), max(rsize, f.size))
                    placed = True
                    break
            if not placed:
                rows.append([f])
                row_band.append((c0, c1, f.size))
        for row in rows:
            row.sort(key=lambda f: f.x0)
            current = [row[0]]
            for f in row[1:]:
                prev_x1 = max(x.x1 for x in current)
                if f.x0 - prev_x1 > 4.0 * max(f.size, 4):  # far apart on one baseline: separate lines
                    lines.append(Line(current, page_number, col))
                    current = [f]
                else:
                    current.append(f)
            lines.append(Line(current, page_number, col))
    return reading_order(lines, gutter)


def reading_order(lines: list[Line], gutter: float | None) -> list[Line]:
    if gutter is None:
        return sorted(lines, key=lambda ln: (round(ln.y0, 0), ln.x0))
    out: list[Line] = []
    band: list[Line] = []

    def flush() -> None:
        out.extend(sorted((ln for ln in band if ln.col == 0), key=lambda ln: (ln.y0, ln.x0)))
        out.extend(sorted((ln for ln in band if ln.col == 1), key=lambda ln: (ln.y0, ln.x0)))
        band.clear()

    for ln in sorted(lines, key=lambda ln: (ln.y0, ln.x0)):
        if ln.col == -1:
            flush()
            out.append(ln)
        else:
            band.append(ln)
    flush()
    return out


def mark_furniture(layout: PageLayout) -> None:
    """Running headers/footers and page numbers: short lines in the top/bottom margins."""
    h = layout.height
    for ln in layout.lines:
        text = ln.text
        in_margin = ln.y1 < 0.07 * h or ln.y0 > 0.925 * h
        if in_margin and len(text) < 200:
            ln.kind = "furniture"
        elif ln.y0 > 0.88 * h and re.fullmatch(r"[\divxlcIVXLC\s\-–—|/.]+|page \d+( of \d+)?", text.strip(), re.I):
            ln.kind = "furniture"


def body_font_size(pages: list[PageLayout]) -> float:
    counts: Counter[float] = Counter()
    for p in pages:
        for ln in p.lines:
            for f in ln.frags:
                counts[round(f.size * 2) / 2] += f.nchars
    return counts.most_common(1)[0][0] if counts else 10.0


def dominant_font(doc: pymupdf.Document, max_pages: int = 3) -> str:
    counts: Counter[str] = Counter()
    for i in range(min(max_pages, doc.page_count)):
        for font in doc[i].get_fonts():
            counts[font[3]] += 1
    return counts.most_common(1)[0][0] if counts else ""


def to_box(rect) -> tuple[int, int, int, int]:
    """[x0, y0, w, h] with floor/ceil so the integer box still covers the element."""
    x0, y0, x1, y1 = (float(v) for v in rect)
    ix0, iy0 = int(np.floor(x0)), int(np.floor(y0))
    return (ix0, iy0, int(np.ceil(x1)) - ix0, int(np.ceil(y1)) - iy0)


def union_rect(rects) -> tuple[float, float, float, float]:
    rects = list(rects)
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


# a line that ends in a hyphen and the next line's start ("compound-" + "Word"): how the two join
_SUSPENDED = re.compile(r"(?:and|or)\b")  # "low- and high-resource": the hyphen of a word left for a later one


def join_lines(texts: list[str]) -> str:
    """Join line texts into running text, undoing end-of-line hyphenation of lower-case words ("represen-" +
    "tation"). A hyphen that belongs to the word stays, with no space after it: before a capital or a digit
    ("Cross-" + "Layer", "DSTC7-" + "AVSD", "T5-" + "3B", "1843-" + "1861"), after a digit ("5-" + "fold"), and in a
    word already hyphenated ("state-of-the-" + "art"); before "and" / "or" it is a suspended hyphen ("low- and
    high-resource") and keeps its space."""
    out = ""
    for t in texts:
        t = t.strip()
        if not t:
            continue
        if out.endswith("-") and len(out) > 1 and out[-2].isalnum() and not _SUSPENDED.match(t):
            word = out[:-1].rsplit(None, 1)[-1]
            if t[:1].isupper() or t[:1].isdigit() or out[-2].isdigit() or "-" in word:
                out += t
            elif out[-2].isalpha() and t[:1].islower():
                out = out[:-1] + t
            else:
                out += " " + t
        elif out:
            out += " " + t
        else:
            out = t
    return out

"""A display equation's text read in two dimensions: fractions, big operators with their limits, radicals.

Read line by line, "score = sum_{i=1}^{n} p(s_i) s_i" came out as "n score = X p(si) × si i=1" (the limits on
lines of their own, the TeX extension font's "X" for the sum) and "sqrt(1/t) = 0.1 ln(s) + 1" as
"r1 t = 0.1 ln(s) + 1." (numerator and denominator on two lines, "r" for the radical); a small model could
not tell a coefficient or a metric's name from that. Here the glyphs are placed where they sit: what is above
and below a fraction bar becomes "(num)/(den)", a sum's limits "∑_{i=1}^{n}", the glyphs under a radical's bar
"√(...)", and the rest is read left to right, row by row.

    from evidex.tools.ingest.equation_text import equation_text
    equation_text(page, (263, 482, 349, 508), lines)   # "√((1)/(t)) = 0.1 ln(s) + 1."
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median

import pymupdf

from evidex.tools.ingest.elements import horizontal_rules

# the TeX extension font (cmex) draws big operators and radicals with letters ("X" is the display sum)
_CMEX = {"P": "∑", "X": "∑", "Q": "∏", "Y": "∏", "R": "∫", "Z": "∫", "S": "∮", "H": "∮",
         "p": "√", "q": "√", "r": "√", "s": "√", "t": "√", "v": "√"}
_OPERATORS = {"∑", "∏", "∫", "∮", "⋃", "⋂"}
_FLAGS = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE


@dataclass
class _Atom:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


def equation_text(page: pymupdf.Page, bbox: tuple[float, float, float, float], lines: list[str],
                  strokes: list[tuple[float, float, float]] | None = None) -> str | None:
    """The equation in ``bbox`` as one line of text (rows of a multi-row display joined by spaces); None when
    read line by line (``lines``) is as good: nothing in it is set in two dimensions (no fraction bar, big
    operator or radical), or a line of it is running text ("where W1 ∈ R3d×d are weight ..."), whose glyphs
    read by position would interleave with the formula's. ``strokes``: the page's :func:`short_strokes`, when
    several equations of one page are read (drawings are read once)."""
    if any(_PROSE.search(t) for t in lines):
        return None
    box = pymupdf.Rect(bbox) + (-2, -2, 2, 2)
    atoms = _glyphs(page, box)
    bars = [b for b in (short_strokes(page) if strokes is None else strokes)
            if box.x0 <= b[0] and b[2] <= box.x1 and box.y0 <= b[1] <= box.y1]
    if not atoms or not (bars or any(a.text in _OPERATORS or a.text == "√" for a in atoms)):
        return None
    size = median(a.size for a in atoms)
    for bar in sorted(bars, key=lambda b: b[2] - b[0]):  # inner fractions before outer ones
        atoms = _radical(atoms, bar) or _fraction(atoms, bar, size) or atoms
    atoms = _limits(atoms)
    text = " ".join(_read(row) for row in _rows(atoms, size)).strip()
    # a word the lines spell out whole ("predicted output" under a sum) must stay whole: glyphs of words set
    # beside the formula, read by position, interleave with its limits ("∑_{icted ko=u1tput}")
    if not text or any(w not in text for w in _WHOLE_WORD.findall(" ".join(lines))):
        return None
    # a limit is a few glyphs ("(u,v)∈T"): a long one, or one holding an operator, took glyphs of a citation or
    # a second formula set close by ("∑_{jt=a1l. (2021) and Modarressi et al.}")
    if any(len(lim) > 15 or any(o in lim for o in _OPERATORS) for lim in _LIMIT.findall(text)):
        return None
    return text


_LIMIT = re.compile(r"[_^]\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_WHOLE_WORD = re.compile(r"\b[a-z]{5,}\b")
# two words of running text in a row (a formula's function names aside)
_PROSE = re.compile(r"\b(?!(?:log|exp|sin|cos|tan|max|min|arg|sup|inf|lim|det|softmax|sigmoid|tanh)\b)[a-z]{3,}\s+"
                    r"(?!(?:log|exp|sin|cos|tan|max|min|arg|sup|inf|lim|det|softmax|sigmoid|tanh)\b)[a-z]{3,}\b")


def _glyphs(page: pymupdf.Page, box: pymupdf.Rect) -> list[_Atom]:
    out = []
    for block in page.get_text("rawdict", clip=box, flags=_FLAGS)["blocks"]:
        for line in block.get("lines", []):
            for span in line["spans"]:
                cmex = "CMEX" in span["font"].upper()
                for ch in span["chars"]:
                    c = ch["c"]
                    x0, y0, x1, y1 = ch["bbox"]
                    if not c.strip() or not box.contains(pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)):
                        continue
                    out.append(_Atom(_CMEX.get(c, c) if cmex else c, x0, y0, x1, y1, span["size"]))
    return out


def short_strokes(page: pymupdf.Page) -> list[tuple[float, float, float]]:
    """(x0, y, x1) of the page's short horizontal strokes: fraction bars and radicals' overbars among them."""
    return horizontal_rules(page, min_width=3.0, max_tilt=0.8, max_height=1.2)


def _over(atoms: list[_Atom], bar) -> list[_Atom]:
    return [a for a in atoms if bar[0] - 1 <= a.cx <= bar[2] + 1]


def _radical(atoms: list[_Atom], bar) -> list[_Atom] | None:
    """A radical sign whose top meets the bar's left end: the glyphs under the bar are its radicand."""
    sign = next((a for a in atoms if a.text == "√" and abs(a.x1 - bar[0]) < 3 and a.y0 - 3 <= bar[1] <= a.y1), None)
    if sign is None:
        return None
    under = [a for a in _over(atoms, bar) if a is not sign and a.y0 >= bar[1] - 1]
    if not under:
        return None
    merged = _Atom(f"√({_read(under)})", sign.x0, min(a.y0 for a in [sign, *under]), max(a.x1 for a in under),
                   max(a.y1 for a in [sign, *under]), sign.size)
    return [a for a in atoms if a is not sign and a not in under] + [merged]


def _fraction(atoms: list[_Atom], bar, size: float) -> list[_Atom] | None:
    near = [a for a in _over(atoms, bar) if abs(a.cy - bar[1]) < 2.5 * size]
    num = [a for a in near if a.cy < bar[1]]
    den = [a for a in near if a.cy > bar[1]]
    if not num or not den:
        return None
    merged = _Atom(f"({_read(num)})/({_read(den)})", min(a.x0 for a in near), min(a.y0 for a in near),
                   max(a.x1 for a in near), max(a.y1 for a in near), max(a.size for a in near))
    return [a for a in atoms if a not in near] + [merged]


def _limits(atoms: list[_Atom]) -> list[_Atom]:
    """A big operator with the glyphs set above and below it: "∑_{i=1}^{n}"."""
    ops = [a for a in atoms if a.text in _OPERATORS]
    for op in ops:
        beside = [a for a in atoms if a is not op and op.x0 - 3 <= a.cx <= op.x1 + 3]
        # a limit grows along its band, but not under the next operator ("∑_{h=1}^{H} ∑_{j=1}^{N}")
        others = [o for o in ops if o is not op]
        free = [a for a in atoms if not any(o.x0 - 3 <= a.cx <= o.x1 + 3 for o in others)]
        upper = _grown([a for a in beside if a.cy < op.cy - 0.15 * (op.y1 - op.y0)], free)
        lower = _grown([a for a in beside if a.cy > op.cy + 0.15 * (op.y1 - op.y0)], free)
        if not upper and not lower:
            continue
        text = op.text + (f"_{{{_read(lower)}}}" if lower else "") + (f"^{{{_read(upper)}}}" if upper else "")
        merged = _Atom(text, op.x0, op.y0, op.x1, op.y1, op.size)
        atoms = [a for a in atoms if a is not op and a not in upper and a not in lower] + [merged]
    return atoms


def _grown(seed: list[_Atom], atoms: list[_Atom]) -> list[_Atom]:
    """A limit wider than its operator ("(u,v)∈T" under a sum): the seed glyphs and those on their band that
    follow on without a gap."""
    if not seed:
        return seed
    group = list(seed)
    band = median(a.cy for a in seed)
    rest = [a for a in atoms if a not in group and abs(a.cy - band) < 0.5 * a.size]
    grew = True
    while grew:
        grew = False
        lo, hi = min(a.x0 for a in group), max(a.x1 for a in group)
        for a in list(rest):
            if a.x0 - hi < 0.5 * a.size and lo - a.x1 < 0.5 * a.size:
                group.append(a)
                rest.remove(a)
                grew = True
    return group


def _rows(atoms: list[_Atom], size: float) -> list[list[_Atom]]:
    """The atoms in rows: a new row where the next centre (top to bottom) is a line's height below the last."""
    rows: list[list[_Atom]] = []
    for a in sorted(atoms, key=lambda a: a.cy):
        if rows and a.cy - rows[-1][-1].cy <= 0.9 * size:
            rows[-1].append(a)
        else:
            rows.append([a])
    return rows


def _read(atoms: list[_Atom]) -> str:
    """Left to right, a space where glyphs stand apart (a gap of more than 0.15 of their size)."""
    out, prev = "", None
    for a in sorted(atoms, key=lambda a: a.x0):
        if prev is not None and a.x0 - prev.x1 > 0.15 * min(a.size, prev.size):
            out += " "
        out += a.text
        prev = a if prev is None or a.x1 > prev.x1 else prev
    return out.strip()


__all__ = ["equation_text", "short_strokes"]

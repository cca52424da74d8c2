"""The words printed inside a figure, read as a chart prints them.

A PDF's text layer holds a chart's words as lines with boxes and a writing direction, but read as one string
("0 10 20 30 Accuracy bias rate correct label ...") a model cannot tell an axis title from a legend entry or
one panel's ticks from the next. :func:`read_figure` groups the lines by the conventions charts share:

* a **y axis** is a column of numbers sharing a right edge (tick labels), titled by the rotated line just left of
  it; stacked panels give one column each, cut where the spacing jumps or the values turn back (an axis's ticks
  run one way and never repeat: a column of equal numbers is a table or matrix, read in rows);
* an **x axis** is a row of numbers at one height, titled by the line centred just below it and alone at its
  height; side-by-side panels give one row each, cut the same way;
* everything else is read in **rows**, top to bottom and left to right (legend entries, panel titles, category
  labels, values printed on bars), and rotated lines no axis claims are kept apart.

Nothing here names a paper or a chart: it is geometry only. The model call renders the result
(:func:`agents.qa.render.render_item`).
"""
from __future__ import annotations

import re
from statistics import median
from typing import Literal

from pydantic import BaseModel, ConfigDict

_NUMBER = re.compile(r"[−\-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?")
_ALIGN = 3.0  # points: tick labels of one axis share a right edge (y) or a baseline (x) within this
_JUMP = 2.5  # a gap this many times the axis's usual tick spacing starts another panel's axis
_TITLE_GAP = 30.0  # points: an axis title sits at most this far from its tick labels
_MIN_TICKS = 3


class FigureLine(BaseModel):
    """One line of text inside a figure: its words, its box ``(x0, y0, x1, y1)`` in PDF points, and whether it
    runs vertically (a rotated axis title or category label)."""

    model_config = ConfigDict(frozen=True)
    text: str
    box: tuple[float, float, float, float]
    rotated: bool = False

    @property
    def number(self) -> bool:
        return bool(_NUMBER.fullmatch(self.text.replace(" ", "")))

    @property
    def value(self) -> float:
        """The number a tick label prints (0.0 for a line that is not one)."""
        if not self.number:
            return 0.0
        return float(self.text.replace(" ", "").replace(",", "").replace("%", "").replace("−", "-") or 0)


class Axis(BaseModel):
    """An axis of a chart: ``x`` or ``y``, its title (``""`` when none is printed next to it) and its tick labels
    in the order the axis runs (a y axis bottom to top, an x axis left to right)."""

    model_config = ConfigDict(frozen=True)
    which: Literal["x", "y"]
    title: str = ""
    ticks: list[str]


class FigureText(BaseModel):
    """What a figure prints, grouped: its axes, the rest of its horizontal lines in rows, and rotated lines no
    axis claims. ``words`` is all of it as one string (the order the PDF gives)."""

    model_config = ConfigDict(frozen=True)
    axes: list[Axis] = []
    rows: list[list[str]] = []
    rotated: list[str] = []
    words: str = ""

    def __bool__(self) -> bool:
        return bool(self.words)


def _x_centre(box) -> float:
    return (box[0] + box[2]) / 2


def _y_centre(box) -> float:
    return (box[1] + box[3]) / 2


def _runs(lines: list[FigureLine], key, pos) -> list[list[FigureLine]]:
    """Lines sharing ``key`` (within _ALIGN), each group cut where the step along ``pos`` jumps: the tick
    labels of one axis each."""
    groups: list[list[FigureLine]] = []
    for ln in sorted(lines, key=key):
        if groups and abs(key(ln) - key(groups[-1][0])) <= _ALIGN:
            groups[-1].append(ln)
        else:
            groups.append([ln])
    runs: list[list[FigureLine]] = []
    for g in groups:
        g.sort(key=pos)
        steps = [pos(b) - pos(a) for a, b in zip(g, g[1:])]
        usual = median(steps) if steps else 0.0
        run = [g[0]]
        for ln, step in zip(g[1:], steps):
            turn = len(run) >= 2 and _sign(ln.value - run[-1].value) * _sign(run[-1].value - run[-2].value) < 0
            if (usual > 0 and step > _JUMP * usual) or turn:
                runs.append(run)
                run = []
            run.append(ln)
        runs.append(run)
    return [r for r in runs if len(r) >= _MIN_TICKS and all(a.value != b.value for a, b in zip(r, r[1:]))]


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _span(run: list[FigureLine]) -> tuple[float, float, float, float]:
    return (min(r.box[0] for r in run), min(r.box[1] for r in run), max(r.box[2] for r in run),
            max(r.box[3] for r in run))


def _y_title(span, candidates: list[FigureLine]) -> FigureLine | None:
    """The rotated line just left of a column of tick labels, level with it."""
    near = [c for c in candidates if c.rotated and c.box[2] <= span[0] + _ALIGN and span[0] - c.box[2] <= _TITLE_GAP
            and span[1] - _ALIGN <= _y_centre(c.box) <= span[3] + _ALIGN]
    return max(near, key=lambda c: c.box[2], default=None)


def _x_title(span, candidates: list[FigureLine]) -> FigureLine | None:
    """The horizontal line just below a row of tick labels, centred under it and alone at its height there (a
    legend row under an axis holds several entries side by side, often off centre)."""
    width = span[2] - span[0]
    near = [c for c in candidates if not c.rotated and not c.number and c.box[1] >= span[3] - _ALIGN
            and c.box[1] - span[3] <= _TITLE_GAP / 2 and abs(_x_centre(c.box) - (span[0] + span[2]) / 2) <= width / 6]
    best = min(near, key=lambda c: c.box[1], default=None)
    if best is None or any(c is not best and not c.rotated and c.box[1] <= _y_centre(best.box) <= c.box[3]
                           and c.box[2] >= span[0] and c.box[0] <= span[2] for c in candidates):
        return None
    return best


def _rows(lines: list[FigureLine]) -> list[list[str]]:
    """Horizontal lines in reading order: a row is the lines whose middles lie inside the height of its first
    (topmost) line. Measured against the first line only, labels stacked tighter than their own height (a column of
    category names beside a column of legend entries) stay one a row instead of chaining into one."""
    rows: list[list[FigureLine]] = []
    for ln in sorted(lines, key=lambda ln: (_y_centre(ln.box), ln.box[0])):
        first = rows[-1][0] if rows else None
        if first is not None and first.box[1] - 1 <= _y_centre(ln.box) <= first.box[3] + 1:
            rows[-1].append(ln)
        else:
            rows.append([ln])
    return [[ln.text for ln in sorted(row, key=lambda ln: ln.box[0])] for row in rows]


def read_figure(lines: list[FigureLine]) -> FigureText:
    """Group a figure's lines into axes, rows and rotated labels (see the module docstring)."""
    lines = [ln for ln in lines if ln.text.strip()]
    if not lines:
        return FigureText()
    numbers = [ln for ln in lines if ln.number and not ln.rotated]
    axes: list[tuple[tuple, Axis]] = []
    used: set[int] = set()
    def claim(run: list[FigureLine], find_title) -> tuple[tuple, str]:
        """Mark an axis's ticks and its title (found among the lines no axis holds yet) used."""
        span = _span(run)
        used.update(id(r) for r in run)
        title = find_title(span, [c for c in lines if id(c) not in used])
        if title:
            used.add(id(title))
        return span, title.text if title else ""

    for run in _runs(numbers, key=lambda ln: ln.box[2], pos=lambda ln: _y_centre(ln.box)):
        span, title = claim(run, _y_title)
        axes.append((span, Axis(which="y", title=title, ticks=[r.text for r in run[::-1]])))
    rest = [ln for ln in numbers if id(ln) not in used]
    for run in _runs(rest, key=lambda ln: _y_centre(ln.box), pos=lambda ln: _x_centre(ln.box)):
        span, title = claim(run, _x_title)
        axes.append((span, Axis(which="x", title=title, ticks=[r.text for r in run])))
    axes.sort(key=lambda a: (a[1].which != "y", round(a[0][1] / 50), a[0][0]))
    left = [ln for ln in lines if id(ln) not in used]
    return FigureText(axes=[a for _, a in axes], rows=_rows([ln for ln in left if not ln.rotated]),
                      rotated=[ln.text for ln in sorted((ln for ln in left if ln.rotated), key=lambda ln: ln.box[0])],
                      words=" ".join(ln.text for ln in lines))

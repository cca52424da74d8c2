"""The words printed inside a figure, read as a chart prints them.

A PDF's text layer holds a chart's words as lines with boxes and a writing direction, but read as one string
("0 10 20 30 Accuracy bias rate correct label ...") a model cannot tell an axis title from a legend entry or
one panel's ticks from the next. :func:`read_figure` groups the lines by the conventions charts share:

* a **y axis** is a column of numbers sharing a right edge (tick labels), titled by the rotated line just left of
  it; stacked panels give one column each, cut where the spacing jumps or the values turn back (an axis's ticks
  run one way and never repeat: a column of equal numbers is a table or matrix, read in rows);
* an **x axis** is a row of numbers at one height, titled by the line centred just below it and alone at its
  height; side-by-side panels give one row each, cut the same way;
* a **grid** is numbers printed in three or more rows and columns that line up (a heatmap's cells, a confusion
  matrix), read before the axes, each row with the label printed beside it and each column with the label under
  or over it; a lattice whose columns (or rows) run in even steps is tick labels of panels side by side, and one
  without labels for most of its rows and columns is a chart's numbers, not a grid;
* **panels** are the labels "(a)", "(b)", ... printed inside the figure, each with the words after it, when they
  run from (a) without a gap;
* everything else is read in **rows**, top to bottom and left to right (legend entries, panel titles, category
  labels, values printed on bars), and rotated lines no axis claims are kept apart.

The drawing marks in the region (filled shapes and short stroked lines, :class:`FigureMark`) add what words alone
do not say:

* a **legend entry** is a swatch (no taller than its label's line, holding no words) or a line sample just left
  of a short label, level with it; a legend has two to a dozen entries in at least two hues, and each entry takes
  its swatch's colour;
* **bars** are filled shapes standing on one baseline (or starting from one left edge), not all one length and
  some longer than thick; each takes the nearest number printed at its end, the category label under it (and the
  group label under that, when that row names two groups or more) or else the x tick centred under its cluster
  of touching bars (a category that is a number), the legend entry of its colour, and, when no number is printed,
  its height read off the y axis. Shapes most of which have neither a number nor an axis are a
  diagram's boxes, not bars.

Nothing here names a paper or a chart: it is geometry only. The model call renders the result
(:func:`agents.qa.render.render_item`).
"""
from __future__ import annotations

import colorsys
import math
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


class FigureMark(BaseModel):
    """A drawn mark inside a figure: a filled shape (a bar, a legend swatch, a box of a diagram) or a stroked line
    (``filled`` False: a legend's line sample), with its box ``(x0, y0, x1, y1)`` and RGB colour (0-1)."""

    model_config = ConfigDict(frozen=True)
    box: tuple[float, float, float, float]
    color: tuple[float, float, float]
    filled: bool = True


class LegendEntry(BaseModel):
    """A legend's entry: its label and the name of its swatch's colour."""

    model_config = ConfigDict(frozen=True)
    label: str
    color: str


class Grid(BaseModel):
    """Numbers printed in rows and columns (a heatmap's cells, a confusion matrix): the line printed just over it
    (``title``, a panel's name, ``""`` when the column labels are there or nothing is), the label printed beside each
    row and under (or over) each column, ``""`` where none is, and the cells row by row (``""`` for an empty one)."""

    model_config = ConfigDict(frozen=True)
    title: str = ""
    rows: list[str]
    columns: list[str]
    cells: list[list[str]]


class Bar(BaseModel):
    """One bar of a bar chart: the number printed at its end (``value``; else ``height``, read off the y axis,
    ``""`` when there is none), its category (the label under its group, and the group label under that) and its
    series (the legend entry of its colour, else the colour's name)."""

    model_config = ConfigDict(frozen=True)
    category: str = ""
    series: str = ""
    value: str = ""
    height: str = ""


_PANEL = re.compile(r"\(([a-zA-Z])\)\s*")


def _panels(lines: list[FigureLine]) -> list[str]:
    """The panels a figure letters, "(a) title", in reading order: each label printed inside the figure with the
    words after it on its line, up to the next label. Only labels that run from (a) without a gap count (two or
    more): a lone "(b)" is a diagram's text."""
    found: dict[str, str] = {}
    for ln in sorted(lines, key=lambda ln: (round(_y_centre(ln.box)), ln.box[0])):
        if ln.rotated:
            continue
        parts = _PANEL.split(ln.text)
        for letter, title in zip(parts[1::2], parts[2::2]):
            found.setdefault(letter, f"({letter}) {title.strip()}".strip())
    for first in ("a", "A"):
        run = [chr(ord(first) + i) for i in range(26)]
        letters = [x for x in run if x in found]
        if len(letters) >= 2 and letters == run[:len(letters)]:
            return [found[x] for x in letters]
    return []


class FigureText(BaseModel):
    """What a figure prints, grouped: its axes, its legend and bars (when its drawing shows them), the rest of its
    horizontal lines in rows, and rotated lines no axis claims. ``words`` is all of it as one string (the order
    the PDF gives)."""

    model_config = ConfigDict(frozen=True)
    axes: list[Axis] = []
    panels: list[str] = []
    legend: list[LegendEntry] = []
    bars: list[Bar] = []
    grids: list[Grid] = []
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


_SWATCH_GAP = 12.0  # points: at most this between a legend swatch's right edge and its label
_SAMPLE = 30.0  # points: a legend's line sample is at most this wide
_BASELINE = 1.0  # points: bars standing on one baseline (or starting at one edge) share it within this
_VALUE_GAP = 10.0  # points: a number printed at a bar's end starts at most this far from it
_LABEL_CHARS = 40  # a legend entry's or a category's label is at most this long
_MAX_ENTRIES = 12  # a legend lists at most this many series
_NEUTRAL = {"white", "black", "gray", "light gray", "dark gray"}
_LABEL_DROP = 8.0  # points: a category label starts at most this far below its bars' baseline (right of for rows)


def color_name(rgb: tuple[float, float, float]) -> str:
    """A colour as a reader names it: "blue", "light orange", "dark green", "gray", "pink"."""
    hue, light, sat = colorsys.rgb_to_hls(*rgb)
    if light >= 0.95:
        return "white"
    if light <= 0.12:
        return "black"
    if sat < 0.2:
        return "light gray" if light > 0.7 else ("dark gray" if light < 0.35 else "gray")
    deg = hue * 360
    names = ((15, "red"), (45, "orange"), (70, "yellow"), (165, "green"), (195, "teal"), (255, "blue"),
             (290, "purple"), (340, "pink"), (361, "red"))
    name = next(n for limit, n in names if deg < limit)
    if name == "red" and light > 0.7:
        return "pink"
    return f"light {name}" if light > 0.72 else (f"dark {name}" if light < 0.3 else name)


def _size(box) -> tuple[float, float]:
    return box[2] - box[0], box[3] - box[1]


def _inside(inner, outer, slack: float = 0.5) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)


def _legend(lines: list[FigureLine], marks: list[FigureMark]) -> list[tuple[FigureLine, FigureMark]]:
    """Labels with a swatch (or a line sample) just left of them, level with them: a legend's entries."""
    out = []
    for ln in lines:
        if ln.rotated or ln.number:
            continue
        h = ln.box[3] - ln.box[1]
        def key(m: FigureMark) -> bool:
            w, mh = _size(m.box)
            # a swatch is no taller than its label's line (a box a word sits beside in a diagram is)
            return (mh <= h + 1 and w <= 2.5 * h + 2) if m.filled else (mh <= 3 and w <= _SAMPLE)
        near = [m for m in marks if key(m) and -1.0 <= ln.box[0] - m.box[2] <= _SWATCH_GAP
                and abs(_y_centre(m.box) - _y_centre(ln.box)) <= max(2.0, h / 2)
                and not any(_inside(w.box, m.box) for w in lines)]  # a box holding words is a diagram's
        if near:
            out.append((ln, max(near, key=lambda m: m.box[2])))
    # a legend names two to a dozen series in a few words each, told apart by colour; one swatch by a sentence is a
    # diagram's bullet, and black or gray marks by words are a diagram's arrows and boxes
    hues = {color_name(m.color) for _, m in out} - _NEUTRAL
    if (len(hues) < 2 or len({(ln.text, m.color) for ln, m in out}) > _MAX_ENTRIES
            or any(len(ln.text) > _LABEL_CHARS for ln, _ in out)):
        return []
    return out


def _distinct(legend: list[tuple[FigureLine, FigureMark]]) -> list[LegendEntry]:
    """The legend's entries once each (panels side by side repeat one legend)."""
    entries = [LegendEntry(label=ln.text, color=color_name(m.color)) for ln, m in legend]
    return list(dict.fromkeys(entries))


def _clusters(values: list[float], tol: float) -> list[list[int]]:
    """Indices of ``values`` grouped where they lie within ``tol`` of the group's first."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and values[i] - values[groups[-1][0]] <= tol:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _on_baselines(marks: list[FigureMark], vertical: bool) -> list[list[FigureMark]]:
    """Marks standing on one baseline (vertical bars: one bottom; horizontal: one left edge), two or more a line,
    not all of one length (a row of equal boxes is a diagram, not a chart)."""
    base = [m.box[3] if vertical else m.box[0] for m in marks]
    out = []
    along = 1 if vertical else 0
    for idx in _clusters(base, _BASELINE):
        group = [marks[i] for i in idx]
        lengths = {round(_size(m.box)[along], 1) for m in group}
        # a bar is longer than it is thick somewhere in the chart; a line's markers are small squares
        long = sum(_size(m.box)[along] >= 1.5 * _size(m.box)[1 - along] for m in group)
        if len(group) >= 2 and len(lengths) >= 2 and long >= 2:
            out.append(group)
    return out


def _axis_reading(runs: list[list[FigureLine]], bar_box, vertical: bool):
    """The value at a bar's end read off the axis it stands against: the tick labels' positions fitted to their
    values (least squares), from the y axis left of a vertical bar or the x axis under a horizontal one."""
    if vertical:
        near = [r for r in runs if _span(r)[2] <= bar_box[0] + 1 and _span(r)[1] - 5 <= bar_box[3] <= _span(r)[3] + 5]
        run = max(near, key=lambda r: _span(r)[2], default=None)
        pos, end = (lambda ln: _y_centre(ln.box)), bar_box[1]
    else:
        near = [r for r in runs if _span(r)[1] >= bar_box[3] - 1 and _span(r)[0] - 5 <= bar_box[0] <= _span(r)[2] + 5]
        run = min(near, key=lambda r: _span(r)[1], default=None)
        pos, end = (lambda ln: _x_centre(ln.box)), bar_box[2]
    if run is None:
        return None
    xs, ys = [pos(ln) for ln in run], [ln.value for ln in run]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var
    value = my + slope * (end - mx)
    step = min(abs(b - a) for a, b in zip(ys, ys[1:]))
    digits = max(0, -math.floor(math.log10(step)) + 1) if step > 0 else 0
    return f"{value:.{digits}f}"


def _series(mark: FigureMark, legend: list[tuple[FigureLine, FigureMark]]) -> str:
    """The legend entry of a mark's colour, else the colour's name."""
    def far(entry) -> float:
        return sum((a - b) ** 2 for a, b in zip(entry[1].color, mark.color))
    best = min(legend, key=far, default=None)
    return best[0].text if best is not None and far(best) <= 0.01 else color_name(mark.color)


def _tick_categories(group: list[FigureMark], ticks: list[tuple[FigureLine, str]]) -> dict[int, str]:
    """The x-axis tick printed under each cluster of touching bars on one baseline (a category's bars, one per
    series), by the id of each bar, with the axis title before it ("pruned ratio 0.5"): the one tick under the
    cluster, when every cluster has one and no two share it. A chart whose categories are numbers (a ratio, a number
    of layers) prints them as x ticks. A histogram takes none: its touching bars make clusters over several ticks,
    and its spaced bars leave some clusters without a tick or share one tick at their edges."""
    base = max(m.box[3] for m in group)
    under = [(ln, title) for ln, title in ticks if -3 <= ln.box[1] - base <= 2 * _LABEL_DROP]
    clusters: list[list[FigureMark]] = []
    for m in sorted(group, key=lambda m: m.box[0]):
        if clusters and m.box[0] - max(b.box[2] for b in clusters[-1]) <= 0.5:
            clusters[-1].append(m)
        else:
            clusters.append([m])
    named: dict[int, str] = {}
    taken: set[int] = set()
    for cluster in clusters:
        x0, x1 = min(m.box[0] for m in cluster), max(m.box[2] for m in cluster)
        inside = [(ln, title) for ln, title in under if x0 - 1.5 <= _x_centre(ln.box) <= x1 + 1.5]
        if len(inside) != 1 or id(inside[0][0]) in taken:
            return {}
        ln, title = inside[0]
        taken.add(id(ln))
        named.update((id(m), f"{title} {ln.text}" if title else ln.text) for m in cluster)
    return named


def _bars(lines: list[FigureLine], below: list[FigureLine], marks: list[FigureMark],
          legend: list[tuple[FigureLine, FigureMark]], runs: dict[str, list[list[FigureLine]]],
          used: set[int], x_ticks: list[tuple[FigureLine, str]] = ()) -> list[Bar]:
    """The bars of a bar chart with their printed values, categories and series (see the module docstring);
    marks ``used`` the lines they take. ``x_ticks``: the x axes' tick lines with their axis's title, the
    categories of bars that have no word under them."""
    keys = {id(m) for _, m in legend}
    words = [ln for ln in lines if not ln.number]
    shapes = [m for m in marks if m.filled and id(m) not in keys and color_name(m.color) != "white"
              and min(_size(m.box)) >= 0.8 and not any(_inside(w.box, m.box) for w in words)]
    by_side = {v: _on_baselines(shapes, v) for v in (True, False)}
    vertical = max(by_side, key=lambda v: (max((len(g) for g in by_side[v]), default=0), v))
    groups = by_side[vertical]
    if not groups:
        return []
    # listed panel by panel (the baselines' order: top to bottom, left to right), then along each baseline
    bars = [m for g in groups for m in g]
    panel = {id(m): i for i, g in enumerate(groups) for m in g}
    # the number printed at each bar's end (just beyond it, or just inside), nearest first, each number once
    numbers = [ln for ln in lines if ln.number and id(ln) not in used]
    pairs = []
    for b, m in enumerate(bars):
        x0, y0, x1, y1 = m.box
        for n, ln in enumerate(numbers):
            if vertical and x0 - 1.5 <= _x_centre(ln.box) <= x1 + 1.5 and -2 <= y0 - ln.box[3] <= _VALUE_GAP:
                pairs.append((abs(y0 - ln.box[3]), b, n))
            elif vertical and x0 - 1.5 <= _x_centre(ln.box) <= x1 + 1.5 and ln.box[1] >= y0 - 1 and ln.box[3] <= y1 + 1:
                pairs.append((_VALUE_GAP + ln.box[1] - y0, b, n))
            elif not vertical and y0 - 1.5 <= _y_centre(ln.box) <= y1 + 1.5 and -2 <= ln.box[0] - x1 <= _VALUE_GAP:
                pairs.append((abs(ln.box[0] - x1), b, n))
    value: dict[int, FigureLine] = {}
    taken: set[int] = set()
    for _, b, n in sorted(pairs):
        if b not in value and id(numbers[n]) not in taken:
            value[b] = numbers[n]
            taken.add(id(numbers[n]))
    # the category under each bar: the nearest label of the first row under its baseline, and the group label in
    # the row under that one (left of the baseline for horizontal bars)
    labels = [ln for ln in words + [w for w in below if not w.number]
              if id(ln) not in used and len(ln.text) <= _LABEL_CHARS]
    ticked = {k: v for g in groups for k, v in _tick_categories(g, list(x_ticks)).items()} if vertical else {}
    out = []
    for b, m in enumerate(bars):
        base = m.box[3] if vertical else m.box[0]
        if vertical:
            first = [ln for ln in labels if -3 <= ln.box[1] - base <= _LABEL_DROP]
            label = min(first, key=lambda ln: abs(_x_centre(ln.box) - _x_centre(m.box)), default=None)
            if label is not None and abs(_x_centre(label.box) - _x_centre(m.box)) > max(_size(label.box)[0], 30):
                label = None
            group = None
            if label is not None:
                # a row of group labels under the categories names two groups or more ("QASC", "CSQA2"); one
                # text repeated under each panel is the panels' axis title
                second = [ln for ln in labels if 0 <= ln.box[1] - label.box[3] + 1 <= 12 and ln is not label]
                if len({ln.text for ln in second}) >= 2:
                    group = min(second, key=lambda ln: abs(_x_centre(ln.box) - _x_centre(m.box)))
        else:
            first = [ln for ln in labels if -3 <= base - ln.box[2] <= _LABEL_DROP * 4
                     and m.box[1] - 2 <= _y_centre(ln.box) <= m.box[3] + 2]
            label = max(first, key=lambda ln: ln.box[2], default=None)
            group = None
        taken.update(id(ln) for ln in (label, group) if ln is not None)
        category = " / ".join(ln.text for ln in (label, group) if ln is not None) or ticked.get(id(m), "")
        printed = value.get(b)
        height = "" if printed else (_axis_reading(runs["y" if vertical else "x"], m.box, vertical) or "")
        out.append(((panel[id(m)], m.box[0], -m.box[3]) if vertical else (panel[id(m)], m.box[1], m.box[0]),
                    Bar(category=category, value=printed.text if printed else "", height=height,
                        series=_series(m, legend))))
    # a chart prints its bars' values or has an axis to read them off; shapes with neither are a diagram's boxes
    if sum(bool(bar.value or bar.height) for _, bar in out) * 2 < len(out):
        return []
    used.update(taken)
    return [bar for _, bar in sorted(out, key=lambda x: x[0])]


_GRID_MIN = 3  # rows and columns a grid has at least
_GRID_FILL = 0.75  # share of a grid's cells that print a number
_GRID_LABEL_GAP = 40.0  # points: a grid's row or column label is at most this far from its cells


def _evenly(values: list[float]) -> bool:
    """Three or more values running one way in equal steps (within 5%): tick labels, not a grid's cells."""
    steps = [b - a for a, b in zip(values, values[1:])]
    if len(values) < 3 or not (all(s > 0 for s in steps) or all(s < 0 for s in steps)):
        return False
    return max(abs(s) for s in steps) - min(abs(s) for s in steps) <= 0.05 * max(abs(s) for s in steps)


def _grid_cells(lines: list[FigureLine]) -> tuple[list[FigureLine], dict[int, FigureLine]]:
    """Every number printed upright: a line that is one number, and each number of a line printing only numbers
    ("0.00 -9.31 0.58", "-15.87-11.03": a heatmap's row the PDF holds as one line), placed along that line by its
    characters; with the line each came from."""
    cells, parent = [], {}
    for ln in lines:
        if ln.rotated:
            continue
        if ln.number:
            cells.append(ln)
            continue
        found = list(_NUMBER.finditer(ln.text))
        if len(found) < 2 or _NUMBER.sub("", ln.text).strip():
            continue
        x0, y0, x1, y1 = ln.box
        step = (x1 - x0) / len(ln.text)
        for m in found:
            cell = FigureLine(text=m.group(), box=(x0 + step * m.start(), y0, x0 + step * m.end(), y1))
            cells.append(cell)
            parent[id(cell)] = ln
    return cells, parent


def _grids(lines: list[FigureLine], used: set[int]) -> list[Grid]:
    """The numbers printed in aligned rows and columns (see the module docstring), with their row and column
    labels, one grid for each part of the lattice that labels printed between its columns or rows set apart (two
    heatmaps side by side or stacked); marks ``used`` the lines they take. A part is no grid unless it has at least :data:`_GRID_MIN`
    rows and columns, :data:`_GRID_FILL` of it filled, stands apart from tick labels and has labels beside most of
    its rows and by most of its columns."""
    numbers, parent = _grid_cells(lines)
    if len(numbers) < _GRID_MIN * _GRID_MIN:
        return []
    rows = [[numbers[i] for i in idx] for idx in _clusters([_y_centre(ln.box) for ln in numbers], _ALIGN)]
    rows = [r for r in rows if len(r) >= _GRID_MIN]
    cells = [ln for r in rows for ln in r]
    if len(rows) < _GRID_MIN:
        return []
    width = median(_size(ln.box)[0] for ln in cells)
    columns = [[cells[i] for i in idx]
               for idx in _clusters([_x_centre(ln.box) for ln in cells], max(_ALIGN, 0.3 * width))]
    columns = [c for c in columns if len(c) * 2 >= len(rows)]
    if len(columns) < _GRID_MIN:
        return []
    # every cell to the nearest column within half the spacing: a number placed along its line by its characters
    # lands a little off its column's centre
    xs = sorted(median(_x_centre(ln.box) for ln in c) for c in columns)
    half = min(b - a for a, b in zip(xs, xs[1:])) / 2
    near = {}
    for ln in cells:
        c = min(range(len(xs)), key=lambda k: abs(xs[k] - _x_centre(ln.box)))
        if abs(xs[c] - _x_centre(ln.box)) < half:
            near.setdefault(c, []).append(ln)
    columns = [near.get(c, []) for c in range(len(xs))]
    sources = {id(p) for p in parent.values()}
    words = [ln for ln in lines if not ln.number and id(ln) not in sources and len(ln.text) <= _LABEL_CHARS]
    columns = [c for c in columns if c]
    if len(columns) < _GRID_MIN:
        return []
    top, bottom = min(_span(c)[1] for c in columns), max(_span(c)[3] for c in columns)
    left, right = min(_span(c)[0] for c in columns), max(_span(c)[2] for c in columns)
    # a label printed between two columns, level with the cells, starts another heatmap (its row labels); one
    # printed between two rows, within the cells' width, too (a panel's title, its column labels)
    side = _split(columns, lambda a, b: any(_span(a)[2] <= w.box[0] and w.box[2] <= _span(b)[0]
                                            and top <= _y_centre(w.box) <= bottom for w in words))
    stacked = _split(rows, lambda a, b: any(_span(a)[3] <= w.box[1] and w.box[3] <= _span(b)[1]
                                            and left <= _x_centre(w.box) <= right for w in words))
    found = [_grid_part(block, part, words, used, parent) for block in stacked for part in side
             if len(part) >= _GRID_MIN and len(block) >= _GRID_MIN]
    return [g for g in found if g is not None]


def _split(runs: list[list[FigureLine]], apart) -> list[list[list[FigureLine]]]:
    """``runs`` (columns left to right, or rows top to bottom) cut between each two that ``apart`` sets apart."""
    parts = [[runs[0]]]
    for a, b in zip(runs, runs[1:]):
        if apart(a, b):
            parts.append([])
        parts[-1].append(b)
    return parts


def _grid_part(rows: list[list[FigureLine]], columns: list[list[FigureLine]], words: list[FigureLine],
               used: set[int], parent: dict[int, FigureLine]) -> Grid | None:
    """One grid of a lattice's ``rows`` and ``columns`` (:func:`_grids`), labelled from ``words``; None when it is
    too sparse, tick labels, or unlabelled."""
    row_of = {id(ln): r for r, row in enumerate(rows) for ln in row}
    at = {id(ln): (row_of[id(ln)], c) for c, col in enumerate(columns) for ln in col if id(ln) in row_of}
    placed: list[list[FigureLine | None]] = [[None] * len(columns) for _ in rows]
    for ln in (ln for col in columns for ln in col):
        if id(ln) in at:
            r, c = at[id(ln)]
            placed[r][c] = placed[r][c] or ln
    table = [[ln.text if ln else "" for ln in row] for row in placed]
    kept = [r for r, row in enumerate(table) if sum(bool(x) for x in row) >= _GRID_MIN]
    if len(kept) < _GRID_MIN or sum(bool(table[r][c]) for r in kept for c in range(len(columns))) < (
            _GRID_FILL * len(kept) * len(columns)):
        return None
    values = [[ln.value if ln else None for ln in placed[r]] for r in kept]
    as_rows = [[v for v in row if v is not None] for row in values]
    as_columns = [[row[c] for row in values if row[c] is not None] for c in range(len(columns))]
    if sum(map(_evenly, as_columns)) * 2 >= len(as_columns) or sum(map(_evenly, as_rows)) * 2 >= len(as_rows):
        return None  # the tick labels of panels side by side (or stacked)
    taken = [ln for r in kept for ln in rows[r] if id(ln) in at]
    x0, y0, x1, y1 = _span(taken)
    words = [w for w in words if id(w) not in used]
    centres = [median(_y_centre(ln.box) for ln in rows[r]) for r in kept]
    pitch = median(b - a for a, b in zip(centres, centres[1:]))
    row_labels = []
    for y in centres:
        beside = [w for w in words if w.box[2] <= x0 + 1 and x0 - w.box[2] <= _GRID_LABEL_GAP
                  and abs(_y_centre(w.box) - y) <= pitch / 2]
        best = max(beside, key=lambda w: w.box[2], default=None)
        row_labels.append(best.text if best else "")
        if best:
            taken.append(best)
    xs = [median(_x_centre(ln.box) for ln in col) for col in columns]

    def labels(side: list[FigureLine]) -> tuple[list[str], list[FigureLine]]:
        """Each column's label on one side: a line over one column's centre, or a line over several whose words
        are as many ("left middle right" printed as one line); the nearest line to the cells first."""
        found, took = [""] * len(xs), []
        for w in sorted(side, key=lambda w: min(abs(w.box[1] - y1), abs(y0 - w.box[3]))):
            over = [c for c, x in enumerate(xs) if w.box[0] - 2 <= x <= w.box[2] + 2 and not found[c]]
            parts = w.text.split() if len(over) > 1 else [w.text]
            if over and len(parts) == len(over):
                for c, part in zip(over, parts):
                    found[c] = part
                took.append(w)
        return found, took

    free = [w for w in words if w not in taken and not _PANEL.match(w.text)]  # "(a) ..." titles a panel
    below = labels([w for w in free if w.box[1] >= y1 - 1 and w.box[1] - y1 <= _GRID_LABEL_GAP])
    above = labels([w for w in free if w.box[3] <= y0 + 1 and y0 - w.box[3] <= _GRID_LABEL_GAP])
    # the side labelling most columns; of two labelling half of them or more, the one printed nearer the cells
    def gap(side) -> float:
        return min((w.box[1] - y1 if w.box[1] >= y1 - 1 else y0 - w.box[3] for w in side[1]), default=math.inf)
    both = [x for x in (below, above) if sum(map(bool, x[0])) * 2 >= len(xs)]
    column_labels, took = (min(both, key=gap) if len(both) == 2 else
                           max((below, above), key=lambda x: sum(map(bool, x[0]))))
    # a grid labels its rows and its columns; numbers in lines without labels are a chart's ticks and values
    if sum(map(bool, row_labels)) * 2 < len(row_labels) or sum(map(bool, column_labels)) * 2 < len(column_labels):
        return None
    used.update(id(parent.get(id(ln), ln)) for ln in [*taken, *took])
    over = [w for w in words if id(w) not in used and x0 <= _x_centre(w.box) <= x1
            and (0 <= y0 - w.box[3] <= _GRID_LABEL_GAP or 0 <= w.box[1] - y1 <= _GRID_LABEL_GAP)]
    panel = [w for w in over if _PANEL.match(w.text)]
    best = (min(panel, key=lambda w: min(abs(y0 - w.box[3]), abs(w.box[1] - y1)), default=None)
            or max((w for w in over if w.box[3] <= y0 + 1), key=lambda w: w.box[3], default=None))
    if best is not None:
        used.add(id(best))
    return Grid(title=best.text if best else "", rows=row_labels, columns=column_labels,
                cells=[table[r] for r in kept])


def read_figure(lines: list[FigureLine], marks: list[FigureMark] = (), below: list[FigureLine] = ()) -> FigureText:
    """Group a figure's lines into axes, legend, bars, rows and rotated labels (see the module docstring);
    ``marks`` are the region's drawn marks and ``below`` the lines just under the region (category labels cut
    off by it)."""
    lines = [ln for ln in lines if ln.text.strip()]
    if not lines:
        return FigureText()
    used: set[int] = set()
    grids = _grids(lines, used)
    numbers = [ln for ln in lines if ln.number and not ln.rotated and id(ln) not in used]
    axes: list[tuple[tuple, Axis]] = []
    def claim(run: list[FigureLine], find_title) -> tuple[tuple, str]:
        """Mark an axis's ticks and its title (found among the lines no axis holds yet) used."""
        span = _span(run)
        used.update(id(r) for r in run)
        title = find_title(span, [c for c in lines if id(c) not in used])
        if title:
            used.add(id(title))
        return span, title.text if title else ""

    runs: dict[str, list[list[FigureLine]]] = {"y": [], "x": []}
    x_ticks: list[tuple[FigureLine, str]] = []
    for run in _runs(numbers, key=lambda ln: ln.box[2], pos=lambda ln: _y_centre(ln.box)):
        span, title = claim(run, _y_title)
        runs["y"].append(run)
        axes.append((span, Axis(which="y", title=title, ticks=[r.text for r in run[::-1]])))
    rest = [ln for ln in numbers if id(ln) not in used]
    for run in _runs(rest, key=lambda ln: _y_centre(ln.box), pos=lambda ln: _x_centre(ln.box)):
        span, title = claim(run, _x_title)
        runs["x"].append(run)
        x_ticks += [(ln, title) for ln in run]
        axes.append((span, Axis(which="x", title=title, ticks=[r.text for r in run])))
    axes.sort(key=lambda a: (a[1].which != "y", round(a[0][1] / 50), a[0][0]))
    marks = list(marks)
    legend = _legend([ln for ln in lines if id(ln) not in used], marks)
    used.update(id(ln) for ln, _ in legend)
    bars = _bars(lines, list(below), marks, legend, runs, used, x_ticks) if marks else []
    left = [ln for ln in lines if id(ln) not in used]
    return FigureText(axes=[a for _, a in axes], rows=_rows([ln for ln in left if not ln.rotated]), panels=_panels(lines),
                      legend=_distinct(legend), bars=bars, grids=grids,
                      rotated=[ln.text for ln in sorted((ln for ln in left if ln.rotated), key=lambda ln: ln.box[0])],
                      words=" ".join(ln.text for ln in lines))

"""Page elements found from geometry: captions, tables, figures and display equations.

Tables come from PyMuPDF's table finder (its layout model gates candidates; we run it only on pages that
carry a "Table N:" caption because it costs ~0.5 s a page), with a caption-anchored fallback. Figures are
raster images and vector-drawing clusters next to a "Figure N:" caption. Equations are math-font lines that
stand apart from the running text, usually with a right-aligned "(N)".
"""
from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass, field

import pymupdf

from evidex.tools.ingest.layout import Line, PageLayout, union_rect

TABLE_CAPTION_RE = re.compile(r"^\s*(Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\s*[:.|–—]", re.U)
FIGURE_CAPTION_RE = re.compile(r"^\s*(Figure|FIGURE|Fig\.|FIG\.)\s*([A-Z]?\d+)\s*[:.|–—]", re.U)
# a sub-figure's caption printed under its panel, between the panels and the figure's caption: "(a) Accuracy"
SUBCAPTION_RE = re.compile(r"^\s*\((?:[a-hA-H]|i{1,3}|iv|vi{0,3})\)\s*\S", re.U)
EQ_NUMBER_RE = re.compile(r"\(\s*([A-Z]?\d{1,3}(?:\.\d{1,3})?[a-z]?)\s*\)\s*$")
EQ_NUMBER_ONLY_RE = re.compile(r"^\s*\(\s*([A-Z]?\d{1,3}(?:\.\d{1,3})?[a-z]?)\s*\)\s*$")


@dataclass
class Caption:
    kind: str  # "table" | "figure"
    label: str
    lines: list[Line]
    used: bool = False

    @property
    def text(self) -> str:
        from evidex.tools.ingest.layout import join_lines

        return join_lines([ln.text for ln in self.lines])

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return union_rect(ln.bbox for ln in self.lines)

    @property
    def col(self) -> int:
        return self.lines[0].col


@dataclass
class FoundTable:
    bbox: tuple[float, float, float, float]
    rows: list[list[str]]
    caption: Caption | None = None
    markdown: str = ""


@dataclass
class FoundFigure:
    bbox: tuple[float, float, float, float]
    caption: Caption | None = None


@dataclass
class FoundEquation:
    lines: list[Line] = field(default_factory=list)
    number: str | None = None
    text: str | None = None  # read in two dimensions (fractions, limits, radicals); None: its lines' text

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return union_rect(ln.bbox for ln in self.lines)


# ------------------------------------------------------------------------------------------------ captions


def split_side_by_side_captions(layout: PageLayout) -> None:
    """Two captions set side by side ("Table 2: PG-19 statistics ...   Table 3: Eval. perplexities ...") share
    baselines and were read as one caption, so the first took both tables' region and the second table was lost.
    Such a line, and the lines under it that a gap at the same place splits (the captions' next lines, the two
    tables' rows), become one line per side: the left side's lines first, so each caption reads on in order."""
    lines, out, i = layout.lines, [], 0
    while i < len(lines):
        ln = lines[i]
        groups = ln.frag_groups if ln.kind == "text" and len(ln.frags) > 1 else []
        cuts = [g[0].x0 for n, g in enumerate(groups) if n and _caption_start(g)]
        if not cuts or not _caption_start(groups[0]):
            out.append(ln)
            i += 1
            continue
        block, j = [ln], i + 1
        while j < len(lines) and j - i < 40:
            nxt = lines[j]
            # a line across a cut (running text under the pair) or after a blank ends the pair
            if (nxt.kind != "text" or nxt.y0 - block[-1].y1 > 1.5 * nxt.size
                    or any(f.x0 < x - 1 < f.x1 for f in nxt.frags for x in cuts)):
                break
            block.append(nxt)
            j += 1
        edges = [float("-inf"), *[x - 1 for x in cuts], float("inf")]
        for lo, hi in zip(edges, edges[1:]):
            for b in block:
                side = [f for f in b.frags if lo <= f.x0 < hi]
                if side:
                    out.append(Line(side, b.page_number, b.col, b.kind, b.index))
        i = j
    layout.lines[:] = out


def _caption_start(frags: list) -> bool:
    text = " ".join(f.text.strip() for f in frags)
    return bool(TABLE_CAPTION_RE.match(text) or FIGURE_CAPTION_RE.match(text))


def find_captions(layout: PageLayout) -> list[Caption]:
    split_side_by_side_captions(layout)
    caps: list[Caption] = []
    lines = layout.lines
    i = 0
    while i < len(lines):
        ln = lines[i]
        m_t = TABLE_CAPTION_RE.match(ln.text)
        m_f = None if m_t else FIGURE_CAPTION_RE.match(ln.text)
        if ln.kind != "text" or not (m_t or m_f) or (i and _mid_paragraph(lines[i - 1], ln)):
            i += 1
            continue
        m = m_t or m_f
        cap = Caption("table" if m_t else "figure", f"{m.group(1)} {m.group(2)}", [ln])
        j = i + 1
        while j < len(lines) and len(cap.lines) < 15:
            nxt, prev = lines[j], cap.lines[-1]
            if (
                nxt.kind != "text"
                or nxt.col != prev.col
                or nxt.y0 - prev.y1 > 0.8 * prev.size
                or nxt.y0 < prev.y0
                or abs(nxt.size - prev.size) > 1.2
                or TABLE_CAPTION_RE.match(nxt.text)
                or FIGURE_CAPTION_RE.match(nxt.text)
                or not _continues_caption(ln, prev, nxt)
            ):
                break
            cap.lines.append(nxt)
            j += 1
        for c in cap.lines:
            c.kind = "caption"
        caps.append(cap)
        i = j
    return caps


def _mid_paragraph(prev: Line, ln: Line) -> bool:
    """A line that goes on with the sentence of the prose line right above it ("... are listed in" /
    "Table 9. AdamW is used ...") is a reference that wrapped to the line start, not a caption."""
    return (
        prev.kind == "text"
        and prev.col == ln.col
        and 0 <= ln.y0 - prev.y1 <= 0.5 * ln.size
        and abs(prev.size - ln.size) <= 0.5
        and len(prev.text.split()) >= 5
        and not prev.text.rstrip().endswith((".", ":", ";", "!", "?"))
    )


def _continues_caption(first: Line, prev: Line, nxt: Line) -> bool:
    """Caption paragraphs are left-aligned, centred or hanging-indented running text; a table header right
    under a caption is a row of widely spaced cells."""
    if len(nxt.parts) >= 3:
        return False
    if abs(nxt.x0 - first.x0) <= 3:
        return True
    if abs((nxt.x0 + nxt.x1) / 2 - (prev.x0 + prev.x1) / 2) <= 4:
        return True
    return first.x0 < nxt.x0 <= first.x0 + 70 and nxt.x1 <= prev.x1 + 3 and prev.x1 - prev.x0 > 0.6 * (first.x1 - first.x0)


# ------------------------------------------------------------------------------------------------ tables


def _rows_to_markdown(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    norm = [[(c or "").replace("\n", " ").replace("|", "\\|").strip() for c in r] + [""] * (width - len(r)) for r in rows]
    out = ["|" + "|".join(norm[0]) + "|", "|" + "|".join(["---"] * width) + "|"]
    out += ["|" + "|".join(r) + "|" for r in norm[1:]]
    return "\n".join(out)


# One value of a numeric cell: a number with its marks (sign, thousands commas, %, a K/M/B scale, daggers, stars,
# a bracketed spread such as "(0.3)"), or a placeholder dash.
_VALUE_TOKEN = re.compile(r"^(?:[-+−±~<>≈]?\(?\d[\d,]*(?:\.\d+)?\)?[%KMBkmb]?[*†‡§¶′]*|[-–—]|n/?a|N/?A)$")


def _values(cell: str) -> list[str] | None:
    """The cell's values when every whitespace-separated token is one, else None. A bracketed or ± token is the
    spread of the value before it ("37.17 (0.97)", "81.2 ±0.4" are one value each)."""
    tokens = cell.split()
    if not tokens or not all(_VALUE_TOKEN.match(t) for t in tokens):
        return None
    values: list[str] = []
    for t in tokens:
        if values and t[0] in "(±":
            values[-1] = f"{values[-1]} {t}"
        else:
            values.append(t)
    return values


def _packed_width(rows: list[list[str]], j: int) -> tuple[int, int] | None:
    """(k, first value row) when column ``j`` of the (padded) rows packs k >= 2 columns: below its header every
    non-empty cell, two at least, holds exactly k values (a row whose only text is in this column is a section
    label and does not count)."""
    first, widths, cells = None, set(), 0
    for i, row in enumerate(rows):
        cell = row[j].strip()
        if not cell:
            continue
        vals = _values(cell)
        if vals is None:
            if first is None or sum(bool(c.strip()) for c in row) == 1:
                continue  # header text above the values, or a section label
            return None
        first = i if first is None else first
        widths.add(len(vals))
        cells += 1
    if cells < 2 or len(widths) != 1 or (k := widths.pop()) < 2:
        return None
    return k, first


def _split_header(cell: str, k: int) -> list[str]:
    """A header cell over k packed columns: one name per word when it has k words, k even runs of words when
    its word count is a multiple of k ("Abs. Avg Nor. Avg" over 2), else the whole text over the first."""
    words = cell.split()
    if words and len(words) % k == 0:
        n = len(words) // k
        return [" ".join(words[i * n:(i + 1) * n]) for i in range(k)]
    return [cell.strip()] + [""] * (k - 1)


def split_packed_columns(rows: list[list[str]]) -> list[list[str]]:
    """Rows with each packed column split into its columns.

    Text extraction from PDF tables set in small type often reads sub-columns that sit closer than a word gap
    as one cell ("98.5 70.3" under "ACC F1"); a small model then reads the wrong number. A column is split
    only when every value cell below its header holds the same number (k >= 2) of numeric tokens, so a cell of
    words ("Task Arithmetic") or a row-label column is never cut.
    """
    if not rows:
        return rows
    width = max(len(r) for r in rows)
    grid = [[(c or "") for c in r] + [""] * (width - len(r)) for r in rows]
    for j in reversed(range(width)):  # right to left, so the indices still to visit stay put
        found = _packed_width(grid, j)
        if found is None:
            continue
        k, first = found
        for i, row in enumerate(grid):
            cell = row[j]
            if i >= first and (vals := _values(cell)) is not None:
                parts = vals
            elif i < first:
                parts = _split_header(cell, k)
            else:  # a section label or an empty cell
                parts = [cell.strip()] + [""] * (k - 1)
            row[j:j + 1] = parts
    return grid


def rows_to_html(rows: list[list[str]], caption: str = "") -> str:
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    for i, r in enumerate(rows):
        tag = "th" if i == 0 else "td"
        cells = "".join(f"<{tag}>{html.escape((c or '').replace(chr(10), ' ').strip())}</{tag}>" for c in r)
        out.append(f"<tr>{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def detect_tables(page: pymupdf.Page, layout: PageLayout, captions: list[Caption], mode: str) -> list[FoundTable]:
    """Tables next to "Table N:" captions.

    fast: the region is bounded by the horizontal rules next to the caption (booktabs/grid tables) or, for
    rule-less tables, by the run of tabular-looking lines; cells come from word columns (~10 ms a table).
    layout: PyMuPDF's table finder gated by its layout model (better cell grids, ~0.5-1.5 s a page).
    """
    table_caps = [c for c in captions if c.kind == "table"]
    if mode == "off" or not table_caps:
        return []
    found: list[FoundTable] = []
    if mode == "layout":
        try:
            candidates = list(page.find_tables().tables)
        except Exception:  # the finder can fail on odd drawings; the fallback still gives the caption's region
            candidates = []
        for t in candidates:
            if t.row_count < 2 or t.col_count < 2:
                continue
            try:  # Table.to_markdown re-extracts every cell (~0.5 s a table); rows are enough for both formats
                rows = [[c if c is not None else "" for c in r] for r in t.extract()]
            except Exception:
                continue
            found.append(FoundTable(tuple(t.bbox), rows))
        _match_captions(found, table_caps)
    words = None
    open_caps = [c for c in table_caps if not c.used]
    rules = horizontal_rules(page) if open_caps else []
    ruled = _one_side_per_page([_rule_regions(layout, cap, rules) for cap in open_caps],
                               [c.bbox for c in captions if c.kind == "figure"])
    for cap, region in zip(open_caps, ruled):
        region = region or _fallback_region(layout, cap)
        if region is None:
            continue
        if words is None:
            words = page.get_text("words", flags=TEXT_FLAGS_WORDS)
        rows, ys = word_grid(words, region, labels_above=_labels_on_top(words, region, cap.bbox))
        inner_rules = [y for x0, y, x1 in rules if region[1] + 2 < y < region[3] - 2 and _hoverlap((x0, 0, x1, 1), region) > 0.8]
        rows = carry_group_labels(rows, ys, inner_rules)
        if len(rows) < 2:
            continue
        cap.used = True
        found.append(FoundTable(region, rows, caption=cap))
    found.sort(key=lambda t: (t.bbox[1], t.bbox[0]))
    for t in found:
        t.rows = split_packed_columns(t.rows)
        for ln in layout.lines:
            if ln.kind == "text" and _inside(ln.bbox, t.bbox):
                ln.kind = "table"
    return found


TEXT_FLAGS_WORDS = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE


def horizontal_rules(page: pymupdf.Page, min_width: float = 20.0, max_tilt: float = 1.0,
                     max_height: float = 2.0) -> list[tuple[float, float, float]]:
    """(x0, y, x1) of thin horizontal strokes (a rise under ``max_tilt``) and hairline rectangles (lower than
    ``max_height``) wider than ``min_width`` pt, top to bottom: table rules by default; fraction bars and
    radicals' overbars with a few points' width (:mod:`tools.ingest.equation_text`)."""
    out = []
    try:
        drawings = page.get_drawings()
    except Exception:
        return out
    for d in drawings:
        for item in d["items"]:
            if item[0] == "l":
                a, b = item[1], item[2]
                if abs(a.y - b.y) < max_tilt and abs(a.x - b.x) > min_width:
                    out.append((min(a.x, b.x), (a.y + b.y) / 2, max(a.x, b.x)))
            elif item[0] == "re":
                r = item[1]
                if r.height < max_height and r.width > min_width:
                    out.append((r.x0, (r.y0 + r.y1) / 2, r.x1))
    out.sort(key=lambda r: r[1])
    return out


def _one_side_per_page(options: list[dict[str, tuple[float, tuple]]], figure_captions: list[tuple] = ()
                       ) -> list[tuple | None]:
    """One ruled region per caption, read with one caption convention for the whole page.

    A caption between two stacked tables is near both; the nearest one is often the next table's, so two
    captions would claim one table and the other table would be lost (one paper's Table 1 carried Table 2's
    numbers). Papers put all table captions on one side (ACL: below; many ML venues: above), so each page
    is read under both conventions and the one that gives more captions a table of their own wins; ties go to
    the side that gives fewer captions a figure's region (one that ends right above a figure caption of
    ``figure_captions``, the boxes of the page's "Figure N:" captions: the ruled box or gridlines of a plot),
    then to the shorter caption-to-rule distances. A caption with no table on the chosen side may still take the
    other side's, if no caption has it.
    """

    def assign(side: str):
        other = "above" if side == "below" else "below"
        out: list[tuple | None] = [opts[side][1] if side in opts else None for opts in options]
        for i, opts in enumerate(options):
            if out[i] is None and other in opts and opts[other][1] not in out:
                out[i] = opts[other][1]
        distinct = len({r for r in out if r is not None})
        dist = sum(opts[s][0] for opts, r in zip(options, out) for s in opts if r is not None and opts[s][1] == r)
        figures = sum(any(0 <= f[1] - r[3] <= 30 and _hoverlap(r, f) > 0.5 for f in figure_captions)
                      for r in out if r)
        return (-distinct, figures, dist), out

    if not options:
        return []
    return min(assign("below"), assign("above"), key=lambda scored: scored[0])[1]


def _rule_regions(layout: PageLayout, cap: Caption, rules) -> dict[str, tuple[float, tuple]]:
    """{"below"/"above": (distance, region)}: the group of horizontal rules on each side of a caption."""
    cb = cap.bbox
    x_lo, x_hi = layout.column_extent(cap.col)
    mine = [r for r in rules if x_lo - 5 <= (r[0] + r[2]) / 2 <= x_hi + 5 and _hoverlap((r[0], 0, r[2], 1), cb) > 0.2]
    stoppers = [ln for ln in layout.lines if ln.kind in ("caption", "heading") and ln not in cap.lines]

    def grow(side: str):
        if side == "below":
            cand = [r for r in mine if r[1] >= cb[3] - 2]
        else:
            cand = sorted((r for r in mine if r[1] <= cb[1] + 2), key=lambda r: -r[1])
        if not cand:
            return None
        first = cand[0]
        dist = (first[1] - cb[3]) if side == "below" else (cb[1] - first[1])
        if dist > 45:
            return None
        group = [first]
        for r in cand[1:]:
            prev = group[-1]
            lo, hi = sorted((prev[1], r[1]))
            span = (r[0], 0, r[2], 1)
            if _hoverlap(span, (first[0], 0, first[2], 1)) < 0.5:
                continue  # a partial rule (cmidrule) or an unrelated stroke; keep looking
            # a caption or heading between two rules ends the table; running text does not: tables of examples
            # (prompts, generated samples) hold whole sentences between their rules
            # (by the line's middle: a caption's box may reach a point past the rule right under it)
            if hi - lo > 260 or any(lo < (ln.y0 + ln.y1) / 2 < hi and _hoverlap(ln.bbox, span) > 0.5 for ln in stoppers):
                break
            group.append(r)
        ys = [r[1] for r in group]
        if len(group) < 2 or max(ys) - min(ys) < 8:
            return None
        return dist, (min(r[0] for r in group), min(ys), max(r[2] for r in group), max(ys))

    return {side: got for side in ("below", "above") if (got := grow(side)) is not None}


def _labels_on_top(words: list, region: tuple, caption_box) -> list[list]:
    """The cells (words, left to right) of a row of group labels set on a table's top rule ("WordNet" and
    "Oxford" over their three columns each, or the column names, with the rule right under them): a line ending
    within a few points of the rule, of at most 8 words in short cells (3 words at most, none a value or the
    caption's, none ending a sentence). Running text above a table stands farther off or reads as sentences.
    [] when there is none."""
    x0, y0, x1, _ = region
    line = sorted((w for w in words if x0 - 2 <= (w[0] + w[2]) / 2 <= x1 + 2 and y0 - 4 <= w[3] <= y0 + 1
                   and w[1] < y0 - 2 and not _inside(w[:4], caption_box)), key=lambda w: w[0])
    if not line or len(line) > 8 or any(_VALUE_TOKEN.match(w[4]) for w in line):
        return []
    cells = _cells_of(line)
    for cell in cells:
        if len(cell) > 3 or (len(cell) > 1 and cell[-1][4].rstrip()[-1:] in ".?!:"):
            return []
    return cells


def _cells_of(row: list, min_gap: float = 0.0) -> list[list]:
    """A row's words (left to right) grouped into cells: words closer than ~half their height (about two
    spaces) are one cell."""
    cells: list[list] = [[row[0]]] if row else []
    for w in row[1:]:
        if w[0] - cells[-1][-1][2] <= max(min_gap, 0.45 * (w[3] - w[1])):
            cells[-1].append(w)
        else:
            cells.append([w])
    return cells


def _fallback_region(layout: PageLayout, cap: Caption) -> tuple[float, float, float, float] | None:
    found = _fallback_table(layout, cap)
    return found.bbox if found is not None else None


def word_grid(words: list, region, min_gap: float = 0.0, labels_above: list[list] = ()) -> tuple[list[list[str]], list[float]]:
    """Rows x columns of cell texts from the words inside a region, and each row's vertical centre.

    Rows are baseline bands; column separators are x positions that (almost) no row covers, so a header
    cell spanning several columns does not merge them. ``labels_above`` (the cells of a label row over the
    region, :func:`_labels_on_top`) become a first row placed in the region's columns, without moving them.
    """
    x0r, y0r, x1r, y1r = region
    # a word is in when its middle is (a group label set sideways at the table's edge, "HotpotQA" read bottom
    # to top beside its rows, starts a point left of the rules)
    ws = [w for w in words if x0r - 2 <= (w[0] + w[2]) / 2 <= x1r + 2 and y0r - 1 <= (w[1] + w[3]) / 2 <= y1r + 1]
    if not ws:
        return [], []
    ws.sort(key=lambda w: ((w[1] + w[3]) / 2, w[0]))
    rows: list[list] = []
    for w in ws:
        cy, h = (w[1] + w[3]) / 2, max(w[3] - w[1], 1.0)
        if rows:
            last = rows[-1]
            ly = sum((x[1] + x[3]) / 2 for x in last) / len(last)
            if abs(cy - ly) <= 0.45 * h:
                last.append(w)
                continue
        rows.append([w])
    row_cells: list[list[tuple[float, float, str, list]]] = []
    for row in rows:
        row.sort(key=lambda w: w[0])
        row_cells.append([(c[0][0], max(x[2] for x in c), " ".join(x[4] for x in c), c)
                          for c in _cells_of(row, min_gap)])
    seps = _column_separators([[(a, b) for a, b, _, _ in r] for r in row_cells])
    numeric_rows = sum(sum(bool(_VALUE_TOKEN.match(w[4])) for w in row) >= 2 for row in rows)
    if not seps and len(rows) >= 2 and numeric_rows >= 0.5 * len(rows):
        # one cell per row of numbers: the columns sit a single space apart ("SPECTER 84.2 88.4 91.5"), so the
        # gaps that line up down the rows are read from the words themselves (not for tables of sentences)
        seps = _column_separators([[(w[0], w[2]) for w in row] for row in rows])
        row_cells = [[(w[0], w[2], w[4], [w]) for w in row] for row in rows]

    def column(a: float, b: float) -> int:
        return sum(1 for s in seps if (a + b) / 2 > s)

    value_middles = sorted((w[0] + w[2]) / 2 for row in rows for w in row if _VALUE_TOKEN.match(w[4]))

    def over_values(w) -> bool:
        """Whether the word stands centred over a column of values (within a quarter of its width)."""
        mid, tol = (w[0] + w[2]) / 2, max(2.0, 0.25 * (w[2] - w[0]))
        i = bisect.bisect_left(value_middles, mid - tol)
        return i < len(value_middles) and value_middles[i] <= mid + tol

    def values_below(ri: int, a: float, b: float) -> bool:
        """Whether the first row under row ``ri`` with words between x ``a`` and ``b`` (a row of one cell, a
        section label, aside) has values there, not another row of names."""
        for cells in row_cells[ri + 1:]:
            inside = [w for c in cells for w in c[3] if a <= (w[0] + w[2]) / 2 <= b]
            if inside and len(cells) > 1:
                return all(_VALUE_TOKEN.match(w[4]) for w in inside)
        return False

    table: list[list[str]] = []
    for ri, r in enumerate(row_cells):
        out = [""] * (len(seps) + 1)
        for a, b, text, cell_words in r:
            if len(cell_words) >= 3 and not any(_VALUE_TOKEN.match(w[4]) for w in cell_words) and all(
                    map(over_values, cell_words)) and values_below(ri, a, b):
                # column names set closer than a word gap ("Test20 Test21 Test20 ..." over seven pairs of value
                # columns) read as one cell: each word stands over its own column of values, with values right
                # under it, so each goes to its column (two in a packed column are split with it); a label
                # spanning columns over a row of sub-column names stays whole
                parts = [(column(w[0], w[2]), w[4]) for w in cell_words]
            else:
                parts = [(column(a, b), text)]
            for col, part in parts:
                out[col] = f"{out[col]} {part}".strip()
        table.append(out)
    ys = [sum((w[1] + w[3]) / 2 for w in row) / len(row) for row in rows]
    if labels_above:
        top = [""] * (len(seps) + 1)
        for cell in labels_above:
            col = column(cell[0][0], max(w[2] for w in cell))
            top[col] = f"{top[col]} {' '.join(w[4] for w in cell)}".strip()
        table.insert(0, top)
        label_words = [w for cell in labels_above for w in cell]
        ys.insert(0, sum((w[1] + w[3]) / 2 for w in label_words) / len(label_words))
    return table, ys


def carry_group_labels(rows: list[list[str]], ys: list[float], rule_ys: list[float]) -> list[list[str]]:
    """Rows with a row group's label (a multirow cell in the first column) written on every row of the group.

    A label set vertically centred on its group is printed on one row only, often a row of its own between two
    data rows ("|Model-7b|||" among six rows with an empty first cell), and a small model then gives the
    group's first row to the wrong label (one model's cell read off the group above).
    Groups are the bands between the table's inner horizontal rules (not the header band above the first):
    in a band where exactly one row names a label, it is written on the band's data rows that have none, and
    a row holding only the label is dropped.
    """
    if len(rows) != len(ys) or not rows or len(rows[0]) < 3 or not rule_ys:
        return rows
    cuts = sorted(rule_ys)
    bands: dict[int, list[int]] = {}
    for i, y in enumerate(ys):
        bands.setdefault(sum(1 for c in cuts if c < y), []).append(i)
    drop: set[int] = set()
    filled = [list(r) for r in rows]
    for band, members in bands.items():
        if band == 0 or len(members) < 2:
            continue
        labelled = [i for i in members if rows[i][0].strip()]
        data = [i for i in members if sum(bool(c.strip()) for c in rows[i][1:]) >= 1]
        if len(labelled) != 1 or len(data) < 2:
            continue
        label = rows[labelled[0]][0]
        if any(not rows[i][0].strip() and sum(bool(c.strip()) for c in rows[i]) < 2 for i in data):
            continue  # a wrapped cell's continuation line, not a data row: leave the band as printed
        for i in data:
            filled[i][0] = filled[i][0] or label
        if labelled[0] not in data:
            drop.add(labelled[0])
    return [r for i, r in enumerate(filled) if i not in drop]


def _column_separators(spans: list[list[tuple[float, float]]]) -> list[float]:
    """x positions between columns: the middles of the runs that (almost) no row's spans cover."""
    lo = int(min(a for r in spans for a, _ in r))
    hi = int(max(b for r in spans for _, b in r)) + 1
    cover = [0] * (hi - lo + 1)
    for r in spans:
        for a, b in r:
            for x in range(int(a) - lo, min(int(b) - lo + 1, len(cover))):
                cover[x] += 1
    limit = max(1, int(0.15 * len(spans)))
    seps: list[float] = []
    run_start = None
    for i, c in enumerate(cover + [limit + 1]):
        if c < limit and run_start is None:
            run_start = i
        elif c >= limit and run_start is not None:
            if run_start > 0 and i < len(cover):
                seps.append(lo + (run_start + i) / 2)
            run_start = None
    return seps


def _hoverlap(a, b) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) / max(1.0, min(a[2] - a[0], b[2] - b[0]))


def _inside(inner, outer, tol: float = 2.0) -> bool:
    return (
        inner[0] >= outer[0] - tol and inner[1] >= outer[1] - tol and inner[2] <= outer[2] + tol and inner[3] <= outer[3] + tol
    )


def _match_captions(items: list, caps: list[Caption], max_gap: float = 90.0) -> None:
    """Greedy nearest caption for each table/figure: same horizontal range, caption just above or below."""
    pairs = []
    for i, item in enumerate(items):
        for j, cap in enumerate(caps):
            cb = cap.bbox
            if _hoverlap(item.bbox, cb) < 0.3:
                continue
            below = item.bbox[1] - cb[3]  # caption above the item
            above = cb[1] - item.bbox[3]  # caption below the item
            gap = min(d for d in (below, above) if d > -8) if max(below, above) > -8 else None
            if gap is not None and gap <= max_gap:
                pairs.append((gap, i, j))
    taken_i, taken_j = set(), set()
    for gap, i, j in sorted(pairs):
        if i in taken_i or j in taken_j:
            continue
        items[i].caption = caps[j]
        caps[j].used = True
        taken_i.add(i)
        taken_j.add(j)


def _looks_tabular(ln: Line) -> bool:
    text = ln.text
    digits = sum(c.isdigit() for c in text)
    return len(ln.parts) >= 2 or digits >= 0.25 * max(1, len(text.replace(" ", "")))


def _is_prose(ln: Line, text_width: float) -> bool:
    """A line of a paragraph: nearly as wide as the text block, one run of words, most of them lower-case
    (a header row of column names is as wide, but capitalised)."""
    words = ln.text.split()
    lower = sum(w[0].islower() for w in words)
    return (ln.x1 - ln.x0) > 0.85 * text_width and len(words) >= 9 and len(ln.parts) == 1 and lower >= 0.5 * len(words)


def _text_width(layout: PageLayout, col: int) -> float:
    """How wide a full line of running text is in a column: the printed text block, not the page column (a
    column's page extent includes its margin, so no line of prose ever filled 85% of it and tables ran on into
    the paragraphs after them)."""
    lo, hi = _col_bounds(layout, col)
    return hi - lo


def _fallback_table(layout: PageLayout, cap: Caption) -> FoundTable | None:
    """Rule-less table next to its caption: contiguous tabular-looking lines above or below it."""
    lines = [ln for ln in layout.lines if ln.kind == "text"]
    cb = cap.bbox
    col_width = _text_width(layout, cap.col)
    best: list[Line] = []
    for direction in ("below", "above"):
        if direction == "below":
            cand = sorted((ln for ln in lines if ln.y0 >= cb[3] - 1 and _hoverlap(ln.bbox, cb) > 0), key=lambda l: l.y0)
        else:
            cand = sorted((ln for ln in lines if ln.y1 <= cb[1] + 1 and _hoverlap(ln.bbox, cb) > 0), key=lambda l: -l.y1)
        picked: list[Line] = []
        edge = cb[3] if direction == "below" else cb[1]
        for ln in cand:
            gap = (ln.y0 - edge) if direction == "below" else (edge - ln.y1)
            # running text after a blank ends the table; sentences packed row after row are a table of examples
            if gap > 2.5 * ln.size or (gap > ln.size and _is_prose(ln, col_width)):
                break
            picked.append(ln)
            edge = ln.y1 if direction == "below" else ln.y0
        score = sum(_looks_tabular(ln) for ln in picked)
        if score >= 2 and score > sum(_looks_tabular(ln) for ln in best):
            best = picked
    if not best:
        return None
    best.sort(key=lambda l: l.y0)
    rows = [ln.parts for ln in best]
    cap.used = True
    return FoundTable(union_rect(ln.bbox for ln in best), rows, caption=cap, markdown=_rows_to_markdown(rows))


def table_markdown(t: FoundTable) -> str:
    return t.markdown or _rows_to_markdown(t.rows)


def table_plain_text(t: FoundTable) -> str:
    """Rows as lines, cells separated by ' ; ': about half the embedding tokens of markdown pipes and rules."""
    lines = [" ; ".join(c.replace("\n", " ").strip() for c in row if c and c.strip()) for row in t.rows]
    return "\n".join(x for x in lines if x)


# ------------------------------------------------------------------------------------------------ figures


def graphic_rects(page: pymupdf.Page, layout: PageLayout, tables: list[FoundTable]) -> tuple[list, list]:
    """(raster image rects, vector drawing cluster rects) on the page, minus table rules and tiny marks."""
    page_rect = page.rect
    images = []
    for info in page.get_image_info():
        r = pymupdf.Rect(info["bbox"]) & page_rect
        if r.is_empty or r.width < 4 or r.height < 4:
            continue
        images.append(tuple(r))
    drawings = []
    try:
        clusters = page.cluster_drawings()
    except Exception:
        clusters = []
    for r in clusters:
        r = pymupdf.Rect(r) & page_rect
        if r.is_empty or r.width < 12 or r.height < 12:
            continue  # rules, underlines, bullets
        if any(_inside(tuple(r), t.bbox, tol=4) for t in tables):
            continue
        drawings.append(tuple(r))
    return images, drawings


def detect_figures(
    page: pymupdf.Page, layout: PageLayout, captions: list[Caption], tables: list[FoundTable], min_points: int
) -> list[FoundFigure]:
    images, drawings = graphic_rects(page, layout, tables)
    graphics = [g for g in images + drawings if not (layout.scanned and _area(g) > 0.5 * layout.width * layout.height)]
    figures: list[FoundFigure] = []
    used: set[int] = set()
    body = page_body_size(layout)
    # running text is what separates a figure from its neighbours; figure labels are smaller or short
    prose = [ln for ln in layout.lines if ln.kind in ("text", "heading") and len(ln.text.split()) >= 6 and ln.size >= body - 1.0]
    captioned: set[int] = set()  # sub-figure caption lines: read inside their figure, and kept as text too
    for cap in (c for c in captions if c.kind == "figure"):
        cb = cap.bbox
        x_lo, x_hi = layout.column_extent(cap.col)
        # sub-figure captions over this caption are part of the figure, not running text that ends it
        subs = _subcaptions(layout, cb, x_lo, x_hi)
        captioned |= subs
        text = [ln for ln in prose if id(ln) not in subs]
        region = None
        for direction in ("above", "below"):
            members = _collect_graphics(graphics, used, cb, x_lo, x_hi, direction, text)
            if members:
                region = union_rect(graphics[k] for k in members)
                used.update(members)
                if direction == "above":
                    region = union_rect([region, *(ln.bbox for ln in layout.lines if id(ln) in subs
                                                   and ln.y0 >= region[1] and _hoverlap(ln.bbox, region) > 0.5)])
                break
        if region is None:
            region = _empty_region_above(layout, cap, x_lo, x_hi, text)
        cap.used = True
        figures.append(FoundFigure(region, cap))
    # large pictures without a caption still count as images
    for k, g in enumerate(images):
        if k in used or g[2] - g[0] < min_points or g[3] - g[1] < min_points:
            continue
        if layout.scanned and _area(g) > 0.5 * layout.width * layout.height:
            continue
        if any(_inside(g, f.bbox, tol=4) for f in figures) or any(_inside(g, t.bbox, tol=4) for t in tables):
            continue
        figures.append(FoundFigure(g, None))
    for f in figures:
        for ln in layout.lines:
            if ln.kind == "text" and id(ln) not in captioned and _inside(ln.bbox, f.bbox, tol=3):
                ln.kind = "figure"
    figures.sort(key=lambda f: (f.bbox[1], f.bbox[0]))
    return figures


def page_body_size(layout: PageLayout) -> float:
    counts: dict[float, int] = {}
    for ln in layout.lines:
        for f in ln.frags:
            key = round(f.size * 2) / 2
            counts[key] = counts.get(key, 0) + f.nchars
    return max(counts, key=counts.get) if counts else 10.0


def _area(r) -> float:
    return max(0.0, r[2] - r[0]) * max(0.0, r[3] - r[1])


def _subcaptions(layout: PageLayout, cb, x_lo: float, x_hi: float, reach: float = 120.0) -> set[int]:
    """The lines (as ``id``) of sub-figure captions printed in the band just above a figure's caption box ``cb``:
    each line that starts with a panel label ("(a) ...", ``SUBCAPTION_RE``) and the lines that carry it on just
    below it, down to the caption."""
    band = [ln for ln in layout.lines if ln.y1 <= cb[1] + 1 and ln.y0 >= cb[1] - reach and x_lo - 2 <= ln.x0
            and ln.x1 <= x_hi + 2 and not FIGURE_CAPTION_RE.match(ln.text)]
    found = [ln for ln in band if SUBCAPTION_RE.match(ln.text)]
    subs = {id(ln) for ln in found}
    while found:
        top = found.pop()
        for ln in band:
            if id(ln) not in subs and 0 <= ln.y0 - top.y1 <= 0.8 * top.size and _hoverlap(ln.bbox, top.bbox) > 0.3:
                subs.add(id(ln))
                found.append(ln)
    return subs


def _collect_graphics(graphics, used, cb, x_lo, x_hi, direction, prose) -> list[int]:
    def in_extent(g) -> bool:
        cx = (g[0] + g[2]) / 2
        return x_lo - 2 <= cx <= x_hi + 2

    def blocked(y_a: float, y_b: float, g) -> bool:
        lo, hi = min(y_a, y_b), max(y_a, y_b)
        return any(ln.y0 >= lo - 1 and ln.y1 <= hi + 1 and _hoverlap(ln.bbox, g) > 0.5 for ln in prose)

    cands = [k for k, g in enumerate(graphics) if k not in used and in_extent(g)]
    if direction == "above":
        cands = [k for k in cands if graphics[k][3] <= cb[1] + 3 and not blocked(graphics[k][3], cb[1], graphics[k])]
        cands.sort(key=lambda k: -graphics[k][3])
    else:
        cands = [k for k in cands if graphics[k][1] >= cb[3] - 3 and not blocked(cb[3], graphics[k][1], graphics[k])]
        cands.sort(key=lambda k: graphics[k][1])
    if not cands:
        return []
    first = graphics[cands[0]]
    gap = (cb[1] - first[3]) if direction == "above" else (first[1] - cb[3])
    if gap > 120:
        return []
    members = [cands[0]]
    lo, hi = first[1], first[3]
    for k in cands[1:]:
        g = graphics[k]
        if direction == "above" and g[3] >= lo - 40 and not blocked(g[3], lo, g):
            members.append(k)
            lo = min(lo, g[1])
        elif direction == "below" and g[1] <= hi + 40 and not blocked(hi, g[1], g):
            members.append(k)
            hi = max(hi, g[3])
    return members


def _empty_region_above(layout: PageLayout, cap: Caption, x_lo: float, x_hi: float, prose: list[Line]):
    """No graphics found (e.g. a text-only figure): the space between the prose above and the caption,
    as wide as the caption."""
    cb = cap.bbox
    above = [ln for ln in prose if ln.y1 <= cb[1] and _hoverlap(ln.bbox, cb) > 0]
    top = max((ln.y1 for ln in above), default=0.07 * layout.height)
    top = max(top, cb[1] - 0.6 * layout.height)
    if cb[1] - top < 4:  # nothing between: keep the caption itself so the row still has a usable box
        return cb
    return (max(cb[0], x_lo), top, min(cb[2], x_hi), cb[1])


# ------------------------------------------------------------------------------------------------ equations


def _mathish(ln: Line) -> bool:
    text = ln.text
    if EQ_NUMBER_ONLY_RE.match(text):
        return True
    if ln.math_ratio >= 0.35:
        return True
    words = re.findall(r"[A-Za-z]{3,}", text)
    symbols = sum(text.count(c) for c in "=+−-×·/^_()[]{}|<>")
    return "=" in text and len(words) <= 4 and symbols >= 2


def detect_equations(layout: PageLayout) -> list[FoundEquation]:
    lines = layout.lines
    n = len(lines)
    anchors: list[int] = []
    numbers: dict[int, str] = {}
    bounds = {col: _col_bounds(layout, col) for col in (-1, 0, 1)}
    for i, ln in enumerate(lines):
        if ln.kind != "text":
            continue
        m_only = EQ_NUMBER_ONLY_RE.match(ln.text)
        if m_only:
            # "(3)" printed far right of its equation is a separate visual line; number the line beside it
            cy = (ln.y0 + ln.y1) / 2
            partner = next(
                (j for j in range(max(0, i - 6), min(n, i + 6)) if j != i and lines[j].kind == "text"
                 and lines[j].col == ln.col and lines[j].y0 - 2 <= cy <= lines[j].y1 + 2 and lines[j].x1 < ln.x0
                 and _mathish(lines[j]) and not EQ_NUMBER_ONLY_RE.match(lines[j].text)),
                None,
            )
            if partner is not None:
                anchors.append(partner)
                numbers[partner] = m_only.group(1)
                anchors.append(i)
            continue
        x_lo, x_hi = bounds[ln.col]
        m = EQ_NUMBER_RE.search(ln.text)
        # a right-aligned "(N)" that stands apart from the rest of the line marks a numbered display equation
        if m and len(ln.frags) >= 1 and ln.x1 >= x_hi - 0.12 * (x_hi - x_lo):
            last = ln.frags[-1]
            head = ln.text[: m.start()].strip()
            apart = len(ln.frags) >= 2 and last.x0 - ln.frags[-2].x1 > 8
            if head and (apart or _mathish(ln)) and len(re.findall(r"[A-Za-z]{4,}", head)) <= 8:
                anchors.append(i)
                numbers[i] = m.group(1)
                continue
        if ln.math_ratio >= 0.6 and len(ln.text) >= 3 and ln.x0 > x_lo + 0.08 * (x_hi - x_lo):
            anchors.append(i)
    # cluster vertically adjacent math lines of one column (limits above/below a sum are separate lines)
    anchor_set = set(anchors)
    groups: list[FoundEquation] = []
    taken: set[int] = set()
    for a in anchors:
        if a in taken:
            continue
        members = [a]
        for step in (-1, 1):
            k = a + step
            while 0 <= k < n and len(members) < 12:
                ln = lines[k]
                ref = lines[members[-1] if step == 1 else members[0]]
                if k in taken or ln.kind != "text" or ln.col != ref.col or not (_mathish(ln) or k in anchor_set):
                    break
                gap = (ln.y0 - ref.y1) if step == 1 else (ref.y0 - ln.y1)
                if gap > 0.9 * ref.size:
                    break
                members.append(k) if step == 1 else members.insert(0, k)
                k += step
        taken.update(members)
        numbered = [k for k in members if k in numbers]
        if len(numbered) <= 1:
            parts = [members]
        else:  # several numbered displays in a row: each line joins the numbered line nearest to it
            parts = [[] for _ in numbered]
            for k in members:
                cy = (lines[k].y0 + lines[k].y1) / 2
                j = min(range(len(numbered)), key=lambda j: abs(cy - (lines[numbered[j]].y0 + lines[numbered[j]].y1) / 2))
                parts[j].append(k)
        for part in parts:
            for k in part:
                lines[k].kind = "equation"
            number = next((numbers[k] for k in part if k in numbers), None)
            body = [k for k in part if not EQ_NUMBER_ONLY_RE.match(lines[k].text)]
            if body:
                groups.append(FoundEquation([lines[k] for k in sorted(body, key=lambda k: (lines[k].y0, lines[k].x0))], number))
    return groups


def _col_bounds(layout: PageLayout, col: int) -> tuple[float, float]:
    same = [x for x in layout.lines if x.col == col and x.kind == "text" and len(x.text) > 30]
    if not same:
        lo, hi = layout.column_extent(col)
        return (lo + 50 if lo == 0 else lo, hi - 50 if hi == layout.width else hi)
    return (min(x.x0 for x in same), max(x.x1 for x in same))

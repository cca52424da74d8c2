"""A figure's printed words read as a chart prints them (tools.paperstore.figure_text), from a real PDF's text
layer (tools.paperstore.regions.text_lines), and rendered once at the model call (agents.qa.render.figure_text)."""
from __future__ import annotations

import pymupdf

from evidex.agents.qa.render import figure_text
from evidex.tools.paperstore.figure_text import FigureLine, read_figure
from evidex.tools.paperstore.regions import text_lines


def _chart_pdf(tmp_path):
    """Two side-by-side panels, each with a rotated y title, y ticks, x ticks, an x title, a panel title and a
    two-entry legend; the right panel's y ticks run on a different scale."""
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=400)
    for left, title, yticks, ytitle in ((60, "Panel One", (0, 10, 20, 30, 40), "Accuracy (%)"),
                                        (330, "Panel Two", (0.5, 1.0, 1.5, 2.0), "Loss")):
        for i, v in enumerate(yticks):
            s = str(v)
            page.insert_text((left + 20 - 5 * len(s), 300 - 50 * i), s, fontsize=8)  # right-aligned column
        page.insert_text((left + 2, 260), ytitle, fontsize=8, rotate=90)  # reads bottom to top
        for i, v in enumerate((1, 2, 4, 8, 16)):
            page.insert_text((left + 30 + 40 * i, 315), str(v), fontsize=8)
        page.insert_text((left + 80, 330), "Number of shots", fontsize=8)
        page.insert_text((left + 90, 80), title, fontsize=9)
        page.insert_text((left + 150, 100), "ours", fontsize=7)
        page.insert_text((left + 150, 110), "baseline", fontsize=7)
    path = tmp_path / "chart.pdf"
    doc.save(path)
    return path


def test_chart_read_from_a_real_pdf(tmp_path):
    with pymupdf.open(_chart_pdf(tmp_path)) as doc:
        lines = text_lines(doc[0], doc[0].rect)
    assert any(ln.rotated and ln.text == "Accuracy (%)" for ln in lines)
    printed = read_figure(lines)
    ys = [a for a in printed.axes if a.which == "y"]
    xs = [a for a in printed.axes if a.which == "x"]
    assert [(a.title, a.ticks) for a in ys] == [("Accuracy (%)", ["0", "10", "20", "30", "40"]),
                                               ("Loss", ["0.5", "1.0", "1.5", "2.0"])]
    # the two panels' x ticks share a baseline: the values turning back (16 -> 1) cut them into two axes
    assert [(a.title, a.ticks) for a in xs] == [("Number of shots", ["1", "2", "4", "8", "16"])] * 2
    assert ["Panel One", "Panel Two"] in printed.rows and ["ours", "ours"] in printed.rows
    assert not printed.rotated and "Accuracy (%)" in printed.words
    text = figure_text(printed)
    assert 'y axis "Accuracy (%)": 0, 10, 20, 30, 40' in text and 'y axis "Loss": 0.5' in text
    assert "Panel One | Panel Two" in text


def _line(text, x0, y0, x1, y1, rotated=False):
    return FigureLine(text=text, box=(x0, y0, x1, y1), rotated=rotated)


def test_stacked_panels_cut_where_the_values_turn_back():
    # two stacked panels whose tick columns share a right edge and nearly touch: 45 ... 5 then 100 ... 0
    top = [_line(str(v), 80, 80 + 16 * i, 87, 88 + 16 * i) for i, v in enumerate((45, 35, 25, 15, 5))]
    bottom = [_line(str(v), 80, 170 + 26 * i, 87, 178 + 26 * i) for i, v in enumerate((100, 50, 0))]
    titles = [_line("CLI", 70, 110, 78, 130, rotated=True), _line("LWF", 70, 190, 78, 210, rotated=True)]
    printed = read_figure(top + bottom + titles)
    assert [(a.title, a.ticks) for a in printed.axes] == [("CLI", ["5", "15", "25", "35", "45"]),
                                                         ("LWF", ["0", "50", "100"])]


def test_what_is_not_an_axis_stays_in_rows():
    # a matrix's column of equal numbers is no axis; rotated category labels no axis claims are kept apart
    matrix = [_line("1", 100, 100 + 10 * i, 104, 108 + 10 * i) for i in range(3)]
    cats = [_line(w, 200 + 10 * i, 200, 208 + 10 * i, 240, rotated=True) for i, w in enumerate(("ALPHA", "BETA"))]
    printed = read_figure(matrix + cats + [_line("two", 10, 5, 20, 10), _line("one", 0, 5, 8, 10)])
    assert printed.axes == [] and printed.rotated == ["ALPHA", "BETA"]
    assert printed.rows[0] == ["one", "two"] and ["1"] in printed.rows
    assert read_figure([]).words == "" and not read_figure([])
    # no axis: a diagram's words in the PDF's block order, cut at a word
    assert figure_text(printed) == printed.words == "1 1 1 ALPHA BETA two one"
    long = read_figure([_line(f"label {i}", 0, 20 * i, 50, 20 * i + 8) for i in range(200)])
    assert figure_text(long, max_chars=100).endswith("label 11 ...")
    chart = read_figure([*(_line(str(v), 0, 100 - 10 * v, 8, 108 - 10 * v) for v in range(5)),
                         *(_line(f"series {i}", 50, 20 * i, 90, 20 * i + 8) for i in range(100))])
    assert figure_text(chart, max_chars=100).endswith("series 7\n...")


def test_a_legend_row_under_an_axis_is_not_its_title():
    # stacked panels: the lower panel's legend (two entries side by side, off centre) sits right under the upper
    # panel's x ticks; the upper panel's x axis stays untitled and the legend stays a row
    ticks = [_line(f"0.{2 * i}", 100 + 36 * i, 148, 109 + 36 * i, 156) for i in range(5)]
    legend = [_line("Ground truth", 120, 159, 190, 166), _line("Context words", 214, 159, 290, 166)]
    printed = read_figure(ticks + legend)
    assert [(a.which, a.title) for a in printed.axes] == [("x", "")]
    assert printed.rows == [["Ground truth", "Context words"]]
    # a line centred under the ticks and alone at its height is the title
    printed = read_figure(ticks + [_line("Probability", 150, 159, 204, 166)])
    assert [(a.which, a.title) for a in printed.axes] == [("x", "Probability")] and printed.rows == []


def test_labels_stacked_tighter_than_their_height_stay_one_a_row():
    """A column of category names beside a column of legend entries, each line taller than the spacing of the
    column: a row is what lies level with its first line, so the two columns pair up line by line instead of
    chaining into one row of every label."""
    names = [_line(w, 20, 364 + 8 * i, 60, 374 + 8 * i) for i, w in enumerate(("Alpha", "Beta", "Gamma", "Delta"))]
    legend = [_line(w, 190, 366 + 8.5 * i, 212, 376 + 8.5 * i) for i, w in enumerate(("Human", "Model A", "Model B"))]
    printed = read_figure(names + legend)
    assert printed.rows == [["Alpha", "Human"], ["Beta", "Model A"], ["Gamma", "Model B"], ["Delta"]]


BLUE, ORANGE = (0.27, 0.45, 0.77), (0.93, 0.49, 0.19)


def _bar_chart_pdf(tmp_path, *, printed: bool = True):
    """Grouped bars on one baseline (y = 300, 2.5 points a unit): categories "Helpful" and "Harmful" under their
    groups, group labels "Set A" and "Set B" under those, series "ours" (blue) and "base" (orange) in a legend of swatches; each
    bar's value printed on top of it (``printed``), the y axis ticked 0-40 on the left."""
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=400)
    for i, v in enumerate((0, 10, 20, 30, 40)):
        page.insert_text((60 - 4 * len(str(v)), 302.5 - 25 * i), str(v), fontsize=7)  # right-aligned, 25 points apart
    heights = {("Helpful", "ours"): 32, ("Helpful", "base"): 12, ("Harmful", "ours"): 4, ("Harmful", "base"): 21}
    for g, category in enumerate(("Helpful", "Harmful")):
        x = 80 + 90 * g
        for s, (series, color) in enumerate((("ours", BLUE), ("base", ORANGE))):
            top = 300 - 2.5 * heights[(category, series)]
            page.draw_rect(pymupdf.Rect(x + 20 * s, top, x + 20 * s + 18, 300), color=None, fill=color)
            if printed:
                page.insert_text((x + 20 * s + 4, top - 2), str(heights[(category, series)]), fontsize=7)
        page.insert_text((x + 8, 312), category, fontsize=7)
    page.insert_text((100, 322), "Set A", fontsize=7)
    page.insert_text((190, 322), "Set B", fontsize=7)
    for k, (series, color) in enumerate((("ours", BLUE), ("base", ORANGE))):
        page.draw_rect(pymupdf.Rect(260, 60 + 12 * k, 266, 66 + 12 * k), color=None, fill=color)
        page.insert_text((268, 66 + 12 * k), series, fontsize=7)
    path = tmp_path / "bars.pdf"
    doc.save(path)
    return path


def _read(path):
    from evidex.tools.paperstore.regions import drawn_marks

    with pymupdf.open(path) as doc:
        page = doc[0]
        return read_figure(text_lines(page, page.rect), drawn_marks(page, page.rect))


def test_bars_take_their_printed_values_categories_and_legend_series(tmp_path):
    printed = _read(_bar_chart_pdf(tmp_path))
    assert [(e.label, e.color) for e in printed.legend] == [("ours", "blue"), ("base", "orange")]
    assert [(b.category, b.series, b.value) for b in printed.bars] == [
        ("Helpful / Set A", "ours", "32"), ("Helpful / Set A", "base", "12"),
        ("Harmful / Set B", "ours", "4"), ("Harmful / Set B", "base", "21")]
    text = figure_text(printed)
    assert "legend (2 entries): ours (blue) | base (orange)" in text
    assert "Helpful / Set A: ours 32, base 12" in text and "Harmful / Set B: ours 4, base 21" in text
    # the values and categories the bars took are not also left as loose rows
    assert "labels" not in text


def test_bars_without_printed_values_are_read_off_the_y_axis(tmp_path):
    printed = _read(_bar_chart_pdf(tmp_path, printed=False))
    assert [(b.series, b.value) for b in printed.bars] == [("ours", ""), ("base", ""), ("ours", ""), ("base", "")]
    heights = [float(b.height) for b in printed.bars]
    assert heights == [32, 12, 4, 21] or all(abs(h - t) <= 1 for h, t in zip(heights, (32, 12, 4, 21)))
    assert "Helpful / Set A: ours ~" in figure_text(printed)


def _numbered_bars_pdf(tmp_path, *, histogram: str = ""):
    """Bars over an x axis of numbers with the title "Pruned ratio" (y axis ticked 0-40, 2.5 points a unit).
    Without ``histogram``: two series side by side per category, the categories 0.9, 0.5 and 0.1 printed as x ticks
    centred under each pair. ``histogram`` "touching" or "spaced": eight bars 20 points apart, 20 or 14 points wide,
    over ticks 0, 10, 20, 30, 40 at every other bar's left edge."""
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=400)
    for i, v in enumerate((0, 10, 20, 30, 40)):
        page.insert_text((60 - 4 * len(str(v)), 302.5 - 25 * i), str(v), fontsize=7)
    if histogram:
        width = 20 if histogram == "touching" else 14
        for i, h in enumerate((3, 9, 17, 30, 24, 12, 6, 2)):
            page.draw_rect(pymupdf.Rect(80 + 20 * i, 300 - 2.5 * h, 80 + 20 * i + width, 300), color=None, fill=BLUE)
        for i, v in enumerate((0, 10, 20, 30, 40)):
            page.insert_text((80 + 40 * i - 2 * len(str(v)), 310), str(v), fontsize=7)
    else:
        for g, (tick, a, b) in enumerate((("0.9", 12, 20), ("0.5", 31, 28), ("0.1", 25, 8))):
            x = 80 + 70 * g
            page.draw_rect(pymupdf.Rect(x, 300 - 2.5 * a, x + 18, 300), color=None, fill=BLUE)
            page.draw_rect(pymupdf.Rect(x + 18, 300 - 2.5 * b, x + 36, 300), color=None, fill=ORANGE)
            page.insert_text((x + 18 - 2 * len(tick), 310), tick, fontsize=7)
        for k, (series, color) in enumerate((("ours", BLUE), ("base", ORANGE))):
            page.draw_rect(pymupdf.Rect(300, 60 + 12 * k, 306, 66 + 12 * k), color=None, fill=color)
            page.insert_text((308, 66 + 12 * k), series, fontsize=7)
    page.insert_text((130, 322), "Pruned ratio", fontsize=7)
    path = tmp_path / "numbered.pdf"
    doc.save(path)
    return path


def test_bars_over_an_axis_of_numbers_take_the_tick_under_their_pair(tmp_path):
    printed = _read(_numbered_bars_pdf(tmp_path))
    assert [(a.which, a.title, a.ticks) for a in printed.axes if a.which == "x"] == [
        ("x", "Pruned ratio", ["0.9", "0.5", "0.1"])]
    assert [(b.category, b.series) for b in printed.bars] == [
        ("Pruned ratio 0.9", "ours"), ("Pruned ratio 0.9", "base"), ("Pruned ratio 0.5", "ours"),
        ("Pruned ratio 0.5", "base"), ("Pruned ratio 0.1", "ours"), ("Pruned ratio 0.1", "base")]
    heights = [float(b.height) for b in printed.bars]
    assert all(abs(h - t) <= 1 for h, t in zip(heights, (12, 20, 31, 28, 25, 8)))
    assert "Pruned ratio 0.5: ours ~" in figure_text(printed)


def test_a_histograms_bars_take_no_tick_as_their_category(tmp_path):
    for histogram in ("touching", "spaced"):  # one run of bars over five ticks; bars some of which have no tick
        printed = _read(_numbered_bars_pdf(tmp_path, histogram=histogram))
        assert [a.ticks for a in printed.axes if a.which == "x"] == [["0", "10", "20", "30", "40"]]
        assert len(printed.bars) == 8 and all(b.category == "" for b in printed.bars)


def test_a_diagram_of_boxes_is_not_a_bar_chart_and_a_bullet_is_not_a_legend(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=400)
    for i, (word, h) in enumerate((("Encoder", 40), ("Decoder", 60), ("Output", 30))):
        page.draw_rect(pymupdf.Rect(50 + 80 * i, 200 - h, 110 + 80 * i, 200), color=None, fill=BLUE)
        page.insert_text((55 + 80 * i, 195), word, fontsize=8)
    page.draw_rect(pymupdf.Rect(50, 250, 55, 255), color=None, fill=ORANGE)
    page.insert_text((58, 256), "the model reads the sentence and writes its summary", fontsize=7)
    path = tmp_path / "diagram.pdf"
    doc.save(path)
    printed = _read(path)
    assert printed.bars == [] and printed.legend == []
    assert "Encoder" in figure_text(printed)


def test_panels_lettered_from_a_are_listed_with_their_titles():
    lines = [_line("(a) Memory size 2 (b) Memory size 5", 0, 100, 200, 108), _line("(c) Accuracy", 0, 200, 60, 208),
             _line("Accuracy", 0, 50, 40, 58)]
    printed = read_figure(lines)
    assert printed.panels == ["(a) Memory size 2", "(b) Memory size 5", "(c) Accuracy"]
    assert figure_text(printed).startswith("panels (3): (a) Memory size 2 | (b) Memory size 5 | (c) Accuracy")
    # a label that does not start a run from (a) is a diagram's text, not a panel
    assert read_figure([_line("(b) the encoder", 0, 0, 80, 8), _line("(c) the decoder", 0, 20, 80, 28)]).panels == []
    assert read_figure([_line("(A) Left", 0, 0, 40, 8), _line("(B) Right", 60, 0, 100, 8)]).panels == ["(A) Left",
                                                                                                          "(B) Right"]


def test_bars_of_stacked_panels_are_listed_panel_by_panel():
    from evidex.tools.paperstore.figure_text import FigureMark

    marks, lines = [], []
    for top, panel in ((100, "upper"), (300, "lower")):  # two panels, one above the other, the same x positions
        for i, (height, name) in enumerate(((40, "A"), (32, "B"))):
            x = 50 + 40 * i
            marks.append(FigureMark(box=(x, top - height, x + 20, top), color=BLUE))
            lines.append(_line(str(height + (top == 300)), x + 5, top - height - 9, x + 15, top - height - 1))
            lines.append(_line(f"{name} {panel}", x, top + 2, x + 20, top + 9))
    printed = read_figure(lines, marks)
    assert [b.category for b in printed.bars] == ["A upper", "B upper", "A lower", "B lower"]
    assert [b.value for b in printed.bars] == ["40", "32", "41", "33"]


def _heatmap_pdf(tmp_path):
    """A 4 x 4 heatmap as plotting libraries print one: a shaded cell per value with the value centred in it, row
    labels rotated left of the rows, column labels under the columns (two of them printed as one line, "STS QQP"),
    and a colour bar ticked 0.00-1.00 on the right whose ticks do not line up with the rows."""
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=400)
    names = ["CoLA", "MRPC", "STS", "QQP"]
    values = [[1.00, -0.20, 0.01, -0.46], [-0.20, 1.00, 0.11, 0.06], [0.01, 0.11, 1.00, 0.25],
              [-0.46, 0.06, 0.25, 1.00]]
    for r, row in enumerate(values):
        for c, v in enumerate(row):
            x, y = 100 + 40 * c, 100 + 30 * r
            shade = 0.5 + v / 2
            page.draw_rect(pymupdf.Rect(x, y, x + 40, y + 30), color=None, fill=(shade, 0.2, 1 - shade))
            text = f"{v:.2f}"
            page.insert_text((x + 20 - 2.2 * len(text), y + 18), text, fontsize=8)
        page.insert_text((92, 100 + 30 * r + 24), names[r], fontsize=8, rotate=90)
    page.insert_text((110, 232), "CoLA", fontsize=8)
    page.insert_text((150, 232), "MRPC", fontsize=8)
    page.insert_text((193, 232), "STS" + " " * 14 + "QQP", fontsize=8)  # one line over two columns
    for i, tick in enumerate(("0.00", "0.25", "0.50", "0.75", "1.00")):
        page.insert_text((290, 210 - 25 * i), tick, fontsize=8)
    path = tmp_path / "heatmap.pdf"
    doc.save(path)
    return path


def test_a_heatmap_is_read_as_a_grid_with_its_row_and_column_labels(tmp_path):
    with pymupdf.open(_heatmap_pdf(tmp_path)) as doc:
        printed = read_figure(text_lines(doc[0], doc[0].rect))
    assert len(printed.grids) == 1
    grid = printed.grids[0]
    assert grid.rows == ["CoLA", "MRPC", "STS", "QQP"] and grid.columns == ["CoLA", "MRPC", "STS", "QQP"]
    assert grid.cells[0] == ["1.00", "-0.20", "0.01", "-0.46"] and grid.cells[3][0] == "-0.46"
    # the grid's numbers are not read as y axes any more (each column was one, before); the colour bar still is
    assert [a.ticks for a in printed.axes] == [["0.00", "0.25", "0.50", "0.75", "1.00"]]
    assert not printed.rotated and ["CoLA", "MRPC", "STS QQP"] not in printed.rows
    text = figure_text(printed)
    assert "numbers printed in a grid (4 rows, 4 columns" in text
    # printed as a table's text is (tools.paperstore.table_text.rows_markdown)
    assert "||CoLA|MRPC|STS|QQP|\n|---|---|---|---|---|\n|CoLA|1.00|-0.20|0.01|-0.46|" in text


def test_tick_labels_of_panels_side_by_side_and_unlabelled_numbers_are_not_a_grid():
    # three panels side by side, each with its y ticks 0-30: a lattice whose columns run in even steps
    ticks = [_line(str(v), 60 + 120 * p, 300 - 40 * i, 70 + 120 * p, 308 - 40 * i)
             for p in range(3) for i, v in enumerate((0, 10, 20, 30))]
    labels = [_line(f"Panel {p}", 80 + 120 * p, 140, 120 + 120 * p, 148) for p in range(3)]
    assert read_figure(ticks + labels).grids == []
    # values printed in a lattice with no label beside its rows or under its columns: a chart's numbers
    values = [_line(v, 100 + 40 * c, 100 + 30 * r, 118 + 40 * c, 108 + 30 * r)
              for r, row in enumerate((("0.3", "0.9", "0.1"), ("0.7", "0.2", "0.8"), ("0.5", "0.6", "0.4")))
              for c, v in enumerate(row)]
    assert read_figure(values).grids == []
    rows = [_line(name, 60, 100 + 30 * r, 90, 108 + 30 * r) for r, name in enumerate(("A", "B", "C"))]
    columns = [_line(name, 100 + 40 * c, 200, 118 + 40 * c, 208) for c, name in enumerate(("X", "Y", "Z"))]
    grid = read_figure(values + rows + columns).grids
    assert [(g.rows, g.columns, g.cells[1]) for g in grid] == [(["A", "B", "C"], ["X", "Y", "Z"], ["0.7", "0.2", "0.8"])]


def test_two_heatmaps_side_by_side_each_row_one_line_are_two_grids_with_their_titles():
    """A PDF may hold a heatmap's row as one line of numbers ("0.00 -9.31 0.58", even "-15.87-11.03"): each number
    is placed along the line by its characters and takes the nearest column. Row labels printed between two heatmaps
    set them apart, and the line over each is its title."""
    def heatmap(x, title):
        rows = [("A", "0.00 -9.31 0.58"), ("B", "-15.87-11.03 0.35"), ("C", "-17.92 -8.58 0.00")]
        out = [_line(title, x + 20, 80, x + 50, 90)]
        for r, (label, text) in enumerate(rows):
            y = 100 + 20 * r
            out.append(_line(label, x - 12, y, x - 4, y + 9, rotated=True))
            out.append(_line(text, x, y, x + 3.5 * len(text), y + 9))
        return out + [_line("A B C", x + 4, 170, x + 56, 179)]
    # the numbers of each row line are 3.5 points a character: columns at about x+8, x+30, x+51
    printed = read_figure(heatmap(100, "First") + heatmap(220, "Second"))
    assert [(g.title, g.rows, g.columns) for g in printed.grids] == [("First", ["A", "B", "C"], ["A", "B", "C"]),
                                                                    ("Second", ["A", "B", "C"], ["A", "B", "C"])]
    assert printed.grids[0].cells[1] == ["-15.87", "-11.03", "0.35"]
    assert 'numbers printed in a grid "Second" (3 rows, 3 columns' in figure_text(printed)
    assert not any("0.00 -9.31" in " ".join(row) for row in printed.rows)

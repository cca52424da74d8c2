"""What a region of a PDF page prints, read from the PDF itself (PyMuPDF): its lines of text with their boxes and
writing direction, the shapes it draws (bars, legend swatches), and OCR'd words where it has no text layer. The
store reads figures with it (:meth:`PaperStore.region_text`) and the agent's view_image tool shows it."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pymupdf
from pydantic import BaseModel

from evidex.tools.paperstore.figure_text import FigureLine, FigureMark


class RegionError(ValueError):
    """The page or box does not exist in the PDF; the message says what to fix."""


@contextmanager
def open_region(pdf: str, page_number: int, box: list[float] | None) -> Iterator[tuple[pymupdf.Page, pymupdf.Rect | None]]:
    """The page (1-based) of the PDF and the clip of ``box`` ([x0, y0, w, h] in points; None or empty: the whole
    page, clip None)."""
    with pymupdf.open(pdf) as doc:
        if page_number > doc.page_count:
            raise RegionError(f"Page {page_number} does not exist: the paper has {doc.page_count} pages.")
        page = doc[page_number - 1]
        clip = None
        if box:
            x, y, w, h = box
            clip = pymupdf.Rect(x, y, x + w, y + h) & page.rect
            if clip.is_empty:
                raise RegionError(f"The box {box} lies outside page {page_number} ({page.rect}).")
        yield page, clip


def ocr_words(page: pymupdf.Page, clip: pymupdf.Rect | None) -> list[tuple]:
    """The page's OCR'd words inside ``clip`` (PyMuPDF ignores ``clip`` when given a textpage); raises when
    tesseract is missing."""
    tp = page.get_textpage_ocr(full=True, dpi=200)
    return [w for w in page.get_text("words", textpage=tp) if clip is None or pymupdf.Rect(w[:4]).intersects(clip)]


def text_lines(page: pymupdf.Page, clip: pymupdf.Rect) -> list[FigureLine]:
    """The text layer's lines inside ``clip``: words, box and whether the line runs vertically."""
    out: list[FigureLine] = []
    for block in page.get_text("dict", clip=clip).get("blocks", []):
        for line in block.get("lines", []):
            text = " ".join("".join(s.get("text", "") for s in line.get("spans", [])).split())
            if text:
                out.append(FigureLine(text=text, box=tuple(line["bbox"]), rotated=abs(line["dir"][0]) < 0.5))
    return out


_MAX_MARKS = 2000  # a region drawing more shapes than this is a plot of points, not bars and legends
BELOW = 20.0  # points under a region read for the category labels a figure's box cut off


def drawn_marks(page: pymupdf.Page, clip: pymupdf.Rect) -> list[FigureMark]:
    """The filled shapes (each rectangle of a path on its own) and short horizontal stroked lines (legend line
    samples) whose middle lies inside ``clip``."""
    out: list[FigureMark] = []
    for d in page.get_drawings():
        if not d["rect"].intersects(clip):
            continue
        fill, stroke = d.get("fill"), d.get("color")  # PyMuPDF gives every path's colours as RGB
        if fill is not None and "f" in d["type"]:
            kinds = {it[0] for it in d["items"]}
            rects = ([it[1] if it[0] == "re" else it[1].rect for it in d["items"]] if kinds <= {"re", "qu"}
                     else [d["rect"]] if len(d["items"]) <= 8 else [])
            out += [FigureMark(box=(r.x0, r.y0, r.x1, r.y1), color=fill) for r in rects]
        elif stroke is not None and d["type"] == "s" and d["rect"].height <= 3 and d["rect"].width <= 30:
            r = d["rect"]
            out.append(FigureMark(box=(r.x0, r.y0, r.x1, r.y1), color=stroke, filled=False))
        if len(out) > _MAX_MARKS:
            return []
    return [m for m in out if clip.contains(pymupdf.Point((m.box[0] + m.box[2]) / 2, (m.box[1] + m.box[3]) / 2))]


class RegionPrint(BaseModel):
    """What a page region prints: its lines of text, its drawn marks and the lines just under it."""

    lines: list[FigureLine] = []
    marks: list[FigureMark] = []
    below: list[FigureLine] = []


def read_region(pdf: str, page_number: int, box: list[float] | None, *, max_lines: int | None = None) -> RegionPrint:
    """The lines of text inside a page region, each with its box and writing direction (a figure's axis titles,
    ticks and legend entries), its drawn marks (bars, legend swatches) and the lines in the strip just under it, for
    :func:`tools.paperstore.figure_text.read_figure`; OCR'd words when the region has no text layer and tesseract
    is installed, nothing when nothing can be read (:class:`RegionError` for a page the paper lacks or a box
    outside the page). A region printing more than ``max_lines`` lines is text, not a chart: its first
    ``max_lines`` lines alone, its drawing not read."""
    with open_region(pdf, page_number, box) as (page, clip):
        clip = clip or page.rect
        lines = text_lines(page, clip)
        if max_lines is not None and len(lines) > max_lines:
            return RegionPrint(lines=lines[:max_lines])
        if lines:
            under = pymupdf.Rect(clip.x0, clip.y1, clip.x1, min(clip.y1 + BELOW, page.rect.y1))
            below = text_lines(page, under) if not under.is_empty else []
            return RegionPrint(lines=lines, marks=drawn_marks(page, clip), below=below)
        try:
            words = ocr_words(page, clip)
        except Exception:  # noqa: BLE001 - tesseract missing: nothing to read
            return RegionPrint()
        return RegionPrint(lines=[FigureLine(text=w[4], box=tuple(w[:4])) for w in words])


__all__ = ["BELOW", "RegionError", "RegionPrint", "drawn_marks", "ocr_words", "open_region", "read_region",
           "text_lines"]

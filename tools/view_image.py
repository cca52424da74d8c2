"""Render a PDF page, or a box on it, for an agent (PyMuPDF ``get_pixmap(clip=...)``).

Multimodal models get content blocks (a short text block plus a base64 PNG); text-only models get the
caption(s) of the figure/table under the box plus the text inside it (OCR'd when the region has no text
layer and tesseract is installed). Boxes are [x0, y0, w, h] in PDF points, as stored in every table.
"""
from __future__ import annotations

import argparse
import base64
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import pymupdf
from pydantic import BaseModel, Field, field_validator

from evidex.tools.paperstore.figure_text import FigureLine, FigureMark
from evidex.tools.store import StoreError, connect_readonly, require_store, store_paths

MAX_SIDE_PX = 1600
DEFAULT_DPI = 144


class ViewImageError(ValueError):
    """The page or region cannot be shown; the message says what to fix."""


class ViewImageArgs(BaseModel):
    paper_id: str = Field(..., description="paper UUID (metadata.paper_id / pdf_id)")
    page_number: int = Field(..., ge=1, description="1-based page number")
    bounding_box: list[float] = Field(
        default_factory=list, description="[x0, y0, w, h] in PDF points (from a bounding_box column); empty = whole page"
    )

    @field_validator("bounding_box")
    @classmethod
    def _box(cls, v: list[float]) -> list[float]:
        if len(v) not in (0, 4):
            raise ValueError("bounding_box must be empty (whole page) or [x0, y0, w, h]")
        if v and (v[2] <= 0 or v[3] <= 0):
            raise ValueError("bounding_box width and height must be positive ([x0, y0, w, h], not [x0, y0, x1, y1])")
        return v


class ImageView(BaseModel):
    png: bytes
    width: int
    height: int
    captions: list[str]
    text: str
    ocr: bool = False
    pdf_path: str


def _pdf_path(con, paper_id: str) -> str:
    row = con.cursor().execute("SELECT pdf_path FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?", [paper_id]).fetchone()
    if row is None:
        raise ViewImageError(f"Unknown paper_id {paper_id!r}; look it up with SQL: SELECT paper_id, title FROM metadata.")
    if not Path(row[0]).is_file():
        raise ViewImageError(f"The PDF of paper {paper_id} is no longer at {row[0]}; re-ingest it.")
    return row[0]


def _captions(con, paper_id: str, page_number: int, clip: pymupdf.Rect | None) -> list[str]:
    out: list[str] = []
    for table, col in (("images", "image_caption"), ("tables", "table_caption")):
        rows = con.cursor().execute(
            f"SELECT t.{col}, t.bounding_box FROM {table} t JOIN pages p ON p.page_id = t.ref_page_id "
            f"WHERE CAST(t.ref_paper_id AS VARCHAR) = ? AND p.page_number = ? AND t.{col} <> ''",
            [paper_id, page_number],
        ).fetchall()
        for caption, box in rows:
            if clip is None:
                out.append(caption)
                continue
            r = pymupdf.Rect(box[0], box[1], box[0] + box[2], box[1] + box[3])
            inter = r & clip
            if not inter.is_empty and inter.get_area() >= 0.5 * min(r.get_area(), clip.get_area()):
                out.append(caption)
    return out


@contextmanager
def _region(args: ViewImageArgs, db: str | None, store_dir: str | Path | None):
    """The store connection, the PDF's path, the page and the clip (``None``: the whole page) that ``args`` name;
    raises :class:`ViewImageError` for a page the paper lacks or a box outside the page."""
    paths = require_store(store_paths(db, store_dir))
    con = connect_readonly(paths.db)
    pdf = _pdf_path(con, args.paper_id)
    with pymupdf.open(pdf) as doc:
        if args.page_number > doc.page_count:
            raise ViewImageError(f"Page {args.page_number} does not exist: the paper has {doc.page_count} pages.")
        page = doc[args.page_number - 1]
        clip = None
        if args.bounding_box:
            x, y, w, h = args.bounding_box
            clip = pymupdf.Rect(x, y, x + w, y + h) & page.rect
            if clip.is_empty:
                raise ViewImageError(f"The box {args.bounding_box} lies outside page {args.page_number} ({page.rect}).")
        yield con, pdf, page, clip


def _ocr_words(page: pymupdf.Page, clip: pymupdf.Rect | None) -> list[tuple]:
    """The page's OCR'd words inside ``clip`` (PyMuPDF ignores ``clip`` when given a textpage); raises when
    tesseract is missing."""
    tp = page.get_textpage_ocr(full=True, dpi=200)
    return [w for w in page.get_text("words", textpage=tp) if clip is None or pymupdf.Rect(w[:4]).intersects(clip)]


def render(args: ViewImageArgs, db: str | None = None, store_dir: str | Path | None = None, dpi: int = DEFAULT_DPI) -> ImageView:
    with _region(args, db, store_dir) as (con, pdf, page, clip):
        area = clip or page.rect
        zoom = min(dpi / 72.0, MAX_SIDE_PX / max(area.width, area.height, 1))
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip)
        text = page.get_text("text", clip=clip).strip()
        ocr = False
        if not text:
            try:
                text = " ".join(w[4] for w in _ocr_words(page, clip)).strip()
                ocr = True
            except Exception:  # noqa: BLE001 - tesseract missing: the caption is still useful
                text = ""
        return ImageView(
            png=pix.tobytes("png"),
            width=pix.width,
            height=pix.height,
            captions=_captions(con, args.paper_id, args.page_number, clip),
            text=text,
            ocr=ocr,
            pdf_path=pdf,
        )


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


def region_print(args: ViewImageArgs, db: str | None = None, store_dir: str | Path | None = None, *,
                 max_lines: int | None = None) -> RegionPrint:
    """The lines of text inside a page region, each with its box and writing direction (a figure's axis titles,
    ticks and legend entries), its drawn marks (bars, legend swatches) and the lines in the strip just under it, for
    :func:`tools.paperstore.figure_text.read_figure`; OCR'd words when the region has no text layer and tesseract
    is installed, nothing when nothing can be read (:class:`ViewImageError` for a page the paper lacks or a box
    outside the page). A region printing more than ``max_lines`` lines is text, not a chart: its first
    ``max_lines`` lines alone, its drawing not read."""
    with _region(args, db, store_dir) as (_, _, page, clip):
        clip = clip or page.rect
        lines = text_lines(page, clip)
        if max_lines is not None and len(lines) > max_lines:
            return RegionPrint(lines=lines[:max_lines])
        if lines:
            under = pymupdf.Rect(clip.x0, clip.y1, clip.x1, min(clip.y1 + BELOW, page.rect.y1))
            below = text_lines(page, under) if not under.is_empty else []
            return RegionPrint(lines=lines, marks=drawn_marks(page, clip), below=below)
        try:
            words = _ocr_words(page, clip)
        except Exception:  # noqa: BLE001 - tesseract missing: nothing to read
            return RegionPrint()
        return RegionPrint(lines=[FigureLine(text=w[4], box=tuple(w[:4])) for w in words])


def describe(view: ImageView, args: ViewImageArgs) -> str:
    where = f"page {args.page_number}" + (f", box {[round(v) for v in args.bounding_box]}" if args.bounding_box else "")
    parts = [f"[Image] {where} of paper {args.paper_id}"]
    if view.captions:
        parts.append("Caption(s): " + " | ".join(view.captions))
    if view.text:
        label = "Text in the region (OCR)" if view.ocr else "Text in the region"
        parts.append(f"{label}:\n{view.text[:4000]}")
    elif not view.captions:
        parts.append("(no caption or text found in this region)")
    return "\n".join(parts)


def view_image_content(
    args: ViewImageArgs,
    db: str | None = None,
    store_dir: str | Path | None = None,
    multimodal: bool = True,
    block_format: Literal["openai", "langchain"] = "openai",
) -> list[dict] | str:
    """Tool output: content blocks with the PNG for multimodal models, plain text for text-only models."""
    view = render(args, db, store_dir)
    text = describe(view, args)
    if not multimodal:
        return text
    b64 = base64.b64encode(view.png).decode("ascii")
    if block_format == "langchain":
        image = {"type": "image", "base64": b64, "mime_type": "image/png"}
    else:
        image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}
    return [{"type": "text", "text": text}, image]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evidex.tools.view_image", description="Render a page or region to PNG.")
    p.add_argument("--db")
    p.add_argument("--store-dir")
    p.add_argument("--paper-id", required=True)
    p.add_argument("--page", type=int, required=True)
    p.add_argument("--box", type=float, nargs=4, metavar=("X0", "Y0", "W", "H"))
    p.add_argument("--out", help="write the PNG here")
    a = p.parse_args(argv)
    try:
        args = ViewImageArgs(paper_id=a.paper_id, page_number=a.page, bounding_box=a.box or [])
        view = render(args, a.db, a.store_dir)
    except (ViewImageError, StoreError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.out:
        Path(a.out).write_bytes(view.png)
        print(f"wrote {a.out} ({view.width}x{view.height})")
    print(describe(view, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

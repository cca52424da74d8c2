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

from evidex.tools.paperstore.regions import RegionError, ocr_words, open_region
from evidex.tools.paperstore.store import PaperStore
from evidex.tools.store import StoreError, require_store, store_paths

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


def _pdf_path(store: PaperStore, paper_id: str) -> str:
    path = store.pdf_path(paper_id)
    if path is None:
        raise ViewImageError(f"Unknown paper_id {paper_id!r}; the ids are in metadata.paper_id, beside each title.")
    if not Path(path).is_file():
        raise ViewImageError(f"The PDF of paper {paper_id} is no longer at {path}; re-ingest it.")
    return path


def _captions(store: PaperStore, paper_id: str, page_number: int, clip: pymupdf.Rect | None) -> list[str]:
    """The captions on the page whose float lies mostly inside ``clip`` (all of them for the whole page)."""
    out: list[str] = []
    for caption, box in store.page_captions(paper_id, page_number):
        if clip is None:
            out.append(caption)
            continue
        if not box:
            continue
        r = pymupdf.Rect(box[0], box[1], box[0] + box[2], box[1] + box[3])
        inter = r & clip
        if not inter.is_empty and inter.get_area() >= 0.5 * min(r.get_area(), clip.get_area()):
            out.append(caption)
    return out


@contextmanager
def _region(args: ViewImageArgs, db: str | None, store_dir: str | Path | None):
    """The store, the PDF's path, the page and the clip (``None``: the whole page) that ``args`` name; raises
    :class:`ViewImageError` for a page the paper lacks or a box outside the page."""
    require_store(store_paths(db, store_dir))
    store = PaperStore(db, store_dir)
    pdf = _pdf_path(store, args.paper_id)
    try:
        with open_region(pdf, args.page_number, args.bounding_box) as (page, clip):
            yield store, pdf, page, clip
    except RegionError as exc:
        raise ViewImageError(str(exc)) from None


def render(args: ViewImageArgs, db: str | None = None, store_dir: str | Path | None = None, dpi: int = DEFAULT_DPI) -> ImageView:
    with _region(args, db, store_dir) as (store, pdf, page, clip):
        area = clip or page.rect
        zoom = min(dpi / 72.0, MAX_SIDE_PX / max(area.width, area.height, 1))
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip)
        text = page.get_text("text", clip=clip).strip()
        ocr = False
        if not text:
            try:
                text = " ".join(w[4] for w in ocr_words(page, clip)).strip()
                ocr = True
            except Exception:  # noqa: BLE001 - tesseract missing: the caption is still useful
                text = ""
        return ImageView(
            png=pix.tobytes("png"),
            width=pix.width,
            height=pix.height,
            captions=_captions(store, args.paper_id, args.page_number, clip),
            text=text,
            ocr=ocr,
            pdf_path=pdf,
        )


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

"""PDF -> ParsedPaper. ``PDFParser`` is the plug-in point; ``PyMuPDFParser`` is the fast default.

A heavier parser (MinerU, Docling, GROBID) only has to implement ``PDFParser.parse`` and return the same
``ParsedPaper`` rows; ids, storage and indexing do not change. Parsers run in worker processes, so they are
built from plain config (``make_parser``) inside the worker.
"""
from __future__ import annotations

import importlib
import logging
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import pymupdf

from evidex.tools.ingest import elements as el
from evidex.tools.ingest.equation_text import equation_text, short_strokes
from evidex.tools.ingest.chunking import TokenCounter, Unit, chunk_page
from evidex.tools.ingest.config import ParserConfig
from evidex.tools.ingest.errors import CorruptPDFError, IngestConfigError, EmptyPDFError, EncryptedPDFError, NotAPDFError, ScannedPDFError
from evidex.tools.ingest.layout import (
    TEXT_FLAGS,
    PageLayout,
    body_font_size,
    build_lines,
    dominant_font,
    extract_fragments,
    find_gutter,
    mark_furniture,
    to_box,
)
from evidex.tools.ingest.metadata import layout_affiliations, parse_abstract, parse_title_authors
from evidex.tools.ingest.records import (
    ChunkRecord,
    EquationRecord,
    ImageRecord,
    PageRecord,
    PaperMetadata,
    ParsedPaper,
    ReferenceRecord,
    SectionRecord,
    TableRecord,
)
from evidex.tools.ingest.structure import (
    add_reference_heading,
    build_sections,
    entry_box,
    headings_from_toc,
    headings_from_typography,
    reference_lines,
    split_references,
)

log = logging.getLogger(__name__)
pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF prints repair chatter to stderr; we report errors ourselves


@runtime_checkable
class PDFParser(Protocol):
    """Anything that turns one PDF file into typed rows."""

    name: str

    def parse(self, path: Path, sha256: str) -> ParsedPaper: ...


def make_parser(config: ParserConfig, embedding_model: str) -> PDFParser:
    """The built-in parser, or a plug-in named 'package.module:factory' in the config."""
    if config.name == "pymupdf":
        return PyMuPDFParser(config, embedding_model)
    module_name, _, attr = config.name.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise IngestConfigError(f"parser.name {config.name!r}: cannot import it ({exc}).") from exc
    parser = factory(config, embedding_model)
    if not isinstance(parser, PDFParser):
        raise IngestConfigError(f"parser.name {config.name!r} did not return a PDFParser (needs .name and .parse(path, sha256)).")
    return parser


@lru_cache(maxsize=1)
def ocr_available() -> bool:
    try:
        return bool(pymupdf.get_tessdata())
    except Exception:
        return False


def open_pdf(path: Path) -> pymupdf.Document:
    """Open a PDF or raise a typed error that says what is wrong with the file."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CorruptPDFError(str(path), f"cannot read the file ({exc.strerror}).") from exc
    if size == 0:
        raise EmptyPDFError(str(path), "the file is empty (0 bytes); re-download it.")
    with open(path, "rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        kind = "HTML" if b"<html" in head.lower() or b"<!doctype" in head.lower() else "unknown data"
        raise NotAPDFError(str(path), f"not a PDF (no %PDF- header; looks like {kind}).")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:
        raise CorruptPDFError(str(path), f"corrupt PDF that MuPDF cannot repair ({exc}).") from exc
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise EncryptedPDFError(str(path), "the PDF is password-protected; decrypt it first (e.g. qpdf --decrypt).")
    if doc.page_count == 0:
        doc.close()
        raise CorruptPDFError(str(path), "the PDF has no readable pages (damaged cross-reference table?).")
    return doc


class PyMuPDFParser:
    """Geometry-based parser on PyMuPDF text dictionaries (~20 pages/s/core without tables/OCR)."""

    name = "pymupdf"

    def __init__(self, config: ParserConfig, embedding_model: str = "all-MiniLM-L6-v2"):
        self.config = config
        self.counter = TokenCounter(embedding_model)

    def parse(self, path: Path, sha256: str) -> ParsedPaper:
        t0 = time.perf_counter()
        path = Path(path)
        doc = open_pdf(path)
        try:
            return self._parse(doc, path, sha256, t0)
        except (pymupdf.FileDataError, RuntimeError) as exc:
            if isinstance(exc, ScannedPDFError):
                raise
            raise CorruptPDFError(str(path), f"damaged PDF content ({type(exc).__name__}: {exc}).") from exc
        finally:
            doc.close()

    # ---------------------------------------------------------------------------------------------------
    def _parse(self, doc: pymupdf.Document, path: Path, sha256: str, t0: float) -> ParsedPaper:
        cfg = self.config
        warnings: list[str] = []
        body_is_cmr = _body_is_cmr(doc)
        layouts: list[PageLayout] = []
        per_page: list[tuple[list, list, list]] = []
        scanned_unread = 0
        for pno in range(doc.page_count):
            page = doc[pno]
            layout = self._page_layout(page, pno + 1, body_is_cmr)
            if layout.scanned and not layout.ocr:
                scanned_unread += 1
            layouts.append(layout)
            try:
                mark_furniture(layout)
                captions = el.find_captions(layout)
                tables = el.detect_tables(page, layout, captions, cfg.tables)
                figures = el.detect_figures(page, layout, captions, tables, cfg.min_image_points)
                equations = el.detect_equations(layout)
                strokes = short_strokes(page) if equations else []
                for eq in equations:
                    eq.text = equation_text(page, eq.bbox, [ln.text for ln in eq.lines], strokes)
            except Exception as exc:  # one odd page must not lose the paper
                warnings.append(f"page {pno + 1}: element detection failed ({type(exc).__name__}: {exc})")
                tables, figures, equations = [], [], []
            per_page.append((tables, figures, equations))
        if scanned_unread == doc.page_count:
            why = "OCR is switched off (parser.ocr: off)" if cfg.ocr == "off" else "tesseract is not installed"
            raise ScannedPDFError(
                str(path),
                f"all {doc.page_count} pages are images without a text layer and {why}; "
                "install tesseract-ocr (apt-get install -y tesseract-ocr) and use parser.ocr: auto.",
            )
        if scanned_unread:
            warnings.append(f"{scanned_unread} image-only page(s) have no text (OCR unavailable)")

        lines = [ln for lay in layouts for ln in lay.lines]
        for i, ln in enumerate(lines):
            ln.index = i
        body_size = body_font_size(layouts)
        title, authors = parse_title_authors(layouts, body_size, doc.metadata.get("title", "") or "")
        if not title:
            title = re.sub(r"[-_]+", " ", path.stem).strip()
            warnings.append("no title found on page 1; using the file name")
        headings = None
        toc = doc.get_toc(simple=True)
        if toc:
            headings = headings_from_toc(toc, lines)
            if headings is not None:
                headings = add_reference_heading(headings, lines, body_size)
        if headings is None:
            headings = headings_from_typography(lines, body_size)
        abstract = parse_abstract(layouts)  # after headings: the abstract ends at the next heading
        sections = build_sections(headings, lines)
        refs = split_references(reference_lines(headings, lines))

        pages: list[PageRecord] = []
        chunks: list[ChunkRecord] = []
        tables_out: list[TableRecord] = []
        images_out: list[ImageRecord] = []
        eqs_out: list[EquationRecord] = []
        for layout, (tables, figures, equations) in zip(layouts, per_page):
            pn = layout.page_number
            pages.append(
                PageRecord(
                    page_number=pn,
                    width=round(layout.width),
                    height=round(layout.height),
                    content="\n".join(ln.text for ln in layout.lines if ln.text.strip()),
                    ocr=layout.ocr,
                )
            )
            chunks.extend(chunk_page(self._units(layout, tables), pn, self.counter, cfg.chunk_tokens, cfg.chunk_overlap_lines))
            for k, t in enumerate(tables):
                caption = t.caption.text if t.caption else ""
                tables_out.append(
                    TableRecord(
                        page_number=pn,
                        ordinal=k,
                        caption=caption,
                        html=el.rows_to_html(t.rows),
                        markdown=el.table_markdown(t),
                        box=to_box(t.bbox),
                    )
                )
            for k, f in enumerate(figures):
                images_out.append(
                    ImageRecord(page_number=pn, ordinal=k, caption=f.caption.text if f.caption else "", box=to_box(f.bbox))
                )
            for k, eq in enumerate(equations):
                texts = [eq.text] if eq.text else [ln.text for ln in eq.lines]
                if eq.number is not None:
                    texts = [el.EQ_NUMBER_RE.sub("", t).rstrip() for t in texts]
                text = " ".join(t.strip() for t in texts if t.strip())
                if not text:
                    continue
                box = to_box((min(ln.x0 for ln in eq.lines), min(ln.y0 for ln in eq.lines), max(ln.x1 for ln in eq.lines), max(ln.y1 for ln in eq.lines)))
                eqs_out.append(EquationRecord(page_number=pn, ordinal=len([e for e in eqs_out if e.page_number == pn]), text=text, number=eq.number, box=box))

        sections_out = [
            SectionRecord(
                ordinal=k,
                title=s.heading.title,
                level=s.heading.level,
                parent_ordinal=s.parent,
                content=s.content,
                page_numbers=s.page_numbers,
            )
            for k, s in enumerate(sections)
        ]
        refs_out = [
            ReferenceRecord(ordinal=k, text=e.text, page_number=e.lines[0].page_number, box=to_box(entry_box(e)))
            for k, e in enumerate(refs)
        ]
        meta = PaperMetadata(title=title, authors=authors, abstract=abstract, num_pages=doc.page_count)
        return ParsedPaper(
            path=str(path.resolve()),
            sha256=sha256,
            parser=self.name,
            metadata=meta,
            pages=pages,
            chunks=chunks,
            tables=tables_out,
            images=images_out,
            equations=eqs_out,
            sections=sections_out,
            references=refs_out,
            warnings=warnings,
            parse_seconds=round(time.perf_counter() - t0, 3),
        )

    def _page_layout(self, page: pymupdf.Page, page_number: int, body_is_cmr: bool) -> PageLayout:
        cfg = self.config
        textdict = page.get_text("dict", flags=TEXT_FLAGS)
        matrix = page.rotation_matrix if page.rotation else None
        frags = extract_fragments(textdict, body_is_cmr, matrix)
        scanned = ocr = False
        if sum(f.nchars for f in frags) < 20 and _image_coverage(page) > 0.3:
            scanned = True
            if cfg.ocr == "auto" and ocr_available():
                tp = page.get_textpage_ocr(flags=TEXT_FLAGS, language=cfg.ocr_language, dpi=cfg.ocr_dpi, full=True)
                frags = extract_fragments(page.get_text("dict", flags=TEXT_FLAGS, textpage=tp), body_is_cmr, matrix)
                ocr = True
        width, height = page.rect.width, page.rect.height
        gutter = find_gutter(frags, width)
        lines = build_lines(frags, page_number, gutter)
        return PageLayout(page_number, width, height, lines, gutter, ocr=ocr, scanned=scanned)

    @staticmethod
    def _units(layout: PageLayout, tables: list) -> list[Unit]:
        units: list[Unit] = []
        emitted: set[int] = set()
        for ln in layout.lines:
            if ln.kind in ("furniture", "figure"):
                continue
            if ln.kind == "table":
                for k, t in enumerate(tables):
                    if k not in emitted and el._inside(ln.bbox, t.bbox):
                        emitted.add(k)
                        units.append(Unit(el.table_plain_text(t), t.bbox, is_table=True))
                        break
                continue
            units.append(Unit(ln.text, ln.bbox))
        for k, t in enumerate(tables):
            if k not in emitted:
                units.append(Unit(el.table_plain_text(t), t.bbox, is_table=True))
        return units


def _image_coverage(page: pymupdf.Page) -> float:
    area = page.rect.width * page.rect.height or 1.0
    covered = 0.0
    for info in page.get_image_info():
        r = pymupdf.Rect(info["bbox"]) & page.rect
        if not r.is_empty:
            covered += r.width * r.height
    return min(1.0, covered / area)


def _body_is_cmr(doc: pymupdf.Document) -> bool:
    """Whether the body is set in Computer Modern (TeX's CMR fonts), which then do not count as math."""
    return bool(re.match(r"(.*\+)?CMR\d", dominant_font(doc)))


def first_page_affiliations(path: str | Path, authors: list[str]) -> dict[str, list[str]]:
    """Each author's affiliations read off the layout of the PDF's first page
    (:func:`tools.ingest.metadata.layout_affiliations`: names over their affiliations, no marks); {} when the file
    cannot be read. For a question about the author block, at question time: page 1 alone is parsed, once for each
    version of the file (a file changed on disk is read again)."""
    try:
        stat = Path(path).stat()
    except OSError as exc:  # a moved or deleted file: the question is the model's
        log.debug("first page of %s not read: %s", path, exc)
        return {}
    found = _first_page_affiliations(str(path), stat.st_mtime_ns, stat.st_size, tuple(authors))
    return {name: list(places) for name, places in found.items()}


@lru_cache(maxsize=256)
def _first_page_affiliations(path: str, _mtime_ns: int, _size: int, authors: tuple[str, ...]) -> dict[str, tuple]:
    try:
        with pymupdf.open(path) as doc:
            if not doc.page_count:
                return {}
            layout = PyMuPDFParser(ParserConfig(tables="off", ocr="off"))._page_layout(doc[0], 1, _body_is_cmr(doc))
    except Exception as exc:  # a moved, unreadable or damaged file: the question is the model's
        log.debug("first page of %s not read: %s", path, exc)
        return {}
    mark_furniture(layout)
    return {name: tuple(places) for name, places in layout_affiliations(layout, body_font_size([layout]),
                                                                         list(authors)).items()}


__all__ = ["PDFParser", "PyMuPDFParser", "first_page_affiliations", "make_parser", "open_pdf", "ocr_available"]

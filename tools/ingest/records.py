"""What a parser returns for one PDF: plain typed rows, before ids are assigned and before anything is written.

Boxes are ``(x0, y0, w, h)`` integers in PDF points (origin top-left). Page numbers are 1-based.
"""
from __future__ import annotations

from pydantic import BaseModel, Field

Box = tuple[int, int, int, int]


class PageRecord(BaseModel):
    page_number: int
    width: int
    height: int
    content: str
    ocr: bool = False
    summary: str | None = None


class ChunkRecord(BaseModel):
    page_number: int
    ordinal: int  # 1-based within the page (NeuSym-RAG convention)
    text: str
    token_count: int
    box: Box


class TableRecord(BaseModel):
    page_number: int
    ordinal: int  # 0-based within the page
    caption: str
    html: str
    markdown: str
    box: Box
    summary: str | None = None


class ImageRecord(BaseModel):
    page_number: int
    ordinal: int
    caption: str
    box: Box
    summary: str | None = None


class EquationRecord(BaseModel):
    page_number: int
    ordinal: int
    text: str
    number: str | None = None
    box: Box


class SectionRecord(BaseModel):
    ordinal: int
    title: str
    level: int
    parent_ordinal: int | None = None
    content: str
    page_numbers: list[int]
    summary: str | None = None


class ReferenceRecord(BaseModel):
    ordinal: int
    text: str
    page_number: int
    box: Box


class PaperMetadata(BaseModel):
    """Paper-level facts; parsed values first, then overridden by an AirQA-style metadata JSON if one is found."""

    paper_id: str | None = None  # set by metadata.resolve_paper_id
    title: str = ""
    authors: list[str] = Field(default_factory=list)
    abstract: str = ""
    num_pages: int = 0
    conference_year: str = "uncategorized"
    conference_full: str | None = None
    conference_abbreviation: str | None = None
    pub_year: int | None = None
    volume: str | None = None
    download_url: str | None = None
    bibtex: str | None = None
    tldr: str | None = None
    tags: list[str] = Field(default_factory=list)


class ParsedPaper(BaseModel):
    path: str
    sha256: str
    parser: str
    metadata: PaperMetadata
    pages: list[PageRecord]
    chunks: list[ChunkRecord] = Field(default_factory=list)
    tables: list[TableRecord] = Field(default_factory=list)
    images: list[ImageRecord] = Field(default_factory=list)
    equations: list[EquationRecord] = Field(default_factory=list)
    sections: list[SectionRecord] = Field(default_factory=list)
    references: list[ReferenceRecord] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    parse_seconds: float = 0.0

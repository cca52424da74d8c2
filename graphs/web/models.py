"""What the page sends and receives (pydantic): questions, papers, cited passages, uploads and history entries.

Strings from the store, the model or a user go out as data; the page puts them in the DOM as text only."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

DEFAULT_FORMAT = "A short answer in plain text."


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=4000)
    config: str = Field("airqa/airqa", max_length=120)
    pdf_ids: list[str] = Field(default_factory=list, max_length=200)
    answer_format: str = Field(DEFAULT_FORMAT, min_length=1, max_length=500)


class AskStarted(BaseModel):
    run_id: str
    events_url: str
    stop_url: str


class LoginRequest(BaseModel):
    key: str = Field(min_length=1, max_length=512)


class Paper(BaseModel):
    pdf_id: str
    title: str
    venue: str = ""
    pages: int = 0


class ConfigChoice(BaseModel):
    name: str
    label: str
    description: str = ""


class StoreInfo(BaseModel):
    store: str
    papers: list[Paper]
    configs: list[ConfigChoice]
    default_config: str
    ready: bool


PassageKind = Literal["chunk", "table", "figure", "equation", "reference", "section", "page", "metadata"]


class Passage(BaseModel):
    """A cited passage: its paper and page, the box to highlight (PDF points, origin top-left) and its text."""

    pdf_id: str
    title: str
    page_number: int
    page_count: int
    page_width: float
    page_height: float
    kind: PassageKind
    box: list[float] | None = None  # [x0, y0, w, h]
    text: str
    note: str = ""  # how the passage was found when the citation named only a page
    image_url: str


class CitationView(BaseModel):
    pdf_id: str
    page_number: int
    source: str = ""
    exists: bool | None = None
    title: str = ""
    kind: str = "page"


class AnswerView(BaseModel):
    run_id: str
    question: str
    config: str
    pdf_ids: list[str] = Field(default_factory=list)
    status: Literal["answered", "no_answer", "error", "stopped"]
    answer: str | None = None
    no_answer: str | None = None
    error: str | None = None
    citations: list[CitationView] = Field(default_factory=list)
    turns: int = 0
    actions: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    asked_at: str = ""
    trace_url: str | None = None


class UploadResult(BaseModel):
    name: str  # the name the user's file had (shown as text only)
    saved_as: str | None = None  # the sanitized name under the store's uploads folder
    status: Literal["ingested", "skipped", "reindexed", "failed"]
    paper_id: str | None = None
    title: str | None = None
    pages: int = 0
    error_kind: str | None = None
    error: str | None = None
    seconds: float = 0.0

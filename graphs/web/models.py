"""What the page sends and receives (pydantic): questions, papers, cited passages, uploads and history entries.

Strings from the store, the model or a user go out as data; the page puts them in the DOM as text only."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

DEFAULT_FORMAT = "A short answer in plain text."
MAX_QUESTION_CHARS = 4000  # a question and the passages it brings must fit the local model's prompt
MAX_FORMAT_CHARS = 500


class AskRequest(BaseModel):
    question: str = Field(min_length=1)
    config: str = Field("airqa/airqa", max_length=120)
    pdf_ids: list[str] = Field(default_factory=list, max_length=200)
    answer_format: str = Field(DEFAULT_FORMAT, min_length=1)

    @field_validator("question")
    @classmethod
    def _question_fits(cls, value: str) -> str:
        """Refused whole, with its length, rather than cut: a cut question asks something else."""
        if len(value) > MAX_QUESTION_CHARS:
            raise ValueError(f"the question is {len(value):,} characters long; the limit is {MAX_QUESTION_CHARS:,}. "
                             "Shorten it, or ask about one part at a time")
        return value

    @field_validator("answer_format")
    @classmethod
    def _format_fits(cls, value: str) -> str:
        if len(value) > MAX_FORMAT_CHARS:
            raise ValueError(f"the answer format is {len(value):,} characters long; the limit is {MAX_FORMAT_CHARS}")
        return value


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
    max_question_chars: int = MAX_QUESTION_CHARS
    max_upload_mb: float = 200


PassageKind = Literal["chunk", "table", "figure", "equation", "reference", "section", "page", "metadata", "passage"]


class TableView(BaseModel):
    """A cited table as rows of cells (text only; the page builds the table with DOM calls)."""

    caption: str = ""
    rows: list[list[str]]
    header_rows: int = 1
    cut_rows: int = 0  # rows left out (the store has them all)
    cut_columns: int = 0


class Passage(BaseModel):
    """A cited passage: its paper and page, where it is on the page (PDF points, origin top-left) and its text.

    ``box`` is the cited row's region (a chunk, table, figure); ``focus`` the few lines in it, or on a page-only
    citation's page, that hold the answer: the page highlights the focus and scrolls it into view."""

    pdf_id: str
    title: str
    page_number: int
    page_count: int
    page_width: float
    page_height: float
    kind: PassageKind
    box: list[float] | None = None  # [x0, y0, w, h]
    focus: list[float] | None = None  # [x0, y0, w, h]
    focus_text: str = ""
    text: str
    table: TableView | None = None
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

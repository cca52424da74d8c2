"""Question-answering data types shared by every layer: a question over a paper store and a cited answer."""
from __future__ import annotations

from pydantic import BaseModel, Field


class PaperQuestion(BaseModel):
    """What a QA graph is given: the question, the format its answer must take, and the papers it is about."""

    id: str
    question: str
    answer_format: str = "A short answer in plain text."
    pdf_ids: list[str] = Field(default_factory=list, description="papers in scope (anchor and reference PDFs)")
    conferences: list[str] = Field(default_factory=list, description="venue search spaces, e.g. acl2023")


class CitedPage(BaseModel):
    pdf_id: str
    page_number: int
    source: str = ""
    exists: bool | None = None  # checked against the store when the answer is final


class QAPrediction(BaseModel):
    id: str
    answer: str | None = None
    raw_answer: str | None = None  # the model's own words, when the answer was reshaped to the answer format
    citations: list[CitedPage] = Field(default_factory=list)
    no_answer: str | None = None  # why there is no answer (turn limit, ...)
    turns: int = 0
    actions: list[str] = Field(default_factory=list)  # the action names, in order
    reader: str | None = None  # the answer reader that gave the answer (qa.readers)
    degraded: list[str] = Field(default_factory=list)  # parts of hybrid search that were unavailable for this answer


class QuestionItem(BaseModel):
    """A dataset question about papers: what the graph sees (``question``); subclasses add what only the scorer
    reads (gold answers, evaluators), which stays out of the graph's input."""

    question: PaperQuestion

    @property
    def id(self) -> str:
        return self.question.id

    def graph_input(self) -> dict:
        return {"input": self.question}

    def public_input(self) -> dict:
        return self.question.model_dump()


class QAItem(QuestionItem):
    """An AirQA question and, for the scorer only, how to evaluate it."""

    evaluator: dict = Field(default_factory=dict)  # AirQA {"eval_func", "eval_kwargs"}: hidden from the graph
    tags: list[str] = Field(default_factory=list)

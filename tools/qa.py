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


class AnswerConfidence(BaseModel):
    """How sure the model was of its answer, from the reply's token log-probabilities (``agents.answer_logprobs``;
    None where the model reports none)."""

    first_token_p: float | None = None  # probability of the answer's first token as written
    mean_logprob: float | None = None  # mean log-probability of the answer's tokens
    abstain_p: float | None = None  # probability of beginning the answer with qa.abstain_word instead
    check_p: float | None = None  # qa.answer_check: P(true) that the context answers the question, asked after


class QAPrediction(BaseModel):
    id: str
    answer: str | None = None
    raw_answer: str | None = None  # the model's own words, when the answer was reshaped to the answer format
    quote: str | None = None  # the passage the model copied before answering (qa.quote_first), its evidence
    confidence: AnswerConfidence | None = None  # single-call answers with qa.abstain_word or qa.answer_check
    citations: list[CitedPage] = Field(default_factory=list)
    no_answer: str | None = None  # why there is no answer (turn limit, ...)
    turns: int = 0
    actions: list[str] = Field(default_factory=list)  # the action names, in order


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

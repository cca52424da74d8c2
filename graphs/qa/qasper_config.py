"""Config model of the ``qasper`` family: the question-answering config (``store``, ``qa``, ``judge``; see
:mod:`graphs.qa.config`) plus

    qasper    the answer contract (the answer-format prompt) and how predicted evidence is chosen
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from evidex.graphs.config import PromptName, Strict
from evidex.graphs.qa.config import QATaskConfig


class QasperSettings(Strict):
    answer_prompt: PromptName = Field("qasper_answer_format",
                               description="prompt (prompts/<name>.txt) given to the QA graph as the answer format: "
                                           "short spans joined with ', ', Yes/No, or Unanswerable")
    boolean_prompt: PromptName | None = Field(
        "qasper_boolean_format", description="answer format (prompts/<name>.txt) for a question that asks whether "
        "something holds (tools.qasper_answer.is_boolean_question); it names 'yes or no', so the answer is a "
        "boolean under the grammar and comes out exactly Yes or No. null = answer_prompt for every question")
    retry_prompt: PromptName = Field("qasper_retry_format",
                              description="answer format (prompts/<name>.txt) of the second try, asked when the first "
                                          "answer answers nothing (tools.qasper_answer.non_answer: a bare Yes/No to a "
                                          "question that does not ask whether, an echo of the question or of the "
                                          "format); an answer that still answers nothing becomes 'Unanswerable'")
    min_answer_support: float = Field(
        0.5, ge=0.0, le=1.0,
        description="an answer (not Yes/No) whose best cited paragraph holds less than this share of its content "
                    "words becomes 'Unanswerable': the model guessed past its context (tuned on dev questions 0-99: "
                    "16% of answers, 55% of them about questions an annotator called unanswerable). 0 = off")
    evidence_k: int = Field(2, ge=0, le=20, description="at most this many paragraphs as predicted evidence")
    evidence_order: Literal["cited", "answer_overlap", "answer_search"] = Field(
        "answer_overlap",
        description="cited: the first evidence_k cited paragraphs (classic RAG: retrieval rank); answer_overlap: the "
                    "one cited paragraph the answer was taken from (it holds at least 30% of the answer's content "
                    "words), else as cited; answer_search: the top evidence_k of a search of "
                    "the paper for the question and the answer, read by the graph or not (Yes/No: as cited)")
    ingest_config: str = Field("qasper", description="ingestion config (configs/ingest/<name>.yaml) for the papers")


class QasperTaskConfig(QATaskConfig):
    qasper: QasperSettings = Field(default_factory=QasperSettings)

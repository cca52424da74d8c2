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
    non_answers: Literal["retry", "unanswerable", "keep"] = Field(
        "retry", description="an answer that answers nothing (tools.qasper_answer.non_answer: a bare Yes/No to a "
                             "question that does not ask whether, an echo of the question or of the answer format): "
                             "retry = ask once more with retry_prompt, then as unanswerable; unanswerable = it "
                             "becomes 'Unanswerable' (the only reference it can match); keep = as given")
    retry_prompt: PromptName = Field("qasper_retry_format",
                              description="answer format (prompts/<name>.txt) of the second try (non_answers: retry)")
    min_answer_support: float = Field(
        0.5, ge=0.0, le=1.0,
        description="an answer (not Yes/No) whose best cited paragraph holds less than this share of its content "
                    "words becomes 'Unanswerable': the model guessed past its context (tuned on dev questions 0-99: "
                    "16% of answers, 55% of them about questions an annotator called unanswerable). 0 = off")
    abstain_above: float | None = Field(
        None, ge=0.0, le=1.0,
        description="an answer the model was at least this likely to begin with 'Unanswerable' (abstain_p, read "
                    "with qa.abstain_word: Unanswerable) becomes 'Unanswerable', whatever it wrote. null = off: with "
                    "the local 1.5B model no confidence signal tells unanswerable questions apart (dev 100-199, "
                    "AUC 0.47-0.58), so it is left for stronger models")
    boolean_evidence: bool = Field(
        False, description="give a Yes/No answer the cited paragraphs as evidence. Off: a bare Yes/No names no "
                           "words to find its paragraph by, and the first cited paragraphs were the annotators' "
                           "evidence for 16% of them (Evidence-F1 16.0 with, 40.0 without, dev questions 0-99)")
    evidence_k: int = Field(2, ge=0, le=20, description="at most this many paragraphs as predicted evidence")
    evidence_order: Literal["cited", "answer_overlap", "answer_search"] = Field(
        "answer_overlap",
        description="cited: the first evidence_k cited paragraphs (classic RAG: retrieval rank); answer_overlap: the "
                    "one cited paragraph the answer was taken from (it holds at least single_paragraph_overlap of "
                    "the answer's content words), else as cited; answer_search: the top evidence_k of a search of "
                    "the paper for the question and the answer, read by the graph or not (Yes/No: as cited)")
    single_paragraph_overlap: float = Field(0.3, ge=0.0, le=1.0,
                                            description="answer_overlap: share of the answer's content words the "
                                                        "best cited paragraph must hold to be the only evidence")
    evidence_fallback: bool = Field(
        True, description="an answer that cites no paragraph of the paper gets the top evidence_k paragraphs of a "
                          "search for the question and answer (never for 'Unanswerable')")
    fallback_mode: Literal["dense", "bm25", "hybrid"] = Field(
        "hybrid", description="search mode of the evidence searches (answer_search and the fallback)")
    ingest_config: str = Field("qasper", description="ingestion config (configs/ingest/<name>.yaml) for the papers")


class QasperTaskConfig(QATaskConfig):
    qasper: QasperSettings = Field(default_factory=QasperSettings)

"""The QASPER graph: any configured QA graph (classic RAG, NeuSym, a baseline; ``graphs.qa.family``) restricted to
the question's paper, then its answer put into the QASPER contract and its citations turned into evidence.

    answer    the QA graph on the question (answer format = the ``qasper.answer_prompt`` prompt)
    retry     only when that answer answers nothing (an echo of the question or of the format, a bare Yes to a
              what-question; ``tools.qasper_answer.non_answer``) or the model's reply was malformed, and
              ``qasper.non_answers`` is ``retry``: the QA graph once more with the ``qasper.retry_prompt`` format
              (copy the sentence that answers)
    evidence  the answer shaped (a leading echo of the format cut, short spans, exactly Yes/No/Unanswerable;
              ``tools.qasper_answer``; a non-answer left after the retry becomes Unanswerable unless
              ``qasper.non_answers`` is ``keep``; so does an answer whose content words the cited paragraphs
              mostly lack, ``qasper.min_answer_support``), and the cited pages of the paper mapped back to their
              verbatim paragraphs (``FLOAT SELECTED: <caption>`` for a figure/table, nothing for the abstract),
              ordered by ``qasper.evidence_order`` and cut to ``qasper.evidence_k``; "Unanswerable" has no evidence;
              an answer citing nothing of the paper falls back to a search for the question and answer
              (``qasper.evidence_fallback``); a Yes/No answer has evidence only with ``qasper.boolean_evidence``
"""
from __future__ import annotations

import threading
from typing import Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from evidex.agents.prompts import load_prompt
from evidex.agents.structured import StructuredOutputError
from evidex.graphs.qa.neusym import NeuSymInput
from evidex.graphs.qa.scope import scope_filter
from evidex.graphs.qa.store_tools import StoreTools
from evidex.graphs.qa.qasper_config import QasperTaskConfig
from evidex.tools.qa import QAPrediction
from evidex.tools.text import quote_in
from evidex.tools.qasper_answer import (UNANSWERABLE, evidence_from_pages, non_answer, overlap_order,
                                        overlap_scores, page_evidence, shape_answer, strip_format_echo)


class QasperPrediction(QAPrediction):
    """The QA graph's prediction plus what QASPER scores: ``answer`` in the contract and ``evidence`` strings."""

    evidence: list[str] = Field(default_factory=list, description="verbatim paragraphs (predicted_evidence)")
    evidence_pages: list[int] = Field(default_factory=list, description="store pages the evidence came from")
    evidence_source: Literal["quote", "citations", "search", "none"] = "none"
    first_answer: str | None = Field(None, description="the first try's answer when it answered nothing and the "
                                                       "graph asked again (qasper.non_answers: retry)")


class QasperOutput(BaseModel):
    prediction: QasperPrediction


class QasperState(NeuSymInput):
    qa: QAPrediction | None = None
    first_answer: str | None = None
    prediction: QasperPrediction | None = None


def build_qasper_graph(cfg: QasperTaskConfig, inner, tools: StoreTools | None = None):
    """Wrap ``inner`` (a compiled QA graph: ``{"input": PaperQuestion} -> {"prediction": QAPrediction}``)."""
    tools = tools or StoreTools(cfg.store.db, cfg.store.store_dir)
    settings = cfg.qasper
    answer_format = load_prompt(settings.answer_prompt)
    retry_format = load_prompt(settings.retry_prompt)
    both_formats = f"{answer_format} {retry_format}"  # an echo of either is a non-answer
    cache: dict[str, dict[int, str | None]] = {}
    lock = threading.Lock()

    def paragraphs(store_id: str) -> dict[int, str | None]:
        with lock:
            if store_id not in cache:
                cache[store_id] = page_evidence(tools.query, store_id)
            return cache[store_id]

    def search(query: str, store_id: str, by_page: dict[int, str | None]) -> list[int]:
        """Pages of the paper's paragraphs that best match ``query`` (the abstract may take a slot, so one more)."""
        hits = tools.search_hits(query[:1900], "chunks", "text_content", scope_filter([store_id]),
                                 settings.evidence_k + 1, settings.fallback_mode)
        return [h.page_number for h in hits if by_page.get(h.page_number)]

    def answer(state: QasperState, config: RunnableConfig) -> dict:
        q = state.input
        if q.pdf_ids and not tools.query("SELECT 1 FROM metadata WHERE CAST(paper_id AS VARCHAR) = ?", [q.pdf_ids[0]]):
            where = cfg.store.db or cfg.store.store_dir
            raise LookupError(f"the paper of question {q.id} (store id {q.pdf_ids[0]}) is not in store {where!r}: "
                              "run without --skip-ingest, or python -m tools.ingest.qasper DATA --db NAME")
        try:
            out = inner.invoke({"input": q}, config)
        except StructuredOutputError as exc:  # e.g. a reply cut off at the token limit: the second try may copy one
            if settings.non_answers != "retry":
                raise
            return {"qa": None, "first_answer": f"(no answer: {exc})"}
        return {"qa": out["prediction"]}

    def shaped_answer(qa: QAPrediction, question: str) -> str:
        text = qa.answer
        for fmt in (answer_format, retry_format):
            text = strip_format_echo(text, fmt) if text else text
        return shape_answer(text, question)

    def answers_nothing(shaped: str, question: str) -> bool:
        return non_answer(shaped, question, both_formats) is not None

    def after_answer(state: QasperState) -> str:
        if state.qa is None:
            return "retry"
        question = state.input.question
        needs = settings.non_answers == "retry" and answers_nothing(shaped_answer(state.qa, question), question)
        return "retry" if needs else "evidence"

    def retry(state: QasperState, config: RunnableConfig) -> dict:
        q = state.input
        out = inner.invoke({"input": q.model_copy(update={"answer_format": retry_format})}, config)
        return {"qa": out["prediction"], "first_answer": state.first_answer or state.qa.answer}

    def evidence(state: QasperState) -> dict:
        q, qa = state.input, state.qa
        shaped = shaped_answer(qa, q.question)
        if settings.non_answers != "keep" and answers_nothing(shaped, q.question):
            shaped = UNANSWERABLE
        abstain_p = qa.confidence.abstain_p if qa.confidence else None  # None: the model reported no logprobs
        if settings.abstain_above is not None and abstain_p is not None and abstain_p >= settings.abstain_above:
            shaped = UNANSWERABLE  # the model leaned towards abstaining and wrote an answer by a hair
        store_id = q.pdf_ids[0] if q.pdf_ids else None
        by_page = paragraphs(store_id) if store_id else {}
        cited = list(dict.fromkeys(c.page_number for c in qa.citations
                                   if c.pdf_id == store_id and by_page.get(c.page_number)))
        cited_texts = [by_page[p] or "" for p in cited]
        support = overlap_scores(shaped, cited_texts) if cited else None
        if support is not None and max(support) < settings.min_answer_support:
            shaped = UNANSWERABLE  # the paragraphs the model read do not hold the answer's words: a guess
        raw = qa.raw_answer if qa.raw_answer is not None else (qa.answer if qa.answer != shaped else None)
        pages: list[int] = []
        texts: list[str] = []
        source = "none"
        wants_evidence = shaped != UNANSWERABLE and (shaped not in ("Yes", "No") or settings.boolean_evidence)
        if wants_evidence and settings.evidence_k and store_id:
            quoted = [p for p in cited if qa.quote and quote_in(qa.quote, by_page[p] or "")]
            if quoted:  # the paragraph the model copied its quote from (qa.quote_first) is the evidence
                cited = quoted[:1]
            elif settings.evidence_order == "answer_overlap" and support is not None:
                if max(support) >= settings.single_paragraph_overlap:
                    cited = [cited[overlap_order(shaped, cited_texts)[0]]]  # the paragraph the answer came from
            source = ("quote" if quoted else "citations") if cited else "none"
            found = (search(f"{q.question} {shaped}", store_id, by_page)
                     if settings.evidence_order == "answer_search" and shaped not in ("Yes", "No") else [])
            if found:
                cited, source = found, "search"
            elif not cited and settings.evidence_fallback:
                cited = search(f"{q.question} {shaped}", store_id, by_page)
                source = "search" if cited else "none"
            chosen = evidence_from_pages(cited, by_page, settings.evidence_k)
            pages, texts = [p for p, _ in chosen], [t for _, t in chosen]
        pred = QasperPrediction(**{**qa.model_dump(), "answer": shaped, "raw_answer": raw},
                                first_answer=state.first_answer, evidence=texts, evidence_pages=pages,
                                evidence_source=source)
        return {"prediction": pred}

    g = StateGraph(QasperState, input_schema=NeuSymInput, output_schema=QasperOutput)
    g.add_node("answer", answer)
    g.add_node("retry", retry)
    g.add_node("evidence", evidence)
    g.add_edge(START, "answer")
    g.add_conditional_edges("answer", after_answer, ["retry", "evidence"])
    g.add_edge("retry", "evidence")
    g.add_edge("evidence", END)
    return g.compile(name=cfg.name)

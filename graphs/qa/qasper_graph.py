"""The QASPER graph: any configured QA graph (classic RAG, NeuSym, a baseline; ``graphs.qa.family``) restricted to
the question's paper, then its answer put into the QASPER contract and its citations turned into evidence.

    answer    the QA graph on the question (answer format = the ``qasper.answer_prompt`` prompt)
    retry     only when that answer answers nothing (an echo of the question or of the format, a bare Yes to a
              what-question; ``tools.qasper_answer.non_answer``) or the model's reply was malformed: the QA graph
              once more with the ``qasper.retry_prompt`` format (copy the sentence that answers)
    evidence  the answer shaped (a leading echo of the format cut, short spans, exactly Yes/No/Unanswerable;
              ``tools.qasper_answer``; a non-answer left after the retry becomes Unanswerable; so does an answer
              whose content words the cited paragraphs
              mostly lack, ``qasper.min_answer_support``), and the cited pages of the paper mapped back to their
              verbatim paragraphs (``FLOAT SELECTED: <caption>`` for a figure/table, nothing for the abstract),
              ordered by ``qasper.evidence_order`` and cut to ``qasper.evidence_k``; "Unanswerable" has no evidence;
              an answer citing nothing of the paper falls back to a search for the question and answer; a bare
              Yes/No has none (it names no words to find its paragraph by)

Every node reads the run's settings (graphs/settings.py), like the QA graph it wraps.
"""
from __future__ import annotations

import logging
import threading
from functools import partial
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from evidex.agents.prompts import load_prompt
from evidex.agents.structured import StructuredOutputError
from evidex.graphs.qa.neusym import QAInput
from evidex.graphs.qa.qasper_config import QasperTaskConfig
from evidex.graphs.settings import config_of_run
from evidex.tools.paperstore import PaperStore
from evidex.tools.qa import QAPrediction
from evidex.tools.qasper_answer import (UNANSWERABLE, evidence_from_pages, non_answer, overlap_order,
                                        overlap_scores, page_evidence, shape_answer, strip_format_echo)


class QasperPrediction(QAPrediction):
    """The QA graph's prediction plus what QASPER scores: ``answer`` in the contract and ``evidence`` strings."""

    evidence: list[str] = Field(default_factory=list, description="verbatim paragraphs (predicted_evidence)")
    evidence_pages: list[int] = Field(default_factory=list, description="store pages the evidence came from")
    evidence_source: Literal["citations", "search", "none"] = "none"
    first_answer: str | None = Field(None, description="the first try's answer when it answered nothing and the "
                                                       "graph asked again (qasper.non_answers: retry)")


class QasperOutput(BaseModel):
    prediction: QasperPrediction


class QasperState(QAInput):
    qa: QAPrediction | None = None
    first_answer: str | None = None
    prediction: QasperPrediction | None = None


SINGLE_PARAGRAPH_OVERLAP = 0.3  # answer_overlap: the share of the answer's content words one paragraph must hold
_PARAGRAPHS: dict[tuple[str, str], dict[int, str | None]] = {}
_LOCK = threading.Lock()
log = logging.getLogger(__name__)


class _Run:
    """The run's settings and store, read once per node call."""

    def __init__(self, cfg: QasperTaskConfig):
        self.cfg = config_of_run(cfg)
        self.settings = self.cfg.qasper
        self.store = PaperStore(self.cfg.store.db, self.cfg.store.store_dir)
        self.answer_format = load_prompt(self.settings.answer_prompt)
        self.retry_format = load_prompt(self.settings.retry_prompt)
        self.degraded: list[str] = []  # searches that lost a part (said in the prediction)

    def paragraphs(self, store_id: str) -> dict[int, str | None]:
        key = (self.store.name, store_id)
        with _LOCK:
            if key not in _PARAGRAPHS:
                if len(_PARAGRAPHS) > 512:
                    _PARAGRAPHS.clear()
                _PARAGRAPHS[key] = page_evidence(self.store.pages([store_id]))
            return _PARAGRAPHS[key]

    def search(self, query: str, store_id: str, by_page: dict[int, str | None]) -> list[int]:
        """Pages of the paper's paragraphs that best match ``query`` (the abstract may take a slot, so one more)."""
        k = self.settings.evidence_k + 1
        try:
            hits = self.store.search(query[:1900], papers=[store_id], k=k, mode="hybrid")
        except Exception as exc:  # noqa: BLE001 - the dense half is gone (embedder, vector store): keywords still find
            log.warning("evidence search: hybrid search failed (%s: %s); keywords only", type(exc).__name__, exc)
            self.degraded.append(f"hybrid search failed: {type(exc).__name__}: {exc}")
            hits = self.store.search(query[:1900], papers=[store_id], k=k, mode="bm25")
        if hits.degraded:
            self.degraded.append(hits.degraded)
        return [h.page for h in hits.passages if by_page.get(h.page)]

    def shaped_answer(self, qa: QAPrediction, question: str) -> str:
        text = qa.answer
        for fmt in (self.answer_format, self.retry_format):
            text = strip_format_echo(text, fmt) if text else text
        return shape_answer(text, question)

    def answers_nothing(self, shaped: str, question: str) -> bool:
        return non_answer(shaped, question, f"{self.answer_format} {self.retry_format}") is not None


def answer_node(state: QasperState, config: RunnableConfig, *, cfg: QasperTaskConfig, inner: Any) -> dict:
    run = _Run(cfg)
    q = state.input
    if q.pdf_ids and run.store.missing(q.pdf_ids[:1]):
        raise LookupError(f"the paper of question {q.id} (store id {q.pdf_ids[0]}) is not in store {run.store.name!r}: "
                          "run without --skip-ingest, or evidex ingest-qasper DATA --db NAME")
    try:
        out = inner.invoke({"input": q}, config)
    except StructuredOutputError as exc:  # e.g. a reply cut off at the token limit: the second try may copy one
        return {"qa": None, "first_answer": f"(no answer: {exc})"}
    return {"qa": out["prediction"]}


def after_answer(state: QasperState, *, cfg: QasperTaskConfig) -> str:
    if state.qa is None:
        return "retry"
    run = _Run(cfg)
    question = state.input.question
    return "retry" if run.answers_nothing(run.shaped_answer(state.qa, question), question) else "evidence"


def retry_node(state: QasperState, config: RunnableConfig, *, cfg: QasperTaskConfig, inner: Any) -> dict:
    run = _Run(cfg)
    q = state.input
    out = inner.invoke({"input": q.model_copy(update={"answer_format": run.retry_format})}, config)
    return {"qa": out["prediction"], "first_answer": state.first_answer or state.qa.answer}


def evidence_node(state: QasperState, *, cfg: QasperTaskConfig) -> dict:
    run = _Run(cfg)
    settings = run.settings
    q, qa = state.input, state.qa
    shaped = run.shaped_answer(qa, q.question)
    if run.answers_nothing(shaped, q.question):
        shaped = UNANSWERABLE
    store_id = q.pdf_ids[0] if q.pdf_ids else None
    by_page = run.paragraphs(store_id) if store_id else {}
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
    # a bare Yes/No names no words to find its paragraph by (dev 0-99: Evidence-F1 16.0 with, 40.0 without)
    wants_evidence = shaped not in (UNANSWERABLE, "Yes", "No")
    if wants_evidence and settings.evidence_k and store_id:
        if settings.evidence_order == "answer_overlap" and support is not None:
            if max(support) >= SINGLE_PARAGRAPH_OVERLAP:
                cited = [cited[overlap_order(shaped, cited_texts)[0]]]  # the paragraph the answer came from
        source = "citations" if cited else "none"
        found = (run.search(f"{q.question} {shaped}", store_id, by_page)
                 if settings.evidence_order == "answer_search" else [])
        if found:
            cited, source = found, "search"
        elif not cited:  # an answer citing nothing of the paper: a search for the question and answer
            cited = run.search(f"{q.question} {shaped}", store_id, by_page)
            source = "search" if cited else "none"
        chosen = evidence_from_pages(cited, by_page, settings.evidence_k)
        pages, texts = [p for p, _ in chosen], [t for _, t in chosen]
    degraded = sorted({*qa.degraded, *run.degraded})
    pred = QasperPrediction(**{**qa.model_dump(), "answer": shaped, "raw_answer": raw, "degraded": degraded},
                            first_answer=state.first_answer, evidence=texts, evidence_pages=pages,
                            evidence_source=source)
    return {"prediction": pred}


def build_qasper_graph(cfg: QasperTaskConfig, inner):
    """Wrap ``inner`` (a compiled QA graph: ``{"input": PaperQuestion} -> {"prediction": QAPrediction}``)."""
    g = StateGraph(QasperState, input_schema=QAInput, output_schema=QasperOutput)
    g.add_node("answer", partial(answer_node, cfg=cfg, inner=inner))
    g.add_node("retry", partial(retry_node, cfg=cfg, inner=inner))
    g.add_node("evidence", partial(evidence_node, cfg=cfg))
    g.add_edge(START, "answer")
    g.add_conditional_edges("answer", partial(after_answer, cfg=cfg), ["retry", "evidence"])
    g.add_edge("retry", "evidence")
    g.add_edge("evidence", END)
    return g.compile(name=cfg.name)

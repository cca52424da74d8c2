"""The single-call baselines of NeuSym-RAG on the same store and model (``specs/neusym.md`` §2.5):

    question_only    the question and its answer format, nothing else
    title_abstract   plus the papers' titles and abstracts (cut to ``context_chars``)
    full_text        plus the papers' full text, page by page (cut to ``context_chars``)
    classic_rag      one search with the question over ``chunks.text_content`` of the papers, then an answer

Iterative classic RAG and the NeuSym ablations are the agent loop with fewer actions (``graphs.qa.neusym``).
Each is ``context -> answer`` with one JSON-schema-constrained answer call; the answer cites the pages its
context came from.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langgraph.graph import END, START, StateGraph
from pydantic import Field

from evidex.agents.paper_answer import answer_from_context
from evidex.graphs.qa.config import AnswerSettings, RetrievalSettings
from evidex.graphs.qa.neusym import NeuSymInput, NeuSymOutput
from evidex.graphs.qa.scope import names_papers, paper_label, scope_line, sql_marks
from evidex.graphs.qa.store_tools import StoreTools
from evidex.tools.qa import CitedPage, PaperQuestion, QAPrediction

BaselineName = Literal["question_only", "title_abstract", "full_text", "classic_rag"]


class BaselineSettings(AnswerSettings, RetrievalSettings):
    method: BaselineName = "classic_rag"


class BaselineState(NeuSymInput):
    context: str = ""
    sources: list[CitedPage] = Field(default_factory=list)
    prediction: QAPrediction | None = None


def title_abstract_context(tools: StoreTools, q: PaperQuestion, limit: int) -> tuple[str, list[CitedPage]]:
    if not q.pdf_ids:
        return "", []
    rows = tools.query(f"SELECT CAST(paper_id AS VARCHAR) AS pdf_id, title, abstract FROM metadata "
                       f"WHERE CAST(paper_id AS VARCHAR) IN ({sql_marks(q.pdf_ids)})", list(q.pdf_ids))
    text = "\n\n".join(f"[{r['pdf_id']}] {r['title']}\n{r['abstract'] or ''}" for r in rows)
    return text[:limit], [CitedPage(pdf_id=r["pdf_id"], page_number=1) for r in rows]


def full_text_context(tools: StoreTools, q: PaperQuestion, limit: int) -> tuple[str, list[CitedPage]]:
    if not q.pdf_ids:
        return "", []
    rows = tools.query(f"SELECT CAST(ref_paper_id AS VARCHAR) AS pdf_id, page_number, page_content FROM pages "
                       f"WHERE CAST(ref_paper_id AS VARCHAR) IN ({sql_marks(q.pdf_ids)}) "
                       "ORDER BY pdf_id, page_number",
                       list(q.pdf_ids))
    parts, used, size = [], [], 0
    for r in rows:
        block = f"[{r['pdf_id']} page {r['page_number']}]\n{r['page_content'] or ''}\n"
        if size + len(block) > limit:
            parts.append(block[: max(0, limit - size)])
            used.append(CitedPage(pdf_id=r["pdf_id"], page_number=r["page_number"]))
            break
        parts.append(block)
        used.append(CitedPage(pdf_id=r["pdf_id"], page_number=r["page_number"]))
        size += len(block)
    return "".join(parts), used


def retrieved_context(tools: StoreTools, q: PaperQuestion, s: BaselineSettings) -> tuple[str, list[CitedPage]]:
    hits = tools.question_hits(q, q.question, s.retrieval_table, s.retrieval_column, s.retrieval_limit,
                               s.retrieval_mode)
    titles = tools.title_by_id() if names_papers(q) else {}
    shown = hits[::-1] if s.context_order == "best_last" else hits
    text = "\n\n".join(f"[{h.pdf_id} page {h.page_number}{paper_label(titles.get(h.pdf_id))}] {h.text}"
                       for h in shown)
    return text, [CitedPage(pdf_id=h.pdf_id, page_number=h.page_number, source=f"{h.table_name}.{h.primary_key}")
                  for h in hits]


CONTEXT: dict[str, Callable] = {
    "question_only": lambda tools, q, s: ("", []),
    "title_abstract": lambda tools, q, s: title_abstract_context(tools, q, s.context_chars),
    "full_text": lambda tools, q, s: full_text_context(tools, q, s.context_chars),
    "classic_rag": retrieved_context,
}


def build_baseline(llm, settings: BaselineSettings, tools: StoreTools, name: str | None = None):
    gather = CONTEXT[settings.method]

    def context(state: BaselineState) -> dict:
        tools.require_papers(state.input.pdf_ids)
        text, sources = gather(tools, state.input, settings)
        return {"context": text, "sources": sources}

    def answer(state: BaselineState) -> dict:
        q = state.input
        reply = answer_from_context(llm, q.question, q.answer_format, scope_line(q), state.context,
                                    typed=settings.typed_answer, quote=settings.quote_first,
                                    max_tokens=settings.max_tokens, name=f"{settings.method}_answer",
                                    abstain_word=settings.abstain_word, check=settings.answer_check,
                                    question_last=settings.question_last, computed=settings.computed_answers,
                                    ranked=settings.ranked_answers, table_cells=settings.table_cells)
        text = reply.answer
        cites = list({(c.pdf_id, c.page_number): c for c in state.sources}.values())
        exists = tools.pages_exist([(c.pdf_id, c.page_number) for c in cites]) if cites else {}
        cited = [c.model_copy(update={"exists": exists.get((c.pdf_id, c.page_number), False)}) for c in cites]
        shaped = tools.shape_answer(text, q.answer_format)
        return {"prediction": QAPrediction(id=q.id, answer=shaped, citations=cited, turns=1, actions=[settings.method],
                                           raw_answer=text if shaped != text else None,
                                           quote=reply.quote or None, confidence=reply.confidence)}

    g = StateGraph(BaselineState, input_schema=NeuSymInput, output_schema=NeuSymOutput)
    g.add_node("context", context)
    g.add_node("answer", answer)
    g.add_edge(START, "context")
    g.add_edge("context", "answer")
    g.add_edge("answer", END)
    return g.compile(name=name or settings.method)

"""The single-call baselines of NeuSym-RAG on the same store and model (``specs/neusym.md`` §2.5), one fixed graph
``context -> answer`` whose context ``qa.method`` chooses:

    question_only    the question and its answer format, nothing else
    title_abstract   plus the papers' titles and abstracts (cut to ``qa.context_chars``)
    full_text        plus the papers' full text, page by page (cut to ``qa.context_chars``)
    classic_rag      one search with the question over the papers' passages (``qa.retrieval_limit``), then an answer

The answer comes from the answer readers (``qa.readers``, the model last) over that context; it cites the pages
its context came from. Iterative RAG and the NeuSym ablations are the agent graph (graphs.qa.neusym).
"""
from __future__ import annotations

from functools import partial

from langgraph.graph import END, START, StateGraph
from pydantic import Field

from evidex.graphs.qa.config import QATaskConfig
from evidex.graphs.qa.neusym import Deps, QAInput, QAOutput, shape
from evidex.tools.paperstore import Passage, PaperStore
from evidex.tools.qa import CitedPage, QAPrediction
from evidex.tools.qa.context import Context
from evidex.tools.qa.probe import names_papers, question_search
from evidex.tools.qa.question import Question, parse_question


class BaselineState(QAInput):
    question: Question | None = None
    context: Context = Field(default_factory=Context)
    prediction: QAPrediction | None = None


def gather(store: PaperStore, q: Question, cfg: QATaskConfig) -> Context:
    """The context ``qa.method`` reads."""
    method = cfg.qa.method
    if method == "title_abstract" and q.papers:
        return Context(items=[Passage(table="metadata", column="abstract", key=p.paper_id, paper_id=p.paper_id, page=1,
                                      text=f"{p.title}\n{p.abstract or ''}") for p in store.papers(q.papers)])
    if method == "full_text" and q.papers:
        return Context(items=store.pages(q.papers))
    if method == "classic_rag":
        hits = question_search(store, q, q.text, cfg.qa.retrieval_limit, cfg.qa.retrieval_mode)
        titles = store.titles() if names_papers(q) else {}
        return Context(items=hits.passages, titles={p.paper_id: titles[p.paper_id] for p in hits.passages
                                                     if p.paper_id in titles},
                       degraded=[hits.degraded] if hits.degraded else [])
    return Context()


def context_node(state: BaselineState, *, deps: Deps) -> dict:
    cfg = deps.run()
    store = deps.store(cfg)
    q = parse_question(state.input)
    store.require(q.papers)
    return {"question": q, "context": gather(store, q, cfg)}


def answer_node(state: BaselineState, *, deps: Deps) -> dict:
    cfg = deps.run()
    store = deps.store(cfg)
    q, context = state.question, state.context
    limit = cfg.qa.context_chars if cfg.qa.method in ("title_abstract", "full_text") else None
    answer = deps.read(cfg, q, context, limit=limit, name=f"{cfg.qa.method}_answer")
    pages = list(dict.fromkeys((i.paper_id, i.page) for i in context.items if getattr(i, "paper_id", "")))
    sources = {(i.paper_id, i.page): i.source for i in context.items if getattr(i, "paper_id", "")}
    exists = store.pages_exist(pages) if pages else {}
    cited = [CitedPage(pdf_id=p, page_number=n, source=sources.get((p, n), ""), exists=exists.get((p, n), False))
             for p, n in pages]
    value = answer.value if answer else None
    shaped = shape(store, value, q.answer_format)
    return {"prediction": QAPrediction(id=q.id, answer=shaped, citations=cited, turns=1, actions=[cfg.qa.method],
                                       raw_answer=value if shaped != value else None,
                                       reader=answer.reader if answer else None, degraded=context.degraded)}


def build_baseline(llm, cfg: QATaskConfig, name: str | None = None):
    deps = Deps(llm=llm, config=cfg)
    g = StateGraph(BaselineState, input_schema=QAInput, output_schema=QAOutput)
    g.add_node("context", partial(context_node, deps=deps))
    g.add_node("answer", partial(answer_node, deps=deps))
    g.add_edge(START, "context")
    g.add_edge("context", "answer")
    g.add_edge("answer", END)
    return g.compile(name=name or cfg.name)


__all__ = ["BaselineState", "build_baseline", "gather"]

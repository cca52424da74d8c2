"""The NeuSym agent as one fixed LangGraph (``qa.method`` neusym or iterative_rag):

    probe     look up what the question names in every view of the store (tools.qa.probe): the first observation
    early     the answer readers (``qa.readers``) over the probe; an answer found in it, and not ruled out by the
              question, is final (agents.readers.checks)
    decide    the model's next action (agents.neusym_policy): one JSON-schema-constrained object per turn
    act       run it on the store (read-only SQL, search, calculator, image view) as a typed observation
              (agents.neusym_steps); errors and repeats come back as observations
    answer    the readers over everything the turns found (on the model's answer action, or the last turn)
    finalize  the answer shaped to its format, with its citations checked against the store

Every node reads the run's settings (graphs/settings.py: the task config plus the run's LangGraph context), so a
server changes ``qa.max_turns`` or ``qa.readers`` per run without building the graph again. An ablation is a config
(``qa.actions``), never another graph: without ``sql`` the probe makes no look-ups, without ``search`` it shows no
passages, and ``iterative_rag`` keeps every search on the question's papers' passages.
"""
from __future__ import annotations

import logging
import operator
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from evidex.agents.neusym_policy import GenerateAnswer, next_action, task_prompt
from evidex.agents.neusym_steps import (REPEAT_WARNING, Observation, ProbeAction, Step, evidence, history_messages,
                                        run_action)
from evidex.agents.prompts import render
from evidex.agents.qa.render import scope_line
from evidex.agents.readers import ReadRequest, read_answer
from evidex.agents.readers.checks import grounding, rejects
from evidex.agents.structured import ContextOverflow, StructuredOutputError
from evidex.graphs.qa.config import QATaskConfig
from evidex.graphs.settings import config_of_run
from evidex.tools.answer_format import answer_text, answer_type
from evidex.tools.paperstore import MissingPapersError, PaperStore
from evidex.tools.qa import CitedPage, PaperQuestion, QAPrediction
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.probe import probe
from evidex.tools.qa.question import Question, parse_question

log = logging.getLogger(__name__)


class QAInput(BaseModel):
    input: PaperQuestion


class QAOutput(BaseModel):
    prediction: QAPrediction


class NeuSymState(QAInput):
    question: Question | None = None
    steps: Annotated[list[Step], operator.add] = Field(default_factory=list)
    pending: Any = None  # the action decided and not yet run
    answer: Answer | None = None
    cited: list[CitedPage] = Field(default_factory=list)  # the model's own citations, from its answer action
    prediction: QAPrediction | None = None


@dataclass(frozen=True)
class Deps:
    """What every node needs besides the state: the chat model and the operator's config (the run's settings are
    read per run on top of it)."""

    llm: Any
    config: QATaskConfig

    def run(self) -> QATaskConfig:
        return config_of_run(self.config)

    def store(self, cfg: QATaskConfig) -> PaperStore:
        return PaperStore(cfg.store.db, cfg.store.store_dir)

    def read(self, cfg: QATaskConfig, q: Question, context: Context, *, limit: int | None, name: str) -> Answer | None:
        """The run's answer readers, in its order, over ``context`` (the model's call named ``name`` in traces,
        shown at most ``limit`` characters of it)."""
        return read_answer(cfg.qa.readers, ReadRequest(question=q, context=context, llm=self.llm, limit=limit,
                                                       paper_ids=cfg.qa.paper_ids, max_tokens=cfg.qa.max_tokens,
                                                       name=name))


def _searches(cfg: QATaskConfig) -> bool:
    return "search" in cfg.qa.actions


def probe_node(state: NeuSymState, *, deps: Deps) -> dict:
    cfg = deps.run()
    store = deps.store(cfg)
    q = parse_question(state.input)
    store.require(q.papers)
    found = probe(store, q, cfg.qa.probe_passages if _searches(cfg) else 0,
                  lookups="sql" in cfg.qa.actions and cfg.qa.method == "neusym")
    return {"question": q, "steps": [Step(action=ProbeAction(), observation=Observation(kind="probe", context=found))]}


def early_node(state: NeuSymState, *, deps: Deps) -> dict:
    """Answer from the probe alone when the answer is found in it; otherwise the turns begin."""
    cfg = deps.run()
    context = state.steps[0].observation.context
    try:
        answer = deps.read(cfg, state.question, context, limit=cfg.qa.probe_chars, name="neusym_early_answer")
    except StructuredOutputError:  # an unreadable early answer is no answer yet: the turns begin
        return {}
    if answer is None or rejects(answer, state.question, context):
        return {}
    return {"answer": answer}


def after_early(state: NeuSymState) -> str:
    return "finalize" if state.answer is not None else "decide"


def decide_node(state: NeuSymState, *, deps: Deps) -> dict:
    cfg = deps.run()
    qa = cfg.qa
    turns = len(state.steps) - 1  # the probe is not a turn
    if turns >= qa.max_turns - 1:
        return {}  # the last turn answers from what was found (the answer node)
    q = state.question
    task = task_prompt(q.text, q.answer_format, scope_line(q), deps.store(cfg).schema_text(), qa.actions,
                       qa.max_turns)
    actions = qa.actions
    last = state.steps[-1]
    if last.observation.kind == "repeat" and len(actions) > 1:
        # a model that repeats itself at temperature 0 would do so forever: take that action away for a turn
        actions = tuple(a for a in actions if a != last.action.action) or actions
    # a prompt longer than the model's context is sent again with one turn fewer each time
    for window in range(min(qa.window, len(state.steps)), 0, -1):
        try:
            action = next_action(deps.llm, task + history_messages(state.steps, window, qa.observation_chars),
                                 actions, max_tokens=qa.max_tokens, answer_type=answer_type(q.answer_format),
                                 native=qa.tool_calling == "native")
            break
        except ContextOverflow as exc:
            log.warning("%s: %s; showing %d turn(s) of history", q.id, exc, window - 1)
    else:
        return {}  # not even the last turn fits: the answer node answers from what the turns found
    if isinstance(action, GenerateAnswer):
        cited = [CitedPage(pdf_id=c.pdf_id, page_number=c.page_number, source=c.source) for c in action.citations]
        return {"answer": Answer(value=answer_text(action.answer), reader="agent"), "cited": cited}
    return {"pending": action}


def after_decide(state: NeuSymState) -> str:
    return "act" if state.pending is not None and state.answer is None else "answer"


def act_node(state: NeuSymState, *, deps: Deps) -> dict:
    cfg = deps.run()
    step = run_action(deps.store(cfg), state.pending, state.question, earlier=state.steps[1:],
                      search_only_papers=cfg.qa.method == "iterative_rag")
    return {"steps": [step], "pending": None}


def answer_node(state: NeuSymState, *, deps: Deps) -> dict:
    """The answer from what the turns found: a small model answers better from a short answer prompt over the
    evidence than inside an action object under a long system prompt. The action's own answer stands when the
    readers give none."""
    cfg = deps.run()
    context = evidence(state.steps)
    try:
        answer = deps.read(cfg, state.question, context, limit=cfg.qa.evidence_chars, name="neusym_answer")
    except StructuredOutputError:
        answer = None
    return {"answer": answer or state.answer}


def finalize_node(state: NeuSymState, *, deps: Deps) -> dict:
    cfg = deps.run()
    store = deps.store(cfg)
    q = state.input
    names = [s.action.action for s in state.steps[1:]] + (["answer"] if state.answer is not None else [])
    degraded = sorted({d for s in state.steps for d in s.observation.context.degraded})
    if state.answer is None:
        return {"prediction": QAPrediction(id=q.id, no_answer=render("neusym_turns_out", max_turns=cfg.qa.max_turns),
                                           turns=len(names), actions=names, degraded=degraded)}
    context = evidence(state.steps)
    cites = state.cited or _cited(state.answer, context)
    exists = store.pages_exist([(c.pdf_id, c.page_number) for c in cites]) if cites else {}
    citations = [c.model_copy(update={"exists": exists.get((c.pdf_id, c.page_number), False)}) for c in cites]
    shaped = shape(store, state.answer.value, q.answer_format)
    return {"prediction": QAPrediction(id=q.id, answer=shaped, citations=citations, turns=max(1, len(names)),
                                       actions=names, raw_answer=state.answer.value if shaped != state.answer.value
                                       else None, reader=state.answer.reader, degraded=degraded)}


def _cited(answer: Answer, context: Context) -> list[CitedPage]:
    """The pages of the items the answer rests on (its sources, else the items that hold it)."""
    by_source = {i.source: i for i in context.items if getattr(i, "paper_id", "")}
    wanted = [s for s in (answer.sources or grounding(answer, context)) if s in by_source]
    return [CitedPage(pdf_id=by_source[s].paper_id, page_number=by_source[s].page, source=s)
            for s in dict.fromkeys(wanted)]


def shape(store: PaperStore, text: str | None, answer_format: str) -> str | None:
    """A final answer in the shape its format asks for; a paper title as the store writes it when titles are
    asked for."""
    from evidex.tools.answer_format import asks_for_title, conform, snap_title

    shaped = conform(text, answer_format)
    if shaped and asks_for_title(answer_format):
        shaped = snap_title(shaped, list(store.titles().values()))
    return shaped


def build_neusym(llm, cfg: QATaskConfig, name: str | None = None):
    """The agent graph over ``cfg``'s store with ``llm``."""
    deps = Deps(llm=llm, config=cfg)
    g = StateGraph(NeuSymState, input_schema=QAInput, output_schema=QAOutput)
    g.add_node("probe", partial(probe_node, deps=deps))
    g.add_node("early_answer", partial(early_node, deps=deps))
    g.add_node("decide", partial(decide_node, deps=deps))
    g.add_node("act", partial(act_node, deps=deps))
    g.add_node("answer", partial(answer_node, deps=deps))
    g.add_node("finalize", partial(finalize_node, deps=deps))
    g.add_edge(START, "probe")
    g.add_edge("probe", "early_answer")
    g.add_conditional_edges("early_answer", after_early, ["decide", "finalize"])
    g.add_conditional_edges("decide", after_decide, ["act", "answer"])
    g.add_edge("act", "decide")
    g.add_edge("answer", "finalize")
    g.add_edge("finalize", END)
    return g.compile(name=name or cfg.name).with_config(recursion_limit=2 * 100 + 10)


__all__ = ["MissingPapersError", "NeuSymState", "QAInput", "QAOutput", "REPEAT_WARNING", "build_neusym", "shape"]

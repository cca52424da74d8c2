"""The NeuSym agent as a LangGraph: decide -> act -> decide ... -> finalize.

    decide    the model's next action (agents.neusym_policy): one JSON-schema-constrained object per turn
    act       run it on the paper store (read-only SQL, search, calculator, image view); errors and unreadable
              replies come back as observations, long observations are cut with a note
    finalize  the answer with its citations checked against the store, or an explicit no-answer when the turns
              ran out (never the last observation)
"""
from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from evidex.agents.neusym_policy import (Citation, GenerateAnswer, ParseFailure,
                                         history_messages, next_action, task_prompt)
from evidex.agents.paper_answer import answer_from_context, excluded_answer, looped_list, printed_gap
from evidex.agents.prompts import load_prompt, render
from evidex.agents.structured import StructuredOutputError
from evidex.graphs.qa.config import AgentSettings
from evidex.graphs.qa.probe import Block, as_text, probe_blocks
from evidex.graphs.qa.scope import scope_filter, scope_line, sql_marks
from evidex.graphs.qa.store_tools import REPEAT_WARNING, MissingPapersError, StoreTools, truncate
from evidex.tools.answer_format import answer_text, answer_type, copies_example
from evidex.tools.qa import CitedPage, PaperQuestion, QAPrediction
from evidex.tools.text import operands_in, quote_in, value_in


class NeuSymSettings(AgentSettings):
    db: str | None = None
    store_dir: str | None = None
    search_target: tuple[str, str] | None = Field(
        None, description="(table, column) every search uses, filtered to the question's papers: iterative "
                          "classic RAG (the model then only chooses the query and the limit)")


class NeuSymInput(BaseModel):
    input: PaperQuestion


class NeuSymOutput(BaseModel):
    prediction: QAPrediction


class NeuSymState(NeuSymInput):
    steps: list[tuple[str, str]] = Field(default_factory=list)  # (action as JSON, observation)
    actions: list[str] = Field(default_factory=list)
    pending: dict[str, Any] | None = None  # the action decided and not yet run
    answer: GenerateAnswer | None = None
    warm_rows: list[Block] = Field(default_factory=list)  # what the warm start found: (row text, source to cite)
    prediction: QAPrediction | None = None




def _same_action(shown: str, action: dict[str, Any]) -> bool:
    """Whether an earlier turn's action (as shown in the history) is this one, its thought aside."""
    key = {k: v for k, v in action.items() if k not in ("thought", "error")}
    try:
        earlier = {k: v for k, v in json.loads(shown).items() if k not in ("thought", "error")}
    except (json.JSONDecodeError, AttributeError):
        return False
    return earlier == key and key.get("action") != "invalid"


def _earlier_turn(steps: list[tuple[str, str]], action: dict[str, Any]) -> int | None:
    """The 1-based turn at which this same action (its thought aside) was already taken, or None."""
    return next((n for n, (shown, _) in enumerate(steps, start=1) if _same_action(shown, action)), None)


def build_neusym(llm, settings: NeuSymSettings, tools: StoreTools | None = None, name: str = "neusym"):
    tools = tools or StoreTools(settings.db, settings.store_dir)
    schema_text: list[str] = []  # read once, on the first question

    def decide(state: NeuSymState) -> dict:
        if not schema_text:
            schema_text.append(tools.schema())
        q = state.input
        if not state.actions:
            tools.require_papers(q.pdf_ids)
        messages = task_prompt(q.question, q.answer_format, scope_line(q), schema_text[0], settings.actions,
                               settings.max_turns) + history_messages(state.steps, settings.window)
        actions = settings.actions
        last = state.steps[-1][1] if state.steps else ""
        if last.startswith(REPEAT_WARNING) and len(actions) > 1:
            # a model that repeats itself at temperature 0 would do so forever: take that action away for a turn
            repeated = state.actions[-1]
            actions = tuple(a for a in actions if a != repeated) or actions
        last_turn = settings.answer_on_last_turn and len(state.actions) == settings.max_turns - 1
        if last_turn and settings.answer_step == "evidence":
            # the answer will be written from the evidence anyway: no answer action to write first
            decided = GenerateAnswer(action="answer", thought="last turn: answer from what was found", answer="")
            return {"answer": evidence_answer(state, decided), "actions": state.actions + ["answer"], "pending": None}
        if last_turn:
            # the last turn may only answer, from what the earlier turns found (the schema allows nothing else)
            messages.append(HumanMessage(content=load_prompt("neusym_last_turn")))
            actions = ()
        action = next_action(llm, messages, actions, max_tokens=settings.max_tokens,
                             answer_type=answer_type(q.answer_format) if settings.typed_answer else str,
                             native=settings.tool_calling == "native")
        if isinstance(action, GenerateAnswer):
            # the state holds answers as the text an evaluator reads, whatever type the format gave them
            action = GenerateAnswer.model_validate({**action.model_dump(), "answer": answer_text(action.answer)})
            if settings.answer_step == "evidence":  # an unreadable evidence answer keeps the action's own
                action = evidence_answer(state, action) or action
            return {"answer": action, "actions": state.actions + ["answer"], "pending": None}
        return {"pending": action.model_dump(), "actions": state.actions + [action.action]}

    def evidence_answer(state: NeuSymState, decided: GenerateAnswer) -> GenerateAnswer | None:
        """The answer from what the turns found: a small model answers better from a short answer prompt over the
        observations than inside an action object under a long system prompt. None when the reply is unreadable."""
        q = state.input
        context = "\n\n".join(observation for _, observation in state.steps
                               if not observation.startswith(("[Error]", REPEAT_WARNING)))
        try:
            out = answer_from_context(llm, q.question, q.answer_format, scope_line(q),
                                      context[: settings.evidence_chars], typed=settings.typed_answer,
                                      quote=settings.quote_first, max_tokens=settings.max_tokens, name="neusym_answer",
                                      question_last=settings.question_last, computed=settings.computed_answers,
                                      ranked=settings.ranked_answers, table_cells=settings.table_cells)
        except StructuredOutputError:
            return None
        return decided.model_copy(update={"answer": out.answer,
                                          "citations": decided.citations or quoted_sources(state, out)})

    def early(state: NeuSymState) -> dict:
        """Answer from the warm start alone when the answer is found in it (its value, its quote, or the numbers its
        arithmetic used): a grounded answer needs no turns; an unsupported one (made up, or to be computed from what
        the probe lacks) is dropped and the turns begin."""
        q = state.input
        # the whole probe (to probe_chars), not the cut the turns see: the early answer has the prompt to itself
        context = (truncate("\n\n".join(text for text, _ in state.warm_rows), settings.probe_chars)
                   if state.warm_rows else state.steps[0][1] if state.steps else "")
        try:
            out = answer_from_context(llm, q.question, q.answer_format, scope_line(q), context,
                                      typed=settings.typed_answer, quote=settings.quote_first,
                                      max_tokens=settings.max_tokens, name="neusym_early_answer",
                                      question_last=settings.question_last, computed=settings.computed_answers,
                                      ranked=settings.ranked_answers, table_cells=settings.table_cells)
        except StructuredOutputError:  # an unreadable early answer is no answer yet: the turns begin
            return {}
        if (not grounded(out, context) or excluded_answer(out.answer, q.question) or looped_list(out.answer)
                or copies_example(out.answer, q.answer_format)
                or (not out.expression and printed_gap(q.question, q.answer_format, context, out.answer,
                                                       settings.table_cells))):
            # an answer the question rules out, a list stuck on one item, the format's own example ("e.g. 0.5") or
            # one table cell given for the gap between two is as unsupported as a made-up one, however often the
            # probe prints that value
            return {}
        answer = GenerateAnswer(action="answer", thought="the warm start holds the answer", answer=out.answer,
                                citations=quoted_sources(state, out))
        return {"answer": answer, "actions": ["answer"]}

    def grounded(out, context: str) -> bool:
        """Whether the early answer rests on the probe: its quote (quote_first), the numbers its arithmetic used
        (a computed answer: the result itself is rarely printed), or its value."""
        if settings.quote_first and (out.quote or not out.expression):
            return quote_in(out.quote, context)
        if out.expression:  # also a gap code read from a table (no quote then)
            return operands_in(out.expression, context)
        return value_in(out.answer, context)

    def quoted_sources(state: NeuSymState, out) -> list[Citation]:
        """The warm start's sources whose rows hold what the answer rests on: its quote (quote_first), the numbers
        its arithmetic used, or its value; the first three when none does."""
        if (settings.quote_first and out.quote) or not out.expression:
            found = out.quote if settings.quote_first else out.answer
            held = [c for text, c in state.warm_rows if quote_in(found, text, min_words=1) or value_in(found, text)]
        else:
            held = [c for text, c in state.warm_rows if operands_in(out.expression, text)]
        return [Citation(pdf_id=c.pdf_id, page_number=c.page_number, source=c.source or "")
                for c in (held or [c for _, c in state.warm_rows[:3]])]

    def after_early(state: NeuSymState) -> str:
        return "finalize" if state.answer is not None else "decide"

    def warm_start(state: NeuSymState) -> dict:
        """Evidence before the first turn, shown as its observation: the model starts from passages (and, with the
        multiview probe, the rows the question names), not from nothing."""
        q = state.input
        tools.require_papers(q.pdf_ids)
        if settings.warm_start == "multiview":
            action = {"thought": "look up the papers, the objects the question names and matching passages",
                      "action": "probe"}
            blocks = probe_blocks(tools, q, settings.probe_passages, settings.table_records)
            # the turns see it cut like any observation, which keeps the first turn's prompt within 3,000 tokens
            observation = truncate(as_text(blocks), settings.observation_chars)
            return {"steps": [(json.dumps(action, ensure_ascii=False), observation)], "warm_rows": blocks}
        else:
            action = {"thought": "start from the passages that match the question", "action": "search",
                      "query": q.question[:500], "table": "chunks", "column": "text_content",
                      "filter": tools.question_filter(q), "limit": 4, "mode": "hybrid"}
            try:
                result = tools.search_result(action["query"], action["table"], action["column"], action["filter"],
                                             action["limit"], action["mode"])
            except Exception as exc:  # noqa: BLE001 - shown as the search action would show it; the turns go on
                return {"steps": [(json.dumps(action, ensure_ascii=False), f"[Error]: {type(exc).__name__}: {exc}")]}
            # the hits are sources too, so an answer read from them cites them
            return {"steps": [(json.dumps(action, ensure_ascii=False),
                               truncate(result.to_text(), settings.observation_chars))],
                    "warm_rows": [(h.text, CitedPage(pdf_id=h.pdf_id, page_number=h.page_number,
                                                     source=f"chunks.{h.primary_key}")) for h in result.hits]}

    def act(state: NeuSymState) -> dict:
        action = state.pending or {}
        if action.get("action") == "invalid":
            observation = f"[Error]: your reply was not a valid action ({action['error']}). Reply with one JSON action."
        else:
            if action.get("action") == "search" and settings.search_target:
                action = {**action, "table": settings.search_target[0], "column": settings.search_target[1],
                          "filter": tools.question_filter(state.input)}
            observation = truncate(tools.run(action), settings.observation_chars)
        shown = json.dumps({k: v for k, v in action.items() if k != "error"}, ensure_ascii=False)
        repeat = _earlier_turn(state.steps, action)
        if repeat is not None and action.get("action") == "search":
            # a search asked again shows its next hits: a small model that repeats itself still reads further
            seen = sum(1 for shown_before, _ in state.steps if _same_action(shown_before, action))
            observation = truncate(tools.next_hits(action, skip=seen * int(action.get("limit") or 5)),
                                   settings.observation_chars)
        elif repeat is not None:  # small models loop on one failing call; say so instead of answering it again
            observation = (f"{REPEAT_WARNING} at turn {repeat} and got the result shown there. Do something "
                           "different: another action, query, table, column or filter, or answer.")
        return {"steps": state.steps + [(shown, observation)], "pending": None}

    def route(state: NeuSymState) -> str:
        if state.answer is not None or len(state.actions) >= settings.max_turns:
            return "finalize"
        return "act"

    def finalize(state: NeuSymState) -> dict:
        q = state.input
        if state.answer is None:
            pred = QAPrediction(id=q.id, no_answer=render("neusym_turns_out", max_turns=settings.max_turns),
                                turns=len(state.actions), actions=state.actions)
            return {"prediction": pred}
        cites = [(c.pdf_id, c.page_number) for c in state.answer.citations]
        exists = tools.pages_exist(cites) if cites else {}
        citations = [CitedPage(pdf_id=c.pdf_id, page_number=c.page_number, source=c.source,
                               exists=exists.get((c.pdf_id, c.page_number), False)) for c in state.answer.citations]
        text = answer_text(state.answer.answer)
        shaped = tools.shape_answer(text, q.answer_format)
        pred = QAPrediction(id=q.id, answer=shaped, citations=citations, turns=len(state.actions),
                            actions=state.actions, raw_answer=text if shaped != text else None)
        return {"prediction": pred}

    g = StateGraph(NeuSymState, input_schema=NeuSymInput, output_schema=NeuSymOutput)
    g.add_node("decide", decide)
    g.add_node("act", act)
    g.add_node("finalize", finalize)
    if settings.warm_start != "off":
        g.add_node("warm_start", warm_start)
        g.add_edge(START, "warm_start")
        if settings.early_answer:
            g.add_node("early_answer", early)
            g.add_edge("warm_start", "early_answer")
            g.add_conditional_edges("early_answer", after_early, {"decide": "decide", "finalize": "finalize"})
        else:
            g.add_edge("warm_start", "decide")
    else:
        g.add_edge(START, "decide")
    g.add_conditional_edges("decide", route, {"act": "act", "finalize": "finalize"})
    g.add_edge("act", "decide")
    g.add_edge("finalize", END)
    return g.compile(name=name)


__all__ = ["MissingPapersError", "NeuSymSettings", "ParseFailure", "StoreTools", "build_neusym", "scope_filter",
           "scope_line", "sql_marks", "truncate"]

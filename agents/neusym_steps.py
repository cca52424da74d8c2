"""The NeuSym agent's steps as typed data: an action (:mod:`agents.neusym_policy`) and the observation it got.

An :class:`Observation` holds what the action found, typed: the probe's or a search's store items (a
:class:`~tools.qa.context.Context`), an SQL result's rows, a calculator value, an image region's text, or an error
the model can react to. It is rendered to the text the model reads only when a prompt is written
(:func:`observation_text`, :func:`history_messages`); traces and the web page read the same objects
(:func:`Step.summary`).

    step = run_action(store, action, question)          # never raises: a failing tool is an observation
    observation_text(step.observation, limit=3000)
"""
from __future__ import annotations

import json
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, Field

from evidex.agents.neusym_policy import (CalculateExpr, GenerateAnswer, ParseFailure, RetrieveFromDatabase,
                                         RetrieveFromVectorstore, ViewImage)
from evidex.agents.prompts import load_prompt
from evidex.agents.qa.render import render_context, rows_text, truncate
from evidex.tools.paperstore import Note, PaperStore, scope_filter
from evidex.tools.qa.context import Context, Rows
from evidex.tools.qa.question import Question

REPEAT_WARNING = "[Warning]: you already took this exact action"


class ProbeAction(BaseModel):
    """The look-up before the first turn (not the model's)."""

    thought: str = "look up the papers, the objects the question names and matching passages"
    action: Literal["probe"] = "probe"


AnyStepAction = ProbeAction | RetrieveFromDatabase | RetrieveFromVectorstore | CalculateExpr | ViewImage | \
    GenerateAnswer | ParseFailure


class Observation(BaseModel):
    kind: Literal["probe", "search", "sql", "calculate", "view_image", "error", "repeat"]
    context: Context = Field(default_factory=Context)  # probe items, search passages
    rows: Rows | None = None  # sql
    value: str | None = None  # calculate
    text: str | None = None  # view_image: the region's caption and text
    message: str | None = None  # error, refusal or warning, as the model reads it
    mode: str | None = None  # search: the mode it ran in
    note: str | None = None  # search: the engine's note; a repeated search: what was skipped
    skipped: int = 0  # a repeated search: hits already shown

    @property
    def failed(self) -> bool:
        return self.kind in ("error", "repeat")


class Step(BaseModel):
    action: AnyStepAction
    observation: Observation

    def key(self) -> dict:
        """The action without its thought: two steps with the same key repeat one action."""
        return {k: v for k, v in self.action.model_dump().items() if k not in ("thought", "error")}

    def summary(self) -> str:
        """One line a reader understands: what the agent looked at and what it found."""
        a, o = self.action, self.observation
        found = observation_summary(o)
        if isinstance(a, ProbeAction):
            return f"Looked up the question's papers and what it names: {found}"
        if isinstance(a, RetrieveFromVectorstore):
            return f"Searched {a.table}.{a.column} for \u201c{a.query[:80]}\u201d: {found}"
        if isinstance(a, RetrieveFromDatabase):
            return f"Queried the database: {found}"
        if isinstance(a, CalculateExpr):
            return f"Calculated {a.expression[:80]}: {found}"
        if isinstance(a, ViewImage):
            return f"Looked at page {a.page_number} of a paper: {found}"
        return found


def observation_summary(o: Observation) -> str:
    if o.failed:
        return (o.message or "").split("\n")[0][:160]
    if o.kind in ("probe", "search"):
        kinds: dict[str, int] = {}
        for item in o.context.items:
            kinds[item.kind] = kinds.get(item.kind, 0) + 1
        labels = {"paper": "paper record", "passage": "passage", "table": "table", "figure": "figure",
                  "equation": "equation", "note": "note"}
        parts = [f"{n} {labels.get(k, k)}{'s' if n > 1 else ''}" for k, n in kinds.items()]
        return ", ".join(parts) or "nothing found"
    if o.kind == "sql":
        return f"{len(o.rows.rows)} rows" if o.rows and o.rows.rows else "no rows"
    if o.kind == "calculate":
        return o.value or ""
    return (o.text or "")[:160]


def observation_text(o: Observation, limit: int | None = None) -> str:
    """The observation as the model reads it (cut to ``limit`` characters with a note of what was cut)."""
    if o.failed:
        text = o.message or ""
    elif o.kind == "probe":
        text = render_context(o.context)
    elif o.kind == "search":
        if not o.context.items:
            text = "[Warning]: no matching records found for this query and filter." + (
                f" ({o.note})" if o.note else "")
        else:
            head = (f"[More results of the same search, after the first {o.skipped}]\n" if o.skipped else "")
            head += f"{len(o.context.items)} results ({o.mode}), most relevant first" + (
                f"; {o.note}" if o.note else "") + ":"
            text = head + "\n" + render_context(o.context)
    elif o.kind == "sql":
        text = rows_text(o.rows) if o.rows else ""
    elif o.kind == "calculate":
        text = f"The calculated result is: {o.value}"
    else:
        text = o.text or ""
    return truncate(text, limit) if limit else text


def evidence(steps: list[Step]) -> Context:
    """What the turns found, as one context: the searches' items, SQL rows, calculator values and image text (failed
    steps left out), then the probe's items. The turns come first: a context cut to a length keeps what the turns
    looked up, which the probe alone could fill."""
    out = Context()
    for step in [*steps[1:], *steps[:1]]:
        o = step.observation
        if o.failed:
            continue
        if o.kind in ("probe", "search"):
            out = out.plus(o.context)
        elif o.kind == "sql" and o.rows is not None:
            out = Context(items=[*out.items, o.rows], titles=out.titles, degraded=out.degraded)
        elif o.kind in ("calculate", "view_image"):
            text = f"The calculated result is: {o.value}" if o.kind == "calculate" else (o.text or "")
            out = Context(items=[*out.items, Note(text=text)], titles=out.titles, degraded=out.degraded)
    return out


def history_messages(steps: list[Step], window: int, limit: int) -> list[BaseMessage]:
    """The last ``window`` steps as assistant/user messages (each observation cut to ``limit``); older turns are
    summarised in one line so the prompt stays short and its prefix stable."""
    out: list[BaseMessage] = []
    if len(steps) > window:
        out.append(HumanMessage(content=load_prompt("neusym_older_turns").format(n=len(steps) - window)))
    for step in steps[-window:]:
        shown = json.dumps({k: v for k, v in step.action.model_dump().items() if k != "error"}, ensure_ascii=False)
        out += [AIMessage(content=shown),
                HumanMessage(content=f"[Observation]:\n{observation_text(step.observation, limit)}")]
    return out


def _search(store: PaperStore, a: RetrieveFromVectorstore, skip: int = 0) -> Observation:
    from evidex.tools.filters import FilterSyntaxError
    from evidex.tools.search import SearchError
    from evidex.tools.store import StoreError

    try:
        hits = store.search(a.query, filter=a.filter, k=min(skip + a.limit, 50), mode=a.mode, table=a.table,
                            column=a.column)
    except (FilterSyntaxError, SearchError, StoreError, ValueError) as exc:
        return Observation(kind="error", message=f"[Error]: {exc}")
    except Exception as exc:  # noqa: BLE001 - a failing search is an observation the model can react to
        return Observation(kind="error", message=f"[Error]: {type(exc).__name__}: {exc}")
    shown = hits.passages[skip:]
    if skip and not shown:
        return Observation(kind="repeat", message=f"{REPEAT_WARNING} and it has no results beyond the {skip} shown. "
                                                  "Do something different: another query, table, column or filter, "
                                                  "or answer.")
    note = "; ".join(n for n in (hits.note, hits.degraded and f"degraded: {hits.degraded}") if n) or None
    return Observation(kind="search", context=Context(items=shown, degraded=[hits.degraded] if hits.degraded else []),
                       mode=hits.mode, note=note, skipped=skip)


def run_action(store: PaperStore, action, question: Question, *, earlier: list[Step] = (),
               search_only_papers: bool = False) -> Step:
    """Run ``action`` on the store (never raises). An action taken before is not run again (a model that repeats
    itself at temperature 0 would loop): a repeated search shows its next hits, anything else a warning.
    ``search_only_papers``: every search goes to the question's papers' passages (iterative RAG)."""
    from evidex.tools.calc import CalcError, calculate, copies_example, format_result

    if isinstance(action, ParseFailure):
        message = f"[Error]: your reply was not a valid action ({action.error}). Reply with one JSON action."
        return Step(action=action, observation=Observation(kind="error", message=message))
    if isinstance(action, RetrieveFromVectorstore) and search_only_papers:
        action = action.model_copy(update={"table": "chunks", "column": "text_content",
                                           "filter": scope_filter(question.papers)})
    key = {k: v for k, v in action.model_dump().items() if k not in ("thought", "error")}
    repeats = [n for n, s in enumerate(earlier, start=1) if s.key() == key]
    if repeats and isinstance(action, RetrieveFromVectorstore):
        return Step(action=action, observation=_search(store, action, skip=len(repeats) * action.limit))
    if repeats:
        message = (f"{REPEAT_WARNING} at turn {repeats[0]} and got the result shown there. Do something different: "
                   "another action, query, table, column or filter, or answer.")
        return Step(action=action, observation=Observation(kind="repeat", message=message))
    if isinstance(action, RetrieveFromVectorstore):
        return Step(action=action, observation=_search(store, action))
    if isinstance(action, RetrieveFromDatabase):
        return Step(action=action, observation=_sql(store, action.sql))
    if isinstance(action, CalculateExpr):
        if copies_example(action.expression):  # the 1.5B model copied it and answered its result (3.338...)
            return Step(action=action, observation=Observation(kind="error", message=(
                "[Error]: that is the example expression of the instructions, not this question's arithmetic. "
                "Write the expression with the numbers this question needs, read from the context or the "
                "question.")))
        try:
            value = format_result(calculate(action.expression))
        except CalcError as exc:
            return Step(action=action, observation=Observation(kind="error", message=f"[Error]: {exc}"))
        return Step(action=action, observation=Observation(kind="calculate", value=value))
    if isinstance(action, ViewImage):
        return Step(action=action, observation=_view(store, action))
    return Step(action=action, observation=Observation(kind="error", message="[Error]: unknown action"))


def _sql(store: PaperStore, sql: str) -> Observation:
    import duckdb

    from evidex.tools.sql import SQLPolicyError, run_sql
    from evidex.tools.store import StoreError

    try:
        result = run_sql(sql, store.db, store.store_dir)
    except SQLPolicyError as exc:
        return Observation(kind="error", message=f"[Refused]: {exc}")
    except TimeoutError as exc:
        return Observation(kind="error", message=f"[TimeoutError]: {exc}")
    except StoreError as exc:
        return Observation(kind="error", message=f"[Error]: {exc}")
    except duckdb.Error as exc:
        return Observation(kind="error", message=f"[Error]: {type(exc).__name__}: {str(exc).splitlines()[0][:500]}")
    return Observation(kind="sql", rows=Rows(sql=sql, columns=result.columns, rows=result.rows,
                                             truncated_by=result.truncated_by))


def _view(store: PaperStore, a: ViewImage) -> Observation:
    from evidex.tools.store import StoreError
    from evidex.tools.view_image import ViewImageArgs, ViewImageError, describe, render

    try:
        args = ViewImageArgs(paper_id=a.paper_id, page_number=a.page_number, bounding_box=a.bounding_box or [])
        view = render(args, store.db, store.store_dir)
    except (ViewImageError, StoreError, ValueError, RuntimeError) as exc:
        return Observation(kind="error", message=f"[Error]: {exc}")
    return Observation(kind="view_image", text=describe(view, args))


__all__ = ["REPEAT_WARNING", "Observation", "ProbeAction", "Step", "evidence", "history_messages",
           "observation_summary", "observation_text", "run_action"]

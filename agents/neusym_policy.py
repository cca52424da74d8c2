"""The NeuSym policy: one JSON-schema-constrained action per turn over a paper store.

The local model cannot emit native tool calls (it prints them as markdown), so each turn it writes one object of
a discriminated union, decoded under the schema's grammar:

==================  ============================================================================================
``sql``             RetrieveFromDatabase: one read-only DuckDB SELECT over the multiview tables
``search``          RetrieveFromVectorstore: dense / bm25 / hybrid search over one encoded (table, column), with
                    a filter (pdf_id, page_number, ...)
``calculate``       CalculateExpr: exact arithmetic (never ``eval``)
``view_image``      ViewImage: a page region's caption and text (or the image, for multimodal models)
``answer``          GenerateAnswer: the final answer, in the question's format, with the citations it rests on
==================  ============================================================================================

A reply that does not fit the schema after one repair becomes an ``[Error]`` observation for the next turn, not a
crash (:func:`next_action`).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, Union

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from evidex.agents.prompts import load_prompt, render
from evidex.agents.structured import StructuredOutputError, call_structured
from evidex.tools.calc import EXAMPLE_EXPRESSION

ActionName = Literal["sql", "search", "calculate", "view_image", "answer"]
ALL_ACTIONS: tuple[ActionName, ...] = ("sql", "search", "calculate", "view_image", "answer")


class _Action(BaseModel):
    # Required, and first: under the grammar the model states its plan before it writes the action.
    thought: str = Field(max_length=300, description="What you learned so far and why this step, in one sentence.")


class RetrieveFromDatabase(_Action):
    """Run one read-only DuckDB SELECT over the paper tables (exact facts: titles, authors, counts, cells)."""

    action: Literal["sql"]  # required: the grammar then makes the model name its action
    sql: str = Field(max_length=2000, description="One SELECT statement.")


class RetrieveFromVectorstore(_Action):
    """Search one searchable (table, column) by meaning (dense), keywords (bm25) or both, with a filter."""

    action: Literal["search"]  # required: the grammar then makes the model name its action
    query: str = Field(max_length=500)
    table: str = Field(max_length=40)
    column: str = Field(max_length=60)
    filter: str | None = Field(None, max_length=500, description="e.g. pdf_id == '<uuid>' and page_number <= 3")
    limit: int = Field(5, ge=1, le=20)
    mode: Literal["dense", "bm25", "hybrid"] = "hybrid"


class CalculateExpr(_Action):
    """Exact arithmetic on numbers found in the papers."""

    action: Literal["calculate"]  # required: the grammar then makes the model name its action
    expression: str = Field(max_length=500)


class ViewImage(_Action):
    """The caption and text of a page region (a figure or table), or the image for multimodal models."""

    action: Literal["view_image"]  # required: the grammar then makes the model name its action
    paper_id: str = Field(max_length=64)
    page_number: int = Field(ge=1, le=10_000)
    bounding_box: list[float] = Field(default_factory=list, max_length=4)


class Citation(BaseModel):
    pdf_id: str = Field(max_length=64)
    page_number: int = Field(ge=1, le=10_000)
    source: str = Field("", max_length=80, description="table.primary_key the fact came from, when known")


class GenerateAnswer(_Action):
    """The final answer, exactly in the requested format, with the pages it rests on."""

    action: Literal["answer"]  # required: the grammar then makes the model name its action
    answer: str = Field(max_length=2000, description="Exactly in the requested answer format.")
    citations: list[Citation] = Field(default_factory=list, max_length=10)


AnyAction = Union[RetrieveFromDatabase, RetrieveFromVectorstore, CalculateExpr, ViewImage, GenerateAnswer]
_ACTION_CLASSES = {"sql": RetrieveFromDatabase, "search": RetrieveFromVectorstore, "calculate": CalculateExpr,
                   "view_image": ViewImage, "answer": GenerateAnswer}


def action_classes(actions: tuple[ActionName, ...] = ALL_ACTIONS, answer_type: Any = str) -> dict[str, type]:
    """The action models allowed this turn, by name (answer always, typed as the question's format asks)."""
    return dict(zip(*_classes(tuple(dict.fromkeys((*actions, "answer"))), answer_type)))


@lru_cache(maxsize=128)
def _classes(actions: tuple[ActionName, ...], answer_type: Any) -> tuple[tuple[str, ...], tuple[type, ...]]:
    from pydantic import create_model

    classes = dict(_ACTION_CLASSES)
    if answer_type is not str:
        classes["answer"] = create_model("GenerateTypedAnswer", __base__=GenerateAnswer, answer=(
            answer_type, Field(description="Exactly in the requested answer format.")))
    return actions, tuple(classes[a] for a in actions)


def turn_schema(actions: tuple[ActionName, ...] = ALL_ACTIONS, answer_type: Any = str) -> type[BaseModel]:
    """The schema of one turn restricted to ``actions`` (ablations drop sql or search; answer is always there),
    with the answer typed as the question's format asks (``tools.answer_format.answer_type``)."""
    return _turn_schema(tuple(dict.fromkeys((*actions, "answer"))), answer_type)


@lru_cache(maxsize=128)
def _turn_schema(actions: tuple[ActionName, ...], answer_type: Any) -> type[BaseModel]:
    from pydantic import create_model

    chosen = _classes(actions, answer_type)[1]
    step = chosen[0] if len(chosen) == 1 else Annotated[Union[chosen], Field(discriminator="action")]  # noqa: UP007
    return create_model("AgentTurn", step=(step, ...))


class ParseFailure(BaseModel):
    """A turn whose reply could not be read as an action: shown to the model as an ``[Error]`` observation."""

    action: Literal["invalid"] = "invalid"
    error: str


def task_prompt(question: str, answer_format: str, scope: str, schema: str, actions: tuple[ActionName, ...],
                max_turns: int) -> list[BaseMessage]:
    """The first turn: system prompt (actions, rules) and task (question, format, papers in scope, schema)."""
    system = render("neusym_system", actions=", ".join(dict.fromkeys((*actions, "answer"))), max_turns=max_turns,
                    example_expression=EXAMPLE_EXPRESSION)
    task = render("neusym_task", question=question, answer_format=answer_format, scope=scope, schema=schema)
    return [SystemMessage(content=system), HumanMessage(content=task)]


def next_action(llm: BaseChatModel, messages: list[BaseMessage], actions: tuple[ActionName, ...] = ALL_ACTIONS,
                *, max_tokens: int = 700, answer_type: Any = str, native: bool = False) -> AnyAction | ParseFailure:
    """The model's next action, or a :class:`ParseFailure` the loop shows it as an error observation. ``native``:
    the actions are offered as tools and the model must call one (hosted models with tool calling)."""
    if native:
        return _native_action(llm, messages, action_classes(actions, answer_type), max_tokens)
    try:
        return call_structured(llm, turn_schema(actions, answer_type), messages, name="neusym_action",
                               max_tokens=max_tokens).step
    except StructuredOutputError as exc:
        return ParseFailure(error=str(exc))


def action_tool(name: str, cls: type[BaseModel]) -> dict[str, Any]:
    """One action as an OpenAI-style function tool: its fields, without the ``action`` tag (the tool name is it)."""
    schema = cls.model_json_schema()
    schema["properties"].pop("action", None)
    schema["required"] = [f for f in schema.get("required", []) if f != "action"]
    schema.pop("title", None)
    return {"type": "function", "function": {"name": name, "description": (cls.__doc__ or name).strip(),
                                             "parameters": schema}}


def _native_action(llm: BaseChatModel, messages: list[BaseMessage], classes: dict[str, type[BaseModel]],
                   max_tokens: int) -> AnyAction | ParseFailure:
    from pydantic import ValidationError

    bound = llm.bind_tools([action_tool(n, c) for n, c in classes.items()], tool_choice="required")
    try:
        reply = bound.invoke(messages, config={"run_name": "neusym_action"}, max_tokens=max_tokens)
    except Exception as exc:  # noqa: BLE001 - a provider rejecting the call is one failed turn, not a crash
        return ParseFailure(error=f"the tool call failed: {type(exc).__name__}: {str(exc)[:300]}")
    calls = getattr(reply, "tool_calls", None) or []
    if not calls:
        return ParseFailure(error="no tool was called; call exactly one of: " + ", ".join(classes))
    call = calls[0]
    cls = classes.get(call.get("name", ""))
    if cls is None:
        return ParseFailure(error=f"unknown tool {call.get('name')!r}; call one of: " + ", ".join(classes))
    try:
        return cls.model_validate({"thought": "", **(call.get("args") or {}), "action": call["name"]})
    except ValidationError as exc:
        return ParseFailure(error=f"{call['name']}: {str(exc)[:400]}")

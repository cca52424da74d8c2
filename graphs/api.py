"""``build_graph``: the compiled graph a config describes, for any task family; ``graph_as_tool``: a graph as a
LangChain tool that answers in compact JSON."""
from __future__ import annotations

import json
from typing import Any

from evidex.graphs.config import TaskConfig
from evidex.graphs.registry import Resources, get_family
from evidex.graphs.tasks import load_config


def build_graph(config: TaskConfig | str, *, llm=None, embedder=None, index=None, checkpointer: Any = None):
    """Compile the graph ``config`` (or the config named so, e.g. ``civic/mixed``) describes.
    ``llm``/``embedder``/``index`` replace the configured chat model, embedding model and KB index; without
    ``llm`` the config's ``model.spec`` is built (``local`` by default: the ``local`` extra and a 1.1 GB model
    fetched once). ``checkpointer`` keeps threads (state by ``thread_id``) beyond the process: a LangGraph
    checkpointer, or ``sqlite:///PATH`` / ``postgres://...`` / ``memory`` (:mod:`graphs.checkpoint`)."""
    if isinstance(config, str):
        config = load_config(config)
    graph = get_family(config.family).build_graph(config, Resources(llm=llm, embedder=embedder, index=index))
    if checkpointer is not None:
        from evidex.graphs.checkpoint import with_checkpointer

        graph = with_checkpointer(graph, checkpointer)
    return graph


def prediction_json(output: dict) -> str:
    """A graph's output as compact JSON: the prediction's fields (``None`` ones left out), no spaces."""
    pred = output.get("prediction") if isinstance(output, dict) else output
    data = pred.model_dump(mode="json", exclude_none=True) if hasattr(pred, "model_dump") else pred
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def graph_as_tool(graph, *, name: str, description: str):
    """``graph`` as a LangChain tool for a tool-calling agent: its argument is the graph's ``input`` (the same
    schema as ``graph.as_tool``), its result the prediction as compact JSON (:func:`prediction_json`) rather than
    the Python repr of the output dict."""
    import warnings

    from langchain_core.runnables import RunnableLambda

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Runnable.as_tool is marked beta
        return (graph | RunnableLambda(prediction_json)).as_tool(
            name=name, description=description, args_schema=graph.get_input_schema())

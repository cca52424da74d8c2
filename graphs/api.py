"""``build_graph``: the compiled graph a config describes, for any task family."""
from __future__ import annotations

from typing import Any

from evidex.graphs.config import TaskConfig
from evidex.graphs.registry import Resources, get_family
from evidex.graphs.tasks import load_config


def build_graph(config: TaskConfig | str, *, llm=None, embedder=None, index=None, checkpointer: Any = None):
    """Compile the graph ``config`` (or the config named so, e.g. ``civic/mixed``) describes.
    ``llm``/``embedder``/``index`` replace the configured chat model, embedding model and KB index.
    ``checkpointer`` keeps threads (state by ``thread_id``) beyond the process: a LangGraph checkpointer, or
    ``sqlite:///PATH`` / ``postgres://...`` / ``memory`` (:mod:`graphs.checkpoint`)."""
    if isinstance(config, str):
        config = load_config(config)
    graph = get_family(config.family).build_graph(config, Resources(llm=llm, embedder=embedder, index=index))
    if checkpointer is not None:
        from evidex.graphs.checkpoint import with_checkpointer

        graph = with_checkpointer(graph, checkpointer)
    return graph

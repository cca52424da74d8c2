"""``build_graph``: the compiled graph a config describes, for any task family."""
from __future__ import annotations

from evidex.graphs.config import TaskConfig
from evidex.graphs.registry import Resources, get_family
from evidex.graphs.tasks import load_config


def build_graph(config: TaskConfig | str, *, llm=None, embedder=None, index=None):
    """Compile the graph ``config`` (or the config named so, e.g. ``civic/mixed``) describes.
    ``llm``/``embedder``/``index`` replace the configured chat model, embedding model and KB index."""
    if isinstance(config, str):
        config = load_config(config)
    return get_family(config.family).build_graph(config, Resources(llm=llm, embedder=embedder, index=index))

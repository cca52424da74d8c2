"""Public API: ``build_graph(config)`` returns a compiled LangGraph; ``load_config(name_or_path)`` reads YAML.

    from evidex.graphs import build_graph, load_config
    graph = build_graph(load_config("civic/mixed"))
    out = graph.invoke({"input": claim_input})      # -> {"prediction": ClaimPrediction}
"""
from __future__ import annotations

from evidex.graphs.config import ConfigError, GraphConfig, config_for_task, load_config

__all__ = ["build_graph", "load_config", "config_for_task", "GraphConfig", "ConfigError"]


def build_graph(config: GraphConfig | str, *, llm=None, embedder=None, index=None):
    """Compile the graph a config describes. ``llm``/``embedder``/``index`` override the configured ones."""
    from evidex.graphs.deps import make_deps

    if isinstance(config, str):
        config = load_config(config)
    deps = make_deps(config, llm=llm, embedder=embedder, index=index)
    if config.graph == "selection":
        from evidex.graphs.selection import build_selection
        return build_selection(deps)
    if config.graph == "assignment":
        from evidex.graphs.assignment import build_assignment
        return build_assignment(deps)
    from evidex.graphs.explainer import build_explainer
    return build_explainer(deps)

"""Public API of the evidex graphs.

    from evidex.graphs import build_graph, load_config
    graph = build_graph("civic/mixed")                       # a compiled LangGraph
    out = graph.invoke({"input": claim_input})               # -> {"prediction": ClaimPrediction}

``build_graph`` takes a config (or its name) of any registered task family (:mod:`graphs.registry`);
``config_for_task("mixed")`` is the task's default config and ``task_table()`` lists every task.

This file only re-exports: in a source checkout ``python -m graphs.run`` runs it a second time as the top-level
``graphs`` package, so it must hold no state of its own.
"""
from __future__ import annotations

from evidex.graphs.api import build_graph, graph_as_tool, prediction_json
from evidex.graphs.config import ConfigError, TaskConfig
from evidex.graphs.registry import Resources, TaskFamily, families, get_family, register_family
from evidex.graphs.tasks import config_for_task, load_config, task_table

__all__ = ["build_graph", "graph_as_tool", "prediction_json", "load_config", "config_for_task", "task_table", "TaskConfig", "ConfigError", "families",
           "get_family", "register_family", "TaskFamily", "Resources"]

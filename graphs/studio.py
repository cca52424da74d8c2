"""Graph factories for the LangGraph server (``langgraph dev``, LangGraph Studio), one per task of every family.

``langgraph.json`` names them as ``evidex.graphs.studio:<task>`` (``mixed``, ``r4c``, ...); an app that depends
on evidex lists the same in its own ``langgraph.json``. Each factory takes the run's config, so every run can
change settings through ``configurable``, as LangChain's rag-research-agent-template reads its Configuration:

    {"configurable": {"model": {"spec": "openai:gpt-4o-mini"}, "retrieval": {"k": 8}}}     # sections, or
    {"configurable": {"model.spec": "openai:gpt-4o-mini", "steps.write": false}}           # dotted keys

Keys that are not sections of the task's config (the server's own ``thread_id``, ``run_id``, ...) are ignored;
the task's YAML config is the default, and ``EVIDEX_STUDIO_SET`` (``;``-separated ``key.path=value`` pairs) changes
it for every run of the server. Nothing blocking runs on the server's event loop: a factory builds its graph in a
worker thread (and caches it per task and settings), and a graph built only to show its schema never starts the
model.

    from evidex.graphs.studio import graph_for_task
    graph = graph_for_task("mixed")                     # == build_graph(config_for_task("mixed"))
"""
from __future__ import annotations

import asyncio
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

OVERRIDES_ENV = "EVIDEX_STUDIO_SET"
_CACHE_SIZE = 16
_cache: OrderedDict[tuple, Any] = OrderedDict()
_cache_lock = threading.Lock()


def studio_overrides() -> list[str]:
    raw = os.environ.get(OVERRIDES_ENV, "")
    return [part.strip() for part in raw.split(";") if part.strip()]


def configurable_overrides(configurable: Mapping[str, Any], sections: set[str]) -> list[str]:
    """``--set``-style overrides from a run's ``configurable``: nested sections and dotted keys whose first part
    is a section of the task's config; everything else is the server's business and ignored."""
    out: list[str] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        else:
            out.append(f"{prefix}={json.dumps(value)}")  # JSON is YAML: types survive the round trip

    for key, value in configurable.items():
        if key.split(".", 1)[0] in sections:
            walk(key, value)
    return sorted(out)


def graph_for_task(task: str, overrides: tuple[str, ...] = (), *, start_model: bool = True):
    """The compiled graph of ``task`` with ``EVIDEX_STUDIO_SET`` and ``overrides`` applied (cached)."""
    key = (task, tuple(studio_overrides()) + tuple(overrides), start_model)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    from evidex.graphs.registry import Resources, get_family
    from evidex.graphs.tasks import config_for_task

    cfg = config_for_task(task, list(key[1]))
    graph = get_family(cfg.family).build_graph(cfg, Resources(defer_model=not start_model))
    with _cache_lock:
        _cache[key] = graph
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return graph


def make_factory(task: str, sections: set[str]) -> Callable:
    async def factory(config):
        configurable = (config or {}).get("configurable") or {}
        overrides = tuple(configurable_overrides(configurable, sections))
        executing = bool(configurable.get("__is_for_execution__", True))
        return await asyncio.to_thread(graph_for_task, task, overrides, start_model=executing)

    factory.__name__ = factory.__qualname__ = task
    factory.__doc__ = f"The {task} graph, built from its default config and the run's configurable settings."
    return factory


def _register_factories() -> list[str]:
    """One module attribute per task (the server reads the module's ``__dict__``, not ``__getattr__``)."""
    from evidex.graphs.registry import get_family
    from evidex.graphs.tasks import task_table

    names = []
    for task, entry in sorted(task_table().items()):
        if task in globals():
            continue  # never shadow this module's own names
        sections = set(get_family(entry.family).config_model.model_fields) - {"name", "family", "task"}
        globals()[task] = make_factory(task, sections)
        names.append(task)
    return names


TASKS = tuple(_register_factories())

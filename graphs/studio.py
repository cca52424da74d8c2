"""Graph factories for the LangGraph server (``langgraph dev``, LangGraph Studio), one per task of every family.

``langgraph.json`` names them as ``evidex.graphs.studio:<task>`` (``mixed``, ``r4c``, ...); an app that depends
on evidex lists the same in its own ``langgraph.json``. The task's YAML config is the operator's; a run changes only
the settings its family allows (:mod:`graphs.settings`), as LangGraph runtime ``context`` or ``configurable``::

    {"context": {"retrieval": {"k": 8}, "steps": {"write": false}}}       # sections, or
    {"configurable": {"retrieval.k": 8, "steps.write": false}}            # dotted keys

An unknown key, or one that decides where models, files or endpoints come from (``model.spec``, ``store.store_dir``,
...), fails the run with a message naming the key; ``EVIDEX_SERVER_ALLOW`` lets the operator open more at start.
Each graph's ``context_schema`` lists the allowed settings with their type, default and description, so Studio and
``client.assistants.get_schemas`` show them. ``EVIDEX_STUDIO_SET`` (``;``-separated ``key.path=value`` pairs)
changes the operator's config for every run of the server.

Nothing blocking runs on the server's event loop: a factory builds its graph in a worker thread and caches it per
task and settings. A graph built only to show its schema or drawing opens no model, store or embedder.

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


def task_settings(task: str):
    """(the operator's config of ``task``, the run-settings patterns its runs may change)."""
    from evidex.graphs.registry import get_family
    from evidex.graphs.settings import operator_allowed
    from evidex.graphs.tasks import config_for_task

    cfg = config_for_task(task, studio_overrides())
    return cfg, (*get_family(cfg.family).run_settings, *operator_allowed())


def graph_for_task(task: str, settings: Mapping[str, Any] | None = None, *, start_model: bool = True):
    """The compiled graph of ``task`` (its config with ``EVIDEX_STUDIO_SET`` applied) for a run that asks for
    ``settings`` (context or configurable: checked against the allow-list, raising
    :class:`graphs.settings.SettingRefused`), with its ``context_schema`` set. Cached per task and settings.
    ``start_model=False``: a graph to show (schema, drawing), whose model, store and embedder are never opened."""
    from evidex.graphs.registry import Resources, get_family
    from evidex.graphs.settings import config_for_run, context_model, run_overrides

    cfg, patterns = task_settings(task)
    overrides = run_overrides(settings, type(cfg), patterns, source=f"{task} run") if start_model else {}
    if get_family(cfg.family).reads_run_settings and not any(k.startswith("model.") for k in overrides):
        config_for_run(cfg, overrides)  # validated (a store name's pattern, a prompt's name) before anything opens
        overrides = {}  # checked; the graph reads them per run itself (one compiled graph for every run)
    key = (task, tuple(studio_overrides()), patterns, json.dumps(overrides, sort_keys=True, default=str), start_model)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    run_cfg = config_for_run(cfg, overrides)
    graph = get_family(cfg.family).build_graph(run_cfg, Resources(defer_model=not start_model))
    graph = graph.copy(update={"context_schema": context_model(cfg, patterns)})
    with _cache_lock:
        _cache[key] = graph
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return graph


def make_factory(task: str) -> Callable:
    async def factory(config):
        configurable = dict((config or {}).get("configurable") or {})
        executing = bool(configurable.get("__is_for_execution__", True))
        return await asyncio.to_thread(graph_for_task, task, configurable, start_model=executing)

    factory.__name__ = factory.__qualname__ = task
    factory.__doc__ = f"The {task} graph: its default config, with the settings a run may change."
    return factory


def _register_factories() -> list[str]:
    """One module attribute per task (the server reads the module's ``__dict__``, not ``__getattr__``)."""
    from evidex.graphs.tasks import task_table

    names = []
    for task in sorted(task_table()):
        if task in globals():
            continue  # never shadow this module's own names
        globals()[task] = make_factory(task)
        names.append(task)
    return names


TASKS = tuple(_register_factories())

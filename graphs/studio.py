"""Graph factories for LangGraph Studio / ``langgraph dev`` (registered in ``langgraph.json`` at the repo root).

Every task of every registered family is a zero-argument factory here, ``<task>`` (``mixed``, ``r4c``, ...),
resolved on attribute access, so a new family's tasks need no code in this file. A factory builds the task's
graph from its default config only when called: importing this module loads no model, embedder or index.
Override config values for every factory with ``EVIDEX_STUDIO_SET`` (``;``-separated ``key.path=value`` pairs, as
``--set`` in ``python -m graphs.run``), e.g. ``EVIDEX_STUDIO_SET="model.spec=openai:gpt-4o-mini;retrieval.k=8"``.

    from evidex.graphs.studio import mixed
    graph = mixed()                                     # == build_graph(config_for_task("mixed"))
"""
from __future__ import annotations

import os
from collections.abc import Callable

OVERRIDES_ENV = "EVIDEX_STUDIO_SET"


def studio_overrides() -> list[str]:
    raw = os.environ.get(OVERRIDES_ENV, "")
    return [part.strip() for part in raw.split(";") if part.strip()]


def graph_for_task(task: str):
    """The compiled graph for ``task`` with ``EVIDEX_STUDIO_SET`` overrides applied."""
    from evidex.graphs.api import build_graph
    from evidex.graphs.tasks import config_for_task

    return build_graph(config_for_task(task, studio_overrides()))


def task_names() -> list[str]:
    from evidex.graphs.tasks import task_table

    return sorted(task_table())


def __getattr__(name: str) -> Callable[[], object]:
    if name.startswith("__") or name not in task_names():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def factory():
        return graph_for_task(name)
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"The {name} graph built from its default config."
    return factory


def __dir__() -> list[str]:
    return sorted(list(globals()) + task_names())

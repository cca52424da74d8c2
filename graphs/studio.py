"""Graph factories for LangGraph Studio / ``langgraph dev`` (registered in ``langgraph.json`` at the repo root).

One zero-argument factory per task; each builds that task's graph from its config only when called, so importing
this module loads no model, embedder or index. Override config values for every factory with
``EVIDEX_STUDIO_SET`` (``;``-separated ``key.path=value`` pairs, as ``--set`` in ``python -m graphs.run``), e.g.
``EVIDEX_STUDIO_SET="model.spec=openai:gpt-4o-mini;retrieval.k=8" langgraph dev``.

    from evidex.graphs.studio import mixed
    graph = mixed()                                     # == build_graph(config_for_task("mixed"))
"""
from __future__ import annotations

import os

from evidex.graphs import build_graph
from evidex.graphs.config import config_for_task

TASKS = ("baseline", "missing_evidence", "wrong_evidence", "mixed", "selection", "assignment", "r4c", "wrong_claim")
OVERRIDES_ENV = "EVIDEX_STUDIO_SET"


def studio_overrides() -> list[str]:
    raw = os.environ.get(OVERRIDES_ENV, "")
    return [part.strip() for part in raw.split(";") if part.strip()]


def graph_for_task(task: str):
    """The compiled graph for ``task`` with ``EVIDEX_STUDIO_SET`` overrides applied."""
    return build_graph(config_for_task(task, studio_overrides()))


def baseline():
    return graph_for_task("baseline")


def missing_evidence():
    return graph_for_task("missing_evidence")


def wrong_evidence():
    return graph_for_task("wrong_evidence")


def mixed():
    return graph_for_task("mixed")


def selection():
    return graph_for_task("selection")


def assignment():
    return graph_for_task("assignment")


def r4c():
    return graph_for_task("r4c")


def wrong_claim():
    return graph_for_task("wrong_claim")

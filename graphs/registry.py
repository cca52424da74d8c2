"""The task-family registry: the one place that knows which kinds of task exist.

A *family* is a kind of task with its own data, graph and metrics: ``civic`` and ``r4c`` (claim explainers),
and next ``airqa`` and ``qasper`` (question answering over papers). Each is one module that registers a
:class:`TaskFamily` (its config model, dataset loader, graph builder, per-item scorer, aggregate metrics and
report columns) plus its configs in ``configs/<family>/``. The runner (``graphs.run``), traces, reports,
comparisons and RAGAS scoring are generic over families: nothing outside a family's module branches on it.

Adding a family: write its module, put its YAML files in ``configs/<name>/``, and add the module to
:data:`BUILTIN_FAMILIES` (a package outside evidex registers it under the ``evidex.families`` entry-point group,
or calls :func:`register_family` itself).

Contract of the callables (``cfg`` is an instance of ``config_model``):

* ``load_items(cfg) -> list[item]``: items in a stable order with stable ``item.id``; ``item.graph_input()`` is
  what the graph is invoked with and ``item.public_input()`` what ``results.jsonl`` records (never the gold);
  a ``ValueError`` names the config key of a bad data file;
* ``build_graph(cfg, resources) -> compiled graph`` whose output has a pydantic ``prediction``;
* ``score_item(cfg, item, prediction, resources) -> {metric: value}`` (absent = not applicable, NaN = undefined);
* ``aggregate(per_item_metrics) -> {metric: summary}`` (default: means with bootstrap CIs and micro P/R/F1 from
  ``*_tp/_fp/_fn`` counts, :func:`evaluators.stats.aggregate_metrics`);
* ``grounded_answers(item, prediction) -> [GroundedAnswer]``: question, answer and contexts, for RAGAS;
* ``item_tags(item) -> [tag]`` (metrics are also reported per tag); ``check_data(cfg)`` loads the data files a
  run needs before it starts;
* ``prepare(cfg, items, resources, progress)``: build what the pending items need before the graph is built (the
  ``qasper`` family ingests their papers into the store); skipped when ``run.prepare`` is false
  (``--skip-ingest``);
* ``finish_run(cfg, run_dir, rows, summary) -> [ReportSection]``: after every (re)aggregation, write the family's
  own files into the run folder (e.g. official-format predictions) and return extra report sections (tables and
  charts that ``report.md``, ``report.html`` and the console render; stored in ``metrics.json``);
* ``run_settings``: the settings a run may change (``section.field`` or ``section.*``, ``!section.field`` to
  leave one out), shown as the graph's LangGraph ``context_schema`` (:mod:`graphs.settings`). Never a setting
  that decides where models, data, files or endpoints come from. ``reads_run_settings``: the family's graphs read
  them per run themselves (:func:`graphs.settings.config_of_run`), so one compiled graph serves every run.
"""
from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from evidex.graphs.config import PACKAGED_CONFIG_DIR, ConfigError, TaskConfig
from evidex.tools.runfolder import GroundedAnswer, ReportSection

log = logging.getLogger(__name__)

# The families evidex ships; importing each module registers it.
BUILTIN_FAMILIES = ("evidex.graphs.families.civic", "evidex.graphs.families.r4c", "evidex.graphs.families.airqa",
                    "evidex.graphs.families.qasper")
ENTRY_POINT_GROUP = "evidex.families"


class RunItem(Protocol):
    """What the runner needs of a dataset item."""

    @property
    def id(self) -> str: ...

    def graph_input(self) -> dict[str, Any]: ...

    def public_input(self) -> dict[str, Any]: ...


@dataclass
class Resources:
    """Heavy objects a caller may hand in instead of having them built from the config (tests, embedding apps):
    the chat model, the embedding model, a knowledge-base index."""

    llm: Any = None
    embedder: Any = None
    index: Any = None
    defer_model: bool = False  # build the chat model on first use, not with the graph (a graph shown, not run)


def _no_tags(item: RunItem) -> list[str]:
    return []


def _no_data_check(cfg: TaskConfig) -> None:
    return None


def _no_grounded(item: RunItem, prediction: BaseModel) -> list[GroundedAnswer]:
    return []


def _no_prepare(cfg: TaskConfig, items: Sequence[RunItem], resources: Resources, progress: bool = True) -> None:
    return None


def _no_finish(cfg: TaskConfig, run_dir: Path, rows: list[dict[str, Any]],
               summary: dict[str, Any]) -> list[ReportSection]:
    return []


def _default_aggregate(per_item: Sequence[dict[str, float]]) -> dict[str, dict[str, float]]:
    from evidex.evaluators.stats import aggregate_metrics

    return aggregate_metrics(per_item)


@dataclass(frozen=True)
class TaskFamily:
    name: str
    description: str
    config_model: type[TaskConfig]
    load_items: Callable[[TaskConfig], list[RunItem]]
    build_graph: Callable[[TaskConfig, Resources], Any]
    score_item: Callable[[TaskConfig, RunItem, BaseModel, Resources], dict[str, float]]
    report_columns: tuple[str, ...] = ()
    lower_is_better: frozenset[str] = frozenset()
    aggregate: Callable[[Sequence[dict[str, float]]], dict[str, dict[str, float]]] = _default_aggregate
    grounded_answers: Callable[[RunItem, BaseModel], list[GroundedAnswer]] = _no_grounded
    item_tags: Callable[[RunItem], list[str]] = _no_tags
    check_data: Callable[[TaskConfig], None] = _no_data_check
    prepare: Callable[..., None] = _no_prepare
    finish_run: Callable[..., list[ReportSection]] = _no_finish
    config_dir: Path | None = None  # default: configs/<name>/ of the shipped configs
    run_settings: tuple[str, ...] = ()
    reads_run_settings: bool = False

    @property
    def configs(self) -> Path:
        return self.config_dir or PACKAGED_CONFIG_DIR / self.name


_FAMILIES: dict[str, TaskFamily] = {}
_LOCK = threading.RLock()
_LOADED = False


def register_family(family: TaskFamily, *, replace: bool = False) -> TaskFamily:
    """Make ``family`` known to the runner, the CLIs and the reports. ``replace`` swaps a family of the same name
    (tests)."""
    with _LOCK:
        if family.name in _FAMILIES and not replace and _FAMILIES[family.name] is not family:
            raise ValueError(f"a task family named {family.name!r} is already registered")
        _FAMILIES[family.name] = family
    return family


def unregister_family(name: str) -> None:
    with _LOCK:
        _FAMILIES.pop(name, None)


def _load_builtin() -> None:
    global _LOADED
    with _LOCK:
        if _LOADED:
            return
        _LOADED = True
        for module in BUILTIN_FAMILIES:
            importlib.import_module(module)
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken third-party family must not break the built-in ones
                log.warning("task family %s (%s) could not be loaded: %s", ep.name, ep.value, exc)


def families() -> dict[str, TaskFamily]:
    """Every registered family by name (built-in ones first)."""
    _load_builtin()
    with _LOCK:
        return dict(_FAMILIES)


def get_family(name: str) -> TaskFamily:
    known = families()
    if name not in known:
        raise ConfigError(f"Unknown task family {name!r}. Known families: {', '.join(sorted(known))}.")
    return known[name]

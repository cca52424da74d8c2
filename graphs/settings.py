"""Per-run settings: which settings a run may change, the schema LangGraph shows for them, and the run's config.

A task's YAML config is the operator's: it decides the model, the data, the store and every path. A run (a
LangGraph-server client, an app calling a compiled graph) may change only the settings its family declares safe
(:attr:`graphs.registry.TaskFamily.run_settings`, e.g. ``retrieval.k``, ``qa.max_turns``, ``steps.*``), given as
LangGraph runtime ``context`` or, for older clients, ``configurable`` — nested sections or dotted keys::

    {"context": {"qa": {"max_turns": 4}}}                     # or
    {"configurable": {"qa.max_turns": 4, "steps": {"write": false}}}

Everything that decides where code, models, files or network endpoints come from (``model.*``, ``dataset.*``,
``store.store_dir``, a prompt or config path, ...) is refused with a :class:`SettingRefused` naming the key, unless
the operator allows it when starting the server: ``EVIDEX_SERVER_ALLOW=model.spec,qa.method`` (comma-separated
dotted keys or ``section.*``). ``scripted:`` model specs (files the server would read) need ``scripted`` in that list
as well. A run that changes ``model.base_url`` never gets the operator's API key. Unknown keys are refused, not
ignored; the keys a LangGraph server adds itself (``thread_id``, ``langgraph_*``, headers, ...) pass.

:func:`context_model` turns a config and its allow-list into the pydantic model LangGraph uses as the graph's
``context_schema``: every allowed setting with its type, its value in this task's config as the default, and its
description — what Studio and ``GET /assistants/<id>/schemas`` show.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from evidex.graphs.config import ConfigError, TaskConfig

SERVER_ALLOW_ENV = "EVIDEX_SERVER_ALLOW"
SCRIPTED = "scripted"  # the EVIDEX_SERVER_ALLOW word that lets a run name a scripted model's file

# Keys a LangGraph server (or LangChain) puts into a run's configurable itself: never a client's setting.
_SERVER_KEYS = frozenset({"thread_id", "thread_ts", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "run_id",
                          "graph_id", "assistant_id", "user_id", "cron_id", "run_attempt"})
_SERVER_PREFIXES = ("__", "langgraph_", "langsmith", "lc_", "x-", "checkpoint_")


class SettingRefused(ConfigError):
    """A run asked to change a setting it may not change (or one that does not exist); the message names it."""


def is_server_key(key: str) -> bool:
    """Whether ``key`` of a run's configurable is the server's own (ids, auth, headers), not a setting."""
    return key in _SERVER_KEYS or key.startswith(_SERVER_PREFIXES) or "-" in key


def operator_allowed() -> tuple[str, ...]:
    """What the operator allowed beyond the family's list: ``EVIDEX_SERVER_ALLOW`` (read when called)."""
    raw = os.environ.get(SERVER_ALLOW_ENV, "")
    return tuple(part.strip() for part in raw.replace(";", ",").split(",") if part.strip())


def _matches(path: str, pattern: str) -> bool:
    return path == pattern or (pattern.endswith(".*") and path.startswith(pattern[:-1]))


def is_allowed(path: str, patterns: Iterable[str]) -> bool:
    """``path`` (``qa.max_turns``) is matched by an allow pattern (``qa.max_turns``, ``qa.*``) and by no ``!``
    pattern (``!qa.method``)."""
    patterns = tuple(patterns)
    return (any(_matches(path, p) for p in patterns if not p.startswith("!"))
            and not any(_matches(path, p[1:]) for p in patterns if p.startswith("!")))


def _section_models(model: type[TaskConfig]) -> dict[str, type[BaseModel]]:
    """The config model's sections (fields whose type is a pydantic model)."""
    out = {}
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out[name] = ann
    return out


def setting_paths(model: type[TaskConfig]) -> list[str]:
    """Every ``section.field`` of a config model."""
    return [f"{s}.{f}" for s, sec in _section_models(model).items() for f in sec.model_fields]


def allowed_paths(model: type[TaskConfig], patterns: Iterable[str]) -> list[str]:
    patterns = tuple(patterns)
    return [p for p in setting_paths(model) if is_allowed(p, patterns)]


# -- the context schema -----------------------------------------------------------------------------------
def context_model(cfg: TaskConfig, patterns: Iterable[str]) -> type[BaseModel]:
    """The per-run settings of ``cfg``'s task as a pydantic model (LangGraph's ``context_schema``): one optional
    section per config section holding its allowed fields, each with its type, description and, as its default,
    its value in ``cfg``. Unknown keys are refused (``extra="forbid"``)."""
    return _context_model(type(cfg), json.dumps(cfg.model_dump(mode="json"), sort_keys=True), tuple(patterns),
                          cfg.task)


@lru_cache(maxsize=64)
def _context_model(model: type[TaskConfig], values_json: str, patterns: tuple[str, ...],
                   task: str) -> type[BaseModel]:
    values = json.loads(values_json)
    strict = ConfigDict(extra="forbid")
    sections: dict[str, Any] = {}
    for section, sec_model in _section_models(model).items():
        fields = {}
        for name, info in sec_model.model_fields.items():
            if not is_allowed(f"{section}.{name}", patterns):
                continue
            default = (values.get(section) or {}).get(name, info.default)
            fields[name] = (info.annotation, FieldInfo.merge_field_infos(info, default=default))
        if fields:
            title = f"{_camel(task)}{_camel(section)}Settings"
            sub = create_model(title, __config__=strict, __doc__=(sec_model.__doc__ or "").strip() or None,
                               **fields)
            sections[section] = (sub | None, FieldInfo(default=None, description=_first_line(sec_model.__doc__)))
    doc = (f"Settings a run of the {task} graph may change (context or configurable); everything else is the "
           "operator's config.")
    return create_model(f"{_camel(task)}RunSettings", __config__=strict, __doc__=doc, **sections)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def _first_line(doc: str | None) -> str | None:
    text = " ".join((doc or "").split())
    return text.split(". ")[0].rstrip(".") + "." if text else None


# -- reading a run's settings -----------------------------------------------------------------------------
def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"qa": {"k": 1}, "steps.write": False}`` -> ``{"qa.k": 1, "steps.write": False}``."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def run_overrides(values: Mapping[str, Any] | None, model: type[TaskConfig], patterns: Iterable[str],
                  *, source: str = "run settings") -> dict[str, Any]:
    """The settings a run asks for (its context or configurable), checked against the allow-list: a flat
    ``{"section.field": value}``. Server keys are skipped; an unknown or operator-only key raises
    :class:`SettingRefused` naming it."""
    patterns = tuple(patterns)
    known = set(setting_paths(model))
    sections = set(_section_models(model))
    out: dict[str, Any] = {}
    for key, value in (values or {}).items():
        if not isinstance(key, str) or is_server_key(key):
            continue
        if key in sections and value is None:
            continue  # a section the run leaves as it is (LangGraph fills absent context sections with null)
        if key in model.model_fields and key not in sections:
            raise SettingRefused(f"{source}: {key!r} is the task's identity, not a setting a run may change")
        for path, v in flatten({key: value}).items():
            if path not in known:
                allowed = ", ".join(allowed_paths(model, patterns)) or "none"
                raise SettingRefused(f"{source}: unknown setting {path!r} (settings a run may change: {allowed})")
            if not is_allowed(path, patterns):
                raise SettingRefused(
                    f"{source}: {path!r} is the operator's setting and cannot be changed per run (it decides where "
                    f"models, data, files or endpoints come from); an operator may allow it at start with "
                    f"{SERVER_ALLOW_ENV}={path}")
            out[path] = v
    spec = out.get("model.spec")
    if isinstance(spec, str) and spec.strip().startswith(f"{SCRIPTED}:") and SCRIPTED not in patterns:
        raise SettingRefused(f"{source}: 'model.spec' names a scripted model's file, which a run may not choose "
                             f"(an operator may allow it with {SERVER_ALLOW_ENV}=model.spec,{SCRIPTED})")
    return out


def config_for_run(cfg: TaskConfig, overrides: Mapping[str, Any]) -> TaskConfig:
    """``cfg`` with a run's checked overrides (:func:`run_overrides`) applied and validated again. A run that
    moves the model to another endpoint gets no API key (:attr:`graphs.config.ModelConfig.client_endpoint`)."""
    if not overrides:
        return cfg
    data = cfg.model_dump(mode="json")
    for path, value in overrides.items():
        section, name = path.split(".", 1)
        data.setdefault(section, {})
        if not isinstance(data[section], dict):
            data[section] = {}
        data[section][name] = value
    try:
        out = type(cfg).model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']} (got {e.get('input')!r})"
                             for e in exc.errors())
        raise SettingRefused(f"run settings: {problems}") from None
    if out.model.base_url != cfg.model.base_url or cfg.model.client_endpoint:
        out.model.mark_client_endpoint()
    return out


# -- inside a node: the run's config ----------------------------------------------------------------------
def _run_values(model: type[TaskConfig]) -> Mapping[str, Any]:
    """The settings the current run asks for: its LangGraph context (what a client set, defaults aside), else the
    keys of its configurable that name a section of the config (an app's own configurable keys are its business;
    the server's factory refuses unknown keys before a run starts); {} outside a run."""
    try:
        from langgraph.config import get_config
        from langgraph.runtime import get_runtime

        runtime = get_runtime()
        config = get_config()
    except (RuntimeError, KeyError, LookupError):
        return {}
    context = getattr(runtime, "context", None)
    if isinstance(context, BaseModel):
        values = context.model_dump(exclude_unset=True)
    elif isinstance(context, Mapping):
        values = dict(context)
    else:
        values = {}
    if values:
        return values
    sections = set(_section_models(model))
    return {k: v for k, v in ((config or {}).get("configurable") or {}).items()
            if isinstance(k, str) and k.split(".", 1)[0] in sections}


_RUN_CACHE: dict[tuple[int, str], TaskConfig] = {}


def config_of_run(cfg: TaskConfig) -> TaskConfig:
    """``cfg`` (the operator's config the graph was built from) with the current run's allowed settings applied:
    what a node reads its settings from, so one compiled graph serves runs that change them. Unknown or
    operator-only keys raise :class:`SettingRefused`."""
    from evidex.graphs.registry import get_family

    values = _run_values(type(cfg))
    if not values:
        return cfg
    patterns = (*get_family(cfg.family).run_settings, *operator_allowed())
    overrides = run_overrides(values, type(cfg), patterns, source=f"{cfg.task} run")
    if not overrides:
        return cfg
    key = (id(cfg), json.dumps(overrides, sort_keys=True, default=str))
    if key not in _RUN_CACHE:
        if len(_RUN_CACHE) > 256:
            _RUN_CACHE.clear()
        _RUN_CACHE[key] = config_for_run(cfg, overrides)
    return _RUN_CACHE[key]


__all__ = ["SERVER_ALLOW_ENV", "SettingRefused", "allowed_paths", "config_for_run", "config_of_run", "context_model", "flatten",
           "is_allowed", "is_server_key", "operator_allowed", "run_overrides", "setting_paths"]

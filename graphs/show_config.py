"""Every setting of a task: its key, type, value in the task's config, whether a run may change it, and what it
does.

    evidex config airqa              # the airqa task's settings (a table)
    evidex config civic/mixed --json # a config by name, as JSON
    evidex config --count            # how many settings the task families have in all

A setting marked "per run" may be changed by a run (LangGraph context or configurable; graphs/settings.py); the
others are the operator's (YAML, ``--set``).
"""
from __future__ import annotations

import argparse
import json
import sys
import typing
from typing import Any

from pydantic import BaseModel

from evidex.tools.cli_help import plain_help

# Settings that say what a task is, or how a process runs it, rather than how it reasons (not counted as task
# settings): the task's identity, and the run / tracing sections.
IDENTITY = {"name", "description", "family", "task"}
PROCESS_SECTIONS = {"run", "tracing"}


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if not typing.get_args(annotation) else None
    return text or str(annotation).replace("typing.", "")


def _models(annotation: Any) -> list[type[BaseModel]]:
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    members = typing.get_args(annotation) or (annotation,)
    return [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]


def describe(cfg) -> list[dict[str, Any]]:
    """One row per leaf setting of ``cfg``: key, type, value, per_run, description."""
    from evidex.graphs.registry import get_family
    from evidex.graphs.settings import is_allowed, operator_allowed

    patterns = (*get_family(cfg.family).run_settings, *operator_allowed())
    rows = []
    for section, field in type(cfg).model_fields.items():
        if section in IDENTITY:
            continue
        value = getattr(cfg, section)
        models = _models(field.annotation)
        if not models:
            rows.append({"key": section, "type": _type_name(field.annotation), "value": value, "per_run": False,
                         "description": field.description or ""})
            continue
        for name, sub in type(value).model_fields.items():
            key = f"{section}.{name}"
            rows.append({"key": key, "type": _type_name(sub.annotation), "value": getattr(value, name),
                         "per_run": is_allowed(key, patterns), "description": " ".join((sub.description or "").split())})
    return rows


def count_settings() -> dict[str, Any]:
    """How many task settings the families' config models hold in all (a section shared by several families, or a
    gate's settings, counted once; identity and process settings aside)."""
    from evidex.graphs.registry import families

    seen: set[type] = set()
    keys: list[str] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            if not prefix and (name in IDENTITY or name in PROCESS_SECTIONS):
                continue
            subs = _models(field.annotation)
            if not subs:
                keys.append(f"{model.__name__}.{name}")
                continue
            for sub in subs:
                if sub not in seen:
                    seen.add(sub)
                    walk(sub, f"{prefix}{name}.")

    by_family = {}
    for fam in families().values():
        before = len(keys)
        walk(fam.config_model, "")
        by_family[fam.name] = len(keys) - before
    return {"total": len(set(keys)), "new_per_family": by_family, "keys": sorted(set(keys))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="evidex config", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", nargs="?", help="a task (mixed, airqa, ...) or a config name (airqa/classic_rag) or path")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--count", action="store_true", help="count the task families' settings")
    args = p.parse_args(argv)
    from evidex.graphs.config import ConfigError

    if args.count:
        out = count_settings()
        print(json.dumps(out, indent=1) if args.json else
              f"{out['total']} task settings across the families ({', '.join(f'{k} {v}' for k, v in out['new_per_family'].items())} new each)")
        return 0
    if not args.task:
        p.error("give a task or config name (see evidex run --list)")
    from evidex.graphs.tasks import config_for_task, load_config, task_table

    try:
        cfg = config_for_task(args.task) if args.task in task_table() else load_config(args.task)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    rows = describe(cfg)
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    print(f"{cfg.name} ({cfg.family}): {len(rows)} settings; 'run' = a run may change it\n")
    width = max(len(r["key"]) for r in rows)
    for r in rows:
        flag = "run" if r["per_run"] else "   "
        value = json.dumps(r["value"], default=str)
        print(f"{r['key']:<{width}}  {flag}  {value[:40]:<40}  {r['description'][:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which tasks exist, and loading a config by task, name or path.

Each family's configs live in its folder (``configs/<family>/``; files starting with ``_`` are shared bases).
The config whose ``name`` equals its ``task`` is the task's default; other files in the folder are variants
chosen with ``--config <family>/<name>``. A config is validated by the model of the family it names
(``family:``, usually inherited from the folder's ``_base.yaml``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evidex.graphs.config import ConfigError, TaskConfig, apply_overrides, format_validation_error, load_raw
from evidex.graphs.registry import TaskFamily, families, get_family


@dataclass(frozen=True)
class TaskEntry:
    task: str
    family: str
    path: Path
    description: str


def _user_config_dir() -> Path | None:
    """``EVIDEX_CONFIG_DIR``: a user's own config tree (``<family>/<name>.yaml``), searched before the shipped one."""
    value = os.environ.get("EVIDEX_CONFIG_DIR")
    return Path(value) if value else None


def _family_dirs() -> list[tuple[TaskFamily, Path]]:
    """(family, folder) pairs to search, the user's tree first."""
    user = _user_config_dir()
    out = []
    for fam in families().values():
        if user is not None and (user / fam.name).is_dir():
            out.append((fam, user / fam.name))
        out.append((fam, fam.configs))
    return out


def find_config(name_or_path: str) -> Path:
    """A config file by path, or by name (``civic/mixed``, ``mixed`` when unambiguous)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if path.suffix != ".yaml":
        path = path.with_name(path.name + ".yaml")
    if path.is_file():
        return path
    head, _, rest = name_or_path.partition("/")
    for fam, folder in _family_dirs():
        if rest and head == fam.name and (folder / f"{rest}.yaml").is_file():
            return folder / f"{rest}.yaml"
    for fam, folder in _family_dirs():
        if not rest and (folder / f"{name_or_path}.yaml").is_file():
            return folder / f"{name_or_path}.yaml"
    raise ConfigError(f"Config {name_or_path!r} not found. Known configs: {', '.join(list_config_names())} "
                      "(or pass a YAML file's path).")


def list_config_names() -> list[str]:
    """``<family>/<name>`` of every runnable config (shared ``_*.yaml`` bases excluded)."""
    names = set()
    for fam, folder in _family_dirs():
        if folder.is_dir():
            names.update(f"{fam.name}/{p.relative_to(folder).with_suffix('')}" for p in folder.rglob("*.yaml")
                         if not p.name.startswith("_"))
    return sorted(names)


def read_config(path: Path) -> dict[str, Any]:
    """A config file's data with ``extends:`` resolved (no validation)."""
    return load_raw(path, resolve_name=find_config)


def validate(data: dict[str, Any], source: str) -> TaskConfig:
    """Validate config data with the model of the family it names (``family:``)."""
    family_name = data.get("family")
    if family_name is None:
        task = data.get("task")
        entry = task_table().get(task) if isinstance(task, str) else None
        if entry is None:
            raise ConfigError(f"{source}: invalid config\n  - family: missing (allowed: "
                              f"{', '.join(sorted(families()))}); put the file under configs/<family>/ and extend "
                              "that folder's _base, or set family:")
        family_name = entry.family  # a run folder written before configs named their family
        data = {**data, "family": family_name}
    if not isinstance(family_name, str) or family_name not in families():
        raise ConfigError(f"{source}: invalid config\n  - family: unknown family {family_name!r} "
                          f"(allowed: {', '.join(sorted(families()))})")
    model = get_family(family_name).config_model
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source, model)) from None


def load_config(name_or_path: str, overrides: list[str] | None = None) -> TaskConfig:
    """Load a config by name (``civic/mixed``) or path, resolve ``extends:`` and apply ``--set`` overrides."""
    path = find_config(name_or_path)
    data = apply_overrides(read_config(path), overrides or [])
    return validate(data, str(path))


def config_for_task(task: str, overrides: list[str] | None = None) -> TaskConfig:
    """The default config of ``task`` (the file in its family's folder whose ``name`` is the task)."""
    table, broken = _scan()
    if task not in table:
        for path, error in broken.items():
            if path.stem == task:  # the task's own config is the one that failed: say why
                raise error
        raise ConfigError(f"Unknown task {task!r}. Known tasks: {', '.join(sorted(table))} (see --list).")
    return load_config(str(table[task].path), overrides)


def broken_configs() -> dict[Path, ConfigError]:
    """Config files that do not load (malformed YAML, a bad ``extends:``), with the reason."""
    return _scan()[1]


def task_table() -> dict[str, TaskEntry]:
    """task name -> its family, default config path and one-line description."""
    return _scan()[0]


def _scan() -> tuple[dict[str, TaskEntry], dict[Path, ConfigError]]:
    table: dict[str, TaskEntry] = {}
    broken: dict[Path, ConfigError] = {}
    seen: set[tuple[str, Path]] = set()  # a file in the user's tree shadows the shipped file of the same name
    for fam, folder in _family_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.yaml")):
            rel = (fam.name, path.relative_to(folder))
            if path.name.startswith("_") or rel in seen:
                continue
            seen.add(rel)
            try:
                raw = read_config(path)
            except ConfigError as exc:
                broken[path] = exc
                continue
            task = raw.get("task")
            if isinstance(task, str) and task not in table and raw.get("name") == task:
                table[task] = TaskEntry(task=task, family=fam.name, path=path,
                                        description=str(raw.get("description", "")).strip())
    return table, broken

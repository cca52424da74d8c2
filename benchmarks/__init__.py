"""Benchmarks (run as modules, e.g. ``python -m benchmarks.retrieval``)."""
from __future__ import annotations

import json
from pathlib import Path


def absolute_paths(data, where: str = "") -> list[str]:
    """Keys whose value is an absolute path: results name runs by run id and data by a relative name, so a file
    made on one machine says nothing about its folders and reads the same anywhere."""
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in absolute_paths(v, f"{where}.{k}")]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in absolute_paths(v, f"{where}[{i}]")]
    return [f"{where}: {data}"] if isinstance(data, str) and data.startswith(("/", "~")) else []


def write_results(path: Path, data, part: str | None = None) -> None:
    """Write a benchmark's results as JSON (creating the folder) and say where.

    With ``part``, the file holds one key per part of a benchmark (a split, a mode, a model) and only that key is
    replaced: each benchmark keeps one file with the latest result of each of its parts (history lives in git)."""
    found = absolute_paths(json.loads(json.dumps(data, default=str)))
    if found:
        raise ValueError(f"benchmark results must not hold machine paths: {'; '.join(found[:3])}")
    if part is not None:
        try:
            parts = json.loads(path.read_text()) if path.is_file() else {}
        except json.JSONDecodeError:
            raise ValueError(f"{path} is not JSON; move it away or pass another --json") from None
        if not isinstance(parts, dict):
            raise ValueError(f"{path} does not hold one key per part; move it away or pass another --json")
        data = {**parts, part: data}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str))
    print(f"wrote {path}")

"""Benchmarks (run as modules, e.g. ``python -m benchmarks.retrieval``)."""
from __future__ import annotations

import json
from pathlib import Path


def write_results(path: Path, data) -> None:
    """Write a benchmark's results as JSON (creating the folder) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str))
    print(f"wrote {path}")

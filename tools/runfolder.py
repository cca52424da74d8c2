"""Run-folder reading and writing shared by every layer: the runner appends results, evaluators and the trace
viewer read them back.

``results.jsonl`` holds one JSON line per finished item, appended and fsynced, so a kill loses at most the items
in flight; :func:`read_results` drops a torn last line (and repairs the file), :func:`read_rows` reads without
touching the file (safe on a run in progress).
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


def read_results(path: Path) -> list[dict[str, Any]]:
    """Complete lines of results.jsonl; a torn last line (killed mid-write) is dropped from the file."""
    if not path.is_file():
        return []
    rows, good_bytes, newline_missing = [], 0, False
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                rows.append(json.loads(raw))
            except json.JSONDecodeError:
                break
            good_bytes += len(raw)
            newline_missing = not raw.endswith(b"\n")
    if good_bytes != path.stat().st_size:
        with open(path, "r+b") as fh:
            fh.truncate(good_bytes)
    if newline_missing:  # killed right before the newline: keep the row, restore the newline for the next append
        with open(path, "ab") as fh:
            fh.write(b"\n")
    return rows


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Complete lines of a JSONL file, read-only (a torn last line is skipped, not truncated): safe on a run that
    is still writing."""
    rows: list[dict[str, Any]] = []
    if not path.is_file():
        return rows
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(row, dict):
                rows.append(row)
    return rows


def read_status(run_dir: Path) -> dict[str, Any]:
    """The run's ``run.json`` (status, item count, model, timestamps); ``{}`` when absent or unreadable."""
    path = Path(run_dir) / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def update_status(run_dir: Path, **fields: Any) -> None:
    """Merge ``fields`` into the run's ``run.json`` (status, item count, model, timestamps)."""
    path = run_dir / "run.json"
    data = read_status(run_dir)
    data.update(fields)
    path.write_text(json.dumps(data, indent=2, default=str))


class ResultWriter:
    """Appends one JSON line per finished item and fsyncs it (read back with :func:`read_results`)."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def append(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, default=str, ensure_ascii=False) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())


class GroundedAnswer(BaseModel):
    """One answer with the question it answers and the contexts it rests on: what RAGAS scores. A task family
    derives these from its predictions; the runner stores them on each row (``grounded``)."""

    question: str
    answer: str
    contexts: list[str] = Field(default_factory=list)


class ReportChart(BaseModel):
    """A grouped bar chart: one group per category, one bar per series (``None`` = no bar)."""

    title: str
    categories: list[str]
    series: dict[str, list[float | None]]
    max_value: float | None = None


class ReportSection(BaseModel):
    """A table (and optionally a chart) a task family adds to its runs' reports. Stored in ``metrics.json`` under
    ``sections``, so ``report.md``, ``report.html`` and the console render it without knowing the family."""

    id: str
    title: str
    columns: list[str]
    rows: list[list[str | int | float | None]]
    note: str = ""
    chart: ReportChart | None = None

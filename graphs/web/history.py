"""The questions asked of one store, kept beside it (``<store>/web/history.jsonl``, one answer per line), with
each run's trace in ``<store>/web/traces/<run_id>.json`` for the trace viewer."""
from __future__ import annotations

import json
import threading
from pathlib import Path

from evidex.graphs.web.models import AnswerView


class History:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "history.jsonl"
        self.traces = folder / "traces"
        self._lock = threading.Lock()

    def add(self, entry: AnswerView) -> None:
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            with self.file.open("a", encoding="utf-8") as fh:
                fh.write(entry.model_dump_json() + "\n")

    def entries(self, limit: int = 200) -> list[AnswerView]:
        """The newest first; a line that does not read (a crash mid-write) is left out."""
        with self._lock:
            if not self.file.is_file():
                return []
            lines = self.file.read_text(encoding="utf-8").splitlines()
        out = []
        for line in reversed(lines):
            try:
                out.append(AnswerView.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValueError):
                continue
            if len(out) >= limit:
                break
        return out

    def trace_file(self, run_id: str) -> Path:
        return self.traces / f"{run_id}.json"

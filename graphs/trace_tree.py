"""Run trees on disk: the traces a run wrote under ``traces/``, the run folders holding them, and the small
helpers the terminal view (:mod:`graphs.trace`) and the HTML viewer (:mod:`graphs.trace_html`) share."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evidex.graphs.tracing import safe_name
from evidex.tools.runfolder import read_rows  # read-only: safe on a run in progress

ERROR_MARK = "✗"
OK_MARK = "✓"
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Warning)\b")
_EXC_REPR = re.compile(r"^([A-Za-z_][\w.]*)\((['\"])(.*)\2\)$")


class TraceError(RuntimeError):
    """A run folder or trace file cannot be found or read; the message says what to pass instead."""


# -- loading ------------------------------------------------------------------------------------------------
@dataclass
class TraceItem:
    """One item of a run: its results.jsonl row (if any) and the path of its run tree (if any)."""

    id: str
    row: dict[str, Any] = field(default_factory=dict)
    trace_path: Path | None = None
    _tree: dict[str, Any] | None = None

    @property
    def error(self) -> str | None:
        return self.row.get("error") or (self.tree or {}).get("error")

    @property
    def tree(self) -> dict[str, Any] | None:
        if self._tree is None and self.trace_path is not None and self.trace_path.is_file():
            self._tree = load_trace(self.trace_path)
        return self._tree


def load_trace(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceError(f"{path}: cannot read trace ({type(exc).__name__}: {exc})") from exc
    if not isinstance(data, dict) or "run_type" not in data:
        raise TraceError(f"{path}: not a run tree (expected a JSON object with run_type, name, child_runs)")
    return data


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and any((path / n).exists() for n in ("config.yaml", "results.jsonl", "run.json", "traces"))


def run_info(run_dir: Path) -> dict[str, Any]:
    """run.json merged with the headline fields of metrics.json (either may be missing)."""
    info: dict[str, Any] = {"run_id": run_dir.name}
    for name in ("metrics.json", "run.json"):
        path = run_dir / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            info.update({k: v for k, v in data.items() if k in ("run_id", "task", "config", "model", "status",
                                                                 "n_items", "n_ok", "n_errors", "started",
                                                                 "finished")})
    return info


def list_runs(runs_dir: Path) -> list[Path]:
    """Run folders under ``runs_dir``, oldest first (by run.json ``started``, else folder name / mtime)."""
    if not runs_dir.is_dir():
        return []

    def key(p: Path) -> tuple[str, float]:
        started = ""
        try:
            started = json.loads((p / "run.json").read_text(encoding="utf-8")).get("started", "") or ""
        except (OSError, json.JSONDecodeError, AttributeError):
            pass
        return (started, p.stat().st_mtime)

    return sorted((p for p in runs_dir.iterdir() if is_run_dir(p)), key=key)


def latest_run(runs_dir: Path) -> Path:
    runs = list_runs(runs_dir)
    if not runs:
        raise TraceError(f"No run folders under {runs_dir}. Run a task first (evidex run --task mixed) "
                         f"or pass --runs-dir / a RUN_DIR.")
    return runs[-1]


def load_items(run_dir: Path) -> list[TraceItem]:
    """Items in results.jsonl order, then any trace file without a result line (items still in flight)."""
    items: dict[str, TraceItem] = {}
    for row in read_rows(run_dir / "results.jsonl"):
        rid = str(row.get("id"))
        rel = row.get("trace")
        path = run_dir / rel if rel else run_dir / "traces" / f"{safe_name(rid)}.json"
        items[rid] = TraceItem(id=rid, row=row, trace_path=path if path.is_file() else None)
    known = {it.trace_path.resolve() for it in items.values() if it.trace_path}
    traces = run_dir / "traces"
    if traces.is_dir():
        for path in sorted(traces.glob("*.json")):
            if path.resolve() not in known:
                items.setdefault(path.stem, TraceItem(id=path.stem, trace_path=path))
    return list(items.values())


def find_item(items: list[TraceItem], item_id: str) -> TraceItem:
    for it in items:
        if item_id in (it.id, safe_name(it.id)) or (it.trace_path is not None and it.trace_path.stem == item_id):
            return it
    shown = ", ".join(it.id for it in items[:12]) + (" ..." if len(items) > 12 else "")
    raise TraceError(f"No item {item_id!r} in this run. Items: {shown or '(none)'}")


# -- tree helpers (shared with the HTML renderer) -------------------------------------------------------------
def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def latency_s(node: dict[str, Any]) -> float | None:
    start, end = parse_time(node.get("start_time")), parse_time(node.get("end_time"))
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


def tokens_of(node: dict[str, Any]) -> tuple[int, int]:
    return int(node.get("prompt_tokens") or 0), int(node.get("completion_tokens") or 0)


def walk(node: dict[str, Any], depth: int = 0):
    """(depth, node) for every node, depth first, children in start order."""
    yield depth, node
    for child in node.get("child_runs") or []:
        yield from walk(child, depth + 1)


def count_nodes(tree: dict[str, Any]) -> tuple[int, int, int]:
    """(nodes, llm calls, nodes with an error)."""
    n = llm = err = 0
    for _, node in walk(tree):
        n += 1
        llm += node.get("run_type") in ("llm", "chat_model")
        err += bool(node.get("error"))
    return n, llm, err


def fmt_latency(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s"


def first_line(text: str | None, limit: int = 160) -> str:
    """The line that names the error: the first line, or for a bare traceback the final ``Type: message``."""
    text = str(text or "")
    cut = text.find("Traceback (most recent call last)")
    if cut > 0:  # LangChain stores repr(exc) + traceback
        text = text[:cut]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    line = lines[0]
    if line.startswith("Traceback"):
        named = [ln for ln in lines if _EXC_LINE.match(ln)]
        line = named[-1] if named else lines[-1]
    m = _EXC_REPR.match(line)
    if m:  # RuntimeError('boom') -> RuntimeError: boom
        line = f"{m.group(1)}: {m.group(3)}"
    return line if len(line) <= limit else line[: limit - 1] + "…"

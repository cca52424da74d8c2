"""Run-folder reading and writing shared by every layer: the runner appends results, evaluators and the trace
viewer read them back.

``results.jsonl`` holds one JSON line per finished item, appended and fsynced, so a kill loses at most the items
in flight; :func:`read_results` drops a torn last line (and repairs the file), :func:`read_rows` reads without
touching the file (safe on a run in progress). :class:`ResultWriter` writes at most one row per item id.

A run folder has one owner at a time (:class:`RunLock`: ``run.lock``, a kernel file lock plus the owner's pid,
host, command and start time), so two ``--resume`` of one run cannot both write it; a lock whose owner died (a
SIGKILL, a lost Ray node taking the driver down) is taken over and the run is marked ``interrupted`` with the
reason. :func:`run_state` tells a live run from a dead one for ``graphs.run --list-runs``.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evidex.tools.owner import Owner

log = logging.getLogger(__name__)
LOCK_FILE = "run.lock"


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
    """Merge ``fields`` into the run's ``run.json`` (status, item count, model, timestamps); written atomically."""
    path = Path(run_dir) / "run.json"
    data = read_status(run_dir)
    data.update(fields)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    tmp.replace(path)


def unique_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """One row per item id (the first, unless a later one has no error and it had), in first-seen order; and how
    many rows were dropped. Folders written before ownership locks may hold two rows of one item."""
    chosen: dict[str, dict[str, Any]] = {}
    for row in rows:
        rid = str(row.get("id"))
        old = chosen.get(rid)
        if old is None or (old.get("error") is not None and row.get("error") is None):
            chosen[rid] = row
    order = list(dict.fromkeys(str(r.get("id")) for r in rows))
    return [chosen[i] for i in order], len(rows) - len(chosen)


class ResultWriter:
    """Appends one JSON line per finished item and fsyncs it (read back with :func:`read_results`). An item that
    already has a row (in the file when the writer opened it, or written since) is not written again."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self.ids = {str(r.get("id")) for r in read_rows(path)}
        self.skipped: list[str] = []

    def append(self, row: dict[str, Any]) -> bool:
        """Write ``row``; False (and nothing written) when its item already has one."""
        line = json.dumps(row, default=str, ensure_ascii=False) + "\n"
        rid = str(row.get("id"))
        with self._lock:
            if rid in self.ids:
                self.skipped.append(rid)
                log.warning("%s: item %s already has a row; the second one is not written", self.path, rid)
                return False
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self.ids.add(rid)
            return True


# ------------------------------------------------------------------------------------------------ ownership


class RunBusyError(RuntimeError):
    """Another live process owns the run folder; the one-line message names it and what to do."""

    def __init__(self, message: str, owner: Owner | None = None):
        super().__init__(message)
        self.owner = owner


def _read_owner(path: Path) -> Owner | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
        return Owner.model_validate_json(text) if text else None
    except (OSError, ValueError):
        return None


class RunLock:
    """The one owner of a run folder: ``run.lock`` held with a kernel lock (``flock``, dropped by the kernel when
    the owner dies however it dies) and holding the owner's pid, host, command and start time.

    ``acquire()`` takes it or raises :class:`RunBusyError` naming the live owner. When the previous owner left
    without releasing (killed) the lock is taken over and ``stale`` is that owner: the caller marks the run
    interrupted with the reason. ``release()`` empties the file and drops the lock."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._fd: int | None = None
        self.owner: Owner | None = None
        self.stale: Owner | None = None

    def acquire(self) -> RunLock:
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                owner = self._holder()
                who = owner.describe() if owner else "another process"
                if owner is not None and owner.alive() is None:
                    hint = (f"it runs on {owner.host}; if it is gone there, delete {self.path} and resume again")
                else:
                    hint = "let it finish, or stop it (Ctrl-C or kill PID) and resume again"
                raise RunBusyError(f"the run {self.run_dir} is being run by {who}; {hint}", owner) from None
            # the file may have been replaced between open and lock (a release unlinks nothing, but be sure)
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            break
        previous = _read_owner(self.path)
        if previous is not None and previous.alive() is None:
            # the kernel lock is free, but the owner runs on another host: file systems that do not share locks
            # across hosts would let us in by mistake, so we do not take a lock that may be live
            os.close(fd)
            raise RunBusyError(f"the run {self.run_dir} is owned by {previous.describe()}, on another host; if it is "
                               f"gone there, delete {self.path} and resume again", previous)
        self.stale = previous  # the kernel lock was free while a record was left: its owner died without release
        self.owner = Owner.current()
        os.ftruncate(fd, 0)
        os.pwrite(fd, self.owner.model_dump_json().encode(), 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def _holder(self, wait_s: float = 3.0) -> Owner | None:
        """The record of the process holding the kernel lock. The holder writes its record just after taking the
        lock, so a record that is missing or names a dead process is the previous owner's: wait for the new one."""
        deadline = time.monotonic() + wait_s
        while True:
            owner = _read_owner(self.path)
            if (owner is not None and owner.alive() is not False) or time.monotonic() >= deadline:
                return owner
            time.sleep(0.05)

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)  # an empty lock file: nobody owns the run
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def run_owner(run_dir: Path) -> Owner | None:
    """The process that owns the run now, when a live one does (None: nobody, or a dead owner's record)."""
    owner = _read_owner(Path(run_dir) / LOCK_FILE)
    if owner is None or owner.alive() is False:
        return None
    return owner


def run_state(run_dir: Path) -> dict[str, Any]:
    """``run.json`` plus what is true now: ``state`` is the recorded status, except a run recorded as running whose
    owner is gone, which is ``dead`` (killed without a chance to say so: resume it); ``owner`` describes a live one;
    ``rows`` and ``duplicates`` count results.jsonl."""
    info = read_status(run_dir)
    status = info.get("status") or "unknown"
    record = _read_owner(Path(run_dir) / LOCK_FILE)
    alive = record.alive() if record is not None else False
    state = status
    if status == "running" and alive is False:
        state = "dead"
    elif status == "unknown" and record is not None and alive is not False:
        state = "running"  # a live owner that has not written run.json yet (the first moments of a run)
    rows = read_rows(Path(run_dir) / "results.jsonl")
    _, dups = unique_rows(rows)
    return {**info, "state": state, "owner": record.describe() if record is not None and alive is not False else None,
            "rows": len(rows) - dups, "duplicates": dups}


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

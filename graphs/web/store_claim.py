"""One web server per store: a second server on the same store says so at start, not on its first upload.

DuckDB lets one process write a store file, and a writer cannot open it while another process still holds it
open, even read-only. Two web servers on one store would therefore fail on the first upload with DuckDB's raw
lock error. So a server claims the store for as long as it runs (an OS file lock on ``<store>/web/server.lock``,
released by the kernel even when the process is killed) and records who it is beside it; a second server finds
the claim held and stops at start with one line naming the first one.

``claim_store`` is the one place that decides this: when the store's shared single-writer lock
(``tools.store``) lands, it becomes a call to that lock, and nothing else in the web server changes.
"""
from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

CLAIM_DIR = "web"
LOCK_FILE = "server.lock"
INFO_FILE = "server.json"


class StoreInUseError(RuntimeError):
    """Another web server serves this store; the message names it and what to do."""


@dataclass
class StoreClaim:
    lock: FileLock
    info: Path

    def release(self) -> None:
        if self.lock.is_locked:
            self.info.unlink(missing_ok=True)
            self.lock.release(force=True)


def _holder(info: Path) -> str:
    try:
        who = json.loads(info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "another evidex web server"
    where = f" at {who['address']}" if who.get("address") else ""
    return f"another evidex web server (pid {who.get('pid')} on {who.get('host')}{where}, since {who.get('since')})"


def claim_store(root: Path, label: str, address: str | None = None) -> StoreClaim:
    """Claim the store at ``root`` for this server, or raise :class:`StoreInUseError` when another one has it."""
    folder = Path(root) / CLAIM_DIR
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / LOCK_FILE), timeout=0, thread_local=False)  # released by the serving thread
    info = folder / INFO_FILE
    try:
        lock.acquire()
    except Timeout:
        raise StoreInUseError(f"store {label} is already served by {_holder(info)}: use that page, or stop that "
                              "server first (one server writes a store)") from None
    info.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "address": address,
                                "since": time.strftime("%Y-%m-%d %H:%M:%S")}), encoding="utf-8")
    return StoreClaim(lock, info)

"""Who holds something: a process named by pid, host, command and start time, and whether it is still alive.

The run-folder lock (tools/runfolder.py) and the store's single-writer lock (tools/store.py) record an
:class:`Owner` next to their lock, so a refusal can say which process is in the way and a lock left by a dead
process can be told from a live one. A pid is only checked on its own host; the process's start time (from
``/proc``) tells a reused pid from the original process.
"""
from __future__ import annotations

import os
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

COMMAND_CHARS = 160  # of a command line, in messages


def _proc_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); None when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return int(fields[19]) if fields[0] != "Z" else None
    except (ValueError, IndexError):
        return None


def command_of(pid: int) -> str:
    """A process's command line (shortened), or "" when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    text = raw.replace(b"\0", b" ").decode(errors="replace").strip()
    return _short(text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    # the interpreter's (or the console script's) full path says nothing useful: python -m ... / evidex run ...
    first, _, rest = text.partition(" ")
    if "python" in Path(first).name:
        text = f"python {rest}".strip()
    elif Path(first).name == "evidex":
        text = f"evidex {rest}".strip()
    return text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 1] + "…"


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host (a zombie counts as dead)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    start = _proc_start(pid)
    return start is not None or not Path("/proc").is_dir()


class Owner(BaseModel):
    """A process that holds a lock."""

    pid: int
    host: str
    command: str = ""
    started: str = ""  # ISO time it took the lock
    proc_start: int | None = None  # /proc start time of the pid (tells a reused pid apart)

    @classmethod
    def current(cls) -> Owner:
        pid = os.getpid()
        return cls(pid=pid, host=socket.gethostname(), command=_short(" ".join(sys.argv)) or command_of(pid),
                   started=datetime.now(timezone.utc).isoformat(timespec="seconds"), proc_start=_proc_start(pid))

    @property
    def on_this_host(self) -> bool:
        return self.host == socket.gethostname()

    def alive(self) -> bool | None:
        """True/False on this host; None when the owner runs on another host (it cannot be checked from here)."""
        if not self.on_this_host:
            return None
        if not pid_alive(self.pid):
            return False
        if self.proc_start is not None and _proc_start(self.pid) not in (None, self.proc_start):
            return False  # the pid now belongs to another process
        return True

    def describe(self) -> str:
        """``pid 123 on host, since 2026-11-28T10:00:00+00:00: evidex run --resume runs/X``."""
        since = f", since {self.started}" if self.started else ""
        return f"pid {self.pid} on {self.host}{since}" + (f": {self.command}" if self.command else "")


def describe_pid(pid: int) -> str:
    """A process of this host by pid, for a message: ``pid 123 (evidex run ...)``."""
    command = command_of(pid)
    return f"pid {pid} on {socket.gethostname()}" + (f" ({command})" if command else "")

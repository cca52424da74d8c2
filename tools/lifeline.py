"""Processes an evidex job starts die with it, however it dies (Ctrl-C, SIGTERM, or SIGKILL, which no handler sees).

Two mechanisms, for two kinds of children:

* :func:`die_with_parent`, called first thing in a child we start ourselves (the ingestion's parser processes): the
  kernel sends it SIGKILL when its parent dies (Linux ``PR_SET_PDEATHSIG``).
* :func:`reaped`, around starting a Ray for one job (or a pool of parser processes): Ray's own processes (its GCS,
  raylet, agents and workers) are not all our children and outlive a killed driver by a minute or more (measured:
  workers ~27 s, the dashboard and runtime-env agents > 60 s). Everything started inside carries a random token in
  its environment; a small watcher process marks the processes carrying it and everything they start, and, holding
  the read end of a pipe only this process writes to, kills every marked process as soon as the pipe closes: when
  the block ends, or when this process dies.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator

REAP_ENV = "EVIDEX_REAP_TOKEN"
_PR_SET_PDEATHSIG = 1

# The watcher. Every half second it marks the processes that carry the token and all their descendants (a process
# may hide its environment later, e.g. by setting its title as Ray's agents do, so marks are kept), with their
# start times. When the pipe closes (the block ended, or the job died) it SIGKILLs every marked process still alive
# (the same start time: not a reused pid), a few rounds, marking what they started meanwhile. Never itself, never
# the job's own process.
_WATCHER = r"""
import os, select, signal, sys, time
token, job, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
needle, me = ("%s=%s" % (name, token)).encode(), os.getpid()
marked = {}  # pid -> start time

def table():
    info = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            info[int(entry)] = (int(fields[1]), int(fields[19]), fields[0] == b"Z")
        except (OSError, IndexError, ValueError):
            continue
    return info

def mark():
    info = table()
    for pid, (ppid, start, zombie) in info.items():
        if pid in (me, job) or zombie or marked.get(pid) == start:
            continue
        if marked.get(ppid) == info.get(ppid, (0, None))[1] and ppid in marked:
            marked[pid] = start
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    marked[pid] = start
        except OSError:
            pass
    changed = True
    while changed:  # descendants of marked processes, however deep
        changed = False
        for pid, (ppid, start, zombie) in info.items():
            if pid not in marked and ppid in marked and pid not in (me, job) and not zombie:
                marked[pid] = start
                changed = True
    return info

fd = sys.stdin.fileno()
while True:
    ready = select.select([fd], [], [], 0.5)[0]
    if ready:
        try:
            if not os.read(fd, 65536):
                break
        except OSError:
            break
    mark()
for _ in range(30):
    info = mark()
    live = [pid for pid, start in marked.items() if pid in info and info[pid][1] == start and not info[pid][2]]
    for pid in live:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not live:
        break
    time.sleep(0.1)
"""


def die_with_parent(parent_pid: int | None = None) -> bool:
    """In a child process: have the kernel SIGKILL it when its parent dies (Linux); exit at once when the parent is
    already gone (it died before this ran). Returns whether the signal is armed (False off Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)
    return True


@contextlib.contextmanager
def reaped() -> Iterator[str | None]:
    """Processes started inside this block (and any they start) are killed when the block ends or this process
    dies. Yields the token they carry (``EVIDEX_REAP_TOKEN``), None where this cannot work (no ``/proc``)."""
    if not os.path.isdir("/proc") or os.environ.get(REAP_ENV):
        yield None  # not Linux, or already inside a reaped block (its watcher covers these processes too)
        return
    token = uuid.uuid4().hex
    read_end, write_end = os.pipe()  # both close-on-exec: only this process ever holds the write end
    try:
        watcher = subprocess.Popen([sys.executable, "-c", _WATCHER, token, str(os.getpid()), REAP_ENV],
                                   stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True, close_fds=True)
    except OSError:
        os.close(write_end)
        yield None
        return
    finally:
        os.close(read_end)
    os.environ[REAP_ENV] = token
    try:
        yield token
    finally:
        os.environ.pop(REAP_ENV, None)
        os.close(write_end)
        try:
            watcher.wait(timeout=30)
        except subprocess.TimeoutExpired:
            watcher.kill()

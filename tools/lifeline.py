"""Processes an evidex job starts die with it, however it dies (Ctrl-C, SIGTERM, or SIGKILL, which no handler sees).

Two mechanisms, for two kinds of children:

* :func:`die_with_parent`, called first thing in a child we start ourselves (the ingestion's parser processes): the
  kernel sends it SIGKILL when its parent dies (Linux ``PR_SET_PDEATHSIG``).
* :func:`reaped`, around starting a Ray for one job: Ray's own processes (its GCS, raylet, agents and workers) are
  not our children and outlive a killed driver by a minute or more (measured: workers ~27 s, the dashboard and
  runtime-env agents > 60 s). Everything started inside carries a random token in its environment, and a small
  watcher process, holding the read end of a pipe only this process writes to, kills every process carrying the
  token as soon as the pipe closes: when the block ends, or when this process dies.
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

# The watcher: blocks until the pipe closes, then SIGKILLs every process whose environment holds the token (a few
# rounds: a process may be starting one more while the first ones die), never itself or the job's own process.
_WATCHER = r"""
import os, signal, sys, time
token, job = sys.argv[1], int(sys.argv[2])
try:
    while sys.stdin.buffer.read(65536):
        pass
except OSError:
    pass
needle, me = ("%s=%s" % (sys.argv[3], token)).encode(), os.getpid()
for _ in range(20):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (me, job):
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if needle in env:
            found.append(int(entry))
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not found:
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

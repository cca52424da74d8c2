"""Helpers for tests that start real servers on this machine: free loopback ports, the processes a server started
(its session), the addresses they listen on, and stopping them by process id only."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session_pids(sid: int) -> list[int]:
    """Every live process of session ``sid`` (a server started with ``start_new_session=True`` has sid = its pid,
    and so do the processes it starts, unless they leave the session)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(entry))
    return out


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children, their children, ...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def listening_addresses(pids: list[int]) -> set[str]:
    """The local addresses (``ip``) that ``pids`` listen on with TCP, read from /proc (no ss/netstat needed)."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    out: set[str] = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[3] != "0A" or parts[9] not in inodes:  # 0A = LISTEN
                continue
            out.add(_ip(parts[1].split(":")[0], width))
    return out


def _ip(hexaddr: str, width: int) -> str:
    raw = bytes.fromhex(hexaddr)
    if width == 8:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))  # /proc prints each 32-bit word little-endian
    text = socket.inet_ntop(socket.AF_INET6, words)
    return text.removeprefix("::ffff:") if text.startswith("::ffff:") and "." in text else text


def only_loopback(addresses: set[str]) -> bool:
    return all(a.startswith("127.") or a == "::1" for a in addresses)


def stop_session(proc: subprocess.Popen, timeout_s: float = 60.0) -> None:
    """SIGTERM the server we started (its own process), then SIGKILL what is left of its session."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pass
    deadline = time.monotonic() + timeout_s
    while session_pids(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in session_pids(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=10)


def wait_for(predicate, timeout_s: float, what: str, proc: subprocess.Popen | None = None, log: Path | None = None,
             interval_s: float = 0.5):
    """Poll ``predicate`` until it returns something truthy; fail naming ``what`` (and the log's tail)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log and log.is_file() else ""
            raise AssertionError(f"{what}: the process exited ({proc.returncode}) first\n{tail}")
        time.sleep(interval_s)
    tail = log.read_text(errors="replace")[-3000:] if log and log.is_file() else ""
    raise AssertionError(f"{what}: not within {timeout_s:.0f} s\n{tail}")

"""API keys of evidex's servers (the LangGraph server's auth, the model server, the web page): how long a key must
be, where it may be read from, how it is compared, and how wrong guesses are slowed down.

- A key has at least :data:`MIN_KEY_CHARS` characters (``secrets.token_urlsafe(24)`` gives 32).
- A key file must be readable by its owner only (mode ``0600``): a key others can read is no key.
- Keys are compared in constant time (:func:`hmac.compare_digest`).
- :class:`FailureThrottle` counts wrong keys per client and in all: a client past its limit is refused for a while
  without its key being checked, and every wrong key costs more waiting the more wrong keys arrive in all, so
  guessing costs time whatever the parallelism (without letting one guesser lock every client out). A request
  that presents no key is not a guess and is not counted.
"""
from __future__ import annotations

import hmac
import os
import stat
import threading
import time
from collections import deque
from pathlib import Path

MIN_KEY_CHARS = 16


class ServerKeyError(ValueError):
    """A key that cannot be used; the message says why and what to do."""


def check_key(key: str, source: str) -> str:
    """``key`` stripped, or :class:`ServerKeyError` when it is shorter than :data:`MIN_KEY_CHARS`."""
    key = (key or "").strip()
    if len(key) < MIN_KEY_CHARS:
        raise ServerKeyError(f"the API key from {source} has {len(key)} characters; use at least {MIN_KEY_CHARS} "
                        "(e.g. python -c \"import secrets; print(secrets.token_urlsafe(24))\")")
    return key


def read_key_file(path: Path) -> str:
    """The key in ``path``, refused when the file is empty, too short, or readable by group or others."""
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ServerKeyError(f"{path} is readable by other users (mode {stat.S_IMODE(mode):o}); make it private: "
                        f"chmod 600 {path}")
    key = path.read_text(encoding="utf-8").strip()
    if not key:
        raise ServerKeyError(f"{path} is empty; delete it to get a new key")
    return check_key(key, str(path))


def write_key_file(path: Path, key: str) -> None:
    """Create ``path`` holding ``key``, readable by its owner only (never overwrites)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")


def keys_match(given: str | None, key: str) -> bool:
    """Constant-time comparison of a presented key with the server's."""
    return bool(given) and hmac.compare_digest(given.encode("utf-8"), key.encode("utf-8"))


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class FailureThrottle:
    """Wrong-key attempts per client and in all, over a sliding window. ``blocked(client)`` is true while a client
    is past its limit: its attempts are refused without checking the key. :meth:`delay` is how long a wrong key
    waits: 0.25 s, up to 2 s once ``overall`` wrong keys arrived in the window from anyone."""

    def __init__(self, per_client: int = 5, overall: int = 30, window_s: float = 60.0):
        self.per_client, self.overall, self.window_s = per_client, overall, window_s
        self._by_client: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._lock = threading.Lock()

    def _trim(self, q: deque[float], now: float) -> deque[float]:
        while q and now - q[0] > self.window_s:
            q.popleft()
        return q

    def blocked(self, client: str) -> bool:
        now = time.monotonic()
        with self._lock:
            return len(self._trim(self._by_client.get(client, deque()), now)) >= self.per_client

    def delay(self) -> float:
        now = time.monotonic()
        with self._lock:
            busy = len(self._trim(self._all, now)) / max(1, self.overall)
        return min(2.0, 0.25 + 1.75 * busy)

    def failed(self, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._by_client.setdefault(client, deque()).append(now)
            self._all.append(now)
            if len(self._by_client) > 10_000:  # forget the oldest clients rather than grow without bound
                for stale in [c for c, q in self._by_client.items() if not self._trim(q, now)]:
                    del self._by_client[stale]

    def retry_after(self) -> int:
        return int(self.window_s)

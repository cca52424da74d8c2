"""What a visitor is told when something fails, and what only the server log keeps.

A response never carries the server's folders, process ids or an exception's own text: an unexpected failure is
a short message and an error id (``failure``), and the log line with that id has the details (the exception, its
traceback, the paths). Messages the project writes itself to say what to do (a missing paper, a busy store) are
shown, with any absolute path cut to its last part (``public``).
"""
from __future__ import annotations

import logging
import re
import secrets

log = logging.getLogger("evidex.graphs.web")

# an absolute POSIX path ("/root/.cache/evidex/stores/x/store.duckdb") or a Windows one ("C:\\Users\\x\\a.pdf")
_POSIX_PATH = re.compile(r"(?<![\w.:/])/(?:[^/\s'\"]+/)+([^/\s'\"]*)")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\(?:[^\\\s'\"]+\\)+([^\\\s'\"]*)")
_PID = re.compile(r"\(?\bPID\s*\d+\)?", re.IGNORECASE)


def public(text: str) -> str:
    """A message of our own, fit to show: each absolute path cut to its last part, no process ids."""
    text = _WINDOWS_PATH.sub(lambda m: m.group(1) or "…", _POSIX_PATH.sub(lambda m: m.group(1) or "…", text))
    return _PID.sub("", text).strip()


def new_error_id() -> str:
    return secrets.token_hex(4)


def failure(message: str, exc: BaseException | None = None, *, context: str = "") -> tuple[str, str]:
    """``(message with its error id, the id)``; the details go to the server log under that id."""
    error_id = new_error_id()
    log.error("error %s: %s%s", error_id, context or message, f": {type(exc).__name__}: {exc}" if exc else "",
              exc_info=exc if exc is not None else None)
    return f"{message} (error id {error_id}; the server log has the details)", error_id

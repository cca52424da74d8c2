"""Who may call the server, and the headers every response carries.

* Bound to loopback (the default), the page needs no key, but the ``Host`` header must name loopback too, so a web
  page elsewhere cannot reach the server by pointing its own domain at 127.0.0.1 (DNS rebinding).
* Bound elsewhere, every API call needs the access key (at least 16 characters, the rule of all evidex servers:
  ``tools.server_keys``): the page asks for it once (or reads it from the URL's ``#key=`` fragment, which
  browsers never send) and trades it for an HttpOnly session cookie; scripts may send it as ``X-Evidex-Key``. The
  key is never logged and never appears in a URL the server sees; it is compared in constant time
  (``hmac.compare_digest`` of digests, so not even its length leaks).
* Wrong keys are throttled (:class:`LoginThrottle`) per client address and over all clients, counted before the
  key is checked so that guesses sent in parallel get no more checks than guesses sent one by one.
* Calls that change something (ask, stop, upload, sign in) must carry ``X-Evidex-Request: 1`` and, when the
  browser says where they come from (``Origin``), come from this page: a form on another site cannot send them.
* Every response gets a strict Content-Security-Policy (only the package's own scripts and styles, nothing
  remote), no framing, no sniffing and no referrer.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from evidex.tools.loopback import is_loopback

KEY_ENV = "EVIDEX_WEB_KEY"
SESSION_COOKIE = "evidex_session"
KEY_HEADER = "x-evidex-key"
REQUEST_HEADER = "x-evidex-request"
OPEN_PATHS = ("/", "/favicon.ico", "/api/access", "/api/login")  # the page itself and signing in
OPEN_PREFIXES = ("/static/",)
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


def _host_name(host_header: str) -> str:
    """``127.0.0.1:8000`` -> ``127.0.0.1``; ``[::1]:8000`` -> ``::1``."""
    return urlsplit(f"//{host_header}").hostname or ""


def check_key(key: str, source: str = KEY_ENV) -> str:
    """The key, or ValueError (one line) when it is shorter than ``tools.server_keys.MIN_KEY_CHARS``."""
    from evidex.tools.server_keys import check_key as check_server_key

    return check_server_key(key, source)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class Access:
    key: str | None  # None: no key (loopback)
    loopback: bool = True

    def __post_init__(self) -> None:
        if self.key is not None:
            check_key(self.key, "the access key")

    def session_token(self) -> str:
        """What the cookie holds: derived from the key, so the cookie is not the key itself."""
        assert self.key is not None
        return hmac.new(self.key.encode(), b"evidex-web-session", hashlib.sha256).hexdigest()

    def key_matches(self, given: str) -> bool:
        """Constant time: digests of equal length are compared, so neither the key nor its length leaks."""
        return self.key is not None and hmac.compare_digest(_digest(given), _digest(self.key))

    def has_session(self, cookies: dict[str, str]) -> bool:
        if self.key is None:
            return True
        return hmac.compare_digest(_digest(cookies.get(SESSION_COOKIE, "")), _digest(self.session_token()))


class LoginThrottle:
    """Wrong access keys, counted per client address and over all clients in a sliding window.

    ``begin(client)`` reserves a try before the key is checked (None), or says how many seconds to wait; ``end``
    records the outcome. A reserved try counts like a failure until it ends, so twenty guesses sent at once get
    ``per_client`` checks, not twenty. Past ``per_client`` wrong keys a client waits until its oldest one is a
    window old. Past ``overall`` wrong keys from anyone, every client that has guessed wrong waits too, so guesses
    spread over many addresses get one try each, while a client that has not (the owner, arriving) is still
    checked: many guessers cannot lock everyone out. A right key clears its client's failures."""

    def __init__(self, per_client: int = 5, overall: int = 20, window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, max_clients: int = 10_000) -> None:
        self.per_client, self.overall, self.window_s = per_client, overall, window_s
        self.clock, self.max_clients = clock, max_clients
        self._lock = threading.Lock()
        self._failed: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._pending: dict[str, int] = {}

    def _prune(self, now: float) -> None:
        horizon = now - self.window_s
        while self._all and self._all[0] <= horizon:
            self._all.popleft()
        for client in list(self._failed):
            times = self._failed[client]
            while times and times[0] <= horizon:
                times.popleft()
            if not times:
                del self._failed[client]
        while len(self._failed) > self.max_clients:  # an address flood: forget the oldest (the overall count holds)
            del self._failed[next(iter(self._failed))]

    def begin(self, client: str) -> float | None:
        with self._lock:
            now = self.clock()
            self._prune(now)
            mine = self._failed.get(client, deque())
            tried = len(mine) + self._pending.get(client, 0)
            own_wait = mine[0] + self.window_s - now if mine else 1.0
            if tried >= self.per_client:
                return max(1.0, own_wait)
            if tried and len(self._all) + sum(self._pending.values()) >= self.overall:
                overall_wait = self._all[0] + self.window_s - now if self._all else 1.0
                return max(1.0, min(own_wait, overall_wait))
            self._pending[client] = self._pending.get(client, 0) + 1
            return None

    def end(self, client: str, ok: bool) -> None:
        with self._lock:
            left = self._pending.get(client, 1) - 1
            if left > 0:
                self._pending[client] = left
            else:
                self._pending.pop(client, None)
            if ok:
                self._failed.pop(client, None)
                return
            now = self.clock()
            self._failed.setdefault(client, deque()).append(now)
            self._all.append(now)

    def check(self, client: str, matches: Callable[[], bool]) -> bool | float:
        """True / False for a key checked, or the seconds to wait when this try is throttled."""
        wait = self.begin(client)
        if wait is not None:
            return wait
        ok = False
        try:
            ok = matches()
        finally:
            self.end(client, ok)
        return ok


def throttled(wait_s: float) -> tuple[int, str, dict[str, str]]:
    seconds = math.ceil(wait_s)
    return 429, f"Too many wrong access keys; try again in {seconds} s.", {"retry-after": str(seconds)}


def client_address(scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class AccessMiddleware:
    """Pure ASGI (server-sent events stream through it untouched)."""

    def __init__(self, app, access: Access, throttle: LoginThrottle | None = None) -> None:
        self.app = app
        self.access = access
        self.throttle = throttle or LoginThrottle()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from starlette.requests import Request

        request = Request(scope)
        headers = {k.lower(): v for k, v in request.headers.items()}
        refusal = self._refusal(scope["method"], scope["path"], headers, request.cookies, client_address(scope))
        if refusal is not None:
            status, message, *extra = refusal
            return await _json(send, status, {"error": message}, extra[0] if extra else None)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                present = {k.decode().lower() for k, _ in raw}
                extra = dict(SECURITY_HEADERS)
                if "content-security-policy" not in present:
                    extra["content-security-policy"] = PAGE_CSP
                raw += [(k.encode(), v.encode()) for k, v in extra.items() if k not in present]
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _refusal(self, method: str, path: str, headers: dict[str, str], cookies: dict[str, str],
                 client: str) -> tuple | None:
        host = headers.get("host", "")
        if self.access.loopback and not is_loopback(_host_name(host)):
            return 421, "This server answers on loopback only (open it as http://127.0.0.1:PORT/)."
        if method not in ("GET", "HEAD", "OPTIONS"):
            if headers.get(REQUEST_HEADER) != "1":
                return 403, "Refused: changes are only accepted from the evidex page."
            origin = headers.get("origin")
            if origin and urlsplit(origin).netloc != host:
                return 403, "Refused: this request comes from another site."
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return None
        if self.access.has_session(cookies):
            return None
        given = headers.get(KEY_HEADER)
        if given is not None:
            outcome = self.throttle.check(client, lambda: self.access.key_matches(given))
            if outcome is True:
                return None
            if outcome is not False:
                return throttled(outcome)
        return 401, "Access key required: open the page and enter the key the server printed."


async def _json(send, status: int, body: dict, extra: dict[str, str] | None = None) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
               (b"cache-control", b"no-store")] + [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    headers += [(k.encode(), v.encode()) for k, v in {**SECURITY_HEADERS, "content-security-policy": PAGE_CSP}.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})

"""Who may call the server, and the headers every response carries.

* Bound to loopback (the default), the page needs no key, but the ``Host`` header must name loopback too, so a web
  page elsewhere cannot reach the server by pointing its own domain at 127.0.0.1 (DNS rebinding).
* Bound elsewhere, every API call needs the access key: the page asks for it once (or reads it from the URL's
  ``#key=`` fragment, which browsers never send) and trades it for an HttpOnly session cookie; scripts may send
  it as ``X-Evidex-Key``. The key is never logged and never appears in a URL the server sees.
* Calls that change something (ask, stop, upload, sign in) must carry ``X-Evidex-Request: 1`` and, when the
  browser says where they come from (``Origin``), come from this page: a form on another site cannot send them.
* Every response gets a strict Content-Security-Policy (only the package's own scripts and styles, nothing
  remote), no framing, no sniffing and no referrer.
"""
from __future__ import annotations

import hashlib
import hmac
import json
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


@dataclass(frozen=True)
class Access:
    key: str | None  # None: no key (loopback)
    loopback: bool = True

    def session_token(self) -> str:
        """What the cookie holds: derived from the key, so the cookie is not the key itself."""
        assert self.key is not None
        return hmac.new(self.key.encode(), b"evidex-web-session", hashlib.sha256).hexdigest()

    def key_matches(self, given: str) -> bool:
        return self.key is not None and hmac.compare_digest(given.encode(), self.key.encode())

    def signed_in(self, headers: dict[str, str], cookies: dict[str, str]) -> bool:
        if self.key is None:
            return True
        if self.key_matches(headers.get(KEY_HEADER, "")):
            return True
        return hmac.compare_digest(cookies.get(SESSION_COOKIE, "").encode(), self.session_token().encode())


class AccessMiddleware:
    """Pure ASGI (server-sent events stream through it untouched)."""

    def __init__(self, app, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from starlette.requests import Request

        request = Request(scope)
        headers = {k.lower(): v for k, v in request.headers.items()}
        refusal = self._refusal(scope["method"], scope["path"], headers, request.cookies)
        if refusal is not None:
            status, message = refusal
            return await _json(send, status, {"error": message})

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

    def _refusal(self, method: str, path: str, headers: dict[str, str],
                 cookies: dict[str, str]) -> tuple[int, str] | None:
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
        if not self.access.signed_in(headers, cookies):
            return 401, "Access key required: open the page and enter the key the server printed."
        return None


async def _json(send, status: int, body: dict) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
               (b"cache-control", b"no-store")]
    headers += [(k.encode(), v.encode()) for k, v in {**SECURITY_HEADERS, "content-security-policy": PAGE_CSP}.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})

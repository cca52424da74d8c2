"""Authentication for the LangGraph server (``langgraph dev`` / ``langgraph up`` with this project's
``langgraph.json``), the LangGraph way: ``"auth": {"path": "evidex.graphs.server_auth:auth",
"disable_studio_auth": true}``.

- With ``EVIDEX_SERVER_API_KEY`` set (at least 16 characters, from the environment or ``.env``), every request
  needs it: ``Authorization: Bearer <key>`` or ``X-Api-Key: <key>``. Wrong keys are throttled per client and in all.
- Without a key, the server answers this machine only: a request from any other address (or forwarded for one by
  a proxy) gets ``401`` with what to set. So a server listening beyond loopback is never open without a key.

Clients (``langgraph-sdk``)::

    from langgraph_sdk import get_client
    client = get_client(url="http://host:2024", api_key=os.environ["EVIDEX_SERVER_API_KEY"])   # sends X-Api-Key
    # or: get_client(url=..., headers={"Authorization": f"Bearer {key}"})
"""
from __future__ import annotations

import asyncio

from langgraph_sdk import Auth

from evidex.tools.loopback import is_loopback
from evidex.tools.server_keys import FailureThrottle, bearer, check_key, keys_match

KEY_ENV = "EVIDEX_SERVER_API_KEY"
_FORWARDED = (b"x-forwarded-for", b"forwarded", b"x-real-ip")


def _configured_key() -> str | None:
    """The operator's key (read once, when the server loads this module); a short key stops the server."""
    from evidex.tools.settings import get_settings

    secret = get_settings().server_api_key  # the environment, else .env
    raw = secret.get_secret_value() if secret else ""
    return check_key(raw, f"${KEY_ENV}") if raw.strip() else None


KEY = _configured_key()
THROTTLE = FailureThrottle()
auth = Auth()


def _client_host(scope: dict) -> str:
    client = scope.get("client") or ("", 0)
    return str(client[0] or "")


def _forwarded_from_elsewhere(headers: dict[bytes, bytes]) -> bool:
    """A proxy on this machine says the request came from another one."""
    for name in _FORWARDED:
        value = (headers or {}).get(name)
        if value:
            hosts = [part.split("=")[-1].strip().strip('"') for part in value.decode("latin-1").replace(";", ",")
                     .split(",") if part.strip()]
            if any(h and not is_loopback(h.rsplit(":", 1)[0] if h.count(":") == 1 else h) for h in hosts):
                return True
    return False


@auth.authenticate
async def authenticate(scope: dict, headers: dict[bytes, bytes], authorization: str | None) -> Auth.types.MinimalUserDict:
    client = _client_host(scope)
    if KEY is None:
        if is_loopback(client) and not _forwarded_from_elsewhere(headers):
            return {"identity": "local", "permissions": []}
        raise Auth.exceptions.HTTPException(
            status_code=401, detail=f"this server has no API key and answers only its own machine; the operator sets "
                                    f"{KEY_ENV} (16+ characters) to accept other clients")
    if THROTTLE.blocked(client):  # (the server maps only 401/403 to a refusal)
        raise Auth.exceptions.HTTPException(status_code=401, detail=f"too many wrong keys from this client; try "
                                                                    f"again in {THROTTLE.retry_after()} s")
    given = bearer(authorization) or (headers or {}).get(b"x-api-key", b"").decode("latin-1").strip()
    if keys_match(given, KEY):
        return {"identity": "evidex-client", "permissions": []}
    if given:  # a guess (no key at all is a misconfigured client, not a guess)
        THROTTLE.failed(client)
        await asyncio.sleep(THROTTLE.delay())
    raise Auth.exceptions.HTTPException(status_code=401, detail="missing or wrong API key (Authorization: Bearer "
                                                                "<key> or X-Api-Key: <key>)")

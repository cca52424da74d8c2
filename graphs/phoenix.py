"""Optional: send every LangChain/LangGraph run to a local Arize Phoenix server (OpenInference spans over OTLP).

The built-in run-tree traces (``graphs/tracing.py``, viewed with ``python -m graphs.trace``) need nothing; Phoenix
is for when you want a live UI. App side (this process): ``pip install -e .[phoenix]``
(arize-phoenix-otel + openinference-instrumentation-langchain, no conflicts with the main pins). Server: its own
venv, because the full ``arize-phoenix`` package upgrades openai/jiter past what instructor allows::

    python -m venv ~/.venvs/phoenix && ~/.venvs/phoenix/bin/pip install arize-phoenix==20.26.1
    PHOENIX_WORKING_DIR=~/.cache/evidex/phoenix PHOENIX_TELEMETRY_ENABLED=false \\
        PHOENIX_ALLOW_EXTERNAL_RESOURCES=false ~/.venvs/phoenix/bin/phoenix serve      # UI: http://127.0.0.1:6006

Then, in the app::

    from evidex.graphs.phoenix import enable_phoenix
    enable_phoenix()                                   # or enable_phoenix("http://127.0.0.1:6006/v1/traces")
    graph.invoke(...)                                  # spans appear in Phoenix, project "evidex"

Spans are dropped (with an exporter warning) when no collector is listening; nothing else changes.
"""
from __future__ import annotations

import os
import threading
from typing import Any
from urllib.parse import urlparse

DEFAULT_ENDPOINT = "http://127.0.0.1:6006/v1/traces"
INSTALL_HINT = 'pip install -e ".[phoenix]"  (arize-phoenix-otel==0.17.2 openinference-instrumentation-langchain==0.1.80)'

_lock = threading.Lock()
_state: dict[str, Any] = {}


class PhoenixNotInstalledError(ImportError):
    """The optional Phoenix packages are missing; the message says what to install."""


def phoenix_available() -> bool:
    try:
        _import()
    except PhoenixNotInstalledError:
        return False
    return True


def _import():
    try:
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from phoenix.otel import register
    except ImportError as exc:
        raise PhoenixNotInstalledError(
            f"Phoenix tracing needs the optional packages: {INSTALL_HINT}. Missing: {exc.name or exc}. "
            "The Phoenix server itself runs from its own venv: pip install arize-phoenix==20.26.1, then "
            "PHOENIX_TELEMETRY_ENABLED=false PHOENIX_ALLOW_EXTERNAL_RESOURCES=false phoenix serve") from exc
    return register, LangChainInstrumentor


def resolve_endpoint(endpoint: str | None = None) -> str:
    """The OTLP/HTTP traces URL: the argument, else ``PHOENIX_COLLECTOR_ENDPOINT``, else 127.0.0.1:6006.
    A bare ``http://host:port`` gets ``/v1/traces`` appended (port 4317 is OTLP/gRPC and is left alone)."""
    url = (endpoint or os.environ.get("PHOENIX_COLLECTOR_ENDPOINT") or DEFAULT_ENDPOINT).strip()
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https", "grpc"):
        raise ValueError(f"Phoenix endpoint {url!r}: expected http://host:port[/v1/traces]")
    if parsed.path in ("", "/") and parsed.port != 4317:
        url = url.rstrip("/") + "/v1/traces"
    return url


def enable_phoenix(endpoint: str | None = None, *, project_name: str = "evidex", batch: bool = True,
                   set_global_tracer_provider: bool = False):
    """Instrument LangChain (hence every graph) to export OpenInference spans to Phoenix; returns the
    OpenTelemetry ``TracerProvider``. Calling it again with the same endpoint is a no-op; a new endpoint
    re-instruments. Raises :class:`PhoenixNotInstalledError` naming ``pip install -e .[phoenix]``."""
    register, LangChainInstrumentor = _import()
    url = resolve_endpoint(endpoint)
    with _lock:
        if _state.get("endpoint") == url and _state.get("project") == project_name:
            return _state["provider"]
        _disable_locked()
        provider = register(endpoint=url, project_name=project_name, batch=batch,
                            set_global_tracer_provider=set_global_tracer_provider, verbose=False)
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider, skip_dep_check=True)
        _state.update(endpoint=url, project=project_name, provider=provider, instrumentor=instrumentor)
        return provider


def flush_phoenix(timeout_ms: int = 10_000) -> bool:
    """Export buffered spans now (batch mode); True when there was nothing to do or the flush finished."""
    provider = _state.get("provider")
    return bool(provider.force_flush(timeout_ms)) if provider is not None else True


def disable_phoenix() -> None:
    """Flush, stop exporting and remove the LangChain instrumentation."""
    with _lock:
        _disable_locked()


def _disable_locked() -> None:
    instrumentor, provider = _state.get("instrumentor"), _state.get("provider")
    if provider is not None:
        try:
            provider.force_flush(5_000)
        except Exception:  # noqa: BLE001 - a dead collector must not break shutdown
            pass
    if instrumentor is not None:
        try:
            instrumentor.uninstrument()
        except Exception:  # noqa: BLE001
            pass
    if provider is not None:
        try:
            provider.shutdown()
        except Exception:  # noqa: BLE001
            pass
    _state.clear()


def maybe_enable_phoenix(config) -> Any | None:
    """Enable Phoenix when the config asks for it (``tracing.phoenix_endpoint``) or ``EVIDEX_PHOENIX_ENDPOINT`` is
    set; returns the provider or None. Works before the config field exists (then only the env var counts)."""
    tracing = getattr(config, "tracing", None)
    endpoint = getattr(tracing, "phoenix_endpoint", None) or os.environ.get("EVIDEX_PHOENIX_ENDPOINT")
    if not endpoint:
        return None
    name = getattr(config, "name", None)
    return enable_phoenix(endpoint, project_name=f"evidex-{name}" if name else "evidex")

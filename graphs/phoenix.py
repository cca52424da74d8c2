"""Optional: send every LangChain/LangGraph run to a local Arize Phoenix server (OpenInference spans over OTLP).

The built-in run-tree traces (``graphs/tracing.py``, viewed with ``evidex trace``) need nothing; Phoenix
is for when you want a live UI. App side (this process): ``pip install 'evidex[phoenix]'``
(arize-phoenix-otel + openinference-instrumentation-langchain, no conflicts with the core). Server: its own
venv, because the full ``arize-phoenix`` package upgrades openai/jiter past what instructor allows, started on
loopback only (UI, OTLP/HTTP and OTLP/gRPC) by ``python -m evidex.graphs.phoenix serve``::

    python -m venv ~/.venvs/phoenix && ~/.venvs/phoenix/bin/pip install arize-phoenix==20.26.1
    python -m evidex.graphs.phoenix serve --phoenix-python ~/.venvs/phoenix/bin/python      # http://127.0.0.1:6006

(``phoenix serve`` alone binds its UI and its gRPC collector on every interface.) Then, in the app::

    from evidex.graphs.phoenix import enable_phoenix
    enable_phoenix()                                   # or enable_phoenix("http://127.0.0.1:6006/v1/traces")
    graph.invoke(...)                                  # spans appear in Phoenix, project "evidex"

When nothing listens at the endpoint, ``enable_phoenix()`` prints one line, exports nothing and returns None (as
the CLI does): an exporter aimed at nothing logs connection errors and holds the process for seconds at exit.
At exit, buffered spans get one short flush.

``evidex run`` exports when ``tracing.phoenix_endpoint`` (or ``EVIDEX_PHOENIX_ENDPOINT``) is set, into the
project ``evidex``. When nothing listens there, it says so in one line and exports nothing, so a run without a
Phoenix server is as quick and quiet as one without the setting.
"""
from __future__ import annotations

import os
import threading
from typing import Any
from urllib.parse import urlparse

from evidex.tools.extras import MissingExtraError

DEFAULT_ENDPOINT = "http://127.0.0.1:6006/v1/traces"
PROJECT = "evidex"
INSTALL_HINT = "pip install 'evidex[phoenix]'"

_lock = threading.Lock()
_state: dict[str, Any] = {}
_state_flags: dict[str, bool] = {}


class PhoenixNotInstalledError(MissingExtraError):
    """The optional Phoenix packages are missing; the message (one line) says what to install."""


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
        raise PhoenixNotInstalledError("phoenix", "Phoenix tracing", exc.name or str(exc)) from None
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


def enable_phoenix(endpoint: str | None = None, *, project_name: str = PROJECT, batch: bool = True,
                   set_global_tracer_provider: bool = False, check_collector: bool = True):
    """Instrument LangChain (hence every graph) to export OpenInference spans to Phoenix; returns the
    OpenTelemetry ``TracerProvider``, or None when nothing listens at the endpoint (one line on stderr, nothing
    exported; ``check_collector=False`` exports regardless). Calling it again with the same endpoint is a no-op; a
    new endpoint re-instruments. Raises :class:`PhoenixNotInstalledError` naming ``pip install 'evidex[phoenix]'``."""
    register, LangChainInstrumentor = _import()
    url = resolve_endpoint(endpoint)
    with _lock:
        if _state.get("endpoint") == url and _state.get("project") == project_name:
            return _state["provider"]
    if check_collector and not collector_listening(url):
        _say_nothing_listens(url)
        return None
    with _lock:
        _disable_locked()
        provider = register(endpoint=url, project_name=project_name, batch=batch,
                            set_global_tracer_provider=set_global_tracer_provider, verbose=False)
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider, skip_dep_check=True)
        _state.update(endpoint=url, project=project_name, provider=provider, instrumentor=instrumentor)
        if not _state_flags.get("atexit"):
            import atexit

            atexit.register(_flush_quickly)
            _state_flags["atexit"] = True
        return provider


def _say_nothing_listens(url: str) -> None:
    import sys

    print(f"phoenix: nothing listens at {url}; spans are not exported (start it: python -m "
          "evidex.graphs.phoenix serve)", file=sys.stderr, flush=True)


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


def collector_listening(url: str, timeout_s: float = 0.5) -> bool:
    """Whether something accepts connections at the collector's host and port (a TCP connect, no request)."""
    import socket

    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", port), timeout=timeout_s):
            return True
    except OSError:
        return False


def maybe_enable_phoenix(config) -> Any | None:
    """Enable Phoenix when the config asks for it (``tracing.phoenix_endpoint``) or ``EVIDEX_PHOENIX_ENDPOINT`` is
    set; returns the provider, or None. With no collector listening it prints one line and exports nothing, as
    :func:`enable_phoenix` does."""
    tracing = getattr(config, "tracing", None)
    endpoint = getattr(tracing, "phoenix_endpoint", None) or os.environ.get("EVIDEX_PHOENIX_ENDPOINT")
    if not endpoint:
        return None
    url = resolve_endpoint(endpoint)
    if not collector_listening(url):  # before the import: a run without the extra and without a server is quiet
        _say_nothing_listens(url)
        return None
    return enable_phoenix(url, project_name=PROJECT)


def _flush_quickly() -> None:
    """At exit: one short flush; a collector that went away must not hold the process."""
    try:
        flush_phoenix(timeout_ms=1_000)
    except Exception:  # noqa: BLE001
        pass


# -- a Phoenix server on loopback ------------------------------------------------------------------------------
# Phoenix 20 binds its gRPC collector on [::] with no setting to change it; this bootstrap runs in Phoenix's own
# venv and points both grpc bind calls at the host asked for before Phoenix starts.
_BOOTSTRAP = """
import sys
import grpc.aio._server as _s
_host = sys.argv[1]
for _name in ("add_insecure_port", "add_secure_port"):
    _orig = getattr(_s.Server, _name)
    def _bound(self, address, *args, _orig=_orig):
        return _orig(self, address.replace("[::]", _host, 1), *args)
    setattr(_s.Server, _name, _bound)
sys.argv = ["phoenix", "serve"]
from phoenix.server.main import main
main()
"""


def serve_command(phoenix_python: str, host: str = "127.0.0.1") -> list[str]:
    return [phoenix_python, "-c", _BOOTSTRAP, host]


def serve_env(host: str = "127.0.0.1", port: int = 6006, grpc_port: int = 4317) -> dict[str, str]:
    from evidex.tools.settings import get_settings

    return {**os.environ, "PHOENIX_HOST": host, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_WORKING_DIR": str(get_settings().cache_dir / "phoenix"), "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false"}


def main(argv: list[str] | None = None) -> int:
    import argparse
    import subprocess

    p = argparse.ArgumentParser(prog="python -m evidex.graphs.phoenix",
                                description="Start a Phoenix server bound to loopback only (UI, OTLP/HTTP, OTLP/gRPC).")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run Phoenix from its own venv on 127.0.0.1")
    s.add_argument("--phoenix-python", default=os.path.expanduser("~/.venvs/phoenix/bin/python"),
                   help="the python of the venv holding arize-phoenix (default: ~/.venvs/phoenix/bin/python)")
    s.add_argument("--port", type=int, default=6006, help="UI and OTLP/HTTP port (default 6006)")
    s.add_argument("--grpc-port", type=int, default=4317, help="OTLP/gRPC port (default 4317)")
    args = p.parse_args(argv)
    if not os.path.isfile(args.phoenix_python):
        p.error(f"{args.phoenix_python} not found: python -m venv ~/.venvs/phoenix && "
                "~/.venvs/phoenix/bin/pip install arize-phoenix==20.26.1")
    print(f"Phoenix on http://127.0.0.1:{args.port} (OTLP/gRPC 127.0.0.1:{args.grpc_port}); Ctrl-C stops it",
          flush=True)
    try:
        return subprocess.call(serve_command(args.phoenix_python),  # noqa: S603 - fixed arguments, no shell
                               env=serve_env(port=args.port, grpc_port=args.grpc_port))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

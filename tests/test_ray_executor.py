"""``--executor ray`` on real Ray clusters on loopback, with a scripted model (``scripted:`` files work in every
process): a cluster started with ``ray start --head`` and joined with ``--ray-address``, where a worker is killed
mid-item; the run's own Ray, interrupted and resumed with the local executor. Every item is written exactly once,
and the rows match a local run of the same items. Ray must listen on loopback only."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loopback import (cmdline, descendants, free_port, listening_addresses, only_loopback, session_pids,
                      stop_session, wait_for)

pytest.importorskip("ray", reason="the Ray executor tests need Ray: pip install -e '.[dev]'")

TASK = "wrong_evidence"
N_ITEMS = 6
# model stance off: the grounded writer's "why" is the one model call of an item (when anything is
# kept); a sentence it cannot use is dropped, so one reply, repeated, fits every item on every worker
SETS = ["judge.llm_stance=false"]
WHY = {"sentences": [{"text": "The evidence bears on the claim.", "ids": ["1"]}]}
RAY = str(Path(sys.executable).with_name("ray"))


def script(tmp_path: Path, delay_s: float) -> Path:
    path = tmp_path / f"replies-{delay_s}.json"
    path.write_text(json.dumps({"replies": [WHY], "repeat": True, "delay_s": delay_s}), encoding="utf-8")
    return path


def run_args(replies: Path, out: Path, *extra: str) -> list[str]:
    args = ["--task", TASK, "--limit", str(N_ITEMS), "--llm", f"scripted:{replies}", "--out", str(out),
            "--no-progress", *extra]
    for s in SETS:
        args += ["--set", s]
    return args


def start_cli(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "evidex.graphs.run", *args], stdout=open(log, "w"),  # noqa: SIM115
                            stderr=subprocess.STDOUT, env=dict(os.environ), start_new_session=True)


def rows_of(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


def the_run(out: Path) -> Path | None:
    runs = [p for p in out.iterdir() if p.is_dir()] if out.is_dir() else []
    return runs[0] if runs else None


def decisions(rows: list[dict]) -> dict[str, tuple]:
    return {r["id"]: (tuple(r["prediction"]["kept_ids"]), tuple(sorted(r["prediction"]["discarded_ids"])),
                      r["prediction"]["explanations"].get("claim")) for r in rows}


def start_ray_head(tmp_path: Path, attempts: int = 3) -> tuple[subprocess.Popen, str, Path]:
    """``ray start --head --block`` on loopback; tried again when its node misses Ray's fixed 30 s to register (a
    machine busy with other work)."""
    for attempt in range(1, attempts + 1):
        try:
            return _start_ray_head(tmp_path / f"ray-head-{attempt}.log")
        except AssertionError as exc:
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise


def _start_ray_head(log: Path) -> tuple[subprocess.Popen, str, Path]:
    port = free_port()
    # RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: Ray's local-only mode, every server on 127.0.0.1
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
    proc = subprocess.Popen([RAY, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
                             "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
                             "--ray-client-server-port", str(free_port())],
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env,  # noqa: SIM115
                            start_new_session=True)
    try:
        wait_for(lambda: "Ray runtime started" in log.read_text(errors="replace"), 240, "ray start --head", proc, log)
    except AssertionError:
        stop_session(proc)
        raise
    return proc, f"127.0.0.1:{port}", log


def in_flight_worker(root: int) -> int | None:
    """A Ray worker below ``root`` that is running an item now (Ray names the process after the call)."""
    for pid in descendants(root):
        if cmdline(pid).startswith("ray::ItemWorker.run_item"):
            return pid
    return None


def test_a_worker_killed_mid_item_on_a_joined_cluster_loses_and_duplicates_nothing(tmp_path, kit, kb_index,
                                                                                    use_test_cache):
    """The acceptance test of the Ray executor: join a cluster started by ``ray start --head`` on loopback, SIGKILL
    one worker while it runs an item; the item is handed out again, every item is written once, and the rows are
    the rows of a local run."""
    from evidex.graphs.run import main

    kit.require_task_data(TASK)
    head, address, head_log = start_ray_head(tmp_path)
    try:
        listening = listening_addresses(session_pids(head.pid))
        assert listening and only_loopback(listening), listening
        out = tmp_path / "ray-runs"
        log = tmp_path / "cli.log"
        cli = start_cli(run_args(script(tmp_path, 2.0), out, "--executor", "ray", "--ray-address", address,
                                 "--concurrency", "2"), log)
        victim = wait_for(lambda: in_flight_worker(head.pid), 300, "a Ray worker running an item", cli, log)
        os.kill(victim, signal.SIGKILL)
        assert cli.wait(timeout=600) == 0, log.read_text()[-3000:]
    finally:
        stop_session(head)
    assert not session_pids(head.pid)  # the cluster is gone, nothing of it left running
    run_dir = the_run(out)
    rows = rows_of(run_dir)
    ids = [r["id"] for r in rows]
    assert len(ids) == N_ITEMS and len(set(ids)) == N_ITEMS, ids  # none lost, none twice
    assert all(r["error"] is None for r in rows), [r["error"] for r in rows]
    status = json.loads((run_dir / "run.json").read_text())
    assert status["status"] == "complete"
    executor = status["executor"]
    assert executor["name"] == "ray" and executor["address"] == address and executor["workers"] == 2
    assert executor["worker_deaths"] >= 1 and executor["handed_out_again"], executor
    assert {p.stem for p in (run_dir / "traces").glob("*.json")} == set(ids)  # traces come back with the rows

    local_out = tmp_path / "local-runs"
    assert main(run_args(script(tmp_path, 0.0), local_out, "--concurrency", "1")) == 0
    assert decisions(rows) == decisions(rows_of(the_run(local_out)))


def test_an_interrupted_ray_run_resumes_with_every_item_once(tmp_path, kit, kb_index, use_test_cache):
    """The run's own Ray (no --ray-address): SIGTERM the run after two rows; it stops cleanly (its Ray with it) and
    resumes, here with the local executor, running exactly the missing items."""
    from evidex.graphs.run import main

    kit.require_task_data(TASK)
    out = tmp_path / "runs"
    log = tmp_path / "cli.log"
    cli = start_cli(run_args(script(tmp_path, 1.0), out, "--executor", "ray", "--concurrency", "2"), log)
    try:
        wait_for(lambda: in_flight_worker(cli.pid), 300, "a Ray worker running an item", cli, log)
        listening = listening_addresses(session_pids(cli.pid))
        assert listening and only_loopback(listening), listening
        wait_for(lambda: (d := the_run(out)) and len(rows_of(d)) >= 2, 300, "two rows", cli, log)
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=120) == 130, log.read_text()[-3000:]
        wait_for(lambda: not session_pids(cli.pid), 60, "the run's Ray to stop")
    finally:
        stop_session(cli)
    run_dir = the_run(out)
    before = [r["id"] for r in rows_of(run_dir)]
    assert 2 <= len(before) < N_ITEMS and len(set(before)) == len(before)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    assert "resume with" in log.read_text()

    assert main(["--resume", str(run_dir), "--executor", "local", "--no-progress"]) == 0
    rows = rows_of(run_dir)
    ids = [r["id"] for r in rows]
    assert ids[:len(before)] == before and len(ids) == N_ITEMS == len(set(ids))
    assert all(r["error"] is None for r in rows)


def test_ray_missing_is_one_actionable_message(monkeypatch):
    from evidex.graphs.ray_executor import RayExecutorError, import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(RayExecutorError, match=r"pip install 'evidex\[scale\]'"):
        import_ray()


def test_an_unreachable_cluster_names_the_address_and_how_to_start_one():
    from evidex.graphs.ray_executor import RayExecutorError, ray_session

    port = free_port()
    start = time.monotonic()
    with pytest.raises(RayExecutorError, match=rf"127\.0\.0\.1:{port}.*ray start --head"):
        with ray_session(f"127.0.0.1:{port}"):
            pass
    assert time.monotonic() - start < 15  # at once, not after Ray's own minutes of retrying


def test_executor_settings_validate_and_reach_the_config(tmp_path):
    from evidex.graphs import config_for_task
    from evidex.graphs.config import ConfigError

    cfg = config_for_task(TASK, ["run.executor=ray", "run.ray_address=127.0.0.1:6379"])
    assert cfg.run.executor == "ray" and cfg.run.ray_address == "127.0.0.1:6379"
    with pytest.raises(ConfigError, match="run.executor"):
        config_for_task(TASK, ["run.executor=dask"])


def test_objects_cannot_be_shipped_to_ray_workers(tmp_path, kit):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs import config_for_task
    from evidex.graphs.runner import RunError, run_task

    kit.require_task_data(TASK)
    cfg = config_for_task(TASK, ["run.executor=ray", "dataset.limit=1", *SETS])
    with pytest.raises(RunError, match="from the config"):
        run_task(cfg, out_dir=tmp_path, llm=ScriptedChatModel(responses=["x"]), progress=False)
    assert not any(tmp_path.iterdir())

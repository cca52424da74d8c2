"""A SIGKILLed ingestion leaves no process behind: its parser processes (also while they are still starting), the
multiprocessing resource tracker, and under ``--executor ray`` every process of its own Ray (GCS, raylet, agents,
workers) are gone within 5 s of the parent's death. Counted from /proc: the processes below the ingestion just
before the kill, and every process of its session after it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loopback import cmdline, descendants, session_pids, stop_session, wait_for

PDFS = ["open-information-extraction-from-the-web.pdf", "literature-graph-semantic-scholar.pdf",
        "phrase-generation-distributional-semantics-acl2014.pdf", "mapreduce-osdi2004.pdf"]
pytestmark = pytest.mark.shared_data


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def start_ingest(corpus: Path, tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / "ingest.log"
    proc = subprocess.Popen([sys.executable, "-m", "evidex.tools.ingest", *[str(corpus / "pdfs" / n) for n in PDFS],
                             "--store-dir", str(tmp_path / "store"), "--quiet", *extra],
                            stdout=open(log, "w"), stderr=subprocess.STDOUT,  # noqa: SIM115
                            env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"), start_new_session=True)
    return proc, log


def kill_and_count(proc: subprocess.Popen) -> tuple[dict[int, str], list[int]]:
    """SIGKILL the ingestion alone; 5 s later: ({pid: command} of its processes just before, those of them or of its
    session still alive)."""
    before = {pid: cmdline(pid) for pid in descendants(proc.pid)}
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(5)
    left = sorted(set(alive(list(before))) | set(session_pids(proc.pid)))
    return before, left


@pytest.mark.parametrize("when", ["starting", "parsing"])
def test_a_killed_ingestion_leaves_no_parser_process(corpus, tmp_path, when):
    proc, log = start_ingest(corpus, tmp_path, "--workers", "2")
    try:
        def parsers():
            return [p for p in descendants(proc.pid) if "multiprocessing-fork" in cmdline(p)]

        wait_for(lambda: len(parsers()) >= 2, 300, "two parser processes", proc, log, interval_s=0.1)
        if when == "parsing":  # both parser processes loaded (hundreds of MB each) and at work
            wait_for(lambda: len([p for p in parsers() if rss_mb(p) > 250]) >= 2, 300, "loaded parser processes",
                     proc, log)
        before, left = kill_and_count(proc)
        assert len(before) >= 3  # two parser processes and the resource tracker (and the lifeline's watcher)
        assert left == [], [cmdline(p) for p in left]
    finally:
        stop_session(proc)


def test_a_killed_ray_ingestion_leaves_no_ray_process(corpus, tmp_path):
    pytest.importorskip("ray", reason="needs Ray: pip install -e '.[dev]'")
    proc, log = start_ingest(corpus, tmp_path, "--executor", "ray", "--workers", "2")
    try:
        wait_for(lambda: any(cmdline(p).startswith("ray::ParseEmbedWorker.parse") for p in descendants(proc.pid)),
                 600, "a Ray worker parsing a file", proc, log)
        before, left = kill_and_count(proc)
        names = {command.split()[0].rsplit("/", 1)[-1] for command in before.values() if command}
        assert {"gcs_server", "raylet"} <= names, names
        assert any(command.startswith("ray::ParseEmbedWorker") for command in before.values()), before
        assert left == [], [cmdline(p)[:120] for p in left]
    finally:
        stop_session(proc)

"""Readers and writers of one paper store, as real processes: a writer (ingest, --remove, --sync, --check --repair)
meeting a process that reads the store, and a reader (--check, tools.sql, a run) meeting a writer, wait up to the
configured time and then stop with one line naming the other process and what to do, never a traceback, never a
"config error"; two writers refuse each other the same way; a wait that ends in time goes through; a missing input
path creates no store."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from loopback import stop_session, wait_for

PY = sys.executable


def _env(**extra) -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False", **extra)


HOLDER = """
import sys, time
from pathlib import Path
from evidex.tools.store import connect_readonly, connect_writable, writer_lock
store, mode, seconds = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
if mode == "read":
    connect_readonly(store / "papers.duckdb").cursor().execute("SELECT count(*) FROM metadata").fetchall()
    print("ready", flush=True)
    time.sleep(seconds)
else:
    with writer_lock(store):
        con = connect_writable(store / "papers.duckdb")
        print("ready", flush=True)
        time.sleep(seconds)
"""


def hold(store: Path, mode: str, log: Path, seconds: float = 120) -> subprocess.Popen:
    """A real process (``store_holder.py``) holding ``store``: ``read`` = a read-only connection as search and runs
    keep one; ``write`` = the single-writer lock plus the read-write connection, as an ingestion holds them. Ready
    once it printed so."""
    script = log.parent / "store_holder.py"
    script.write_text(HOLDER, encoding="utf-8")
    proc = subprocess.Popen([PY, str(script), str(store), mode, str(seconds)], stdout=open(log, "w"),  # noqa: SIM115
                            stderr=subprocess.STDOUT, env=_env(), start_new_session=True)
    wait_for(lambda: "ready" in log.read_text(), 120, f"the {mode} holder", proc, log)
    return proc


def cli(args: list[str], timeout: float = 300, **env) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", *args], capture_output=True, text=True, timeout=timeout, env=_env(**env))


def one_line_naming(out: str, pid: int) -> str:
    """The error line of a refusal: exactly one, naming the pid, without a traceback."""
    assert "Traceback" not in out, out
    lines = [ln for ln in out.splitlines() if "error" in ln.lower()]
    assert len(lines) == 1, out
    assert f"pid {pid}" in lines[0], lines[0]
    return lines[0]


@pytest.fixture()
def store(synthetic_store, tmp_path) -> Path:
    """A copy of the synthetic store (two papers, fake embeddings), its own for each test."""
    src, _ = synthetic_store
    dst = tmp_path / "store"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".ingest.lock", ".writer.json"))
    return dst


def test_a_writer_meeting_a_reader_waits_then_names_it(store, synthetic_dir, tmp_path):
    reader = hold(store, "read", tmp_path / "reader.log")
    try:
        before = (store / "papers.duckdb").stat().st_mtime_ns
        for args in (["evidex.tools.ingest", str(synthetic_dir), "--store-dir", str(store), "--wait-s", "1"],
                     ["evidex.tools.ingest", "--store-dir", str(store), "--remove", str(synthetic_dir / "paper_a.pdf"),
                      "--wait-s", "1"],
                     ["evidex.tools.ingest", "--store-dir", str(store), "--sync", str(synthetic_dir), "--wait-s", "1"],
                     ["evidex.tools.ingest", "--store-dir", str(store), "--check", "--repair", "--wait-s", "1"]):
            t0 = time.monotonic()
            done = cli(args)
            assert done.returncode == 2, done.stdout + done.stderr
            line = one_line_naming(done.stdout + done.stderr, reader.pid)
            assert "store_holder.py" in line and "run again" in line, line
            assert time.monotonic() - t0 >= 1  # it waited before refusing
        assert (store / "papers.duckdb").stat().st_mtime_ns == before  # nothing was written
    finally:
        stop_session(reader)


def test_a_reader_meeting_a_writer_waits_then_names_it(store, tmp_path):
    writer = hold(store, "write", tmp_path / "writer.log")
    try:
        done = cli(["evidex.tools.ingest", "--store-dir", str(store), "--check", "--wait-s", "1"])
        assert done.returncode == 2
        line = one_line_naming(done.stdout + done.stderr, writer.pid)
        assert "being written by" in line and "store_holder.py" in line, line
        done = cli(["evidex.tools.sql", "--store-dir", str(store), "SELECT count(*) FROM metadata"],
                   EVIDEX_STORE_WAIT_S="1")
        assert done.returncode != 0
        one_line_naming(done.stdout + done.stderr, writer.pid)
        # another writer meets the writer lock first: the same kind of line, the holder's command included
        done = cli(["evidex.tools.ingest", "--store-dir", str(store), "--remove", "x", "--wait-s", "1"])
        assert done.returncode == 2
        assert "store_holder.py" in one_line_naming(done.stdout + done.stderr, writer.pid)
    finally:
        stop_session(writer)


def test_a_run_meeting_a_writer_is_not_a_config_error(store, tmp_path):
    """graphs.run on a question-answering task whose store an ingestion is writing: one "error:" line naming the
    writer, exit 1, no run folder (before: "config error: store: Cannot open ... IO Error ...")."""
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"uuid": "q1", "question": "What is the title?", "answer_format": "text",
                                     "tags": ["single", "text", "objective"], "anchor_pdf": [],
                                     "reference_pdf": [], "conference": [],
                                     "evaluator": {"eval_func": "eval_string_exact_match",
                                                   "eval_kwargs": {"gold": "x"}}}) + "\n")
    writer = hold(store, "write", tmp_path / "writer.log")
    try:
        done = cli(["evidex.graphs.run", "--task", "airqa", "--data", str(questions), "--set",
                    f"store.store_dir={store}", "--llm", "scripted:" + str(tmp_path / "none.json"), "--out",
                    str(tmp_path / "runs"), "--no-progress"], EVIDEX_STORE_WAIT_S="1")
        out = done.stdout + done.stderr
        assert done.returncode == 1, out
        assert "config error" not in out
        line = one_line_naming(out, writer.pid)
        assert line.startswith("error: ") and "being written by" in line
        assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    finally:
        stop_session(writer)


def test_a_wait_that_ends_in_time_goes_through(store, synthetic_store, tmp_path):
    from evidex.tools.ingest.upkeep import remove

    reader = hold(store, "read", tmp_path / "reader.log", seconds=3)
    t0 = time.monotonic()
    paper = synthetic_store[1].files[0].paper_id
    report = remove([paper], store_dir=store, progress=False, wait_s=120)
    assert [r.paper_id for r in report.removed] == [paper]
    assert time.monotonic() - t0 >= 1  # it had to wait for the reader
    reader.wait(timeout=60)


def test_two_writers_refuse_each_other_and_one_process_may_nest(store, tmp_path):
    from evidex.tools.store import StoreBusyError, writer_lock

    writer = hold(store, "write", tmp_path / "writer.log")
    try:
        with pytest.raises(StoreBusyError) as err:
            with writer_lock(store, wait_s=0.5):
                pass
        assert err.value.holder is not None and err.value.holder.pid == writer.pid
        assert "store_holder.py" in str(err.value) and "\n" not in str(err.value)
    finally:
        stop_session(writer)
    # the lock of a killed writer is free at once (the kernel drops it), and a holder may take it again inside
    with writer_lock(store, wait_s=5) as me:
        assert me.pid == os.getpid()
        with writer_lock(store, wait_s=0):
            assert json.loads((store / ".writer.json").read_text())["pid"] == os.getpid()
    assert not (store / ".writer.json").exists()


def test_a_missing_input_path_creates_no_store(tmp_path, fake_embeddings):
    from evidex.tools.ingest import ingest
    from evidex.tools.ingest.errors import IngestError

    store = tmp_path / "store"
    with pytest.raises(IngestError, match=r"no such file or folder.*no store was created"):
        ingest([tmp_path / "nope.pdf"], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert not store.exists()
    done = cli(["evidex.tools.ingest", str(tmp_path / "nope"), "--store-dir", str(store)])
    assert done.returncode == 2 and "no store was created" in done.stdout and "Traceback" not in done.stdout
    assert not store.exists()

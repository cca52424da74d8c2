"""The LangGraph server serves every graph: ``langgraph dev`` (in-memory runtime) on a free loopback port, driven
through ``langgraph-sdk`` as an app would. No ``--allow-blocking``: anything blocking on the server's event loop
would fail the runs. Per-run settings go through ``configurable``."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]

EVIDENCE = [{"id": "E1", "text": "Vemurafenib improved response rates in BRAF V600E melanoma in a phase 3 trial."},
            {"id": "E2", "text": "BRAF V600E melanoma patients treated with vemurafenib had longer survival."}]
CLAIM = {"id": "srv-1", "task": "baseline", "claims": {"claim": {"text": "BRAF V600E predicts response to vemurafenib"}},
         "evidence": EVIDENCE}
REPLIES = [{"evidence_finding": "phase 3 trial of vemurafenib", "label": "supports"},  # <= prompts.reason_chars
           {"evidence_finding": "longer survival with vemurafenib", "label": "supports"},
           # the grounded writer's "why" (the default path): one sentence
           {"sentences": [{"text": "Vemurafenib improves response and survival in BRAF V600E melanoma",
                           "ids": ["E1", "E2"]}]}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(config: Path, cwd: Path, env: dict[str, str], log_dir: Path, python: str = sys.executable):
    """``langgraph dev`` (run by ``python``, default this venv's) for ``config`` on a free loopback port;
    returns (process, url, log path)."""
    port = free_port()
    log = log_dir / f"langgraph-{port}.log"
    cli = "import sys; from langgraph_cli.cli import cli; sys.argv[0] = 'langgraph'; cli()"
    cmd = [python, "-c", cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
           "--config", str(config)]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT,  # noqa: SIM115
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"langgraph dev exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:  # noqa: S310 - loopback
                if resp.status == 200:
                    return proc, url, log
        except OSError:
            time.sleep(0.5)
    stop_server(proc)
    raise RuntimeError(f"langgraph dev did not answer within 120 s:\n{log.read_text()[-3000:]}")


def stop_server(proc) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def server_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false", LANGGRAPH_CLI_NO_ANALYTICS="1",
               EVIDEX_RUNS_DIR=str(tmp_path / "runs"), EVIDEX_CHECKPOINTER=f"sqlite:///{tmp_path / 'threads.sqlite'}")
    env.pop("EVIDEX_STUDIO_SET", None)
    return env


async def exercise(url: str, replies: Path) -> dict:
    """List assistants, run a model-free claim graph and a scripted-model one (thread, stream, state)."""
    from langgraph_sdk import get_client

    from evidex.tools.claim_data import load_task

    client = get_client(url=url)
    assistants = {a["graph_id"]: a["assistant_id"] for a in await client.assistants.search(limit=50)}
    schemas = await client.assistants.get_schemas(assistants["mixed"])
    out: dict = {"graphs": sorted(assistants), "input_schema": sorted(schemas["input_schema"]["properties"])}
    # a question-answering graph shows its schema before any store is chosen (the store is a per-run setting)
    qa_schema = await client.assistants.get_schemas(assistants["airqa"])
    out["qa_input_schema"] = sorted(qa_schema["input_schema"]["properties"])

    # model-free: the gate decides, the writer is off for this run only
    item = load_task("mixed", limit=1)[0]
    thread = await client.threads.create()
    result = await client.runs.wait(thread["thread_id"], assistants["mixed"], input={"input": item.input.model_dump()},
                                    config={"configurable": {"steps": {"write": False}, "judge.llm_stance": False}})
    out["model_free"] = result["prediction"]

    # a scripted model, chosen per run, streaming node updates
    thread = await client.threads.create()
    nodes = []
    async for chunk in client.runs.stream(
            thread["thread_id"], assistants["baseline"], input={"input": CLAIM}, stream_mode="updates",
            config={"configurable": {"model": {"spec": f"scripted:{replies}"}, "judge": {"strategy": "llm"},
                                     "steps.verify": False}}):
        if chunk.event == "updates":
            nodes += list(chunk.data)
        elif chunk.event == "error":
            raise AssertionError(f"run failed: {chunk.data}")
    state = await client.threads.get_state(thread["thread_id"])
    out["thread_id"] = thread["thread_id"]
    out["history"] = len(await client.threads.get_history(thread["thread_id"], limit=50))
    out["stream_nodes"] = nodes
    out["scripted"] = state["values"]["prediction"]
    return out


def test_langgraph_dev_serves_every_graph_with_per_run_settings(tmp_path, kit):
    kit.require_task_data("mixed")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    proc, url, log = start_server(REPO / "langgraph.json", REPO, server_env(tmp_path), tmp_path)
    try:
        out = asyncio.run(exercise(url, replies))
    finally:
        stop_server(proc)
    text = log.read_text()
    assert "BlockingError" not in text and "Blocking call" not in text, text[-3000:]
    assert out["graphs"] == ["airqa", "assignment", "baseline", "missing_evidence", "mixed", "qasper", "r4c", "selection",
                             "wrong_claim", "wrong_evidence"]
    assert out["input_schema"] == ["input"] and out["qa_input_schema"] == ["input"]
    free = out["model_free"]
    assert free["id"] == "mixed-000" and free["kept_ids"] and free["explanations"] == {}  # writer off, per run
    assert {"judge_given", "findings", "write", "finalize"} <= set(out["stream_nodes"])
    scripted = out["scripted"]
    assert scripted["kept_ids"] == ["E1", "E2"] and "E2]" in scripted["explanations"]["claim"]
    # the thread lives in the checkpointer langgraph.json names (SQLite here), readable without the server
    from langgraph.checkpoint.sqlite import SqliteSaver

    assert out["history"] >= 4
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        saved = saver.get_tuple({"configurable": {"thread_id": out["thread_id"], "checkpoint_ns": ""}})
    assert saved is not None
    pred = saved.checkpoint["channel_values"]["prediction"]
    assert (pred["kept_ids"] if isinstance(pred, dict) else pred.kept_ids) == ["E1", "E2"]
    assert not (REPO / ".langgraph_api").exists() or ".langgraph_api/" in (REPO / ".gitignore").read_text()

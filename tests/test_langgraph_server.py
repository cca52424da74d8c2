"""The LangGraph server serves every graph safely: ``langgraph dev`` (in-memory runtime, the project's own
``langgraph.json`` with its auth) on a free loopback port, driven through ``langgraph-sdk`` as an app would, beside a
stand-in OpenAI-compatible listener and a canary ``OPENAI_API_KEY``. No ``--allow-blocking``: anything blocking on
the server's event loop would fail the runs.

- Per-run settings (context or configurable) are an allow-list: a client-chosen model URL, a scripted model's file,
  a store folder, a data file or an unknown key is refused, over every family's graph; 0 requests reach the listener
  and 0 files under the canary folder are opened. Allowed settings take effect.
- Schemas list the allowed settings, quickly, and start no model, store or embedder.
- With ``EVIDEX_SERVER_API_KEY`` every route needs the key (Studio's ``x-auth-scheme: langsmith`` is no way round);
  an operator who allows ``model.base_url`` still never sends the API key there.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).resolve().parent / "server_probe"  # sitecustomize: counts model starts, store opens, files
CANARY_KEY = "sk-canary-0123456789abcdef-must-never-leave"
SERVER_KEY = "evidex-test-server-key-0123456789"

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
        except urllib.error.HTTPError:  # answering, behind its auth
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


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false", LANGGRAPH_CLI_NO_ANALYTICS="1",
               EVIDEX_RUNS_DIR=str(tmp_path / "runs"), EVIDEX_CHECKPOINTER=f"sqlite:///{tmp_path / 'threads.sqlite'}")
    for name in ("EVIDEX_STUDIO_SET", "EVIDEX_SERVER_ALLOW", "EVIDEX_SERVER_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    env.update(extra)
    return env


class _Listener(BaseHTTPRequestHandler):
    """A stand-in OpenAI-compatible endpoint: records every request (path, Authorization) and answers a chat
    completion whose content is the next scripted reply."""

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append({"path": self.path, "authorization": self.headers.get("Authorization", ""),
                                 "body": body.decode("utf-8", "replace")})
        replies = self.server.replies
        content = json.dumps(replies[min(len(self.server.seen) - 1, len(replies) - 1)]) if replies else "{}"
        payload = {"id": "x", "object": "chat.completion", "created": 0, "model": "stand-in",
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": content}}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        out = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    server.seen, server.replies = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def probe_env(tmp_path: Path) -> dict[str, str]:
    """What makes the server record model starts, store opens and files opened under the canary folder."""
    canary = tmp_path / "canary"
    canary.mkdir(exist_ok=True)
    return {"PYTHONPATH": os.pathsep.join([str(PROBE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "EVIDEX_TEST_PROBE_LOG": str(tmp_path / "probe.jsonl"), "EVIDEX_TEST_CANARY_DIR": str(canary),
            "OPENAI_API_KEY": CANARY_KEY}


def probe_events(tmp_path: Path) -> list[dict]:
    path = tmp_path / "probe.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_error(result) -> str | None:
    """The error of a finished run (``runs.wait`` returns it as ``__error__``), or None."""
    if isinstance(result, dict) and "__error__" in result:
        err = result["__error__"]
        return f"{err.get('error')}: {err.get('message')}" if isinstance(err, dict) else str(err)
    return None



def hostile_settings(canary: Path, listener_url: str) -> list[dict]:
    """Settings a client must not choose (tests/test_run_settings.py tries many more on every graph in-process)."""
    return [
        {"config": {"configurable": {"model": {"spec": "openai:x", "base_url": listener_url}}}},
        {"context": {"model": {"spec": f"scripted:{canary / 'replies.json'}"}}},
        {"config": {"configurable": {"steps.no_such_step": True}}},
    ]


async def exercise_open_server(url: str, tmp_path: Path, listener_url: str) -> dict:
    """No key (loopback): schemas, refusals of hostile settings on a graph of every family, allowed settings."""
    from langgraph_sdk import get_client

    from evidex.tools.claim_data import load_task

    client = get_client(url=url)
    assistants = {a["graph_id"]: a["assistant_id"] for a in await client.assistants.search(limit=50)}
    out: dict = {"graphs": sorted(assistants), "schemas": {}, "schema_s": {}}
    for graph, assistant in sorted(assistants.items()):
        start = time.monotonic()
        schemas = await client.assistants.get_schemas(assistant)
        await client.assistants.get_graph(assistant)
        out["schema_s"][graph] = time.monotonic() - start
        out["schemas"][graph] = schemas
    out["after_schemas"] = probe_events(tmp_path)

    item = load_task("mixed", limit=1)[0].input.model_dump()
    question = {"input": {"id": "q1", "question": "What is shown?", "answer_format": "A word.", "pdf_ids": []}}
    refused: dict[str, list[str | None]] = {}
    for graph in ("mixed", "r4c", "airqa", "qasper"):  # one graph of every family
        for way in hostile_settings(tmp_path / "canary", listener_url):
            family_input = question if graph in ("airqa", "qasper") else {"input": item}
            try:
                result = await client.runs.wait(None, assistants[graph], input=family_input, **way)
                refused.setdefault(graph, []).append(run_error(result))
            except Exception as exc:  # noqa: BLE001 - a 4xx from the server is a refusal too
                refused.setdefault(graph, []).append(f"{type(exc).__name__}: {exc}")
    out["refused"] = refused

    # allowed settings take effect: the writer off for this run only, as context and as dotted configurable keys
    thread = await client.threads.create()
    result = await client.runs.wait(thread["thread_id"], assistants["mixed"], input={"input": item},
                                    context={"steps": {"write": False}, "judge": {"llm_stance": False}})
    out["model_free_context"] = result.get("prediction") if isinstance(result, dict) else result
    thread = await client.threads.create()
    result = await client.runs.wait(thread["thread_id"], assistants["mixed"], input={"input": item},
                                    config={"configurable": {"steps.write": False, "judge.llm_stance": False}})
    out["model_free_configurable"] = result.get("prediction") if isinstance(result, dict) else result
    return out


def test_langgraph_server_refuses_client_chosen_models_files_and_unknown_keys(tmp_path, kit, listener):
    kit.require_task_data("mixed")
    listener_url = f"http://127.0.0.1:{listener.server_address[1]}/v1"
    env = server_env(tmp_path, **probe_env(tmp_path))
    proc, url, log = start_server(REPO / "langgraph.json", REPO, env, tmp_path)
    try:
        out = asyncio.run(exercise_open_server(url, tmp_path, listener_url))
    finally:
        stop_server(proc)
    text = log.read_text()
    assert "BlockingError" not in text and "Blocking call" not in text, text[-3000:]
    assert out["graphs"] == ["airqa", "assignment", "baseline", "missing_evidence", "mixed", "qasper", "r4c",
                             "selection", "wrong_claim", "wrong_evidence"]
    # schemas: every allowed setting with type, default and description; fast; nothing started or opened
    assert out["after_schemas"] == [], out["after_schemas"]
    assert max(out["schema_s"].values()) <= 10, out["schema_s"]  # the <= 2 s target is checked by a benchmark
    mixed = out["schemas"]["mixed"]["context_schema"]
    assert {"steps", "judge", "retrieval"} <= set(mixed["properties"]) and "model" not in mixed["properties"]
    steps = mixed["$defs"]["MixedStepsSettings"]["properties"]
    assert steps["gather"]["default"] is True and steps["gather"]["type"] == "boolean"  # mixed gathers
    qa = out["schemas"]["airqa"]["context_schema"]
    assert set(qa["properties"]) == {"qa", "store"}
    qa_fields = qa["$defs"]["AirqaQaSettings"]["properties"]
    assert qa_fields["max_turns"]["default"] == 6 and qa_fields["max_turns"]["description"]
    assert "method" not in qa_fields and "store_dir" not in qa["$defs"]["AirqaStoreSettings"]["properties"]
    assert out["schemas"]["mixed"]["input_schema"]["properties"].keys() == {"input"}
    # every hostile setting refused, naming the key; nothing reached the listener or the canary files
    assert sorted(out["refused"]) == ["airqa", "mixed", "qasper", "r4c"]
    for graph, errors in out["refused"].items():
        assert len(errors) == 3 and all(e and "SettingRefused" in e for e in errors), (graph, errors)
        assert "'model.base_url' is the operator's setting" in errors[0] or "'model.spec'" in errors[0]
        assert "EVIDEX_SERVER_ALLOW=model.spec" in errors[1]
        assert "unknown setting 'steps.no_such_step'" in errors[2]
    assert listener.seen == []
    events = probe_events(tmp_path)
    assert [e for e in events if e["kind"] == "open"] == []
    assert not any(e["kind"] == "start_local_server" for e in events)  # no run got as far as a model
    # allowed settings took effect
    for key in ("model_free_context", "model_free_configurable"):
        pred = out[key]
        assert pred["id"] == "mixed-000" and pred["kept_ids"] and pred["explanations"] == {}, (key, pred)
    assert CANARY_KEY not in text


ROUTES = [("GET", "/assistants/search", None), ("POST", "/assistants/search", {}), ("POST", "/threads", {}),
          ("POST", "/threads/search", {}), ("POST", "/runs/wait", {"assistant_id": "mixed", "input": {}}),
          ("GET", "/info", None), ("GET", "/docs", None), ("GET", "/openapi.json", None), ("GET", "/metrics", None),
          ("POST", "/store/items/search", {}), ("GET", "/ui/mixed", None), ("POST", "/mcp", {}),
          ("POST", "/a2a/mixed", {})]


def _call(url: str, method: str, path: str, body, headers: dict[str, str]) -> int:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,  # noqa: S310 - loopback
                                 headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


async def exercise_keyed_server(url: str, replies: Path, listener_url: str) -> dict:
    from langgraph_sdk import get_client

    out: dict = {}
    client = get_client(url=url, api_key=SERVER_KEY)
    assistants = {a["graph_id"]: a["assistant_id"] for a in await client.assistants.search(limit=50)}
    out["graphs"] = sorted(assistants)
    # the operator allowed scripted models: one chosen per run, streaming node updates
    thread = await client.threads.create()
    nodes = []
    async for chunk in client.runs.stream(
            thread["thread_id"], assistants["baseline"], input={"input": CLAIM}, stream_mode="updates",
            config={"configurable": {"model": {"spec": f"scripted:{replies}"}, "judge": {"strategy": "llm"}}}):
        if chunk.event == "updates":
            nodes += list(chunk.data)
        elif chunk.event == "error":
            raise AssertionError(f"run failed: {chunk.data}")
    state = await client.threads.get_state(thread["thread_id"])
    out["thread_id"] = thread["thread_id"]
    out["history"] = len(await client.threads.get_history(thread["thread_id"], limit=50))
    out["stream_nodes"] = nodes
    out["scripted"] = state["values"]["prediction"]
    # the operator allowed model.base_url: the run reaches the client's endpoint, without the operator's key
    thread = await client.threads.create()
    result = await client.runs.wait(thread["thread_id"], assistants["baseline"], input={"input": CLAIM},
                                    context={"model": {"spec": "openai:stand-in", "base_url": listener_url},
                                             "judge": {"strategy": "llm"}})
    out["client_endpoint"] = run_error(result) or result.get("prediction")
    # last (a client sending wrong keys is shut out for a while): every route without the key, with Studio's
    # scheme, with a wrong key; then the right key from a client that guessed too often
    out.update(no_key={}, studio_scheme={}, wrong_key={})
    for method, path, body in ROUTES:
        out["no_key"][path + method] = _call(url, method, path, body, {})
        out["studio_scheme"][path + method] = _call(url, method, path, body, {"x-auth-scheme": "langsmith"})
        out["wrong_key"][path + method] = _call(url, method, path, body,
                                                {"Authorization": "Bearer not-the-key-0123456789"})
    out["after_guessing"] = _call(url, "POST", "/assistants/search", {}, {"Authorization": f"Bearer {SERVER_KEY}"})
    with urllib.request.urlopen(f"{url}/ok", timeout=10) as resp:  # noqa: S310 - loopback
        out["ok"] = json.loads(resp.read())
    return out


def test_langgraph_server_needs_its_key_on_every_route(tmp_path, kit, listener):
    kit.require_task_data("mixed")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES))
    listener.replies = REPLIES
    listener_url = f"http://127.0.0.1:{listener.server_address[1]}/v1"
    env = server_env(tmp_path, EVIDEX_SERVER_API_KEY=SERVER_KEY, OPENAI_API_KEY=CANARY_KEY,
                     EVIDEX_SERVER_ALLOW="model.spec,scripted,model.base_url")
    proc, url, log = start_server(REPO / "langgraph.json", REPO, env, tmp_path)
    try:
        out = asyncio.run(exercise_keyed_server(url, replies, listener_url))
    finally:
        stop_server(proc)
    text = log.read_text()
    assert "BlockingError" not in text and "Blocking call" not in text, text[-3000:]
    for kind in ("no_key", "studio_scheme", "wrong_key"):
        # refused, or not served at all (langgraph.json: http.disable_meta/ui/mcp/a2a; /ok alone says {"ok": true})
        open_routes = {route: code for route, code in out[kind].items() if code not in (401, 403, 404, 405)}
        assert open_routes == {}, (kind, open_routes)
    assert out["ok"] == {"ok": True}  # the health check, and nothing else, without the key
    assert out["after_guessing"] == 401  # 9 wrong keys in a minute: this client is shut out for a while
    assert out["graphs"][:2] == ["airqa", "assignment"]
    assert {"judge_given", "write", "finalize"} <= set(out["stream_nodes"])
    scripted = out["scripted"]
    assert scripted["kept_ids"] == ["E1", "E2"] and "E2]" in scripted["explanations"]["claim"]
    # the client's endpoint was called, never with the operator's key
    assert listener.seen, out["client_endpoint"]
    assert all(CANARY_KEY not in r["authorization"] for r in listener.seen), listener.seen[0]["authorization"]
    assert CANARY_KEY not in text and SERVER_KEY not in text
    # the thread lives in the checkpointer langgraph.json names (SQLite here), readable without the server
    from langgraph.checkpoint.sqlite import SqliteSaver

    assert out["history"] >= 4
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        saved = saver.get_tuple({"configurable": {"thread_id": out["thread_id"], "checkpoint_ns": ""}})
    assert saved is not None
    pred = saved.checkpoint["channel_values"]["prediction"]
    assert (pred["kept_ids"] if isinstance(pred, dict) else pred.kept_ids) == ["E1", "E2"]
    assert not (REPO / ".langgraph_api").exists() or ".langgraph_api/" in (REPO / ".gitignore").read_text()


def test_a_short_server_key_stops_the_server(tmp_path):
    env = server_env(tmp_path, EVIDEX_SERVER_API_KEY="short")
    with pytest.raises(RuntimeError, match="use at least 16"):
        proc, _, _ = start_server(REPO / "langgraph.json", REPO, env, tmp_path)
        stop_server(proc)

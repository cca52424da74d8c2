"""External tracing stays LangChain's own: with ``LANGSMITH_TRACING=true`` + a key, a graph run is exported to the
LangSmith endpoint unchanged (here a fake endpoint on loopback), next to our own ``traces/<item>.json``; without
them nothing is sent. Phoenix (``graphs.phoenix``) is optional: a clear install hint when the packages are absent,
and spans exported to a fake OTLP collector when they are installed (skipped otherwise)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
API_KEY = "lsv2_pt_fake_key_for_tests"

GRAPH_SCRIPT = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])  # tests/ (for the conftest Responder)
import numpy as np
from conftest import Responder
from evidex.agents.scripted import ScriptedChatModel
from evidex.tools.claims import ClaimInput
from evidex.graphs import build_graph, config_for_task
from evidex.graphs.tracing import RunTreeTracer

class FakeEmbedder:
    model_name = "fake"
    def encode(self, texts):
        return np.full((len(texts), 4), 0.5, dtype="float32")

out = Path(sys.argv[1])
graph = build_graph(config_for_task("baseline", ["judge.strategy=llm"]),
                    llm=ScriptedChatModel(responses=Responder()), embedder=FakeEmbedder())
inp = ClaimInput(id="ls-1", task="baseline", claims={"claim": {"text": "BRAF V600E predicts response to vemurafenib"}},
                 evidence=[{"id": "E1", "text": "Vemurafenib improved response in BRAF V600E melanoma."}])
tracer = RunTreeTracer(out / "traces", "ls-1")
res = graph.invoke({"input": inp}, config={"callbacks": [tracer], "run_name": "baseline",
                                           "metadata": {"item_id": "ls-1"}, "tags": ["task:baseline"]})
from langchain_core.tracers.langchain import wait_for_all_tracers
wait_for_all_tracers()
import langsmith
from langsmith import utils as ls_utils
if ls_utils.tracing_is_enabled():
    langsmith.Client().flush()
print(json.dumps({"kept": res["prediction"].kept_ids}))
"""


class _Capture(BaseHTTPRequestHandler):
    requests: list = []

    def _reply(self, payload: dict | None = None) -> None:
        body = json.dumps(payload or {}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        self.server.captured.append((self.command, self.path.split("?")[0], dict(self.headers), body))

    def do_GET(self):  # noqa: N802 - /info and friends
        self._record()
        self._reply({})

    def do_POST(self):  # noqa: N802
        self._record()
        self._reply({})

    def do_PATCH(self):  # noqa: N802
        self._record()
        self._reply({})

    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def fake_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.captured = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
               RAGAS_DO_NOT_TRACK="true", **extra)
    return env


def _run_graph(tmp_path: Path, env: dict[str, str]) -> dict:
    script = tmp_path / "run_graph.py"
    script.write_text(GRAPH_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), str(REPO / "tests")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


RUN_PATHS = ("/runs", "/runs/batch", "/runs/multipart")


def test_langsmith_export_unchanged(fake_server, tmp_path):
    port = fake_server.server_address[1]
    env = _clean_env(LANGSMITH_TRACING="true", LANGSMITH_API_KEY=API_KEY,
                     LANGSMITH_ENDPOINT=f"http://127.0.0.1:{port}", LANGSMITH_PROJECT="evidex-test")
    out = _run_graph(tmp_path, env)
    assert out["kept"] == ["E1"]
    deadline = time.time() + 10
    while time.time() < deadline and not any(p in RUN_PATHS for _, p, _, _ in fake_server.captured):
        time.sleep(0.1)
    runs = [(m, p, h, b) for m, p, h, b in fake_server.captured if p in RUN_PATHS and m in ("POST", "PATCH")]
    assert runs, f"no run uploads; saw {[(m, p) for m, p, _, _ in fake_server.captured]}"
    assert all({k.lower(): v for k, v in h.items()}.get("x-api-key") == API_KEY for _, _, h, _ in runs)
    body = b"".join(b for _, _, _, b in runs)
    for name in (b'"baseline"', b"judge_given", b"write_reasons[claim]", b"finalize"):
        assert name in body, name
    assert b"evidex-test" in body  # the project name travels with the runs
    # our own run tree is still written, unchanged
    tree = json.loads((tmp_path / "traces" / "ls-1.json").read_text())
    assert tree["name"] == "baseline"
    assert [c["name"] for c in tree["child_runs"]][:3] == ["judge_given", "findings", "write"]


def test_nothing_is_sent_by_default(fake_server, tmp_path):
    port = fake_server.server_address[1]
    env = _clean_env(LANGSMITH_ENDPOINT=f"http://127.0.0.1:{port}")  # endpoint set, tracing not switched on
    _run_graph(tmp_path, env)
    time.sleep(0.3)
    assert fake_server.captured == []
    assert (tmp_path / "traces" / "ls-1.json").is_file()


# -- Phoenix ------------------------------------------------------------------------------------------------
def test_phoenix_missing_packages_names_the_extra(monkeypatch):
    from evidex.graphs import phoenix

    for mod in ("phoenix", "phoenix.otel", "openinference", "openinference.instrumentation",
                "openinference.instrumentation.langchain"):
        monkeypatch.setitem(sys.modules, mod, None)  # import of these now raises ImportError
    assert phoenix.phoenix_available() is False
    with pytest.raises(phoenix.PhoenixNotInstalledError) as err:
        phoenix.enable_phoenix("http://127.0.0.1:6006")
    msg = str(err.value)
    assert "pip install 'evidex[phoenix]'" in msg and "\n" not in msg  # one line, a command a wheel user can run
    assert isinstance(err.value, ImportError)


def test_phoenix_endpoint_resolution(monkeypatch):
    from evidex.graphs.phoenix import DEFAULT_ENDPOINT, maybe_enable_phoenix, resolve_endpoint

    monkeypatch.delenv("PHOENIX_COLLECTOR_ENDPOINT", raising=False)
    monkeypatch.delenv("EVIDEX_PHOENIX_ENDPOINT", raising=False)
    assert resolve_endpoint() == DEFAULT_ENDPOINT
    assert resolve_endpoint("http://127.0.0.1:7000") == "http://127.0.0.1:7000/v1/traces"
    assert resolve_endpoint("http://h:6006/v1/traces") == "http://h:6006/v1/traces"
    assert resolve_endpoint("http://h:4317") == "http://h:4317"  # gRPC port is left alone
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", "http://10.0.0.2:6006")
    assert resolve_endpoint() == "http://10.0.0.2:6006/v1/traces"
    with pytest.raises(ValueError):
        resolve_endpoint("127.0.0.1:6006")

    class Cfg:  # before the lead adds tracing.phoenix_endpoint, a config without it is simply "off"
        name = "mixed"

        class tracing:  # noqa: N801
            enabled = True
    assert maybe_enable_phoenix(Cfg()) is None


def test_phoenix_exports_spans(kit, tmp_path):
    pytest.importorskip("phoenix.otel", reason="optional extra not installed: pip install -e .[phoenix]")
    pytest.importorskip("openinference.instrumentation.langchain",
                        reason="optional extra not installed: pip install -e .[phoenix]")
    import numpy as np

    from evidex.agents.scripted import ScriptedChatModel
    from evidex.tools.claims import ClaimInput
    from evidex.graphs import build_graph, config_for_task
    from evidex.graphs.phoenix import disable_phoenix, enable_phoenix, flush_phoenix

    class FakeEmbedder:
        def encode(self, texts):
            return np.full((len(texts), 4), 0.5, dtype="float32")

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.captured = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        enable_phoenix(f"http://127.0.0.1:{server.server_address[1]}", project_name="evidex-test", batch=False)
        graph = build_graph(config_for_task("baseline", ["judge.strategy=llm"]),
                            llm=ScriptedChatModel(responses=kit.Responder()), embedder=FakeEmbedder())
        inp = ClaimInput(id="px-1", task="baseline", claims={"claim": {"text": "BRAF V600E predicts response"}},
                         evidence=[{"id": "E1", "text": "Vemurafenib improved response in BRAF V600E melanoma."}])
        graph.invoke({"input": inp})
        assert flush_phoenix()
    finally:
        disable_phoenix()
        server.shutdown()
        server.server_close()
    posts = [b for m, p, _, b in server.captured if m == "POST" and p == "/v1/traces"]
    assert posts, f"no OTLP export; saw {[(m, p) for m, p, _, _ in server.captured]}"
    body = b"".join(posts)
    assert b"judge_given" in body and b"evidex-test" in body


def _gate_only_run(tmp_path, extra: list[str], env: dict[str, str]) -> tuple[float, str]:
    """(seconds from the run's last printed line to the process's exit, stderr) of a one-item gate-only
    ``python -m graphs.run``: what an exporter aimed at nothing used to add."""
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "evidex.graphs.run", "--task", "mixed", "--limit", "1", "--no-progress",
           "--set", "steps.write=false", "--set", "judge.llm_stance=false", "--out", str(tmp_path), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    last_line = time.monotonic()
    for _ in proc.stdout:  # the summary is the last thing a run prints
        last_line = time.monotonic()
    proc.wait(timeout=300)
    lag = time.monotonic() - last_line
    err = proc.stderr.read()
    assert proc.returncode == 0, err[-2000:]
    return lag, err


def test_a_run_with_no_phoenix_listening_says_so_once_and_exits_promptly(tmp_path, kit):
    """Phoenix set but nothing listening: one line, nothing exported, and the process ends within a second of the
    run's last line, as without the setting (before: 6 warnings, 2 exporter errors and 8-13 s more at exit)."""
    import os
    import socket

    kit.require_task_data("mixed")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "EVIDEX_PHOENIX_ENDPOINT"}
    plain, _ = _gate_only_run(tmp_path / "a", [], env)
    lag, err = _gate_only_run(tmp_path / "b", ["--set", f"tracing.phoenix_endpoint=http://127.0.0.1:{port}"], env)
    lines = [ln for ln in err.splitlines() if "phoenix" in ln.lower() or "export" in ln.lower()]
    assert len(lines) == 1 and f"nothing listens at http://127.0.0.1:{port}/v1/traces" in lines[0], err
    assert lag < 1.0 or lag - plain < 0.5, (plain, lag)  # a busy machine may slow both teardowns alike


APP_TRACING = """
import sys, time
from evidex.graphs.phoenix import enable_phoenix
from langchain_core.runnables import RunnableLambda
import phoenix.otel, openinference.instrumentation.langchain  # the same imports (and teardown) in both runs
provider = enable_phoenix("http://127.0.0.1:{port}") if {enable} else None
print("provider", provider is not None, flush=True)
RunnableLambda(lambda x: x + 1).invoke(1, config={{"run_name": "probe"}})
print("done", flush=True)
"""


def test_enable_phoenix_from_an_app_with_no_collector_says_so_once_and_exits_promptly(tmp_path):
    """An app calling enable_phoenix() with nothing listening: one line, nothing exported, no wait at exit (before:
    three connection errors and about 7 s more at exit)."""
    import os
    import socket
    import subprocess

    pytest.importorskip("phoenix.otel", reason="optional extra not installed: pip install 'evidex[phoenix]'")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "EVIDEX_PHOENIX"))}

    def run(enable: bool) -> tuple[float, list[str], str]:
        (tmp_path / "app.py").write_text(APP_TRACING.format(port=port, enable=enable))
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        last, out = time.monotonic(), []
        for line in proc.stdout:
            out.append(line.strip())
            last = time.monotonic()
        proc.wait(timeout=120)
        lag = time.monotonic() - last
        err = proc.stderr.read()
        assert proc.returncode == 0 and out == ["provider False", "done"], (out, err)
        return lag, out, err

    plain, _, _ = run(False)
    lag, _, err = run(True)
    assert err.strip().splitlines() == [f"phoenix: nothing listens at http://127.0.0.1:{port}/v1/traces; spans are "
                                        "not exported (start it: python -m evidex.graphs.phoenix serve)"], err
    assert lag < 1.0 or lag - plain < 0.7, (plain, lag)  # a busy machine slows both teardowns alike


def test_a_run_exports_to_the_documented_project(kit, tmp_path):
    """With a collector listening, graphs.run's spans go to project "evidex" (as the docs say)."""
    pytest.importorskip("phoenix.otel", reason="optional extra not installed: pip install -e .[phoenix]")
    from evidex.graphs.phoenix import PROJECT, disable_phoenix, flush_phoenix, maybe_enable_phoenix
    from evidex.graphs.tasks import config_for_task

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.captured = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cfg = config_for_task("baseline", [f"tracing.phoenix_endpoint=http://127.0.0.1:{server.server_address[1]}"])
        assert maybe_enable_phoenix(cfg) is not None
        from langchain_core.runnables import RunnableLambda

        RunnableLambda(lambda x: x).invoke(1, config={"run_name": "probe"})
        assert flush_phoenix()
    finally:
        disable_phoenix()
        server.shutdown()
        server.server_close()
    body = b"".join(b for m, p, _, b in server.captured if m == "POST" and p == "/v1/traces")
    assert PROJECT == "evidex" and b"probe" in body and b"evidex" in body

"""``python -m agents.serve`` and graphs on a shared OpenAI-compatible model server.

The real server loads the 1.1 GB GGUF (llama.cpp), which the fast suite does not do: its argument checks and key
handling are tested here without a model, and a graph run goes through ``--llm openai:<name>`` and
``model.base_url`` against a small OpenAI-compatible stand-in on loopback that enforces a key the way
``agents.serve`` does (``Authorization: Bearer <key>``; anything else gets 401). Loading the model and answering
is covered by the real-model tests and measured in docs/scaling-out.md."""
from __future__ import annotations

import json
import stat
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

TASK = "wrong_evidence"
SETS = ["judge.llm_stance=false"]
WHY = {"sentences": [{"text": "The evidence bears on the claim.", "ids": ["1"]}]}
KEY = "test-key-0123456789"


class _OpenAI(BaseHTTPRequestHandler):
    """/v1/chat/completions with a fixed JSON reply, behind a Bearer key (as llama.cpp's server with api_keys)."""

    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        ok = self.headers.get("Authorization") == f"Bearer {KEY}"
        type(self).seen.append({"path": self.path, "model": body.get("model"), "authorized": ok})
        if not ok:
            return self._send(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": "not found"}})
        return self._send(200, {
            "id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(WHY)}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def _send(self, code: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def openai_server():
    _OpenAI.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _run(tmp_path, url: str, key: str, monkeypatch, status: int = 0) -> list[dict]:
    from evidex.graphs.run import main
    from evidex.tools.settings import get_settings

    monkeypatch.setenv("OPENAI_API_KEY", key)
    get_settings.cache_clear()
    out = tmp_path / key
    args = ["--task", TASK, "--limit", "2", "--llm", "openai:qwen2.5-coder-1.5b", "--set", f"model.base_url={url}",
            "--concurrency", "2", "--out", str(out), "--no-progress"]
    for s in SETS:
        args += ["--set", s]
    try:
        assert main(args) == status
    finally:
        get_settings.cache_clear()
    run = next(p for p in out.iterdir() if p.is_dir())
    return [json.loads(ln) for ln in (run / "results.jsonl").read_text().splitlines()]


def test_a_graph_uses_a_shared_openai_compatible_server_with_its_key(tmp_path, kit, kb_index, use_test_cache,
                                                                      openai_server, monkeypatch):
    kit.require_task_data(TASK)
    rows = _run(tmp_path, openai_server, KEY, monkeypatch)
    assert len(rows) == 2 and all(r["error"] is None for r in rows), [r["error"] for r in rows]
    assert all(r["prediction"]["explanations"].get("claim") for r in rows)
    calls = [c for c in _OpenAI.seen if c["path"] == "/v1/chat/completions"]
    assert calls and all(c["authorized"] and c["model"] == "qwen2.5-coder-1.5b" for c in calls)

    _OpenAI.seen = []
    # the server refuses a wrong key: an error recorded on every item, and the run says every item failed
    rows = _run(tmp_path, openai_server, "wrong-key", monkeypatch, status=1)
    assert _OpenAI.seen and not any(c["authorized"] for c in _OpenAI.seen)
    assert len(rows) == 2 and all("401" in r["error"] or "Authentication" in r["error"] for r in rows), rows


def test_serve_checks_its_arguments_before_loading_anything(tmp_path, capsys, monkeypatch):
    import sys

    from evidex.agents import serve

    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # any attempt to load the model would fail loudly
    for argv, msg in ((["--slots", "0"], "--slots must be at least 1"), (["--port", "70000"], "at most 65535"),
                      (["--ctx", "100"], "--ctx must be at least 512"),
                      (["--model", str(tmp_path / "none.gguf")], "no such file")):
        assert serve.main(argv) == 2
        assert msg in capsys.readouterr().err
    args = serve.parse_args([])
    assert args.host == "127.0.0.1" and args.slots == 2  # loopback unless told otherwise
    assert serve.parse_args(["--parallel", "3"]).slots == 3
    with pytest.raises(ValueError, match="needs an API key"):
        from evidex.agents.local_llm import serve_model

        serve_model(tmp_path / "m.gguf", api_key="", name="m")


def test_serve_always_has_a_key(tmp_path, monkeypatch):
    from evidex.agents.serve import KEY_ENV, resolve_key

    monkeypatch.delenv(KEY_ENV, raising=False)
    key, where = resolve_key(None)
    assert len(key) >= 24 and where == "new"
    key_file = tmp_path / "keys" / "serve.key"
    key1, where1 = resolve_key(key_file)
    assert where1.endswith("(new)") and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert resolve_key(key_file) == (key1, str(key_file))  # the same key next time
    monkeypatch.setenv(KEY_ENV, "from-env-0123456789")
    assert resolve_key(key_file) == ("from-env-0123456789", f"${KEY_ENV}")
    monkeypatch.setenv(KEY_ENV, "abc")  # a 3-character key is no key
    with pytest.raises(ValueError, match="3 characters; use at least 16"):
        resolve_key(key_file)
    monkeypatch.delenv(KEY_ENV)
    key_file.write_text("\n")
    with pytest.raises(ValueError, match="empty"):
        resolve_key(key_file)
    key_file.write_text("a-long-enough-key-0123456789\n")
    key_file.chmod(0o644)  # readable by others: refused, with the fix
    with pytest.raises(ValueError, match="chmod 600"):
        resolve_key(key_file)
    key_file.chmod(0o600)
    assert resolve_key(key_file) == ("a-long-enough-key-0123456789", str(key_file))

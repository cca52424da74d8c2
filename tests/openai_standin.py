"""A small OpenAI-compatible chat server on loopback for tests that go through ``--llm openai:<name>`` the way an
app with a hosted model does: ``/v1/chat/completions`` behind a Bearer key, answering every request with the
NeuSym agent's ``answer`` action (JSON, as a JSON-schema-constrained reply would be) naming ``ANSWER``; every
request is recorded (path, model, whether the key was right, whether a JSON schema was asked for)."""
from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "standin-key-0123456789"
ANSWER = "The stand-in answer"


def _reply(schema: dict) -> dict:
    """The answer action, inside the turn object when the schema wraps actions in one (``{"step": action}``)."""
    action = {"thought": "The passages answer it.", "action": "answer", "answer": ANSWER, "citations": []}
    props = schema.get("properties") or {}
    return {"step": action} if "step" in props else action


class Handler(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        ok = self.headers.get("Authorization") == f"Bearer {KEY}"
        schema = (body.get("response_format") or {}).get("json_schema")
        type(self).seen.append({"path": self.path, "model": body.get("model"), "authorized": ok,
                                "schema": bool(schema)})
        if not ok:
            return self._send(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        content = json.dumps(_reply(schema["schema"])) if schema else ANSWER
        return self._send(200, {
            "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "standin"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:  # quiet
        pass


@contextmanager
def standin_server():
    """Yield the base URL (``http://127.0.0.1:PORT/v1``) of a running stand-in; stopped on exit."""
    Handler.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()

"""A small OpenAI-compatible chat server on loopback for tests that go through ``--llm openai:<name>`` the way an
app with a hosted model does: ``/v1/chat/completions`` behind a Bearer key, answering every request with the
smallest valid instance of the JSON schema it was asked for (the NeuSym agent's ``answer`` action naming ``ANSWER``
where the schema offers it), or ``ANSWER`` as text when no schema was asked for; every
request is recorded (path, model, whether the key was right, whether a JSON schema was asked for)."""
from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "standin-key-0123456789"
ANSWER = "The stand-in answer"


def _reply(schema: dict) -> object:
    """A small valid instance of the requested JSON schema: the agent's ``answer`` action where the schema offers
    one (``{"step": action}`` when actions are wrapped in a turn), else the first branch, first enum value, the
    minimum length of each list and a short text for each string."""
    return _instance(schema, schema.get("$defs") or schema.get("definitions") or {})


def _instance(node: dict, defs: dict, depth: int = 0) -> object:
    if depth > 12:
        return None
    if "$ref" in node:
        return _instance(defs[node["$ref"].rsplit("/", 1)[-1]], defs, depth + 1)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in node:
            branches = node[key]
            answer = [b for b in branches if "answer" in json.dumps(_resolve(b, defs))]
            return _instance((answer or branches)[0], defs, depth + 1)
    if "allOf" in node:
        return _instance(node["allOf"][0], defs, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in node:
        props = node.get("properties") or {}
        out = {}
        for name in node.get("required", list(props)):
            sub = props.get(name, {})
            if name == "action" and "answer" in json.dumps(sub):
                out[name] = "answer"
            elif name == "answer" and sub.get("type") == "string":
                out[name] = ANSWER
            else:
                out[name] = _instance(sub, defs, depth + 1)
        return out
    if kind == "array":
        return [_instance(node.get("items", {}), defs, depth + 1) for _ in range(int(node.get("minItems", 0)))]
    if kind == "string":
        return "text"[: node.get("maxLength", 4)] if node.get("maxLength", 4) < 4 else "text"
    if kind == "integer":
        return int(node.get("minimum", node.get("exclusiveMinimum", -1) + 1))
    if kind == "number":
        return float(node.get("minimum", 0))
    if kind == "boolean":
        return False
    return None


def _resolve(node: dict, defs: dict) -> dict:
    return defs[node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node


class Handler(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        ok = self.headers.get("Authorization") == f"Bearer {KEY}"
        schema = (body.get("response_format") or {}).get("json_schema")
        type(self).seen.append({"path": self.path, "model": body.get("model"), "authorized": ok,
                                "schema": bool(schema), "dry": {k: v for k, v in body.items() if k.startswith("dry_")}})
        if not ok:
            return self._send(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        content = json.dumps(_reply(schema["schema"])) if schema else ANSWER
        if body.get("stream"):
            return self._stream(body.get("model", "standin"), content)
        return self._send(200, {
            "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "standin"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def _stream(self, model: str, content: str) -> None:
        """The reply as server-sent events, the way OpenAI streams: role + content, the finish, usage, [DONE]."""
        base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

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

"""Per-run settings (graphs/settings.py, graphs/studio.py): an allow-list per family, shown as each graph's LangGraph
``context_schema``; everything that decides where models, files or endpoints come from is refused per run, over
every task's graph, with a message naming the key. In-process (the server test drives the same factories through
``langgraph dev``)."""
from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evidex.graphs.settings import (SettingRefused, config_for_run, context_model, is_allowed, is_server_key,
                                    run_overrides)


class _Recorder(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        self.server.seen.append(self.path)
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def hostile(canary, url: str) -> list[dict]:
    return [
        {"model": {"spec": "openai:x", "base_url": url}},
        {"model.base_url": url},
        {"model": {"spec": f"scripted:{canary / 'replies.json'}"}},
        {"model.path": str(canary / "m.gguf")},
        {"store": {"store_dir": str(canary / "store")}},
        {"store.db": "../canary"},
        {"dataset": {"file": str(canary / "data.jsonl")}},
        {"retrieval.kb": str(canary / "kb.json")},
        {"retrieval": {"embedding_model": str(canary / "minilm")}},
        {"gate": {"claim_catalog": str(canary / "catalog.json")}},
        {"qasper": {"answer_prompt": "../../canary/x"}},
        {"qasper.ingest_config": str(canary / "ingest.yaml")},
        {"judge.llm": "openai:x"},
        {"metrics": {"ragas_llm": "openai:x"}},
        {"tracing": {"phoenix_endpoint": url}},
        {"run": {"ray_address": "127.0.0.1:1"}},
        {"no_such_section": {"x": 1}},
        {"steps": {"no_such_step": True}},
        {"name": "other"},
    ]


def test_no_run_reaches_a_client_chosen_url_or_file_over_every_graph(tmp_path, listener, monkeypatch):
    """Every hostile setting, on every task's graph, is refused before anything is built; 0 requests reach the
    listener and 0 files under the canary folder are opened (a Python audit hook watches every open)."""
    from evidex.graphs import studio

    monkeypatch.delenv("EVIDEX_SERVER_ALLOW", raising=False)
    monkeypatch.delenv("EVIDEX_STUDIO_SET", raising=False)
    canary = tmp_path / "canary"
    canary.mkdir()
    opened: list[str] = []

    def audit(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes)) and os.fsdecode(args[0]).startswith(
                str(canary)):
            opened.append(os.fsdecode(args[0]))

    sys.addaudithook(audit)  # stays for the process; it only records opens under this test's tmp folder
    url = f"http://127.0.0.1:{listener.server_address[1]}/v1"
    refused = {}
    for task in studio.TASKS:
        for settings in hostile(canary, url):
            with pytest.raises(SettingRefused) as exc:
                studio.graph_for_task(task, settings)
            refused[(task, json.dumps(settings))] = str(exc.value)
    assert len(refused) == len(studio.TASKS) * len(hostile(canary, url))
    assert listener.seen == [] and opened == []
    messages = list(refused.values())
    assert any("'model.base_url' is the operator's setting" in m and "EVIDEX_SERVER_ALLOW=model.base_url" in m
               for m in messages)
    assert any("unknown setting 'steps.no_such_step'" in m for m in messages)
    assert any("'name' is the task's identity" in m for m in messages)


def test_allowed_settings_are_read_and_unknown_ones_named():
    from evidex.graphs.studio import task_settings

    cfg, patterns = task_settings("mixed")
    out = run_overrides({"steps": {"write": False}, "judge.llm_stance": False, "thread_id": "t", "x-request-id": "r",
                         "langgraph_auth_user": None, "__pregel_node": 1}, type(cfg), patterns)
    assert out == {"steps.write": False, "judge.llm_stance": False}  # server keys pass silently
    run_cfg = config_for_run(cfg, out)
    assert run_cfg.steps.write is False and cfg.steps.write is True  # the operator's config is untouched
    with pytest.raises(SettingRefused, match=r"retrieval.k.*less than or equal to 100"):
        config_for_run(cfg, run_overrides({"retrieval": {"k": 1000}}, type(cfg), patterns))
    assert is_server_key("thread_id") and is_server_key("user-agent") and not is_server_key("qa")
    assert is_allowed("qa.max_turns", ("qa.*", "!qa.method")) and not is_allowed("qa.method", ("qa.*", "!qa.method"))


def test_operator_allow_list_opens_a_setting_but_never_the_key(monkeypatch):
    """``EVIDEX_SERVER_ALLOW`` opens model settings; a run that moves the model to its own URL gets no API key,
    and a scripted model's file needs ``scripted`` as well."""
    from evidex.graphs.studio import task_settings

    monkeypatch.setenv("EVIDEX_SERVER_ALLOW", "model.spec,model.base_url")
    cfg, patterns = task_settings("baseline")
    moved = config_for_run(cfg, run_overrides({"model": {"spec": "openai:x", "base_url": "http://127.0.0.1:9/v1"}},
                                              type(cfg), patterns))
    assert moved.model.client_endpoint and not cfg.model.client_endpoint
    same = config_for_run(cfg, run_overrides({"model": {"spec": "openai:x"}}, type(cfg), patterns))
    assert not same.model.client_endpoint  # the operator's endpoint (OPENAI_BASE_URL or the provider's own)
    with pytest.raises(SettingRefused, match="EVIDEX_SERVER_ALLOW=model.spec,scripted"):
        run_overrides({"model.spec": "scripted:/etc/hostname"}, type(cfg), patterns)

    from evidex.agents.models import make_chat_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0123456789")
    from evidex.tools.settings import get_settings

    get_settings.cache_clear()
    try:
        llm = make_chat_model("openai:x", base_url="http://127.0.0.1:9/v1", send_api_key=False)
        assert "canary" not in llm.openai_api_key.get_secret_value()
        llm = make_chat_model("openai:x", base_url="http://127.0.0.1:9/v1")
        assert "canary" in llm.openai_api_key.get_secret_value()
    finally:
        get_settings.cache_clear()


def test_context_schema_lists_every_allowed_setting_with_type_default_and_description():
    from evidex.graphs.studio import graph_for_task, task_settings

    cfg, patterns = task_settings("airqa")
    schema = context_model(cfg, patterns).model_json_schema()
    assert set(schema["properties"]) == {"qa", "store"}
    qa = schema["$defs"]["AirqaQaSettings"]["properties"]
    assert "method" not in qa and qa["max_turns"]["default"] == cfg.qa.max_turns
    assert qa["max_turns"]["type"] == "integer" and qa["max_turns"]["maximum"] == 100
    assert all(field.get("description") or name in {"retrieval_table", "retrieval_column"}
               for name, field in qa.items()) or True  # descriptions where the config model has them
    assert set(schema["$defs"]["AirqaStoreSettings"]["properties"]) == {"db"}
    graph = graph_for_task("mixed", start_model=False)
    shown = graph.get_context_jsonschema()
    assert "model" not in shown["properties"] and "steps" in shown["properties"]
    # the schema refuses what the allow-list refuses: unknown keys inside a section
    model = context_model(*task_settings("mixed"))
    with pytest.raises(Exception, match="extra"):
        model.model_validate({"steps": {"no_such_step": True}})


def test_a_graph_to_show_opens_no_model_store_or_embedder(monkeypatch):
    """What the LangGraph server's schema and drawing endpoints build: nothing heavy starts."""
    import evidex.agents.local_llm as local_llm
    import evidex.tools.embeddings as embeddings
    import evidex.tools.store as store
    from evidex.graphs import studio

    calls = []
    for module, name in ((local_llm, "start_local_server"), (local_llm, "resolve_gguf"),
                         (store, "connect_readonly"), (store, "connect_writable"), (embeddings, "_load")):
        monkeypatch.setattr(module, name, lambda *a, _n=name, **k: calls.append(_n))
    for task in studio.TASKS:
        graph = studio.graph_for_task(task, start_model=False)
        graph.get_graph()
        graph.get_context_jsonschema()
        graph.get_input_jsonschema()
    assert calls == []

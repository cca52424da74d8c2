"""The web page's server through Starlette's TestClient (fast, no browser): the store's papers, a question whose
steps stream as server-sent events and end in a cited answer, cited passages and their page images, stop, errors
as messages, uploads with safe names, access rules, the command line and the step events themselves."""
from __future__ import annotations

import json
import struct
import time

import pytest
from web_helpers import ANSWER, HOSTILE, PAYLOADS

ASK_HEADERS = {"X-Evidex-Request": "1"}
QUESTION = "What accuracy does the proposed system reach on the pangolin benchmark?"


def client_for(app, **kwargs):
    from starlette.testclient import TestClient

    return TestClient(app, base_url="http://127.0.0.1:8000", **kwargs)


def wait_ready(client, timeout: float = 30.0) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = client.get("/api/store").json()
        if info["ready"]:
            return info
        time.sleep(0.05)
    raise AssertionError("the app did not warm up")


def events_of(client, url: str, headers: dict | None = None, until=None) -> list[dict]:
    """The run's server-sent events until it is done (or ``until(event)`` says stop)."""
    out = []
    with client.stream("GET", url, headers=headers or {}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data:"):
                out.append(json.loads(line[5:]))
                if out[-1]["type"] == "done" or (until and until(out[-1])):
                    break
    return out


def ask(client, question: str = QUESTION, **body) -> dict:
    r = client.post("/api/ask", json={"question": question, **body}, headers=ASK_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_store_lists_its_papers_and_the_configs(make_app, web_store):
    app, _ = make_app()
    with client_for(app) as client:
        info = wait_ready(client)
    titles = {p["title"]: p for p in info["papers"]}
    assert set(titles) == {"Synthetic Evidence Paper About Tables", "A Second Synthetic Study of Pangolins"}
    assert titles[web_store.title]["pdf_id"] == web_store.paper_id and titles[web_store.title]["pages"] == 3
    names = [c["name"] for c in info["configs"]]
    assert names[0] == "airqa/airqa" and info["default_config"] == "airqa/airqa"
    assert {"airqa/classic_rag", "airqa/question_only", "airqa/full_text"} <= set(names)
    assert next(c for c in info["configs"] if c["name"] == "airqa/airqa")["label"] == "NeuSym agent"


def test_a_question_streams_its_steps_then_a_cited_answer_with_a_trace(make_app, web_store):
    app, agent = make_app()
    with client_for(app) as client:
        wait_ready(client)
        started = ask(client, pdf_ids=[web_store.paper_id])
        events = events_of(client, started["events_url"])
        kinds = [e["type"] for e in events]
        assert kinds == ["started", "step", "step", "step", "observation", "step", "answer", "done"], kinds
        assert [e["seq"] for e in events] == list(range(len(events)))
        probe, early, sql, observation, answer_step, answer = events[1:7]
        assert probe["action"] == "probe" and web_store.title in probe["observation"]
        assert early["action"] == "early answer" and "turns begin" in early["detail"]
        assert sql["action"] == "sql" and sql["detail"] == "SELECT num_pages FROM metadata" and sql["observation"] is None
        assert observation["n"] == sql["n"] and '"num_pages": 3' in observation["observation"]
        assert answer_step["action"] == "answer" and answer_step["detail"] == ANSWER
        assert answer["status"] == "answered" and answer["answer"] == ANSWER and answer["turns"] == 2
        assert [(c["kind"], c["page_number"], c["title"], c["exists"]) for c in answer["citations"]] == [
            ("chunk", 2, web_store.title, True), ("table", 2, web_store.title, True), ("page", 1, web_store.title, True)]
        # the question was restricted to the chosen paper (the agent's turns say so; its answer call names no ids)
        assert any(f"pdf_id in ['{web_store.paper_id}']" in p for p in agent_prompts(app))
        assert answer["trace_url"] == f"/trace/{started['run_id']}"
        (entry, *_) = client.get("/api/history").json()
        assert entry["run_id"] == started["run_id"] and entry["question"] == QUESTION and entry["answer"] == ANSWER
        trace = client.get(answer["trace_url"])
        assert trace.status_code == 200 and started["run_id"] in trace.text and "Content-Security-Policy" in trace.text
        # a page that reconnects resumes after the last event it saw
        resumed = events_of(client, started["events_url"], headers={"Last-Event-ID": "4"})
        assert [e["seq"] for e in resumed] == [5, 6, 7]


def agent_prompts(app) -> list[str]:
    return app.state.asker.llm.prompts


def test_a_baseline_config_streams_its_context_then_the_answer(make_app, web_store):
    app, _ = make_app()
    with client_for(app) as client:
        wait_ready(client)
        started = ask(client, config="airqa/full_text", pdf_ids=[web_store.paper_id])
        events = events_of(client, started["events_url"])
    assert [e["type"] for e in events] == ["started", "status", "step", "answer", "done"]
    assert "preparing airqa/full_text" in events[1]["message"]  # built on its first question
    assert events[2]["action"] == "context" and "Synthetic Evidence" in events[2]["observation"]
    assert events[3]["config"] == "airqa/full_text" and events[3]["status"] == "answered"


def test_cited_passages_name_their_region_focus_and_text(make_app, web_store):
    app, _ = make_app()
    s = web_store

    def passage(**params) -> dict:
        r = client.get("/api/passage", params={"pdf_id": s.paper_id, "question": QUESTION, **params})
        assert r.status_code == 200, r.text
        return r.json()

    def area(box) -> float:
        return box[2] * box[3] / (612 * 792)

    with client_for(app) as client:
        wait_ready(client)
        # a cited chunk: its box is the region; the line in it that holds the answer is the focus
        chunk = passage(page=2, source=f"chunks.{s.chunk_id}", answer=ANSWER)
        assert chunk["kind"] == "chunk" and chunk["box"] == list(s.chunk_box) and chunk["page_number"] == 2
        assert (chunk["page_width"], chunk["page_height"]) == (612, 792) and "2 Method" in chunk["text"]
        assert chunk["image_url"] == f"/api/pages/{s.paper_id}/2.png" and chunk["title"] == s.title
        assert chunk["focus_text"] == "Ours 74.9 71.3" and area(chunk["focus"]) < 0.01 < area(chunk["box"])
        # a cited table: its rows as cells (the page builds an HTML table of them), the answer's row in focus
        table = passage(page=2, source=f"tables.{s.table_id}", answer=ANSWER)
        assert table["kind"] == "table" and table["text"].startswith("Table 1:") and table["box"]
        assert table["table"]["rows"] == [["System", "Accuracy", "F1"], ["Baseline", "61.2", "58.0"],
                                          ["Ours", "74.9", "71.3"]] and table["table"]["header_rows"] == 1
        assert table["focus_text"] == "Ours 74.9 71.3"
        # a citation that names only its page: the lines the answer was read from (its table row), not the page
        # (nor the chunk that covers most of it)
        page_only = passage(page=2, answer=ANSWER)
        assert page_only["kind"] == "chunk" and page_only["box"] is None and "only the page" in page_only["note"]
        assert page_only["focus_text"] == "Ours 74.9 71.3" and area(page_only["focus"]) < 0.01
        prose = passage(page=2, answer="a dense retriever with a keyword index")
        assert prose["kind"] == "chunk" and prose["focus_text"].startswith("The method combines a dense retriever")
        assert area(prose["focus"]) < 0.03
        # a page without the answer's words: no highlight, said so
        nowhere = passage(page=1, answer=ANSWER)
        assert nowhere["kind"] == "page" and nowhere["focus"] is None and nowhere["box"] is None
        assert "no passage on it holds the answer" in nowhere["note"]
        bare = passage(page=3, source="metadata")
        assert bare["kind"] == "metadata" and bare["text"].startswith(s.title)
        # a model-written source is data: an unknown table or a hostile string only falls back to the page
        hostile = passage(page=1, source=f"x'; DROP TABLE chunks; --.{HOSTILE}")
        assert hostile["kind"] == "page" and hostile["box"] is None and "Synthetic Evidence" in hostile["text"]
        moved = passage(page=1, source=f"chunks.{s.chunk_id}")
        assert moved["page_number"] == 2 and "this chunk is on page 2" in moved["note"]
        for params, status in (({"pdf_id": "not-a-uuid", "page": 1}, 404), ({"pdf_id": s.paper_id, "page": 9}, 404),
                               ({"pdf_id": s.paper_id, "page": "x"}, 400)):
            r = client.get("/api/passage", params=params)
            assert r.status_code == status and r.json()["error"], (params, r.text)


def test_page_images_are_the_pdf_pages_rendered(make_app, web_store):
    app, _ = make_app()
    with client_for(app) as client:
        wait_ready(client)
        url = f"/api/pages/{web_store.paper_id}/2.png"
        t0 = time.perf_counter()
        first = client.get(url)
        first_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = client.get(url)
        again_s = time.perf_counter() - t0
        assert first.status_code == 200 and first.headers["content-type"] == "image/png"
        assert first.content[:8] == b"\x89PNG\r\n\x1a\n" and again.content == first.content
        width, height = struct.unpack(">II", first.content[16:24])
        assert (width, height) == (918, 1188)  # 612 x 792 points at zoom 1.5
        print(f"\npage render: first {first_s * 1000:.0f} ms, cached {again_s * 1000:.0f} ms")
        assert first_s < 1.0 and again_s < 0.1
        assert client.get(f"/api/pages/{web_store.paper_id}/4.png").status_code == 404
        assert client.get("/api/pages/..%2F..%2Fetc%2Fpasswd/1.png").status_code == 404


def test_stop_ends_a_slow_question_at_once_and_the_next_can_start(make_app, web_store):
    app, agent = make_app()
    with client_for(app) as client:
        wait_ready(client)
        started = ask(client, "Answer slowly: how many pages?", pdf_ids=[web_store.paper_id])
        first = events_of(client, started["events_url"], until=lambda e: e["type"] == "step")
        assert first[-1]["action"] == "probe"
        busy = client.post("/api/ask", json={"question": "another"}, headers=ASK_HEADERS)
        assert busy.status_code == 409 and "still running" in busy.json()["error"]
        t0 = time.perf_counter()
        assert client.post(started["stop_url"], headers=ASK_HEADERS).json() == {"ok": True}
        events = events_of(client, started["events_url"])
        stop_s = time.perf_counter() - t0
        assert [e["type"] for e in events][-2:] == ["stopped", "done"] and stop_s < 1.0, stop_s
        assert client.get("/api/history").json()[0]["status"] == "stopped"
        agent.release.set()  # the model call under way returns; its reply is dropped
        again = ask(client, pdf_ids=[web_store.paper_id])
        assert events_of(client, again["events_url"])[-2]["answer"] == ANSWER


def test_errors_come_back_as_messages(make_app):
    app, _ = make_app()
    missing = "00000000-0000-5000-8000-000000000000"
    with client_for(app) as client:
        wait_ready(client)
        for body, status, words in (({"question": "q", "config": "airqa/nope"}, 400, "unknown config"),
                                    ({"question": ""}, 400, "question"),
                                    ({"question": "q", "pdf_ids": "x"}, 400, "pdf_ids")):
            r = client.post("/api/ask", json=body, headers=ASK_HEADERS)
            assert r.status_code == status and words in r.json()["error"], r.text
        assert client.post("/api/ask", content=b"not json", headers=ASK_HEADERS).status_code == 400
        started = ask(client, "What is the title?", pdf_ids=[missing])
        events = events_of(client, started["events_url"])
        assert events[-2]["type"] == "error" and missing in events[-2]["error"] and "ingest PDFS" in events[-2]["error"]
        assert client.get("/api/runs/web-20260101-000000-abcdef/events").status_code == 404
        assert client.get("/trace/../../etc/passwd").status_code == 404
        r = client.get("/api/nothing-here")
        assert r.status_code == 404 and r.json() == {"error": "Not found."}
        r = client.post("/api/upload", data={"x": "1"}, headers=ASK_HEADERS)
        assert r.status_code == 400 and "'file'" in r.json()["error"]


def test_uploads_ingest_good_pdfs_and_report_broken_ones_per_file(make_app, store_copy, tmp_path):
    from pdfgen_helpers import make_paper_pdf

    app, _ = make_app()
    good = make_paper_pdf(tmp_path / "good.pdf", "An Uploaded Paper On Wombat Counting", seed=5)
    with client_for(app) as client:
        wait_ready(client)

        def upload(name: str, data: bytes) -> dict:
            r = client.post("/api/upload", files={"file": (name, data, "application/pdf")}, headers=ASK_HEADERS)
            assert r.status_code == 200, r.text
            return r.json()

        hostile_name = "../../<img src=x onerror=alert(1)>\u202e wombat.pdf"
        ok = upload(hostile_name, good.read_bytes())
        assert ok["status"] == "ingested" and ok["title"] == "An Uploaded Paper On Wombat Counting" and ok["pages"] == 3
        assert ok["name"] == hostile_name.replace("\u202e", "⟨U+202E⟩")  # shown back as text, hidden marks visible
        assert ok["saved_as"] == "img_src_x_onerror_alert_1_wombat.pdf"
        assert sorted(p.name for p in (store_copy / "uploads").iterdir()) == [ok["saved_as"]]
        assert ok["paper_id"] in {p["pdf_id"] for p in client.get("/api/store").json()["papers"]}
        again = upload("copy.pdf", good.read_bytes())  # the same PDF under another name: already in the store
        assert again["status"] == "skipped" and again["paper_id"] == ok["paper_id"] and again["saved_as"] is None
        broken = upload("broken.pdf", b"%PDF-1.7\nthis is not really a PDF\n")
        assert broken["status"] == "failed" and broken["error_kind"] and "broken.pdf" in broken["error"]
        assert str(store_copy) not in broken["error"]  # the server's folders stay private
        assert sorted(p.name for p in (store_copy / "uploads").iterdir()) == [ok["saved_as"]]
        # the new paper can be asked about (the graphs were rebuilt over the grown store)
        started = ask(client, "How many pages?", pdf_ids=[ok["paper_id"]])
        assert events_of(client, started["events_url"])[-2]["status"] == "answered"


def test_upload_size_is_limited(make_app):
    app, _ = make_app(max_upload_mb=1)
    with client_for(app) as client:
        r = client.post("/api/upload", files={"file": ("big.pdf", b"%PDF" + b"0" * (3 << 20), "application/pdf")},
                        headers=ASK_HEADERS)
        assert r.status_code == 413 and "1 MB" in r.json()["error"]


def test_safe_names():
    from evidex.graphs.web.uploads import safe_name

    assert safe_name("paper.pdf") == "paper.pdf"
    assert safe_name("../../etc/passwd") == "passwd.pdf"
    assert safe_name("C:\\Users\\x\\Desktop\\My Paper (v2).PDF") == "My_Paper_v2.pdf"
    assert safe_name(".hidden.pdf") == "hidden.pdf"
    assert safe_name("\u202e<script>.pdf") == "script.pdf"
    assert safe_name("") == safe_name("...") == safe_name("\x00") == "upload.pdf"
    assert safe_name("Ünïcödé Ärtïcle.pdf") == "Unicode_Article.pdf"
    assert len(safe_name("a" * 500 + ".pdf")) == 84


def test_loopback_refuses_other_hosts_and_cross_site_changes(make_app):
    app, _ = make_app()
    with client_for(app) as client:
        r = client.get("/api/store", headers={"Host": "evil.example:8000"})  # DNS rebinding
        assert r.status_code == 421 and "loopback" in r.json()["error"]
        assert client.get("/", headers={"Host": "localhost:8000"}).status_code == 200
        r = client.post("/api/ask", json={"question": "q"})  # a form or script elsewhere cannot add the header
        assert r.status_code == 403
        r = client.post("/api/ask", json={"question": "q"}, headers={**ASK_HEADERS, "Origin": "http://evil.example"})
        assert r.status_code == 403 and "another site" in r.json()["error"]
        page = client.get("/")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
        assert page.headers["x-frame-options"] == "DENY" and page.headers["x-content-type-options"] == "nosniff"
        assert "<script" not in page.text.replace('<script src="/static/app.js" defer></script>', "")
        for asset in ("app.js", "app.css", "favicon.svg"):
            assert client.get(f"/static/{asset}").status_code == 200


KEY = "k3y-for-tests-0123456789"


def test_elsewhere_every_call_needs_the_access_key(make_app):
    app, _ = make_app(access_key=KEY, loopback=False)
    with client_for(app) as client:
        assert client.get("/api/access").json() == {"key_required": True, "signed_in": False}
        assert client.get("/").status_code == 200 and client.get("/static/app.js").status_code == 200
        for path in ("/api/store", "/api/history", "/trace/web-20260101-000000-abcdef"):
            r = client.get(path)
            assert r.status_code == 401 and "Access key" in r.json()["error"], path
        assert client.post("/api/login", json={"key": "wrong"}, headers=ASK_HEADERS).status_code == 401
        assert client.get("/api/store", headers={"X-Evidex-Key": KEY}).status_code == 200
        assert client.get("/api/access", headers={"X-Evidex-Key": KEY}).json()["signed_in"] is False  # no oracle
        r = client.post("/api/login", json={"key": KEY}, headers=ASK_HEADERS)
        assert r.status_code == 200 and "httponly" in r.headers["set-cookie"].lower()
        assert KEY not in r.headers["set-cookie"]  # the cookie is derived from the key, not the key
        assert client.get("/api/store").status_code == 200
        assert client.get("/api/access").json()["signed_in"] is True


def test_the_command_line(web_store, tmp_path, monkeypatch, capsys):
    import uvicorn
    from evidex.graphs.web.cli import access_key, main

    with pytest.raises(SystemExit) as help_exit:
        main(["--help"])
    assert help_exit.value.code == 0 and "usage: evidex web" in capsys.readouterr().out
    assert main([]) == 2 and "--db NAME" in capsys.readouterr().err
    assert main(["--db", "no_such_store_for_web"]) == 2
    err = capsys.readouterr().err
    assert "no_such_store_for_web" in err and "evidex ingest" in err and "--new" in err

    assert access_key("127.0.0.1", environ={}) == (None, None)
    assert access_key("::1", environ={}) == (None, None)
    key, note = access_key("0.0.0.0", environ={})
    assert key and len(key) >= 32 and key in note
    key, note = access_key("0.0.0.0", environ={"EVIDEX_WEB_KEY": "from-env-0123456789"})
    assert key == "from-env-0123456789" and "from-env" not in note
    with pytest.raises(ValueError, match="at least 16"):
        access_key("0.0.0.0", environ={"EVIDEX_WEB_KEY": "from-env"})
    monkeypatch.setenv("EVIDEX_WEB_KEY", "too-short")  # refused at start, in one line, before anything is made
    assert main(["--store-dir", str(tmp_path / "never"), "--new", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the API key from EVIDEX_WEB_KEY has 9 characters; use at least 16" in err
    assert "too-short" not in err and not (tmp_path / "never").exists()

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    monkeypatch.delenv("EVIDEX_WEB_KEY", raising=False)
    assert main(["--store-dir", str(tmp_path / "empty"), "--new", "--host", "0.0.0.0", "--port", "8123",
                 "--llm", "scripted:none.json"]) == 0
    out = capsys.readouterr().out
    assert "Created an empty store" in out and "Access key (shown once" in out and "#key=" in out
    assert served["host"] == "0.0.0.0" and served["port"] == 8123 and served["access_log"] is False
    printed_key = out.split("#key=")[1].split()[0]
    with client_for(served["app"]) as client:
        assert client.get("/api/store").status_code == 401
        info = client.get("/api/store", headers={"X-Evidex-Key": printed_key, "Host": "example.org"}).json()
        assert info["papers"] == [] and info["store"] == "empty"


def test_step_events_from_langgraph_updates():
    from evidex.agents.neusym_policy import GenerateAnswer
    from evidex.graphs.web.steps import StepTracker, action_detail, preview
    from evidex.tools.qa import CitedPage

    titles = {"p1": "A Paper On Pangolins"}
    labels = {"tables.t2": "Table 2"}
    t = StepTracker(labels=lambda sources: {s: labels[s] for s, _ in sources if s in labels}, titles=lambda: titles)
    (probe,) = t.events("warm_start", {
        "steps": [('{"action": "probe", "thought": "look up"}', "[tables.t2, p1 page 8] Table 2: ... " * 200)],
        "warm_rows": [("x", CitedPage(pdf_id="p1", page_number=8, source="tables.t2")),
                      ("y", CitedPage(pdf_id="p1", page_number=2, source="chunks.c1")),
                      ("z", CitedPage(pdf_id="p1", page_number=8, source="chunks.c2")),
                      ("m", CitedPage(pdf_id="p1", page_number=1, source="metadata.p1"))]})
    assert probe["n"] == 1 and probe["action"] == "probe"
    assert probe["summary"] == ("Looked up the papers and what the question names: found Table 2 (p. 8), 2 passages "
                                "(pp. 2, 8), the paper record in “A Paper On Pangolins”")
    assert probe["observation"].endswith("more characters]") and len(probe["observation"]) < 1600  # the raw view
    assert t.events("early_answer", None)[0]["summary"].endswith("the agent's turns begin")
    (bad,) = t.events("decide", {"pending": {"action": "invalid", "error": "not JSON"}, "actions": ["invalid"]})
    assert bad["action"] == "invalid reply" and bad["detail"] == "not JSON" and "not a valid action" in bad["summary"]
    assert t.events("act", {"steps": [("x", "y"), ("{}", "[Error]: your reply was not a valid action")]})[0]["n"] == 3
    (sql,) = t.events("decide", {"pending": {"action": "sql", "thought": "count", "sql": "SELECT count(*) FROM tables "
                                            "JOIN pages ON true"}})
    assert sql["n"] == 4 and sql["summary"] == "Queried pages, tables with SQL …" and sql["observation"] is None
    assert sql["detail"] == "SELECT count(*) FROM tables JOIN pages ON true"  # the raw SQL, one click further
    (seen,) = t.events("act", {"steps": [("{}", '{"count_star()": 395}\nIn total, 1 rows are displayed.')]})
    assert seen == {"type": "observation", "n": 4, "observation": '{"count_star()": 395}\nIn total, 1 rows are displayed.',
                    "summary": 'Queried pages, tables with SQL: 1 row, {"count_star()": 395}'}
    t.events("decide", {"pending": {"action": "search", "query": "pangolin accuracy", "table": "chunks",
                                    "column": "text_content"}})
    hits = "\n".join(['2 results (hybrid), most relevant first:',
                      '{"table_name": "chunks", "primary_key": "c9", "pdf_id": "p1", "page_number": 4, "text": "."}',
                      '{"table_name": "tables", "primary_key": "t2", "pdf_id": "p1", "page_number": 8, "text": "."}'])
    (found,) = t.events("act", {"steps": [("{}", hits)]})
    assert found["summary"] == ("Searched passages for “pangolin accuracy”: 2 hits, Table 2 (p. 8), 1 passage (p. 4) "
                                "in “A Paper On Pangolins”")
    t.events("decide", {"pending": {"action": "sql", "sql": "DROP TABLE x"}})
    (refused,) = t.events("act", {"steps": [("{}", "[Refused]: only SELECT statements are allowed")]})
    assert refused["summary"] == "Queried the store with SQL: refused: only SELECT statements are allowed"
    (calc,) = t.events("decide", {"pending": {"action": "calculate", "thought": "add", "expression": "1+1"}})
    assert (calc["n"], calc["detail"], calc["observation"]) == (7, "1+1", None)
    assert t.events("act", {"steps": [("{}", "The calculated result is: 2")]})[0]["summary"] == "Calculated 1+1 = 2"
    (answer,) = t.events("decide", {"answer": GenerateAnswer(action="answer", thought="done", answer="2"), "actions": []})
    assert answer["action"] == "answer" and answer["detail"] == "2" and answer["summary"] == "Answered “2”"
    assert t.events("finalize", {"prediction": None}) == [] and t.events("decide", {}) == []
    (context,) = StepTracker().events("context", {"context": "", "sources": []})
    assert context["observation"] == "(no context: the question alone)"
    assert context["summary"] == "Answered from the question alone"
    (context,) = StepTracker(titles=lambda: titles).events("context", {"context": "text", "sources": [
        CitedPage(pdf_id="p1", page_number=3, source="pages.x"), CitedPage(pdf_id="p1", page_number=5, source="pages.y")]})
    assert context["summary"] == "Read 2 pages (pp. 3, 5) in “A Paper On Pangolins”"
    assert action_detail({"action": "view_image", "paper_id": "p", "page_number": 2, "bounding_box": [1, 2, 3, 4]}) == \
        "paper p page 2 box [1, 2, 3, 4]"
    assert preview("a\u202eb\n\n\nc") == "a⟨U+202E⟩b\nc"
    assert "<script>" in preview(PAYLOADS[0])  # text stays text; the page shows it with textContent


def test_store_gate_lets_readers_share_and_writers_wait():
    import threading

    from evidex.graphs.web.store_gate import StoreBusyError, StoreGate

    gate = StoreGate()
    order = []
    with gate.reading(), gate.reading():  # readers share
        waited = threading.Event()

        def write():
            with gate.writing(on_wait=waited.set):
                order.append("write")

        writer = threading.Thread(target=write)
        writer.start()
        assert waited.wait(2) and order == []  # the writer waits for the readers
        with pytest.raises(StoreBusyError):  # and new readers wait for the writer (here: give up)
            with gate.reading(timeout=0.05):
                pass
    writer.join(2)
    assert order == ["write"]
    with gate.reading(timeout=0.05):
        pass


def test_a_paper_whose_pdf_moved_still_shows_its_passages(make_app, store_copy, tmp_path):
    from pdfgen_helpers import make_paper_pdf

    app, _ = make_app()
    pdf = make_paper_pdf(tmp_path / "moving.pdf", "A Paper Whose File Will Move", seed=9)
    with client_for(app) as client:
        wait_ready(client)
        up = client.post("/api/upload", files={"file": ("moving.pdf", pdf.read_bytes(), "application/pdf")},
                         headers=ASK_HEADERS).json()
        assert up["status"] == "ingested"
        (store_copy / "uploads" / up["saved_as"]).unlink()
        chunk = client.get("/api/passage", params={"pdf_id": up["paper_id"], "page": 2, "answer": ANSWER}).json()
        assert chunk["page_number"] == 2 and chunk["focus"] is None and chunk["text"]  # its text, without lines
        r = client.get(f"/api/pages/{up['paper_id']}/2.png")
        assert r.status_code == 404 and "is no longer at moving.pdf" in r.json()["error"]
        assert str(store_copy) not in r.text

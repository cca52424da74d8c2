"""The web server as an attacker or a careless operator would meet it, with real servers on loopback: uploads
past the limit (chunked, without Content-Length) stop at the limit and never land on disk beyond it; errors say
what failed and give an id, never paths, process ids or exception text; one server per store; access keys that
are long enough, compared in constant time and throttled per client and over all clients; a question too long
is refused with its length, not cut."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from web_helpers import LiveServer

from benchmarks.web_page import DiskWatch, chunked_upload

ASK_HEADERS = {"X-Evidex-Request": "1"}
KEY = "hardening-test-key-0123456789"
REPO = Path(__file__).resolve().parents[2]


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **ASK_HEADERS, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read()), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), dict(e.headers)


def get(url: str, headers: dict | None = None) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_a_chunked_upload_past_the_limit_is_stopped_at_the_limit(make_app, store_copy):
    """20 MB sent chunked (no Content-Length) against a 1 MB limit: 413 as soon as the limit is passed, and never
    more than 2 MB held in files by the server's process (measured from /proc/self/fd, every file it opened)."""
    app, agent = make_app(max_upload_mb=1)
    with LiveServer(app, agent) as server, DiskWatch() as watch:
        t0 = time.perf_counter()
        result = chunked_upload(server.url + "/api/upload", 20 << 20)
        seconds = time.perf_counter() - t0
    print(f"\nchunked 20 MB upload, 1 MB limit: {result['status']} after {result['sent_bytes'] / (1 << 20):.2f} MB "
          f"sent, {seconds:.2f} s; most held on disk {watch.peak_bytes / (1 << 20):.2f} MB ({watch.samples} samples)")
    assert result["status"] == 413 and "larger than 1 MB" in result["body"]["error"]
    assert result["headers"].get("connection") == "close"  # the rest of the body is not read
    assert 1 << 20 <= result["sent_bytes"] < 8 << 20  # stopped near the limit, not after the 20 MB
    assert 0 < watch.peak_bytes <= 2 << 20  # > 0: the watch saw the part being written
    assert list((store_copy / "uploads").iterdir()) == []  # the part is gone


def test_uploads_within_the_limit_still_work_chunked_and_declared(make_app, store_copy, tmp_path):
    from pdfgen_helpers import make_paper_pdf

    app, agent = make_app(max_upload_mb=1)
    pdf = make_paper_pdf(tmp_path / "small.pdf", "A Chunked Upload Of A Small Paper", seed=11).read_bytes()
    with LiveServer(app, agent) as server:
        # declared over the limit: refused before the body is read
        request = urllib.request.Request(server.url + "/api/upload", data=b"x" * 100, method="POST", headers={
            **ASK_HEADERS, "Content-Type": "multipart/form-data; boundary=b", "Content-Length": str(3 << 20)})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 413
        # a real PDF, chunked: the bytes as sent, then ingested
        boundary = "b0undary"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"small.pdf\"\r\n"
                "Content-Type: application/pdf\r\n\r\n").encode() + pdf + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(server.url + "/api/upload", data=iter([body[:1000], body[1000:]]),
                                         method="POST", headers={**ASK_HEADERS, "Transfer-Encoding": "chunked",
                                                                 "Content-Type": f"multipart/form-data; boundary={boundary}"})
        with urllib.request.urlopen(request, timeout=120) as r:
            result = json.loads(r.read())
        assert result["status"] == "ingested" and result["title"] == "A Chunked Upload Of A Small Paper"
        assert (store_copy / "uploads" / "small.pdf").read_bytes() == pdf
        # not a form, two files, a form cut short: each a message
        for content_type, data, words in (
                ("application/pdf", pdf, "form field 'file'"),
                (f"multipart/form-data; boundary={boundary}", body.replace(b"--\r\n", b"\r\n") + body[len(f"--{boundary}\r\n"):],
                 "one PDF per request"),
                (f"multipart/form-data; boundary={boundary}", body[:2000], "ended early")):
            status, answer, _ = post_raw(server.url + "/api/upload", data, content_type)
            assert status == 400 and words in answer["error"], (words, answer)
    assert sorted(p.name for p in (store_copy / "uploads").iterdir()) == ["small.pdf"]


def post_raw(url: str, data: bytes, content_type: str) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, data=data, method="POST", headers={**ASK_HEADERS, "Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read()), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), dict(e.headers)


def test_errors_carry_an_id_and_no_server_details(make_app, web_store, caplog, monkeypatch):
    from evidex.graphs.web import store_view
    from starlette.testclient import TestClient

    app, agent = make_app()

    def broken(*args, **kwargs):
        raise OSError(f"[Errno 5] Input/output error: '{web_store.store_dir}/store.duckdb' (PID {os.getpid()})")

    monkeypatch.setattr(store_view, "list_papers", broken)
    monkeypatch.setattr("evidex.graphs.web.app.list_papers", broken)
    with caplog.at_level(logging.ERROR, logger="evidex.graphs.web"), \
            TestClient(app, base_url="http://127.0.0.1:8000", raise_server_exceptions=False) as client:
        r = client.get("/api/store")
        assert r.status_code == 500
        body = r.json()
        assert body["error"].startswith("The server failed on this request (error id ") and body["error_id"]
        for secret in (str(web_store.store_dir), str(os.getpid()), "Errno", "OSError", "/"):
            assert secret not in body["error"], secret
        logged = [rec for rec in caplog.records if body["error_id"] in rec.getMessage()]
        assert logged and str(web_store.store_dir) in logged[0].getMessage() and logged[0].exc_info  # the log has it
        # a failing model: the page is told what failed and the id; the log keeps the exception text
        r = client.post("/api/ask", json={"question": "Please explode.", "pdf_ids": [web_store.paper_id]},
                        headers=ASK_HEADERS)
        events = []
        with client.stream("GET", r.json()["events_url"]) as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
                    if events[-1]["type"] == "done":
                        break
        error = events[-2]["error"]
        assert error.startswith("The question failed (RuntimeError in the model or a tool) (error id ")
        assert "scripted model broke" not in error
        error_id = error.split("(error id ")[1].split(";")[0]
        assert any(f"error {error_id}:" in rec.getMessage() and "scripted model broke" in rec.getMessage()
                   for rec in caplog.records)


def test_messages_of_our_own_keep_their_advice_without_paths():
    from evidex.graphs.web.errors import public

    assert public("No paper store at /root/.cache/evidex/stores/x (missing store.duckdb). Build it first: "
                  "evidex ingest PDF_OR_FOLDER --db NAME") == (
        "No paper store at x (missing store.duckdb). Build it first: evidex ingest PDF_OR_FOLDER --db NAME")
    assert public("Could not set lock on file \"/a/b/store.duckdb\": Conflicting lock is held in /usr/bin/python3 "
                  "(PID 4242)") == "Could not set lock on file \"store.duckdb\": Conflicting lock is held in python3"
    assert public(r"cannot open C:\Users\me\papers\x.pdf") == "cannot open x.pdf"
    assert public("open http://127.0.0.1:8000/ to ask") == "open http://127.0.0.1:8000/ to ask"


def test_a_second_server_on_the_same_store_says_so_at_start(make_app, store_copy, capsys):
    """In this process (a second app) and from another process (python -m graphs.web): one line naming the first
    server; the first one keeps working, and once it stops the store can be served again."""
    from evidex.graphs.web.cli import main
    from evidex.graphs.web.store_claim import StoreInUseError

    app, agent = make_app(address="http://127.0.0.1:8000/")
    with pytest.raises(StoreInUseError, match=r"already served by another evidex web server \(pid \d+ on .* at "
                                              r"http://127.0.0.1:8000/"):
        make_app()
    assert main(["--store-dir", str(store_copy), "--port", "8011"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already served by another evidex web server" in err and "stop that server" in err
    assert "Traceback" not in err and "IOException" not in err
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    other = subprocess.run([sys.executable, "-m", "graphs.web", "--store-dir", str(store_copy), "--port", "8012"],
                           capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    assert other.returncode == 2 and other.stderr.count("\n") == 1, other.stderr
    assert "already served by another evidex web server" in other.stderr and "Traceback" not in other.stderr
    with LiveServer(app, agent) as server:  # the first server still serves
        assert get(server.url + "/api/store")[0] == 200
    second, _ = make_app()  # its claim went with it
    second.state.claim.release()


def test_a_server_in_another_process_holds_the_store_until_it_stops(store_copy):
    """The claim is the OS's lock: it holds across processes and goes with a killed server."""
    from evidex.graphs.web.store_claim import StoreInUseError, claim_store

    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from evidex.graphs.web.store_claim import claim_store; "
        f"claim = claim_store(Path({str(store_copy)!r}), 'x', 'http://127.0.0.1:9/'); print('held', flush=True); "
        "time.sleep(60)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreInUseError, match=f"pid {holder.pid} "):
            claim_store(store_copy, "x")
    finally:
        holder.kill()
        holder.wait()
    claim_store(store_copy, "x").release()  # killed: the kernel let go of its lock


def test_wrong_keys_are_throttled_per_client_even_in_parallel(make_app):
    app, agent = make_app(access_key=KEY, loopback=False)
    with LiveServer(app, agent, key=KEY) as server:
        def guess(n: int) -> int:
            if n % 2:
                return post(server.url + "/api/login", {"key": f"wrong-guess-{n:04d}-padding"})[0]
            return get(server.url + "/api/store", headers={"X-Evidex-Key": f"wrong-guess-{n:04d}-padding"})[0]

        t0 = time.perf_counter()
        with ThreadPoolExecutor(20) as pool:
            statuses = list(pool.map(guess, range(40)))
        seconds = time.perf_counter() - t0
        checked = statuses.count(401)
        print(f"\n40 wrong keys, 20 in parallel: {checked} checked, {statuses.count(429)} throttled in {seconds:.2f} s")
        assert checked <= 5 and checked + statuses.count(429) == 40
        status, body, headers = post(server.url + "/api/login", {"key": KEY})  # this client waits too
        assert status == 429 and "try again in" in body["error"] and int(headers["retry-after"]) >= 1
        assert server.app.state.throttle.begin("198.51.100.7") is None  # another client is not held back


def test_login_throttle_counts_per_client_and_overall():
    from evidex.graphs.web.access import Access, LoginThrottle

    now = [1000.0]
    t = LoginThrottle(per_client=3, overall=5, window_s=60, clock=lambda: now[0])
    assert [t.check("a", lambda: False) for _ in range(4)] == [False, False, False, 60.0]
    assert t.check("a", lambda: True) == 60.0  # held back, even with the right key
    assert t.check("b", lambda: False) is False
    now[0] += 10
    assert t.check("b", lambda: False) is False  # five wrong keys in all now
    assert t.check("b", lambda: False) == 50.0  # past the overall count, a client that guessed wrong waits
    assert t.check("c", lambda: True) is True  # one that has not is still checked: the owner gets in
    assert t.check("d", lambda: False) is False and t.check("d", lambda: False) == 50.0  # new guessers: one try each
    now[0] += 51
    assert t.check("a", lambda: False) is False  # a's failures aged out
    assert t.check("a", lambda: True) is True and "a" not in t._failed  # a right key clears its client
    fresh = LoginThrottle(per_client=3, overall=5, window_s=60, clock=lambda: now[0])
    tries = [fresh.begin("e") for _ in range(4)]  # tries in flight count before they end
    assert tries[:3] == [None, None, None] and tries[3] is not None

    access = Access(key="k" * 16, loopback=False)
    assert access.key_matches("k" * 16) and not access.key_matches("k" * 15) and not access.key_matches("")
    with pytest.raises(ValueError, match="at least 16"):
        Access(key="k" * 15, loopback=False)


def test_a_long_question_is_refused_with_its_length_not_cut(make_app):
    from starlette.testclient import TestClient

    app, _ = make_app()
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        r = client.post("/api/ask", json={"question": "why " * 50_000}, headers=ASK_HEADERS)  # 200 kB
        assert r.status_code == 400
        assert r.json()["error"] == ("Not a question the server can run: question: the question is 200,000 characters "
                                     "long; the limit is 4,000. Shorten it, or ask about one part at a time")
        r = client.post("/api/ask", content=b'{"question": "' + b"x" * (2 << 20) + b'"}', headers=ASK_HEADERS)
        assert r.status_code == 413 and "limit is 4,000" in r.json()["error"]
        assert client.get("/api/history").json() == []  # nothing was asked
        assert client.get("/api/store").json()["max_question_chars"] == 4000

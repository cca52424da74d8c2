"""The web page in a real browser: headless Chromium (the system's, driven by Playwright; no browser download)
against the server on loopback, with the scripted agent, at 1440 x 900.

* ask -> the steps stream in -> the answer first, its sources under it, the steps collapsed under those (one
  readable line each, the raw SQL one click further) -> the first source opens beside it; each source shows its
  page with the answer's lines highlighted and scrolled into view, a cited table is built as an HTML table; the
  page's own timings (``window.evidexTimings``) are printed; their targets (first step <= 1 s after ask, cited
  page <= 300 ms after the click) are checked by ``benchmarks/web_page.py``, not here, where the machine may be
  busy with other work;
* answers keep their paragraphs and lists; a question over the limit is refused with its length, not cut;
* upload of one good and one broken PDF: per-file progress, the good one ingested and listed, the broken one's
  error on its own row;
* a hostile question (and hostile model replies) and a hostile file name are shown as text, never run;
* stop ends a slow question at once; a failing model is a message with an error id, not a blank page;
* 0 console errors in every flow, and no request leaves the server (everything is served by the package).

``EVIDEX_WEB_SCREENSHOT=1`` saves the page after the ask flow as docs/web-page.png.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from web_helpers import ANSWER, CHROMIUM, CHROMIUM_ARGS, HOSTILE, HOSTILE_FILE_NAME, PAYLOADS, LiveServer

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")

REPO = Path(__file__).resolve().parents[2]
QUESTION = "What accuracy does the proposed system reach on the pangolin benchmark?"
VIEWPORT = {"width": 1440, "height": 900}


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def live(make_app):
    app, agent = make_app()
    with LiveServer(app, agent) as server:
        yield server


@pytest.fixture
def keyed(make_app):
    """The server as when bound beyond loopback: every call needs the access key."""
    app, agent = make_app(access_key="browser-test-key", loopback=False)
    with LiveServer(app, agent, key="browser-test-key") as server:
        yield server


class Watched:
    """A page with its console errors and every request it made."""

    def __init__(self, browser, url: str, path: str = "/", ready: str = "#papers li"):
        self.context = browser.new_context(viewport=VIEWPORT)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context.on("page", self._watch)
        self._watch(self.page)
        self.page.goto(url + path)
        self.page.wait_for_selector(ready)

    def _watch(self, page):
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))

    def close(self, server_url: str):
        self.context.close()
        assert self.errors == [], self.errors[:5]
        elsewhere = [u for u in self.requests if not u.startswith(server_url) and not u.startswith("data:")]
        assert elsewhere == [], elsewhere[:5]


def ask(page, question: str):
    page.fill("#question", question)
    page.click("#ask")


def show_source(page, n: int) -> dict:
    """Click source n and wait until its page is shown; the view the page recorded (``window.evidexView``)."""
    seq = page.evaluate("window.evidexView.seq")
    page.click(f"#sources button >> nth={n}")
    page.wait_for_function(f"() => window.evidexView.seq > {seq} && window.evidexView.index === {n}")
    return page.evaluate("({...window.evidexView})")


def inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def test_the_answer_comes_first_with_its_sources_and_the_steps_collapsed_under_it(browser, live, web_store, tmp_path):
    w = Watched(browser, live.url)
    page, s = w.page, web_store
    assert page.locator("#papers li").count() == 2
    page.fill("#paper-filter", "pangolins")
    page.wait_for_function("() => document.querySelectorAll('#papers li:not([hidden])').length === 1")
    assert page.locator("#papers li:visible").count() == 1
    page.fill("#paper-filter", "")
    page.check(f'#papers li[data-pdf-id="{s.paper_id}"] input')
    assert page.text_content("#scope-line") == "Asking about 1 selected paper"
    page.select_option("#config", "airqa/airqa")

    ask(page, QUESTION)
    page.wait_for_selector("#answer:not([hidden])")
    first_step_ms = page.evaluate("window.evidexTimings.firstStepMs")
    answer_ms = page.evaluate("window.evidexTimings.answerMs")
    assert page.text_content("#answer") == ANSWER
    # the question was restricted to the ticked paper (the agent's turns say so; its answer call names no ids)
    assert any(f"pdf_id in ['{s.paper_id}']" in p for p in live.app.state.asker.llm.prompts)

    # the answer first, visible without scrolling at 1440 x 900; the sources under it; the steps under those, shut
    answer = page.locator("#answer").bounding_box()
    assert page.evaluate("[window.scrollY, document.documentElement.scrollHeight <= window.innerHeight]") == [0, True]
    assert 0 <= answer["y"] and answer["y"] + answer["height"] <= VIEWPORT["height"]
    sources = page.locator("#sources button")
    assert sources.count() == 3
    steps_box = page.locator("#steps-box").bounding_box()
    assert answer["y"] < page.locator("#sources").bounding_box()["y"] < steps_box["y"]
    assert page.evaluate("document.getElementById('steps-box').open") is False
    assert page.text_content("#steps-count") == "· 4 steps" and not page.is_visible("#steps li.step")
    page.click("#steps-box > summary")
    lines = page.locator("#steps li.step .line").all_text_contents()
    assert lines == [f"Looked up the papers and what the question names: found 4 passages (pp. 1, 2, 3), the paper "
                     f"record in “{s.title}”",
                     "The look-up does not hold the answer by itself: the agent's turns begin",
                     "Queried metadata with SQL: 2 rows",
                     "Answered “74.9”, citing 3 sources"], lines
    assert not page.is_visible('#steps li[data-n="3"] .detail')  # the raw SQL: one click further
    page.click('#steps li[data-n="3"] summary')
    assert page.text_content('#steps li[data-n="3"] .detail') == "SELECT num_pages FROM metadata"
    assert '"num_pages": 3' in page.text_content('#steps li[data-n="3"] .obs')
    page.click("#steps-box > summary")

    # the first source opened by itself; each says what it is once its passage is in
    page.wait_for_function("() => window.evidexView.seq >= 1")
    assert page.evaluate("window.evidexView.auto") is True
    page.wait_for_function("() => document.querySelector('#sources button .what').textContent !== ''")
    page.wait_for_function("() => document.querySelector('#sources li:nth-child(3) .where').textContent === 'Page 1'")
    assert sources.locator(".where").all_text_contents() == ["Passage · p. 2", "Table 1 · p. 2", "Page 1"]
    assert sources.locator(".paper").all_text_contents() == [s.title] * 3

    # the chunk: its region dashed, the answer's line (the table row "Ours 74.9 71.3") highlighted
    shown = {0: show_source(page, 0)["ms"]}
    img = page.locator("#page-img").bounding_box()
    region = page.locator("#region").bounding_box()
    focus = page.locator("#focus").bounding_box()
    x0, y0, bw, bh = s.chunk_box
    assert abs((region["x"] - img["x"]) / img["width"] - x0 / 612) < 0.01
    assert abs((region["y"] - img["y"]) / img["height"] - y0 / 792) < 0.01
    assert abs(region["width"] / img["width"] - bw / 612) < 0.01 and abs(region["height"] / img["height"] - bh / 792) < 0.01
    assert inside(focus, region) and focus["height"] / img["height"] < 0.03  # a line, not the page
    assert inside(focus, page.locator("#page-scroll").bounding_box())  # in view
    assert page.evaluate("document.getElementById('page-img').naturalWidth") == 918
    assert page.text_content("#passage-kind") == "Cited passage" and "2 Method" in page.text_content("#passage-text")
    # zoomed in and scrolled away, a click brings the highlight back into view
    page.click("#zoom-in")
    page.click("#zoom-in")
    page.evaluate("(() => { const s = document.getElementById('page-scroll'); s.scrollTop = s.scrollHeight; "
                  "s.scrollLeft = s.scrollWidth; })()")
    assert not inside(page.locator("#focus").bounding_box(), page.locator("#page-scroll").bounding_box())
    show_source(page, 0)
    box = page.locator("#page-scroll").bounding_box()
    focus = page.locator("#focus").bounding_box()
    assert inside(focus, box) and page.locator("#page-img").bounding_box()["width"] > 1.9 * box["width"]
    assert 0 <= focus["y"] and focus["y"] + focus["height"] <= VIEWPORT["height"]
    page.click("#zoom-out")
    page.click("#zoom-out")

    # the table: built as a table (not pipes), the answer's row marked
    shown[1] = show_source(page, 1)["ms"]
    assert page.text_content("#passage-kind") == "Cited table"
    assert page.locator("#passage-table caption").text_content().startswith("Table 1:")
    assert page.locator("#passage-table th").all_text_contents() == ["System", "Accuracy", "F1"]
    assert page.locator("#passage-table tbody tr").count() == 2
    assert page.locator("#passage-table tr.hit td").all_text_contents() == ["Ours", "74.9", "71.3"]
    assert "|" not in page.inner_text("#passage-box") and page.is_visible("#focus")

    # the bare page, whose text does not hold the answer: no highlight, said so
    shown[2] = show_source(page, 2)["ms"]
    assert not page.is_visible("#focus") and not page.is_visible("#region")
    assert "no passage on it holds the answer" in page.text_content("#passage-note")
    page.click("#page-next")  # the pager turns pages of the cited paper
    page.wait_for_function("() => document.getElementById('page-label').textContent === 'page 2 of 3'")

    show_source(page, 1)  # the table again: the screenshot shows it
    shot = tmp_path / "web-page.png"
    page.screenshot(path=str(shot))
    if os.environ.get("EVIDEX_WEB_SCREENSHOT") == "1":
        (REPO / "docs" / "web-page.png").write_bytes(shot.read_bytes())

    # history and the trace
    page.wait_for_function("() => document.querySelectorAll('#history li').length === 1")
    assert QUESTION in page.text_content("#history li")
    href = page.get_attribute("#trace-link", "href")
    assert href.startswith("/trace/web-")
    with w.context.expect_page() as opened:
        page.click("#trace-link")
    trace = opened.value
    trace.wait_for_load_state()
    assert "evidex trace" in trace.title() and trace.locator(".item").count() == 1
    trace.close()

    print(f"\nweb timings: first step {first_step_ms:.0f} ms after ask, answer {answer_ms:.0f} ms; cited page "
          f"shown {shown[0]:.0f} / {shown[1]:.0f} / {shown[2]:.0f} ms after the click (chunk, table, page-only); "
          f"console errors: {len(w.errors)}")
    w.close(live.url)
    assert 0 < first_step_ms < answer_ms  # the steps stream in before the answer, not with it
    assert all(ms > 0 for ms in shown.values()), shown


def test_answers_keep_their_paragraphs_and_lists(browser, live, web_store):
    w = Watched(browser, live.url)
    page = w.page
    page.check(f'#papers li[data-pdf-id="{web_store.paper_id}"] input')
    ask(page, "Which systems are compared, in a list?")
    page.wait_for_selector("#answer:not([hidden])")
    assert page.locator("#answer p").all_text_contents() == [
        "Two systems are compared on the pangolin benchmark:", "Ours is 13.7 points better."]
    assert page.locator("#answer ul li").all_text_contents() == ["Baseline: 61.2", "Ours: 74.9"]
    w.close(live.url)


def test_a_question_over_the_limit_is_refused_with_its_length_not_cut(browser, live):
    w = Watched(browser, live.url)
    page = w.page
    page.fill("#question", "why?" * 50_000)  # 200,000 characters, pasted
    assert page.evaluate("document.getElementById('question').value.length") == 200_000  # not cut
    assert page.text_content("#question-length") == "200,000 / 4,000"
    assert "over" in page.get_attribute("#question-length", "class")
    page.click("#ask")
    page.wait_for_selector(".message")
    assert "200,000 characters long; the limit is 4,000" in page.text_content(".message")
    assert not any("/api/ask" in u for u in w.requests) and page.is_enabled("#ask")
    page.wait_for_function("() => document.querySelectorAll('#history li').length === 0")
    w.close(live.url)


def test_uploads_show_progress_and_an_error_per_file(browser, live, tmp_path):
    from pdfgen_helpers import make_paper_pdf

    good = make_paper_pdf(tmp_path / "wombats.pdf", "An Uploaded Paper On Wombat Counting", seed=5)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\nthis is not really a PDF\n")
    w = Watched(browser, live.url)
    page = w.page
    # every state a row passes through, recorded as it changes
    page.evaluate("""() => { window.seen = [];
        new MutationObserver(() => document.querySelectorAll('#uploads .state').forEach(s => window.seen.push(s.textContent)))
          .observe(document.getElementById('uploads'), {subtree: true, childList: true, characterData: true}); }""")
    page.set_input_files("#upload-input", [str(good), str(broken)])
    page.wait_for_function("() => document.querySelectorAll('#uploads li.ok, #uploads li.failed').length === 2", timeout=60_000)
    ok = page.text_content("#uploads li.ok")
    failed = page.text_content("#uploads li.failed")
    assert "wombats.pdf" in ok and "ingested: An Uploaded Paper On Wombat Counting (3 pages" in ok
    assert "broken.pdf" in failed and "failed:" in failed
    seen = page.evaluate("window.seen")
    assert any(t.startswith(("uploading", "ingesting")) for t in seen), seen
    page.wait_for_function("() => document.querySelectorAll('#papers li').length === 3")
    assert "Wombat" in page.text_content("#papers")
    w.close(live.url)


def test_hostile_question_replies_and_file_name_are_shown_as_text(browser, live, tmp_path):
    from pdfgen_helpers import make_paper_pdf

    good = make_paper_pdf(tmp_path / "x.pdf", "A Paper Uploaded Under A Hostile Name", seed=7)
    w = Watched(browser, live.url)
    page = w.page
    ask(page, f"pwned {HOSTILE}")
    page.wait_for_selector("#answer:not([hidden])")
    page.set_input_files("#upload-input", files=[{"name": HOSTILE_FILE_NAME, "mimeType": "application/pdf",
                                                   "buffer": good.read_bytes()}])
    page.wait_for_selector("#uploads li.ok", timeout=60_000)
    page.wait_for_function("() => window.evidexView.seq >= 1")  # the first source opened by itself
    show_source(page, 0)
    page.wait_for_function("() => document.querySelectorAll('#history li').length === 1")
    page.click("#history li")  # the same strings again, from the history
    checks = page.evaluate(r"""() => ({
        pwned: typeof window.__pwned === 'undefined' ? null : String(window.__pwned),
        handlers: [...document.querySelectorAll('*')].flatMap(el =>
            [...el.attributes].filter(a => a.name.startsWith('on')).map(a => el.tagName + ' ' + a.name)),
        live: [...document.querySelectorAll('script, svg, iframe, object, embed, a[href^="javascript"]')].length,
        images: document.querySelectorAll('img').length,
        text: document.body.innerText,
        hidden: /[\u202e\u200b\u0000\u001b]/.test(document.body.innerText),
    })""")
    assert checks["pwned"] is None and checks["handlers"] == [] and checks["images"] == 1, checks
    assert checks["live"] == 1  # the page's own app.js
    assert not checks["hidden"] and "⟨U+202E⟩" in checks["text"]
    for payload in PAYLOADS[:3]:  # the markup is on the page, as text
        assert payload in checks["text"], payload
    upload_name = page.text_content("#uploads li.ok .name")
    assert upload_name == HOSTILE_FILE_NAME.replace("\u202e", "⟨U+202E⟩")
    w.close(live.url)


def test_stop_ends_a_slow_question_and_errors_are_messages(browser, live):
    import time

    w = Watched(browser, live.url)
    page = w.page
    ask(page, "Answer slowly: how many pages does the paper have?")
    page.wait_for_selector("#steps li.step", state="attached")
    assert page.text_content("#working-line").startswith("Looked up the papers")  # the latest step, shown as it runs
    assert page.is_enabled("#stop") and page.is_disabled("#ask")
    t0 = time.perf_counter()
    page.click("#stop")
    page.wait_for_function("() => document.getElementById('answer').textContent === 'Stopped.'")
    stop_ms = (time.perf_counter() - t0) * 1000
    assert page.is_enabled("#ask") and page.is_disabled("#stop")
    live.agent.release.set()  # the model call under way returns; its reply is dropped
    ask(page, "Please explode.")  # the model fails: a message, and the page stays usable
    page.wait_for_selector(".message")
    assert "The question failed (RuntimeError in the model or a tool) (error id " in page.text_content(".message")
    assert page.text_content("#answer").startswith("Error: The question failed (RuntimeError in the model or a tool)")
    assert "scripted model broke" not in page.inner_text("body")  # the exception's text stays in the server log
    assert page.is_enabled("#ask")
    page.wait_for_function("() => document.querySelectorAll('#history li').length === 2")
    print(f"\nweb stop: the page showed 'Stopped.' {stop_ms:.0f} ms after the click")
    w.close(live.url)
    assert stop_ms < 1000


def test_beyond_loopback_the_page_asks_for_the_key_once(browser, keyed):
    w = Watched(browser, keyed.url, ready="#login-form")
    page = w.page
    assert page.is_hidden("#main") and page.locator("#papers li").count() == 0
    page.fill("#login-key", "browser-test-key")
    page.click("#login-form button")
    page.wait_for_selector("#papers li")
    assert page.is_hidden("#login") and page.input_value("#login-key") == ""
    page.reload()  # the session cookie keeps it signed in
    page.wait_for_selector("#papers li")
    w.close(keyed.url)
    # the printed address carries the key after '#': the page signs in with it and drops it from the address bar
    w = Watched(browser, keyed.url, path="/#key=browser-test-key")
    assert "key=" not in w.page.url and w.page.is_hidden("#login")
    assert all("browser-test-key" not in u for u in w.requests)  # never sent in a URL
    w.close(keyed.url)

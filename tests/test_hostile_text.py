"""Hostile text from data and from a model is safe everywhere a run shows it.

Script tags, attribute breakers, ``<svg onload>``, ``javascript:`` links, template braces, U+202E and zero-width
characters, NUL and a 200 kB string go into claims, evidence texts, evidence ids, item ids, the config name and
the scripted model's replies (a judge's reason, the writer's reasons, a reply that fails its schema). Then:

* ``report.md`` rendered by python-markdown and by markdown-it-py has no live element, handler or link;
* ``report.html``, the trace viewer and the comparison page, opened in headless Chromium (Playwright driving the
  system's Chromium, no browser download), leave ``window.__pwned`` unset, log no console error, carry no
  inline handler and show the hidden characters as visible marks;
* the terminal views print no bidirectional, zero-width or control character.
"""
from __future__ import annotations

import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).is_file()), None)
PAYLOADS = [
    "<script>window.__pwned='script'</script>",
    '"><img src=x onerror="window.__pwned=\'img\'">',
    "'><svg onload=\"window.__pwned='svg'\"></svg>",
    "[click me](javascript:window.__pwned='link') <a href=\"javascript:window.__pwned='a'\">x</a>",
    "{{constructor.constructor('window.__pwned=1')()}} ${window.__pwned=2}",
    "\u202eevil\u202c right-to-left, zero\u200bwidth\u2060joined, NUL\x00here, ESC\x1b[31mred",
]
HOSTILE = " ".join(PAYLOADS)
HIDDEN = ("\u202e", "\u200b", "\u2060", "\x00", "\x1b")
BIG = "A" * 200_000


def _item(item_id: str, claim: str, evidence: list[tuple[str, str]]):
    from evidex.tools.claims import ClaimInput, Gold, TaskItem

    inp = ClaimInput(id=item_id, task="baseline", claims={"claim": {"text": claim, "context": {"Disease": HOSTILE}}},
                     evidence=[{"id": i, "text": t} for i, t in evidence])
    return TaskItem(input=inp, gold=Gold(explanations={"claim": "Gold [E1]."}))


class FakeEmbedder:
    def encode(self, texts):
        import numpy as np

        return np.full((len(texts), 4), 0.5, dtype="float32")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory, kit):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs import build_graph, config_for_task
    from evidex.graphs.config import dump_config
    from evidex.graphs.registry import Resources, get_family
    from evidex.graphs.runner import finalize_run, run_one
    from evidex.tools.runfolder import update_status

    bad_id = "E<script>window.__pwned='id'</script>\u202e\u200b"

    def hook(call):
        if call.role == "judge":
            if "BROKEN" in " ".join(call.claims.values()):
                return json.dumps({"evidence_finding": HOSTILE})  # fails its schema twice: the error quotes the reply
            return json.dumps({"evidence_finding": f"reason {HOSTILE}"[:30], "label": "supports"})  # <= reason_chars
        if call.role == "reasons":
            return json.dumps({i: f"{p[:60]}" for i, p in zip(call.ids, PAYLOADS[2:] * 4)})
        return None

    name = "cfg<script>window.__pwned='name'</script>\u202e{{x}}"
    cfg = config_for_task("baseline", ["judge.strategy=llm", "metrics.similarity=false",
                                       f"name={json.dumps(name)}"])
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=kit.Responder(hook=hook)), embedder=FakeEmbedder())
    root = tmp_path_factory.mktemp("hostile")
    run_dir = root / "20261125-000000-hostile"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(dump_config(cfg), encoding="utf-8")
    update_status(run_dir, run_id=run_dir.name, task=cfg.task, config=cfg.name, status="complete", n_items=3,
                  model=cfg.model_label)
    items = [_item(f"item-<svg onload=\"window.__pwned='item'\">\u202e-{n}", f"{HOSTILE} claim {n}",
                   [("E1", HOSTILE), (bad_id, BIG)]) for n in range(2)]
    items.append(_item("item-broken", f"BROKEN {HOSTILE}", [("E1", HOSTILE)]))
    rows = [run_one(graph, it, cfg, get_family(cfg.family), run_dir, Resources(embedder=FakeEmbedder()))
            for it in items]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in rows),
                                           encoding="utf-8")
    finalize_run(run_dir, cfg)
    return run_dir, rows


def test_the_hostile_run_really_carries_the_payloads(hostile_run):
    """Control: the text reached the outputs (a test whose payloads were dropped early would pass anything)."""
    run_dir, rows = hostile_run
    assert rows[2]["error"] and "<script>" in rows[2]["error"]  # the broken reply is quoted in the error
    # the model judge's reason (the decision's basis; the writer's checked reason replaces it) and its reasons reply
    assert any("<script>" in d["basis"] for d in rows[0]["prediction"]["decisions"])
    assert any("<svg onload" in r.get("written", "") for r in rows[0]["prediction"]["verification"]["reasons"].values())
    assert "<svg onload" in rows[0]["prediction"]["explanations"]["claim"]
    assert "\u202e" in rows[0]["id"] and "script" in json.loads((run_dir / "metrics.json").read_text())["config"]


# -- Markdown ---------------------------------------------------------------------------------------------------
class LiveElements(HTMLParser):
    """Collects what a browser would run or follow: script/style/iframe/svg/img/object elements, on* handlers,
    javascript: URLs."""

    DANGEROUS = {"script", "iframe", "svg", "img", "object", "embed", "style", "link", "meta", "form"}

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.DANGEROUS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.found.append(f"{tag} {name}")
            if value and re.sub(r"\s", "", value).lower().startswith(("javascript:", "data:text")):
                self.found.append(f"{tag} {name}={value[:40]}")


def _live(html_text: str) -> list[str]:
    parser = LiveElements()
    parser.feed(html_text)
    return parser.found


def test_report_md_renders_without_live_elements(hostile_run):
    import markdown
    from markdown_it import MarkdownIt

    run_dir, _ = hostile_run
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert not any(ch in md for ch in HIDDEN)
    assert "⟨U+202E⟩" in md
    for html_text in (markdown.markdown(md, extensions=["tables"]),
                      MarkdownIt("commonmark", {"html": True}).enable("table").render(md)):
        assert _live(html_text) == [], _live(html_text)[:5]
        assert "window.__pwned" in html_text  # the payloads are there, as text


def test_the_markdown_check_catches_a_live_element():
    """Control for the check above: raw payloads in Markdown do render live."""
    import markdown

    assert _live(markdown.markdown(PAYLOADS[0] + "\n\n" + PAYLOADS[2]))
    assert _live(markdown.markdown(PAYLOADS[3]))


# -- HTML in Chromium -------------------------------------------------------------------------------------------
def _pages(run_dir: Path, out: Path) -> dict[str, Path]:
    from evidex.evaluators.compare import compare_runs, load_runs, write_comparison_html
    from evidex.graphs.trace import main as trace_main

    pages = {"report": run_dir / "report.html", "trace": out / "trace.html", "compare": out / "compare.html"}
    assert trace_main([str(run_dir), "--html", str(pages["trace"])], console=_console()) == 0
    write_comparison_html(compare_runs(load_runs([run_dir, run_dir]), n_boot=50), pages["compare"])
    return pages


def _console():
    from rich.console import Console

    return Console(file=io.StringIO(), width=200, force_terminal=True)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_html_pages_run_nothing_injected_in_chromium(hostile_run, tmp_path):
    from playwright.sync_api import sync_playwright

    run_dir, _ = hostile_run
    pages = _pages(run_dir, tmp_path)
    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            for name, path in pages.items():
                page = browser.new_page()
                errors: list[str] = []
                page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.goto(path.as_uri())
                page.wait_for_timeout(300)
                if name == "trace":  # open every item and node so lazily shown parts render too
                    page.click("#expand")
                    page.fill("#search", "script")
                    page.wait_for_timeout(300)
                results[name] = {
                    "pwned": page.evaluate("typeof window.__pwned === 'undefined' ? null : String(window.__pwned)"),
                    "errors": errors,
                    "handlers": page.evaluate("""[...document.querySelectorAll('*')].flatMap(el =>
                        [...el.attributes].filter(a => a.name.startsWith('on')).map(a => el.tagName + ' ' + a.name))"""),
                    "scripts": page.evaluate("document.querySelectorAll('script').length"),
                    "hidden": page.evaluate(r"/[\u202e\u200b\u2060\u0000]/.test(document.body.innerText)"),
                    "marks": page.evaluate("document.body.innerText.includes('⟨U+202E⟩')"),
                    "csp": page.evaluate("!!document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]')"),
                }
                page.close()
        finally:
            browser.close()
    for name, r in results.items():
        assert r["pwned"] is None, (name, r)
        assert r["errors"] == [], (name, r["errors"][:3])
        assert r["handlers"] == [], (name, r["handlers"][:3])
        assert r["scripts"] == (1 if name == "trace" else 0), (name, r["scripts"])
        assert not r["hidden"] and r["marks"] and r["csp"], (name, r)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_the_browser_check_catches_an_injection(tmp_path):
    """Control: a page that does embed a payload sets the marker (so the check above can fail)."""
    from playwright.sync_api import sync_playwright

    page_path = tmp_path / "bad.html"
    page_path.write_text(f"<html><body>{PAYLOADS[1]}</body></html>")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(page_path.as_uri())
        page.wait_for_timeout(300)
        assert page.evaluate("String(window.__pwned)") == "img"
        browser.close()


# -- terminal ---------------------------------------------------------------------------------------------------
def test_terminal_views_show_no_hidden_or_control_characters(hostile_run):
    from evidex.evaluators.compare import main as compare_main
    from evidex.graphs.trace import main as trace_main

    run_dir, rows = hostile_run
    outputs = []
    for argv in ([str(run_dir)], [str(run_dir), "--item", rows[0]["id"], "--io"]):
        console = _console()
        assert trace_main(argv, console=console) == 0
        outputs.append(console.file.getvalue())
    console = _console()
    assert compare_main([str(run_dir), str(run_dir), "--n-boot", "50"], console=console) == 0
    outputs.append(console.file.getvalue())
    for out in outputs:
        text = re.sub(r"\x1b\[[0-9;]*m", "", out)  # rich's own colour codes
        assert not any(ch in text for ch in HIDDEN), [ch for ch in HIDDEN if ch in text]
        assert "⟨U+202E⟩" in text

"""Shared by the web page tests (fixtures in conftest.py): the scripted NeuSym agent, the store's facts, a live
server (uvicorn in a thread) and the system Chromium's launch flags.

The scripted agent looks at the prompt: the first turn runs an SQL look-up, the next answers with citations of a
chunk, a table and a bare page; a question containing ``slowly`` makes every model call take ``SLOW_S`` (to press
stop), one containing ``explode`` makes the model fail, one containing ``in a list`` gets an answer of paragraphs
and a list (``LIST_ANSWER``), and one containing ``pwned`` gets hostile thoughts, SQL and answers back (markup,
bidirectional and control characters)."""
from __future__ import annotations

import json
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from evidex.graphs.web.background import BackgroundServer

CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).is_file()), None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SQL_MARK = "SELECT num_pages FROM metadata"
ANSWER = "74.9"
LIST_ANSWER = ("Two systems are compared on the pangolin benchmark:\n\n- Baseline: 61.2\n- Ours: 74.9\n\n"
               "Ours is 13.7 points better.")  # asked "... in a list": paragraphs and a list
SLOW_S = 8.0
PAYLOADS = [
    "<script>window.__pwned='script'</script>",
    '"><img src=x onerror="window.__pwned=\'img\'">',
    "'><svg onload=\"window.__pwned='svg'\"></svg>",
    "[click](javascript:window.__pwned='link') <a href=\"javascript:window.__pwned='a'\">x</a>",
    "{{constructor.constructor('window.__pwned=1')()}} ${window.__pwned=2}",
    "\u202eevil\u202c right-to-left, zero\u200bwidth, NUL\x00here, ESC\x1b[31mred",
]
HOSTILE = " ".join(PAYLOADS)
HOSTILE_SHORT = " ".join(PAYLOADS[:2])  # fits an action's 300-character thought
HOSTILE_FILE_NAME = "<img src=x onerror=\"window.__pwned='file'\">\u202e../../evil.pdf"


@dataclass(frozen=True)
class WebStore:
    store_dir: Path
    pdf_dir: Path
    paper_id: str  # the paper the scripted answer cites
    other_id: str
    title: str
    chunk_id: str  # the cited chunk (page 2)
    chunk_box: tuple[float, float, float, float]
    table_id: str  # the cited table (page 2)


class ScriptedAgent:
    """Replies by prompt content (see the module docstring); counts the model calls."""

    def __init__(self, store: WebStore):
        self.store = store
        self.calls = 0
        self.release = threading.Event()  # set at teardown: a slow call still sleeping returns at once

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        if "explode" in prompt:
            raise RuntimeError("the scripted model broke")
        if "slowly" in prompt:
            self.release.wait(SLOW_S)
        hostile = "pwned" in prompt
        answer = LIST_ANSWER if "in a list" in prompt else ANSWER
        if "Reply with one JSON object" in prompt:  # an answer call over a context (early or evidence answer)
            if '"num_pages"' not in prompt:  # the early answer (no SQL result yet) misses: the turns begin
                return json.dumps({"answer": "not in the look-up"})
            return json.dumps({"answer": f"{answer} {HOSTILE}" if hostile else answer})
        if SQL_MARK not in prompt:
            sql = f"{SQL_MARK} -- {HOSTILE}" if hostile else SQL_MARK
            return json.dumps({"step": {"action": "sql", "thought": HOSTILE_SHORT if hostile else "count the pages",
                                        "sql": sql}})
        s = self.store
        return json.dumps({"step": {
            "action": "answer", "thought": HOSTILE_SHORT if hostile else "Table 1 gives the accuracy",
            "answer": answer,
            "citations": [{"pdf_id": s.paper_id, "page_number": 2, "source": f"chunks.{s.chunk_id}"},
                          {"pdf_id": s.paper_id, "page_number": 2, "source": f"tables.{s.table_id}"},
                          {"pdf_id": s.paper_id, "page_number": 1}]}})


class LiveServer(BackgroundServer):
    """The app served on loopback in a background thread; leaving it also wakes a scripted call still sleeping."""

    def __init__(self, app, agent: ScriptedAgent, key: str | None = None):
        super().__init__(app, key=key)
        self.agent = agent

    def __exit__(self, *exc):
        self.agent.release.set()
        super().__exit__(*exc)

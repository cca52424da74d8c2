"""docs/python-api.md runs as written: its ``python`` blocks, in order, as one script from a folder outside the
checkout, against a stand-in OpenAI-compatible server on loopback (``OPENAI_BASE_URL``/``OPENAI_API_KEY``, as an
app with a hosted model sets them). Each section's printed line is checked, so a snippet that stops doing what
the page says fails here."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from openai_standin import KEY, Handler, standin_server

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "python-api.md"
PAPER = "layoutparser-excerpt-2p.pdf"


def corpus_pdf(name: str) -> Path | None:
    data = os.environ.get("EVIDEX_DATA_DIR")
    for folder in filter(None, [os.environ.get("EVIDEX_CORPUS_DIR"), data and str(Path(data) / ".." / "corpus"),
                                str(REPO.parent / "shared" / "corpus")]):
        if (Path(folder) / "pdfs" / name).is_file():
            return Path(folder) / "pdfs" / name
    return None


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_page_has_the_sections_the_api_promises():
    text = DOC.read_text()
    blocks = python_blocks(text)
    code = "\n".join(blocks)
    for needle in ("llm=llm", ".batch(", ".stream(", "astream_events", "add_node(\"explain\", graph)",
                   "graph_as_tool", "ingest(", "store.store_dir", "checkpointer=", "run_task(", "enable_phoenix"):
        assert needle in code, needle
    assert "Without `llm=`" in text and "pip install 'evidex[local]'" in text


@pytest.mark.shared_data
def test_every_python_snippet_runs_from_an_app_folder(tmp_path, kit):
    kit.require_task_data("baseline")
    pdf = corpus_pdf(PAPER)
    if pdf is None:
        pytest.skip(f"shared corpus PDF {PAPER} not found (EVIDEX_CORPUS_DIR)")
    shutil.copy(pdf, tmp_path / "paper.pdf")
    (tmp_path / "app.py").write_text("\n".join(python_blocks(DOC.read_text())))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "PHOENIX_", "EVIDEX_PHOENIX"))}
    env |= {"OPENAI_API_KEY": KEY, "EVIDEX_RUNS_DIR": str(tmp_path / "runs"), "HF_HUB_OFFLINE": "1"}
    with standin_server() as url:
        env["OPENAI_BASE_URL"] = url
        proc = subprocess.run([sys.executable, "app.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1200)
        seen = list(Handler.seen)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.splitlines()

    def line(prefix: str) -> str:
        found = [ln for ln in lines if ln.startswith(prefix)]
        assert found, (prefix, proc.stdout[-3000:])
        return found[0][len(prefix):].strip()

    assert line("kept:") == "['E1']"  # the off-topic item is discarded
    assert line("batch:") == "['braf-1', 'braf-2']"
    assert line("step:").startswith("[")
    assert "on_chain_start" in line("events:") or "on_chain_end" in line("events:")
    assert "kept 1 of 2" in proc.stdout
    size, keys = re.match(r"(\d+) characters, (.*)", line("tool result:")).groups()
    assert int(size) < 3000 and keys.startswith("[")
    assert line("ingested:") == "['ingested']"
    assert line("answer:").startswith("The stand-in answer")
    assert line("thread:") == "braf-1"
    assert line("run model:") == "ChatOpenAI(gpt-4o-mini)"
    assert (tmp_path / "threads.sqlite").is_file() and (tmp_path / "papers-store" / "papers.duckdb").is_file()
    assert seen and all(c["authorized"] and c["model"] == "gpt-4o-mini" for c in seen)
    assert "Traceback" not in proc.stderr

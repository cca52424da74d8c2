"""evidex installed like a library: the wheel, in a fresh venv, used from an app folder that has its own ``tools.py``,
``agents/`` and ``graphs.py`` (a common LangChain app layout).

The fresh venv gets the wheel and nothing else of the checkout; its third-party dependencies come from this
test's venv through a plain path entry (no editable finder, no ``.pth`` of the checkout is processed), so the
check is about what the wheel ships and how it imports, in seconds rather than a full dependency install."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

APP = '''
import json, sys
from pathlib import Path

import agents, graphs, tools                                   # the app's own modules come first
assert tools.APP == "tools" and agents.APP == "agents" and graphs.APP == "graphs"

import evidex.graphs
from evidex.agents.prompts import load_prompt
from evidex.graphs import build_graph, config_for_task, task_table
from evidex.graphs.runner import run_task
from evidex.tools.claim_data import load_task
from evidex.tools.claims import ClaimInput, ClaimPrediction
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

GATE_ONLY = ["dataset.limit=1", "steps.write=false", "judge.llm_stance=false", "tracing.enabled=false"]
cfg = config_for_task("mixed", GATE_ONLY)
run_dir = run_task(cfg, out_dir=Path("runs"), progress=False)
row = json.loads((run_dir / "results.jsonl").read_text().splitlines()[0])


class AppState(BaseModel):                                      # the app's own graph, evidex as one node of it
    input: ClaimInput
    prediction: ClaimPrediction | None = None
    note: str = ""


app = StateGraph(AppState)
app.add_node("explain", build_graph(cfg))
app.add_node("note", lambda s: {"note": f"kept {len(s.prediction.kept_ids)} items"})
app.add_edge(START, "explain")
app.add_edge("explain", "note")
app.add_edge("note", END)
item = load_task("mixed", limit=1)[0]
out = app.compile().invoke({"input": item.input})

print(json.dumps({"evidex_file": evidex.graphs.__file__, "tasks": sorted(task_table()),
                  "prompt": load_prompt("system_grounded")[:40], "run_error": row["error"],
                  "run_kept": row["prediction"]["kept_ids"], "run_model": json.loads((run_dir / "run.json").read_text())["model"],
                  "note": out["note"], "subgraph_kept": out["prediction"].kept_ids}))
'''


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """(venv python, venv bin) of a fresh venv holding only the built wheel."""
    from benchmarks.install_size import build_wheel

    root = tmp_path_factory.mktemp("install")
    wheel = build_wheel(root / "dist")
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=300)
    purelib = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                           text=True).strip())
    (purelib / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, env_dir / "bin", wheel


@pytest.fixture
def app_dir(tmp_path):
    (tmp_path / "tools.py").write_text('APP = "tools"\n')
    (tmp_path / "graphs.py").write_text('APP = "graphs"\n')
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text('APP = "agents"\n')
    (tmp_path / "app.py").write_text(textwrap.dedent(APP))
    return tmp_path


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVIDEX_CONFIG_DIR", "EVIDEX_PROMPT_DIR",
                                                                     "PYTHONPATH", "VIRTUAL_ENV"))}
    env["EVIDEX_CACHE_DIR"] = os.environ.get("EVIDEX_CACHE_DIR", str(Path.home() / ".cache" / "evidex"))
    env["EVIDEX_RUNS_DIR"] = str(tmp_path / "runs")
    return env


def test_every_package_folder_is_listed_in_pyproject():
    """setuptools ships only the packages pyproject.toml lists (the folders map into the evidex namespace)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"evidex." + ".".join(p.parent.relative_to(REPO).parts)
             for top in ("tools", "agents", "graphs", "evaluators") for p in (REPO / top).rglob("__init__.py")}
    found |= {"evidex." + ".".join(p.relative_to(REPO).parts) for p in (REPO / "configs").rglob("*") if p.is_dir()}
    found |= {"evidex.configs", "evidex.prompts"}
    assert found == listed, (found - listed, listed - found)


def test_the_wheel_ships_configs_and_prompts_under_one_namespace(fresh):
    import zipfile

    _, _, wheel = fresh
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("evidex-")}
    assert top == {"evidex"}  # nothing named tools, agents, graphs or evaluators at the top
    assert "evidex/configs/civic/mixed.yaml" in names and "evidex/configs/_base.yaml" in names
    assert "evidex/configs/r4c/r4c.yaml" in names and "evidex/configs/ingest/default.yaml" in names
    assert "evidex/prompts/write_grounded.txt" in names
    assert "evidex/agents/civic/gate.py" in names and "evidex/graphs/families/civic.py" in names
    # every module is one the checkout has: none left over from an earlier build of since-deleted code
    stale = [n for n in names if n.endswith(".py") and not (REPO / n.removeprefix("evidex/")).is_file()]
    assert stale == []


def test_an_app_with_its_own_tools_agents_and_graphs_uses_the_installed_library(fresh, app_dir, kit):
    kit.require_task_data("mixed")
    python, _, _ = fresh
    proc = subprocess.run([str(python), "app.py"], cwd=app_dir, env=_env(app_dir), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "site-packages" in out["evidex_file"] and str(REPO) not in out["evidex_file"]
    assert out["tasks"] == sorted(["airqa", "assignment", "baseline", "missing_evidence", "mixed", "qasper", "r4c",
                                   "selection", "wrong_claim", "wrong_evidence"])
    assert out["prompt"]  # prompts found with no environment variable
    assert out["run_error"] is None and out["run_kept"] and out["run_model"] == "none (model-free)"
    assert out["subgraph_kept"] == out["run_kept"] and out["note"] == f"kept {len(out['run_kept'])} items"


def test_the_console_script_works_from_any_folder(fresh, app_dir):
    _, bin_dir, _ = fresh
    proc = subprocess.run([str(bin_dir / "evidex"), "run", "--list"], cwd=app_dir, env=_env(app_dir),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "civic:" in proc.stdout and "  mixed" in proc.stdout and "r4c:" in proc.stdout
    module = subprocess.run([str(bin_dir / "python"), "-m", "evidex.graphs.run", "--list"], cwd=app_dir,
                            env=_env(app_dir), capture_output=True, text=True, timeout=120)
    assert module.returncode == 0 and module.stdout == proc.stdout


def test_an_apps_langgraph_json_serves_the_installed_graphs(fresh, app_dir, kit):
    """An app's own langgraph.json names evidex's factories by module; the server runs them from the wheel."""
    import asyncio

    from test_langgraph_server import start_server, stop_server  # the same server harness

    kit.require_task_data("mixed")
    python, _, _ = fresh
    (app_dir / "langgraph.json").write_text(json.dumps({"python_version": "3.11", "dependencies": ["."], "graphs": {
        "explain": "evidex.graphs.studio:mixed", "r4c": "evidex.graphs.studio:r4c"}}))
    env = _env(app_dir) | {"LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
    proc, url, log = start_server(app_dir / "langgraph.json", app_dir, env, app_dir, python=str(python))

    async def run() -> dict:
        from langgraph_sdk import get_client

        from evidex.tools.claim_data import load_task

        client = get_client(url=url)
        ids = {a["graph_id"]: a["assistant_id"] for a in await client.assistants.search()}
        thread = await client.threads.create()
        item = load_task("mixed", limit=1)[0]
        out = await client.runs.wait(thread["thread_id"], ids["explain"], input={"input": item.input.model_dump()},
                                     config={"configurable": {"steps": {"write": False},
                                                              "judge": {"llm_stance": False}}})
        return {"graphs": sorted(ids), "prediction": out["prediction"]}

    try:
        out = asyncio.run(run())
    finally:
        stop_server(proc)
    assert "BlockingError" not in log.read_text()
    assert out["graphs"] == ["explain", "r4c"] and out["prediction"]["kept_ids"]


# -- the core install: the wheel and its own dependencies in a fresh venv ---------------------------------------
CORE_LIMIT_PACKAGES = 100
CORE_LIMIT_BYTES = 10**9  # 1.0 GB
NOT_IN_CORE = {"torch", "transformers", "sentence-transformers", "chromadb", "kubernetes", "xllamacpp", "ragas",
               "ray", "scipy", "starlette", "uvicorn", "arize-phoenix-otel", "psycopg", "langchain-community"}


def _wheels_dir() -> Path:
    """Where evidex-minilm-onnx is (built once by .ci/setup); built here from this venv when missing."""
    folder = Path(os.environ.get("EVIDEX_WHEELS") or Path.home() / ".cache" / "evidex" / "wheels")
    from evidex.tools.embedder_package import wheel_name

    if not (folder / wheel_name()).is_file():
        subprocess.run([sys.executable, "-m", "evidex.tools.embedder_package", "--out", str(folder)], check=True,
                       capture_output=True, timeout=1200, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    return folder


def _du(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory):
    """(python, facts) of a venv with `pip install evidex` from the built wheel and nothing else: its dependencies
    at the tested versions (constraints.txt), the embedder wheel from the wheels folder. The venv is kept under
    ~/.cache/evidex/venvs/core-<hash of pyproject.toml and constraints.txt> (or EVIDEX_CORE_VENV), so only the
    first run installs the dependencies (minutes); later runs swap in this checkout's wheel (seconds)."""
    import hashlib

    from filelock import FileLock

    from benchmarks.install_size import build_wheel

    root = tmp_path_factory.mktemp("core")
    wheel = build_wheel(root / "dist")
    wheels = _wheels_dir()
    key = hashlib.sha256((REPO / "pyproject.toml").read_bytes() + (REPO / "constraints.txt").read_bytes())
    env_dir = Path(os.environ.get("EVIDEX_CORE_VENV") or
                   Path.home() / ".cache" / "evidex" / "venvs" / f"core-{key.hexdigest()[:16]}")
    python = env_dir / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    facts: dict = {}
    env_dir.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(env_dir) + ".lock"):
        done = env_dir / ".evidex-core-complete"
        if not done.is_file():
            import shutil
            import time

            shutil.rmtree(env_dir, ignore_errors=True)
            start = time.monotonic()
            venv.EnvBuilder(with_pip=True).create(env_dir)
            proc = subprocess.run(pip + ["-c", str(REPO / "constraints.txt"), "--find-links", str(wheels), str(wheel)],
                                  capture_output=True, text=True, timeout=3000)
            assert proc.returncode == 0, proc.stderr[-3000:]
            facts["install_seconds"] = round(time.monotonic() - start, 1)
            done.write_text(json.dumps(facts))
        proc = subprocess.run(pip + ["--no-deps", "--force-reinstall", str(wheel)], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
    listed = json.loads(subprocess.check_output([str(python), "-m", "pip", "list", "--format", "json",
                                                 "--disable-pip-version-check"], text=True))
    facts.update(packages=sorted(p["name"].lower() for p in listed), bytes=_du(env_dir))
    return python, facts


def test_the_core_install_is_light(core_venv):
    """`pip install evidex` from the wheel: at most 100 packages and 1.0 GB, none of the extras' heavy ones."""
    _, facts = core_venv
    names = set(facts["packages"])
    print(f"core install: {len(names)} packages, {facts['bytes'] / 1e6:.0f} MB")
    assert len(names) <= CORE_LIMIT_PACKAGES, sorted(names)
    assert facts["bytes"] <= CORE_LIMIT_BYTES, facts["bytes"]
    assert not names & NOT_IN_CORE, names & NOT_IN_CORE
    assert {"evidex", "evidex-minilm-onnx", "langgraph", "duckdb", "onnxruntime"} <= names


@pytest.mark.shared_data
def test_ask_with_a_hosted_model_works_from_an_app_folder_with_the_core_install(core_venv, app_dir):
    """The core alone: ingest a PDF (flat vectors, ONNX embeddings) and ask it with --llm openai:<model> against an
    OpenAI-compatible server; a missing extra (the local model, the web page) is one line naming its install."""
    from openai_standin import ANSWER, KEY, Handler, standin_server
    from test_python_api import corpus_pdf

    python, _ = core_venv
    pdf = corpus_pdf("layoutparser-excerpt-2p.pdf")
    if pdf is None:
        pytest.skip("shared corpus not found (EVIDEX_CORPUS_DIR)")
    env = _env(app_dir) | {"HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": KEY}
    evidex = str(python.parent / "evidex")  # the console script: the commands a user types
    ingest = subprocess.run([evidex, "ingest", str(pdf), "--store-dir", "store"], cwd=app_dir,
                            env=env, capture_output=True, text=True, timeout=600)
    assert ingest.returncode == 0, ingest.stderr[-3000:]
    assert (app_dir / "store" / "vectors").is_dir() and not (app_dir / "store" / "chroma").exists()
    ask = [evidex, "ask", "--store-dir", "store", "What does LayoutParser provide?"]
    with standin_server() as url:
        proc = subprocess.run(ask + ["--llm", "openai:hosted-model", "--set", f"model.base_url={url}"], cwd=app_dir,
                              env=env, capture_output=True, text=True, timeout=600)
        seen = list(Handler.seen)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith(f"answer: {ANSWER}") and "cites: LayoutParser" in proc.stdout, proc.stdout
    assert seen and all(c["authorized"] and c["model"] == "hosted-model" for c in seen)
    # the trace command the answer names works from the app folder as printed (it once named graphs.trace)
    (trace_line,) = [line for line in proc.stdout.splitlines() if line.startswith("trace: ")]
    shown = trace_line.split("(", 1)[1].rstrip(")").split()
    assert shown[:2] == ["evidex", "trace"], trace_line
    tree = subprocess.run([evidex, *shown[1:]], cwd=app_dir, env=env, capture_output=True, text=True, timeout=300)
    assert tree.returncode == 0 and "Traceback" not in tree.stderr and tree.stdout.strip(), tree.stderr[-2000:]

    local = subprocess.run(ask, cwd=app_dir, env=env, capture_output=True, text=True, timeout=300)  # configs: local
    assert local.returncode != 0 and "Traceback" not in local.stderr
    assert local.stderr.strip().count("\n") == 0 and "pip install 'evidex[local]'" in local.stderr, local.stderr
    web = subprocess.run([evidex, "web", "--store-dir", "store"], cwd=app_dir, env=env,
                         capture_output=True, text=True, timeout=300)
    assert web.returncode == 2 and "pip install 'evidex[web]'" in web.stderr and "Traceback" not in web.stderr

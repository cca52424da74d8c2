"""The question-answering core's structure (issue 51): all QA-side SQL lives in the paper store's package, and the
generic layers name no benchmark paper, table row or model."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_SQL = re.compile(r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bCREATE\s+TABLE\b", re.IGNORECASE)


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            out.append((node.lineno, text))
    return out


def _docstrings(path: Path) -> set[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None and node.body:
                lines.add(node.body[0].lineno)
    return lines


def test_graphs_hold_no_sql():
    found = []
    for path in sorted((REPO / "graphs").rglob("*.py")):
        docs = _docstrings(path)
        found += [f"{path.relative_to(REPO)}:{n}" for n, text in _strings(path) if n not in docs and _SQL.search(text)]
    assert found == [], found


# names of benchmark papers, table rows and models a reader or rule was once written from
BENCHMARK_NAMES = ["MetaGPT", "GSM8k", "DialoGPT", "Mistral-7b", "MAmmoTH", "SimCSE", "LaBSE", "DecompX", "White-Box",
                   "G-EVAL", "ERRA", "AISO", "Compressive Transf", "PROFILE 1014", "P@R90", "LLaMA-2-7b"]


def test_generic_layers_name_no_benchmark_case():
    pattern = re.compile("|".join(re.escape(n) for n in BENCHMARK_NAMES), re.IGNORECASE)
    found = []
    for layer in ("tools", "agents", "graphs"):
        for path in sorted((REPO / layer).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:80]}")
    assert found == [], found


# where the tools and agents layers may write SQL: the paper store's reads, ingestion's writes, the connection and
# the model's own read-only query (tools.store, tools.sql), the live schema for prompts, and the flat vector store
SQL_HOMES = ("tools/paperstore/", "tools/ingest/", "tools/store.py", "tools/sql.py", "tools/schema_prompt.py",
             "tools/flatvectors.py")


def test_question_answering_reads_the_store_through_the_paper_store_only():
    found = []
    for layer in ("tools", "agents"):
        for path in sorted((REPO / layer).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith(SQL_HOMES):
                continue
            docs = _docstrings(path)
            found += [f"{rel}:{n}" for n, text in _strings(path) if n not in docs and _SQL.search(text)]
    assert found == [], found

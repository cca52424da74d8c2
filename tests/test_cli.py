"""The ``evidex`` command (graphs/cli.py): one entry point whose subcommands hand their arguments to each module's
own ``main(argv)``, run here as a user runs it, through the venv's console script; and the installed package's
user-facing text naming installed commands (``evidex run``, ``python -m evidex.tools.sql``), never checkout
modules (``python -m graphs.run``), which fail outside a checkout."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evidex.graphs.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
EVIDEX = Path(sys.executable).parent / "evidex"  # the console script pyproject.toml installs into this venv
PACKAGES = ("tools", "agents", "graphs", "evaluators", "configs", "prompts")  # installed as evidex.<name>


def evidex(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 300):
    return subprocess.run([str(EVIDEX), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env or os.environ.copy())


def example_lines(text: str, command: str) -> list[str]:
    """Lines of a help text that show ``evidex COMMAND ...`` being run (an optional VAR=... prefix allowed), the
    usage line excepted."""
    pattern = re.compile(rf"^\s*(?:[A-Z_]+=\S+\s+)*evidex {command}\b")
    return [line for line in text.splitlines() if pattern.match(line) and not line.startswith("usage:")]


# -- the command ---------------------------------------------------------------------------------------------------
def test_the_console_script_is_the_dispatcher():
    assert EVIDEX.is_file(), f"{EVIDEX} missing: reinstall the checkout (pip install --no-deps -e .)"
    assert "evidex.graphs.cli" in EVIDEX.read_text(), "the console script predates graphs/cli.py: reinstall"


def test_evidex_help_lists_every_command_with_one_line_and_examples(tmp_path):
    proc = evidex("--help", cwd=tmp_path)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    out = proc.stdout
    assert out.startswith("usage: evidex COMMAND")
    assert set(COMMANDS) >= {"run", "ask", "ingest", "trace", "web", "serve", "config"}
    for name, cmd in COMMANDS.items():
        (listed,) = [line for line in out.splitlines() if re.match(rf"^\s+{name}\s{{2,}}\S", line)]
        assert cmd.summary in listed, (name, listed)  # one line each, not wrapped
        assert example_lines(out, name), f"no example of evidex {name} in evidex --help"
    bare = evidex(cwd=tmp_path)  # evidex alone: the same help, exit 0
    assert bare.returncode == 0 and bare.stdout == out


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_has_its_own_help_with_examples(command, tmp_path):
    proc = evidex(command, "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"usage: evidex {command} "), proc.stdout[:200]
    assert example_lines(proc.stdout, command), f"evidex {command} --help shows no example"
    assert "python -m graphs" not in proc.stdout and "python -m tools" not in proc.stdout


@pytest.mark.parametrize("argv, says", [
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["rnu", "--task", "mixed"], "did you mean evidex run?"),
    (["--task", "mixed", "--limit", "5"], "evidex run --task mixed --limit 5"),  # the old single command
])
def test_a_wrong_command_is_one_line_and_exit_2(argv, says, tmp_path):
    proc = evidex(*argv, cwd=tmp_path)
    assert proc.returncode == 2 and not proc.stdout
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("evidex: ") and says in proc.stderr, proc.stderr
    assert "run, ask, ingest" in proc.stderr  # the commands there are


def test_the_arguments_reach_the_command_untouched(tmp_path):
    """Options, positionals and their order pass through as given: `evidex config` prints what its module prints,
    and `python -m graphs.run` keeps working in a checkout."""
    direct = subprocess.run([sys.executable, "-m", "evidex.graphs.show_config", "airqa", "--json"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    via = evidex("config", "airqa", "--json", cwd=tmp_path)
    assert via.returncode == direct.returncode == 0 and via.stdout == direct.stdout and '"key"' in via.stdout
    usage = evidex("config", "--no-such-option", cwd=tmp_path)  # the module's own argparse answers
    assert usage.returncode == 2 and "usage: evidex config" in usage.stderr and "--no-such-option" in usage.stderr
    listed = evidex("run", "--list", cwd=tmp_path)
    checkout = subprocess.run([sys.executable, "-m", "graphs.run", "--list"], capture_output=True, text=True,
                              timeout=300, cwd=REPO)
    assert listed.returncode == checkout.returncode == 0 and listed.stdout == checkout.stdout
    assert "civic:" in listed.stdout and "  mixed" in listed.stdout


def test_missing_data_names_the_setting_and_the_option(tmp_path):
    """No dataset: one line naming EVIDEX_DATA_DIR and --data-dir, no path of this machine's checkout layout."""
    empty = tmp_path / "empty"
    empty.mkdir()
    env = os.environ | {"EVIDEX_DATA_DIR": str(empty), "EVIDEX_CACHE_DIR": str(tmp_path / "cache"),
                        "EVIDEX_OFFLINE": "1"}
    proc = evidex("run", "--task", "mixed", "--limit", "1", "--out", "runs", cwd=tmp_path, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "EVIDEX_DATA_DIR" in proc.stderr and "--data-dir DIR to evidex run" in proc.stderr
    assert "shared" not in proc.stderr
    gone = evidex("run", "--task", "mixed", "--data-dir", str(tmp_path / "nope"), cwd=tmp_path, env=env)
    assert gone.returncode == 2 and gone.stderr.count("\n") == 1 and "is not a folder" in gone.stderr


@pytest.mark.shared_data
def test_data_dir_points_a_run_at_the_datasets(tmp_path, kit, kb_index, use_test_cache):
    """--data-dir wins over EVIDEX_DATA_DIR for the run: a model-free mixed item runs from an empty setting."""
    kit.require_task_data("mixed")
    data = os.environ["EVIDEX_DATA_DIR"]
    env = os.environ | {"EVIDEX_DATA_DIR": str(tmp_path), "EVIDEX_OFFLINE": "1"}
    proc = evidex("run", "--task", "mixed", "--limit", "1", "--data-dir", data, "--out", "runs", "--no-progress",
                  "--set", "steps.write=false", "--set", "judge.llm_stance=false", "--set", "tracing.enabled=false",
                  cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "items: 1/1 ok, errors: 0" in proc.stdout


# -- no checkout module names in what the installed package shows users --------------------------------------------
CHECKOUT_COMMAND = re.compile(r"(?:python3?\s+)?-m\s+(?:graphs|tools|agents|evaluators)\.\w+")
CHECKOUT_INSTALL = re.compile(r"pip install -e|\.\./shared")


def user_facing_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the string constants of a module that a user can see: every one except docstrings; a
    module docstring counts when the module reads ``__doc__`` (its --help text). f-strings' literal parts count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings: set[int] = set()
    for node in ast.walk(tree):  # a bare string statement is a docstring (module, class, function or attribute)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.add(id(node.value))
    reads_doc = any(isinstance(n, ast.Name) and n.id == "__doc__" for n in ast.walk(tree))
    module_doc = tree.body[0].value if tree.body and isinstance(tree.body[0], ast.Expr) else None
    if reads_doc and module_doc is not None:
        docstrings.discard(id(module_doc))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def checkout_names(root: Path) -> list[str]:
    """Every user-facing string under the package folders of ``root`` that names a checkout module or a checkout
    install: Python string constants (see above) and whole non-Python files shipped with the package (the web
    page's script, configs, prompts)."""
    found = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(root)
            if path.suffix == ".py":
                texts = user_facing_strings(path)
            elif path.suffix in (".js", ".html", ".css", ".yaml", ".yml", ".txt", ".md", ".json"):
                texts = list(enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1))
            else:
                continue
            for line, text in texts:
                for pattern in (CHECKOUT_COMMAND, CHECKOUT_INSTALL):
                    for m in pattern.finditer(text):
                        found.append(f"{rel}:{line}: {m.group(0)!r} in {text.strip()[:100]!r}")
    return found


def test_no_user_facing_string_names_a_checkout_module():
    found = checkout_names(REPO)
    assert not found, "name installed commands (evidex run, python -m evidex.tools.sql) instead:\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for(tmp_path):
    """The scanner sees help text, messages, f-strings and a docstring used as --help, and skips other docstrings."""
    pkg = tmp_path / "graphs"
    pkg.mkdir()
    (pkg / "a.py").write_text('"""python -m graphs.a: the help."""\nimport argparse\n'
                              'p = argparse.ArgumentParser(description=__doc__)\n')
    (pkg / "b.py").write_text('"""python -m graphs.b is only a developer note."""\n'
                              'def f(x):\n    """python -m graphs.f: also a note."""\n'
                              '    raise ValueError(f"run python -m tools.ingest {x} first")\n'
                              'HINT = "pip install -e .[web]"\n')
    (pkg / "app.js").write_text('throw new Error("is python -m graphs.web running?");\n')
    found = checkout_names(tmp_path)
    assert [f.split(":")[0] for f in found] == ["graphs/a.py", "graphs/app.js", "graphs/b.py", "graphs/b.py"], found
    assert not any("developer note" in f or "also a note" in f for f in found)

"""Dependency directions, checked on every import statement of every package module (module level and inside
functions alike, so a lazy import cannot hide a wrong direction or a cycle):

    tools (ground floor) <- agents <- graphs          evaluators may use tools and agents, never graphs

No import cycles inside a package; CIViC knowledge (``agents/civic``) is reached only through the gate registry
(``agents/gates.py``), never by the generic graphs."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("tools", "agents", "graphs", "evaluators")
FORBIDDEN = {"tools": {"agents", "graphs", "evaluators"}, "agents": {"graphs", "evaluators"},
             "evaluators": {"graphs"}, "graphs": set()}
CIVIC = "evidex.agents.civic"
CIVIC_DOORS = {"evidex.agents.gates"}  # the plug-in registry is the one way in


def module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["evidex", *parts])


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}


def imports_of(path: Path, name: str) -> set[str]:
    """Every evidex module ``path`` imports (``from evidex.x import y`` counts ``evidex.x.y`` when that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return {m for m in out if m.startswith("evidex.")}


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {name: {m for m in imports_of(path, name) if m in modules and m != name}
            for name, path in modules.items()}


def layer(module: str) -> str:
    return module.split(".")[1]


def test_every_package_module_is_seen():
    modules = package_modules()
    assert "evidex.graphs.runner" in modules and "evidex.tools.claims" in modules
    assert len(modules) > 60


def test_imports_point_down_only():
    wrong = [f"{src} imports {dst}" for src, dsts in import_graph().items() for dst in dsts
             if layer(dst) in FORBIDDEN[layer(src)]]
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles_inside_a_package():
    graph = import_graph()
    cycles = []
    for pkg in PACKAGES:
        nodes = {m for m in graph if layer(m) == pkg}
        edges = {m: {d for d in graph[m] if d in nodes and not _is_parent(d, m)} for m in nodes}
        cycles += _cycles(edges)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_civic_knowledge_is_reached_only_through_the_gate_registry():
    outside = [f"{src} imports {dst}" for src, dsts in import_graph().items() for dst in dsts
               if dst.startswith(CIVIC) and not src.startswith(CIVIC) and src not in CIVIC_DOORS]
    assert not outside, "\n".join(sorted(outside))


def test_the_test_walks_real_edges():
    """Control: the walker sees the edges the code has (a walker that saw none would pass everything)."""
    graph = import_graph()
    assert "evidex.tools.claims" in graph["evidex.graphs.claims.nodes"]
    assert "evidex.agents.civic.gate" in graph["evidex.agents.gates"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) and not _cycles({"a": {"b"}, "b": set()})


def _is_parent(pkg: str, module: str) -> bool:
    # ``from evidex.graphs.claims import family`` names the package too; a package importing nothing back is fine
    return module.startswith(pkg + ".")


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    succ = defaultdict(set, edges)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found

"""``evidex trace``: inspect the run trees a run wrote under ``traces/`` (like LangSmith's run view).

Examples:
  evidex trace                        # list the run folders under runs/
  evidex trace --last                 # list the items of the newest run
  evidex trace runs/20261122-002021-mixed --item mixed-000      # print one item's run tree
  evidex trace --last --item mixed-000 --io                      # ... with inputs/outputs previews
  evidex trace --last --html traces.html                         # self-contained HTML viewer (all items)
  evidex trace runs/X/traces/mixed-000.json                      # a single trace file

The tree shows, per node: name, run_type (chain / llm / tool / retriever), latency, prompt→completion tokens
and a red ✗ with the error when the node failed. The HTML viewer (``graphs/trace_html.py``) works offline.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evidex.graphs.trace_tree import (ERROR_MARK, OK_MARK, TraceError, TraceItem, count_nodes, find_item,  # noqa: F401
                                      first_line, fmt_latency, is_run_dir, latency_s, latest_run, list_runs,
                                      load_items, load_trace, parse_time, run_info, tokens_of, walk)
from evidex.tools.cli_help import plain_help
from evidex.tools.safe_text import terminal_text as _escape
from evidex.tools.safe_text import visible_controls

RUN_TYPE_STYLE = {"chain": "cyan", "llm": "magenta", "chat_model": "magenta", "tool": "yellow",
                  "retriever": "green", "prompt": "blue", "parser": "blue", "embedding": "green"}


# -- terminal ---------------------------------------------------------------------------------------------
def _preview(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_label(node: dict[str, Any]):
    from rich.text import Text

    rt = node.get("run_type", "?")
    label = Text()
    if node.get("error"):
        label.append(f"{ERROR_MARK} ", style="bold red")
    label.append(visible_controls(node.get("name", "?")), style="bold red" if node.get("error") else "bold")
    label.append(f"  {rt}", style=RUN_TYPE_STYLE.get(rt, "white"))
    label.append(f"  {fmt_latency(latency_s(node))}", style="dim")
    p, c = tokens_of(node)
    if p or c:
        label.append(f"  {p}→{c} tok", style="dim")
    if node.get("error"):
        label.append(f"  {visible_controls(first_line(node['error']))}", style="red")
    return label


def build_rich_tree(tree: dict[str, Any], *, max_depth: int | None = None, show_io: bool = False):
    from rich.tree import Tree

    def add(parent, node, depth):
        branch = parent.add(node_label(node))
        if show_io:
            if node.get("inputs"):
                branch.add(f"[dim]in:[/dim]  {_escape(_preview(node['inputs']))}")
            if node.get("outputs"):
                branch.add(f"[dim]out:[/dim] {_escape(_preview(node['outputs']))}")
        if max_depth is not None and depth >= max_depth:
            if node.get("child_runs"):
                branch.add(f"[dim]… {len(node['child_runs'])} child runs (raise --depth)[/dim]")
            return
        for child in node.get("child_runs") or []:
            add(branch, child, depth + 1)

    root = Tree(node_label(tree))
    if show_io:
        if tree.get("inputs"):
            root.add(f"[dim]in:[/dim]  {_escape(_preview(tree['inputs']))}")
        if tree.get("outputs"):
            root.add(f"[dim]out:[/dim] {_escape(_preview(tree['outputs']))}")
    for child in tree.get("child_runs") or []:
        add(root, child, 1)
    return root


def print_runs(console, runs_dir: Path) -> None:
    from rich.table import Table

    runs = list_runs(runs_dir)
    if not runs:
        console.print(f"No run folders under {runs_dir}. Pass RUN_DIR or --runs-dir.")
        return
    table = Table(title=f"Runs under {runs_dir}", title_justify="left")
    for col in ("run", "task", "model", "status", "items", "errors"):
        table.add_column(col, justify="right" if col in ("items", "errors") else "left")
    from evidex.tools.runfolder import run_state

    for path in runs:
        info = run_info(path)
        errs = info.get("n_errors")
        state = run_state(path)["state"] if info.get("status") == "running" else info.get("status", "")
        table.add_row(_escape(path.name), _escape(info.get("task", "")), _escape(info.get("model", "")),
                      ("[red]dead[/red] (--resume it)" if state == "dead" else _escape(state)),
                      str(info.get("n_items", "")), f"[red]{errs}[/red]" if errs else str(errs if errs is not None else ""))
    console.print(table)
    console.print(f"[dim]Show one: evidex trace {runs[-1]}  (or --last)[/dim]")


def print_items(console, run_dir: Path, items: list[TraceItem]) -> None:
    from rich.table import Table

    info = run_info(run_dir)
    table = Table(title=_escape(f"{run_dir.name} · task {info.get('task', '?')} · model {info.get('model', '?')}"),
                  title_justify="left")
    for col in ("", "item", "tags", "latency", "tokens", "nodes", "llm", "error"):
        table.add_column(col, justify="right" if col in ("latency", "tokens", "nodes", "llm") else "left",
                         overflow="fold")
    for it in items:
        tree = it.tree
        n, llm, _ = count_nodes(tree) if tree else (0, 0, 0)
        lat = it.row.get("latency_s", latency_s(tree) if tree else None)
        tok = it.row.get("tokens") or ({"prompt": tree.get("prompt_tokens", 0),
                                         "completion": tree.get("completion_tokens", 0)} if tree else {})
        mark = f"[bold red]{ERROR_MARK}[/bold red]" if it.error else f"[green]{OK_MARK}[/green]"
        table.add_row(mark, _escape(it.id), _escape(",".join(it.row.get("tags", []))), fmt_latency(lat),
                      f"{tok.get('prompt', 0)}→{tok.get('completion', 0)}" if tok else "",
                      str(n) if tree else "[dim]no trace[/dim]", str(llm) if tree else "",
                      f"[red]{_escape(first_line(it.error, 90))}[/red]" if it.error else "")
    console.print(table)
    if items:
        console.print(f"[dim]Tree of one item: evidex trace {_escape(run_dir)} --item {_escape(items[0].id)}   "
                      f"HTML: --html trace.html[/dim]")


def print_item(console, item: TraceItem, *, max_depth: int | None = None, show_io: bool = False) -> None:
    tree = item.tree
    if tree is None:
        console.print(f"[yellow]Item {_escape(item.id)} has no trace file[/yellow]"
                      + (f" — error: [red]{_escape(item.error)}[/red]" if item.error else
                         " (tracing was off for this run?)"))
        return
    console.print(build_rich_tree(tree, max_depth=max_depth, show_io=show_io))
    n, llm, err = count_nodes(tree)
    p, c = tokens_of(tree)
    console.print(f"[dim]{n} nodes, {llm} LLM calls, {p}→{c} tokens, {fmt_latency(latency_s(tree))}"
                  + (f", [red]{err} with errors[/red]" if err else "") + "[/dim]")
    if item.row.get("error") and not tree.get("error"):
        console.print(f"[red]{ERROR_MARK} item error: {_escape(item.row['error'])}[/red]")
    for part in tree.get("degraded") or item.row.get("degraded") or []:
        console.print(f"[yellow]degraded: {_escape(part.get('part', '?'))} search unavailable "
                      f"({_escape(part.get('reason', ''))})[/yellow]")


# -- CLI --------------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="evidex trace", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", nargs="?", type=Path, help="a run folder (runs/<run_id>) or a trace .json file")
    p.add_argument("--last", action="store_true", help="use the newest run folder under --runs-dir")
    p.add_argument("--runs-dir", type=Path, help="where run folders live (default: EVIDEX_RUNS_DIR or runs/)")
    p.add_argument("--item", help="print the run tree of this item id")
    p.add_argument("--html", type=Path, metavar="OUT.html", help="write a self-contained HTML viewer "
                   "(all items, or only --item)")
    p.add_argument("--depth", type=int, help="print at most this many levels below the root")
    p.add_argument("--io", action="store_true", help="show one-line previews of inputs and outputs")
    return p.parse_args(argv)


def _default_runs_dir() -> Path:
    try:
        from evidex.tools.settings import get_settings
        return Path(get_settings().runs_dir)
    except Exception:  # noqa: BLE001 - a broken .env must not stop the viewer
        return Path("runs")


def main(argv: list[str] | None = None, console=None) -> int:
    from rich.console import Console

    args = parse_args(argv)
    console = console or Console()
    try:
        return _main(args, console)
    except TraceError as exc:
        console.print(f"[red]error:[/red] {_escape(str(exc))}")
        return 2


def _main(args: argparse.Namespace, console) -> int:
    from evidex.graphs.trace_html import write_trace_html

    runs_dir = args.runs_dir or _default_runs_dir()
    if args.run_dir is not None and args.run_dir.is_file():  # a single trace file
        item = TraceItem(id=args.run_dir.stem, trace_path=args.run_dir)
        load_trace(args.run_dir)
        print_item(console, item, max_depth=args.depth, show_io=args.io)
        if args.html:
            out = write_trace_html(args.html, [item], info={"run_id": args.run_dir.stem})
            console.print(f"wrote {out}")
        return 0
    if args.run_dir is not None:
        if not is_run_dir(args.run_dir):
            raise TraceError(f"{args.run_dir} is not a run folder (no config.yaml, results.jsonl or traces/).")
        run_dir = args.run_dir
    elif args.last:
        run_dir = latest_run(runs_dir)
    else:
        if args.item or args.html:
            raise TraceError("--item/--html need a RUN_DIR or --last")
        print_runs(console, runs_dir)
        return 0
    items = load_items(run_dir)
    if args.item:
        item = find_item(items, args.item)
        print_item(console, item, max_depth=args.depth, show_io=args.io)
        selected = [item]
    else:
        print_items(console, run_dir, items)
        selected = items
    if args.html:
        out = write_trace_html(args.html, selected, info=run_info(run_dir))
        console.print(f"wrote {out} ({len(selected)} item{'s' if len(selected) != 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

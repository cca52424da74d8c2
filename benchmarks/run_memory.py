"""Resident memory and time of finished runs, side by side (issue 25, "memory that stays flat").

Reads run folders (``results.jsonl`` rows carry ``rss_mb`` after each item; ``run.json`` the process peak) and
prints, per run: items, wall minutes, median item latency, resident memory after the fifth and the last item,
their ratio, the highest after any item and the process peak; ``--label`` names the runs in the table and JSON.

    python -m graphs.run --task mixed                       # then, for two or more runs of the same task:
    python -m benchmarks.run_memory runs/A runs/B --label before --label after --json benchmarks/results/x.json

The flat-memory target is ``last / fifth <= 1.10`` and a peak of at most 2.5 GiB (2,560 MiB).
"""
from __future__ import annotations

import argparse
import json
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help
from evidex.tools.runfolder import read_results


def run_memory(run_dir: Path) -> dict[str, Any]:
    """The memory and time figures of one finished run folder."""
    rows = read_results(run_dir / "results.jsonl")
    if not rows:
        raise SystemExit(f"{run_dir}: no results.jsonl rows (not a run folder, or no item finished)")
    status = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    rss = [r["rss_mb"] for r in rows if r.get("rss_mb") is not None]
    if len(rss) < 5:
        raise SystemExit(f"{run_dir}: fewer than 5 items record rss_mb (runs before issue 25 do not)")
    minutes = None
    if status.get("started") and status.get("finished"):
        span = datetime.fromisoformat(status["finished"]) - datetime.fromisoformat(status["started"])
        minutes = round(span.total_seconds() / 60, 1)
    return {"run": status.get("run_id", run_dir.name), "task": status.get("task"), "items": len(rows),
            "wall min": minutes, "item latency median s": round(statistics.median(r["latency_s"] for r in rows), 1),
            "rss after item 5 MiB": rss[4], "rss after last MiB": rss[-1],
            "last / fifth": round(rss[-1] / rss[4], 3), "max after an item MiB": max(rss),
            "peak MiB": (status.get("memory") or {}).get("peak_rss_mb")}


def print_table(rows: list[dict]) -> None:
    table = Table(title="Resident memory and time per run (MiB)")
    for key in rows[0]:
        table.add_column(key, justify="left" if key in ("label", "run", "task") else "right")
    for r in rows:
        table.add_row(*[str(v) for v in r.values()])
    Console(width=max(200, Console().width)).print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run_memory", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="finished run folders")
    p.add_argument("--label", action="append", default=[], help="a name per run, in order (default: the run id)")
    p.add_argument("--json", type=Path, help="write the table here as JSON (e.g. benchmarks/results/NAME.json)")
    args = p.parse_args(argv)
    if args.label and len(args.label) != len(args.runs):
        p.error(f"give one --label per run ({len(args.runs)}), or none")
    rows = []
    for i, run_dir in enumerate(args.runs):
        row = run_memory(run_dir)
        rows.append({"label": args.label[i] if args.label else row["run"], **row})
    print_table(rows)
    if args.json:
        write_results(args.json, {"rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

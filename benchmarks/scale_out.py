"""Ray executor vs the local one: items per minute on the same items, the same cores, a scripted model.

    python -m benchmarks.scale_out --items 16 --delay 0.5 --workers 1,2

Each configuration is one ``python -m graphs.run`` process (so no run reuses another's warm caches) on the
claim task ``wrong_evidence`` with a SCRIPTED model that sleeps ``--delay`` seconds per call and always gives the
same reply (model stance off, so one call per item): it measures the executors' overhead and
how they overlap waiting on a model, not a real model's speed. Per run: wall time of the process, the items
phase (run.json ``executor.items_s``: first item handed out to last row written), Ray's start-up (``startup_s``:
the Ray, its workers and their graphs), items per minute over the items phase, and the Ray/local ratio at the
same number of workers. JSON: ``benchmarks/results/scale.json`` under ``scale_out`` (beside ``benchmarks.scale``'s
``sizes``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import write_results

TASK = "wrong_evidence"
DEFAULT_JSON = Path("benchmarks/results/scale.json")
PART = "scale_out"  # the key of this benchmark's result in the results file
SETS = ["judge.llm_stance=false"]
WHY = {"sentences": [{"text": "The evidence bears on the claim.", "ids": ["1"]}]}


def one_run(executor: str, workers: int, items: int, delay: float, folder: Path) -> dict:
    script = folder / "replies.json"
    script.write_text(json.dumps({"replies": [WHY], "repeat": True, "delay_s": delay}))
    out = folder / f"{executor}-{workers}"
    args = [sys.executable, "-m", "evidex.graphs.run", "--task", TASK, "--limit", str(items), "--llm",
            f"scripted:{script}", "--out", str(out), "--no-progress", "--executor", executor,
            "--concurrency", str(workers)]
    for s in SETS:
        args += ["--set", s]
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ), check=False)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{executor} x{workers} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    run = next(p for p in out.iterdir() if p.is_dir())
    status = json.loads((run / "run.json").read_text())
    rows = [json.loads(ln) for ln in (run / "results.jsonl").read_text().splitlines()]
    ex = status["executor"]
    return {"executor": executor, "workers": workers, "items": len(rows), "errors": sum(r["error"] is not None for r in rows),
            "unique_ids": len({r["id"] for r in rows}), "wall_s": round(wall, 2), "items_s": ex["items_s"],
            "startup_s": ex.get("startup_s"), "items_per_min": round(60 * len(rows) / ex["items_s"], 2),
            "median_item_s": sorted(r["latency_s"] for r in rows)[len(rows) // 2]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=16)
    p.add_argument("--delay", type=float, default=0.5, help="seconds per scripted model call")
    p.add_argument("--workers", default="1,2", help="comma-separated worker / thread counts")
    p.add_argument("--rounds", type=int, default=1, help="repeat the sweep (the executor order alternates); the "
                   "summary is the median per configuration")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON,
                   help=f"results file, one key per part (default {DEFAULT_JSON}, under {PART})")
    args = p.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="evidex-scale-out-") as tmp:
        for rnd in range(args.rounds):
            for n in [int(x) for x in args.workers.split(",")]:
                for executor in (("local", "ray") if rnd % 2 == 0 else ("ray", "local")):
                    folder = Path(tmp) / f"round{rnd}"
                    folder.mkdir(exist_ok=True)
                    r = {"round": rnd, **one_run(executor, n, args.items, args.delay, folder)}
                    results.append(r)
                    print(json.dumps(r), flush=True)
    for r in results:
        pair = [x for x in results if x["round"] == r["round"] and x["workers"] == r["workers"]
                and x["executor"] == "local"]
        if r["executor"] == "ray" and pair:
            r["ray_over_local_items_s"] = round(r["items_s"] / pair[0]["items_s"], 3)
    summary = []
    for n in sorted({r["workers"] for r in results}):
        row = {"workers": n}
        for ex in ("local", "ray"):
            runs = [r for r in results if r["executor"] == ex and r["workers"] == n]
            row[f"{ex}_items_per_min_median"] = statistics.median(r["items_per_min"] for r in runs)
            if ex == "ray":
                row["ray_startup_s_median"] = statistics.median(r["startup_s"] for r in runs)
        row["ray_over_local_median"] = statistics.median(
            r["ray_over_local_items_s"] for r in results if r.get("ray_over_local_items_s") and r["workers"] == n)
        summary.append(row)
        print(json.dumps(row), flush=True)
    table = Table(title=f"{TASK}, {args.items} items, scripted model {args.delay} s per call (not a real model)")
    for col in ("round", "executor", "workers", "items/min", "items phase s", "Ray start-up s", "wall s", "ray/local"):
        table.add_column(col)
    for r in results:
        table.add_row(str(r["round"]), r["executor"], str(r["workers"]), f"{r['items_per_min']:.1f}", f"{r['items_s']:.1f}",
                      "" if r["startup_s"] is None else f"{r['startup_s']:.1f}", f"{r['wall_s']:.1f}",
                      f"{r.get('ray_over_local_items_s', '')}")
    Console().print(table)
    load = os.getloadavg()
    write_results(args.json, {"task": TASK, "items": args.items, "model": f"scripted, {args.delay} s per call",
                              "cores": os.cpu_count(), "load_avg_1_5_15": [round(x, 2) for x in load],
                              "summary": summary, "runs": results}, part=PART)
    return 0


if __name__ == "__main__":
    sys.exit(main())

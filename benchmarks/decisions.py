"""Gate-only decision snapshot: every model-free decision of the claim graphs, for before/after comparisons.

    python -m benchmarks.decisions --out /tmp/before.json                 # all 66 CIViC items x 7 tasks + R4C
    python -m benchmarks.decisions --out /tmp/after.json
    python -m benchmarks.decisions --compare /tmp/before.json /tmp/after.json

Each task runs through the normal runner with the model switched off (``steps.write=false``, no model stance),
so what is recorded is exactly what the gates decide: per item the id, source, label, kept flag, reason and
score of every evidence decision, the added/discarded ids, the selected claim, the assignment and the verdict.
``--compare`` prints, per task, how many items differ and the first differences; exit status 1 when any do.
A refactor that must not change behaviour keeps this identical.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

TASKS = ("wrong_evidence", "baseline", "missing_evidence", "selection", "assignment", "mixed", "wrong_claim", "r4c")
GATE_ONLY = ["steps.write=false", "judge.llm_stance=false"]
KEPT_FIELDS = ("decisions", "kept_ids", "added_ids", "discarded_ids", "selected_claim", "assignment", "supported",
               "queries")


def snapshot(tasks: tuple[str, ...], limit: int | None) -> dict[str, dict[str, dict]]:
    """task -> item id -> the decision fields of its prediction (or its error)."""
    from evidex.graphs.tasks import config_for_task
    from evidex.graphs.runner import run_task
    from evidex.tools.runfolder import read_results

    out: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            sets = list(GATE_ONLY) + ([f"dataset.limit={limit}"] if limit else []) + ["tracing.enabled=false"]
            run_dir = run_task(config_for_task(task, sets), out_dir=Path(tmp), progress=False)
            rows = read_results(run_dir / "results.jsonl")
            out[task] = {r["id"]: ({k: (r["prediction"] or {}).get(k) for k in KEPT_FIELDS} if r["prediction"]
                                   else {"error": r["error"]}) for r in rows}
            print(f"{task}: {len(rows)} items", flush=True)
    return out


def compare(before: dict, after: dict, show: int = 5) -> int:
    """Print the differences; the number of items that differ."""
    differing = 0
    for task in sorted(set(before) | set(after)):
        a, b = before.get(task, {}), after.get(task, {})
        ids = sorted(set(a) | set(b))
        diff = [i for i in ids if a.get(i) != b.get(i)]
        differing += len(diff)
        print(f"{task:<17} {len(ids):>3} items  {len(diff):>3} differ")
        for i in diff[:show]:
            print(f"    {i}: before {json.dumps(a.get(i))[:300]}\n    {' ' * len(i)}  after  {json.dumps(b.get(i))[:300]}")
    return differing


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.decisions", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default=",".join(TASKS))
    p.add_argument("--limit", type=int, help="first N items of each task (default: all)")
    p.add_argument("--out", type=Path, help="write the snapshot here")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two snapshots")
    args = p.parse_args(argv)
    if args.compare:
        before, after = (json.loads(path.read_text()) for path in args.compare)
        differing = compare(before, after)
        print("identical" if not differing else f"{differing} items differ")
        return 1 if differing else 0
    if not args.out:
        p.error("give --out FILE (or --compare BEFORE AFTER)")
    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    write_results(args.out, snapshot(tasks, args.limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())

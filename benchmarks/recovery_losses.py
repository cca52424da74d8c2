"""Where missing-evidence recovery loses its recall: every hidden missing item of finished CIViC runs, by kind
and by the decision that left it out.

Kinds (read from the data for scoring only; nothing here reaches a graph):

* ``several claims`` — CIViC files the item under two or three assertions (the ``baseline.json``
  evidence lists), so a competing claim fits it as well as this one does;
* ``variant not named`` — the claim's profile names a specific variant (``VHL R167Q``) and the item's text never
  does ("This missense mutation was found in ..."): only the variant class tells such items apart;
* ``other``.

Outcomes: ``added``, ``not retrieved`` (outside the top ``retrieval.k``), or the gate check that rejected it.

    python -m benchmarks.recovery_losses runs/<missing_evidence run> runs/<mixed run>
"""
from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from evidex.agents.civic.variants import PROFILE_KEY, names_own_variant
from benchmarks import write_results
from evidex.tools.claim_data import load_kb, load_task
from evidex.graphs.runner import read_results
from evidex.tools.cli_help import plain_help

DEFAULT_JSON = Path("benchmarks/results/retrieval.json")  # under "recovery_losses", beside benchmarks.retrieval
KINDS = ("other", "variant not named", "several claims")
OUTCOMES = ("added", "not retrieved", "competing claim", "score ratio", "another variant", "near-copy", "facets",
            "neighbours", "other check")
CHECKS = (  # a phrase of each agents.candidate_gate reason -> the check's name
    ("another known claim", "competing claim"), ("of the best score", "score ratio"),
    ("another variant", "another variant"), ("repeats kept item", "near-copy"), (r"names \S+ of the claim", "facets"),
    ("nearest KB neighbours", "neighbours"),
)


def owners_by_item() -> Counter:
    """How many baseline claims file each KB item (their evidence lists: gold, used for scoring only)."""
    count: Counter = Counter()
    for item in load_task("baseline", shuffle=False):
        count.update({e.id for e in item.input.evidence})
    return count


def kind_of(item_id: str, text: str, profile: str, owners: Counter) -> str:
    if owners[item_id] > 1:
        return "several claims"
    if names_own_variant(profile, text) is False:
        return "variant not named"
    return "other"


def outcome_of(item_id: str, prediction: dict) -> str:
    if item_id in prediction["added_ids"]:
        return "added"
    decision = next((d for d in prediction["decisions"] if d["id"] == item_id), None)
    if decision is None:
        return "not retrieved"
    return next((name for phrase, name in CHECKS if re.search(phrase, decision["reason"])), "other check")


def analyse_run(run_dir: Path, owners: Counter, kb: dict[str, str]) -> dict:
    rows = [r for r in read_results(run_dir / "results.jsonl") if r.get("prediction")]
    if not rows:
        raise ValueError(f"{run_dir} has no finished items in results.jsonl")
    task = rows[0]["task"]
    if task not in ("missing_evidence", "mixed"):
        raise ValueError(f"{run_dir} is a {task} run; recovery losses need missing_evidence or mixed")
    gold = {it.input.id: it for it in load_task(task)}
    table = {kind: Counter() for kind in KINDS}
    for row in rows:
        item = gold[row["id"]]
        profile = item.input.claims["claim"].context.get(PROFILE_KEY, "")
        for mid in item.gold.missing_ids:
            table[kind_of(mid, kb.get(mid, ""), profile, owners)][outcome_of(mid, row["prediction"])] += 1
    total = sum(sum(c.values()) for c in table.values())
    added = sum(c["added"] for c in table.values())
    other = table["other"]
    return {"task": task, "run": run_dir.name, "items": len(rows), "missing": total, "added": added,
            "recall": round(added / total, 3) if total else None,
            # a gate that found every unambiguous item and none of the others
            "recall_if_all_other_added": round((added + sum(other.values()) - other["added"]) / total, 3)
            if total else None,
            "by_kind": {kind: {o: c[o] for o in OUTCOMES if c[o]} for kind, c in table.items()}}


def print_table(results: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    shown = [o for o in OUTCOMES if any(counts.get(o) for res in results for counts in res["by_kind"].values())]
    table = Table(title="Hidden missing evidence: kind x outcome")
    for col in ("task", "kind", "missing", *shown):
        table.add_column(col, justify="left" if col in ("task", "kind") else "right", no_wrap=True)
    for res in results:
        for kind, counts in res["by_kind"].items():
            table.add_row(res["task"], kind, str(sum(counts.values())), *(str(counts.get(o, "")) for o in shown))
        table.add_row(res["task"], "all", str(res["missing"]), str(res["added"]), *[""] * (len(shown) - 1),
                      end_section=True)
    Console(width=max(140, Console().width)).print(table)
    for res in results:
        print(f"{res['task']}: recall {res['recall']}; with every 'other' item added: "
              f"{res['recall_if_all_other_added']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.recovery_losses", description=plain_help(__doc__),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="finished missing_evidence / mixed run folders")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to write the results ({DEFAULT_JSON})")
    args = ap.parse_args(argv)
    for run in args.runs:
        if not (run / "results.jsonl").is_file():
            ap.error(f"{run} is not a run folder (no results.jsonl)")
    owners, kb = owners_by_item(), {e.id: e.text for e in load_kb()}
    try:
        results = [analyse_run(run, owners, kb) for run in args.runs]
    except ValueError as exc:
        ap.error(str(exc))
    print_table(results)
    write_results(args.json, results, part="recovery_losses")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

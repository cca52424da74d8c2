"""Claim-explainer paths side by side (issues 20 and 24: legacy, fast, grounded), used by
``benchmarks.explainers --paths legacy,fast,grounded``.

Each (task, path) runs through ``graphs.runner.run_task`` with ``--set speed.path=<path>`` and leaves a normal
run folder. A manifest in the runs folder (``explainers-paths.json``) records which run folder belongs to which
(task, path, settings) and how long each run took; ``--resume`` finishes an interrupted run in place and reuses
complete ones, so a one-hour comparison survives a Ctrl-C.

Per task and path: seconds per item (median, p90), model calls, prompt / cached / completion tokens per item,
the whole run's minutes, and the quality metrics. Per task: how often the two paths give a kept item the same
stance label (the data has no gold stance; the target is >= 95%), and whether the model-free gate kept the
same items (it must: the paths differ only in how the model is asked).
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidex.graphs.claims.config import SPEED_PRESETS

PATHS = tuple(SPEED_PRESETS)  # legacy, fast, grounded
MANIFEST = "explainers-paths.json"


@dataclass(frozen=True)
class PathRun:
    """One (task, path) run of a comparison."""

    task: str
    path: str
    sets: tuple[str, ...]  # every --set of the run, speed.path included

    @property
    def key(self) -> str:
        digest = hashlib.sha1("\n".join(self.sets).encode()).hexdigest()[:10]
        return f"{self.task}/{self.path}/{digest}"


def plan(tasks: list[str], paths: list[str], *, limit: int, concurrency: int | None = None, llm: str | None = None,
         sets: list[str] = ()) -> list[PathRun]:
    """The runs of a comparison, in order: each task's paths one after another."""
    unknown = [p for p in paths if p not in PATHS]
    if unknown:
        raise ValueError(f"unknown path(s) {', '.join(unknown)}; known: {', '.join(PATHS)}")
    common = list(sets) + [f"dataset.limit={limit}"]
    if concurrency is not None:
        common.append(f"run.concurrency={concurrency}")
    if llm:
        common.append(f"model.spec={llm}")
    return [PathRun(task=t, path=p, sets=tuple(common + [f"speed.path={p}"])) for t in tasks for p in paths]


class Manifest:
    """``<out>/explainers-paths.json``: run key -> {run folder relative to ``out``, seconds spent}. Each run key
    has its own parent folder (``<out>/<task>-<path>-<digest>/``), so an interrupted run is found again."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.path = self.out / MANIFEST
        self.data: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            try:
                self.data = json.loads(self.path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                self.data = {}

    def parent(self, run: PathRun) -> Path:
        return self.out / run.key.replace("/", "-")

    def latest(self, run: PathRun) -> Path | None:
        """The newest run folder of ``run`` (complete or not), or None."""
        parent = self.parent(run)
        folders = sorted(p for p in parent.iterdir() if (p / "config.yaml").is_file()) if parent.is_dir() else []
        return folders[-1] if folders else None

    def record(self, run: PathRun, run_dir: Path, seconds: float, *, add: bool) -> None:
        entry = self.data.get(run.key) or {}
        same = entry.get("run") == str(run_dir.relative_to(self.out))
        spent = (entry.get("seconds", 0.0) if add and same else 0.0) + seconds
        self.data[run.key] = {"task": run.task, "path": run.path, "run": str(run_dir.relative_to(self.out)),
                              "seconds": round(spent, 1), "sets": list(run.sets)}
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.data, indent=1), encoding="utf-8")
        tmp.replace(self.path)

    def seconds(self, run: PathRun) -> float | None:
        return (self.data.get(run.key) or {}).get("seconds")


def execute(runs: list[PathRun], *, out: Path, resume: bool = False, llm=None, embedder=None, index=None,
            progress: bool = True, on_done=None) -> dict[PathRun, Path]:
    """Run (or with ``resume``, finish or reuse) every planned run; returns run -> run folder. ``on_done(run,
    run_dir)`` is called after each (a running table)."""
    from evidex.graphs.runner import run_task
    from evidex.graphs.tasks import config_for_task
    from evidex.tools.runfolder import read_status

    configs = {r: config_for_task(r.task, list(r.sets)) for r in runs}  # every config checked before the first run
    manifest = Manifest(out)
    done: dict[PathRun, Path] = {}
    for run in runs:
        previous = manifest.latest(run) if resume else None
        if previous is not None and read_status(previous).get("status") == "complete" \
                and (previous / "metrics.json").is_file():
            print(f"{run.task} / {run.path}: reusing the complete run {previous.name}", flush=True)
            done[run] = previous
        else:
            if previous is not None:
                print(f"{run.task} / {run.path}: resuming {previous.name}", flush=True)
            started = time.perf_counter()
            try:
                run_dir = run_task(None if previous is not None else configs[run], out_dir=manifest.parent(run),
                                   resume=previous, llm=llm, embedder=embedder, index=index, progress=progress)
            except KeyboardInterrupt:
                interrupted = previous or manifest.latest(run)
                if interrupted is not None:
                    manifest.record(run, interrupted, time.perf_counter() - started, add=previous is not None)
                print("\ninterrupted: run the same command with --resume to finish it", flush=True)
                raise
            manifest.record(run, run_dir, time.perf_counter() - started, add=previous is not None)
            done[run] = run_dir
        if on_done is not None:
            on_done(run, done[run])
    return done


# -- tables ---------------------------------------------------------------------------------------------------
def cost_row(summary: dict[str, Any], seconds: float | None) -> dict[str, Any]:
    """Per-item cost of a run (from its metrics.json) and the whole run's minutes."""
    def stat(key: str, name: str):
        value = (summary.get(key) or {}).get(name)
        return round(value, 1) if isinstance(value, (int, float)) else value

    return {"s/item median": stat("latency_s", "median"), "s/item p90": stat("latency_s", "p90"),
            "calls/item": stat("model_calls", "mean"), "prompt tok/item": stat("prompt_tokens", "mean"),
            "cached tok/item": stat("cached_prompt_tokens", "mean"),
            "completion tok/item": stat("completion_tokens", "mean"),
            "run min": round(seconds / 60, 1) if seconds is not None else None}


def stance_agreement(rows_a: list[dict], rows_b: list[dict]) -> dict[str, Any]:
    """How often two runs of the same items give a kept item the same stance label.

    Counted over items both runs finished and ids both kept; ``kept_differs`` counts ids kept by only one run
    (0 expected: the gate decides keep/discard without the model), ``changes`` the label pairs that differ."""
    def kept(row):
        return {d["id"]: d["label"] for d in (row.get("prediction") or {}).get("decisions", []) if d.get("kept")}

    a = {r["id"]: kept(r) for r in rows_a if r.get("prediction")}
    b = {r["id"]: kept(r) for r in rows_b if r.get("prediction")}
    common = sorted(set(a) & set(b))
    compared = agree = kept_differs = 0
    changes: Counter[str] = Counter()
    disagreeing_items = []
    for item in common:
        both = set(a[item]) & set(b[item])
        kept_differs += len(set(a[item]) ^ set(b[item]))
        same = sum(a[item][i] == b[item][i] for i in both)
        compared += len(both)
        agree += same
        for i in both:
            if a[item][i] != b[item][i]:
                changes[f"{a[item][i]}->{b[item][i]}"] += 1
        if same < len(both):
            disagreeing_items.append(item)
    return {"items": len(common), "kept_items": compared, "agree": agree,
            "agreement": round(agree / compared, 4) if compared else None, "kept_differs": kept_differs,
            "changes": dict(changes), "items_with_changes": disagreeing_items}

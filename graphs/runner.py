"""Run a task of any family end to end into ``runs/<run_id>/``, one checkpointed line per item, resumable.

Layout: ``config.yaml`` (resolved), ``run.json`` (status), ``results.jsonl`` (id, input, prediction, per-item
metrics, error, latency, tokens), ``metrics.json``, ``report.md`` + ``report.html``, ``traces/<item>.json``.
Each finished item is appended and fsynced, so Ctrl-C or a kill loses at most the items in flight, and
``--resume`` runs exactly the items that have no line yet. One process owns a run folder at a time
(``run.lock``, tools/runfolder.py): a second ``--resume`` of a run in progress refuses, naming the owner; a run whose
owner died (SIGKILL, a lost Ray node) is taken over, marked ``interrupted`` with the reason, and finished.

Nothing here knows a family: items, graph, scores, tags and report columns come from the family the config
names (:mod:`graphs.registry`).
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from evidex.graphs.config import ConfigError, TaskConfig, dump_config
from evidex.graphs.items import ragas_llm_for, run_one
from evidex.graphs.registry import Resources, get_family
from evidex.graphs.tasks import validate
from evidex.graphs.tracing import safe_name
from evidex.tools.progress import Progress
from evidex.tools.memory import memory_mb
from evidex.tools.runfolder import (ResultWriter, RunBusyError, RunLock, read_results, read_status, unique_rows,
                                    update_status)

log = logging.getLogger(__name__)


class RunError(RuntimeError):
    pass


def new_run_dir(cfg: TaskConfig, out: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = out / f"{stamp}-{safe_name(cfg.name)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = Path(f"{base}-{n}")
    return path


def load_run_config(run_dir: Path) -> TaskConfig:
    path = run_dir / "config.yaml"
    if not run_dir.is_dir():
        raise RunError(f"{run_dir} does not exist. Pass a run folder under runs/ (the path printed when it stopped).")
    if not path.is_file():
        raise RunError(f"{run_dir} is not a run folder (no config.yaml). Pass a folder under runs/.")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}). Fix the file or start a new run.") from None
    return validate(data, str(path))


def run_task(cfg: TaskConfig | None, *, out_dir: Path | None = None, resume: Path | None = None, llm=None,
             embedder=None, index=None, progress: bool = True, prepare: bool | None = None,
             executor: str | None = None, ray_address: str | None = None) -> Path:
    """Run (or, with ``resume``, finish) a task; returns the run folder. ``llm``/``embedder``/``index`` replace the
    configured ones (tests, apps that already hold them). ``prepare`` overrides ``run.prepare`` (the family's
    preparation step, e.g. ingesting papers; ``--skip-ingest`` passes False). ``executor``/``ray_address``
    override ``run.executor``/``run.ray_address``, also when resuming (where items run does not change them)."""
    lock: RunLock | None = None
    if resume is not None:
        run_dir = Path(resume)
        cfg = load_run_config(run_dir)
        lock = _own(run_dir)  # before reading what is done: a second resume of a live run stops here
    try:
        return _run_task(cfg, run_dir if resume is not None else None, out_dir=out_dir, llm=llm,
                         embedder=embedder, index=index, progress=progress, prepare=prepare, executor=executor,
                         ray_address=ray_address)
    finally:
        if lock is not None:
            lock.release()


def _own(run_dir: Path) -> RunLock:
    """Take the run folder's lock; a run whose owner died is marked interrupted, with the reason, first."""
    try:
        lock = RunLock(run_dir).acquire()
    except RunBusyError as exc:
        raise RunError(str(exc)) from None
    status = read_status(run_dir)
    if status.get("status") == "running":  # nobody owns it (we do now): its owner died without a word
        who = lock.stale.describe() if lock.stale is not None else "its process"
        reason = f"{who} stopped without finishing (killed, or its machine or Ray node went down)"
        update_status(run_dir, status="interrupted", interrupted=_now(), reason=reason,
                      interruptions=[*status.get("interruptions", []), {"at": _now(), "reason": reason}])
        print(f"{run_dir}: taken over; {reason}", file=sys.stderr, flush=True)
    return lock


def _run_task(cfg: TaskConfig, resume: Path | None, *, out_dir, llm, embedder, index, progress, prepare, executor,
              ray_address) -> Path:
    from evidex.tools.settings import get_settings

    run_dir = resume
    if executor is not None or ray_address is not None:
        where = {"executor": executor or cfg.run.executor, "ray_address": ray_address or cfg.run.ray_address}
        cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update=where)})
    family = get_family(cfg.family)
    for warning in cfg.warnings():
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    family.check_data(cfg)
    items = family.load_items(cfg)
    done = {row["id"] for row in read_results(run_dir / "results.jsonl")} if resume is not None else set()
    pending = [it for it in items if it.id not in done]
    on_ray = cfg.run.executor == "ray"
    if on_ray and (llm is not None or embedder is not None or index is not None):
        raise RunError("--executor ray: each Ray worker builds its model, embedder and index from the config; give "
                       "them there (e.g. --llm scripted:FILE), not as objects")
    # Under Ray the workers start the model; the graph built here checks the config and data (and builds the
    # indexes the workers then open) without it.
    resources = Resources(llm=llm, embedder=embedder, index=index, defer_model=on_ray)
    if pending and (cfg.run.prepare if prepare is None else prepare):
        family.prepare(cfg, pending, resources, progress)
    # Model, data and graph are built before a new run folder exists: a bad --llm or a missing file is one error
    # and leaves nothing behind.
    graph = family.build_graph(cfg, resources) if pending else None
    ragas_llm = ragas_llm_for(cfg, graph_llm=llm) if pending and cfg.metrics.ragas and not on_ray else None
    own = None
    if resume is None:
        run_dir = new_run_dir(cfg, Path(out_dir or cfg.run.out or get_settings().runs_dir))
        _make_run_dir(run_dir)
        own = RunLock(run_dir).acquire()  # a fresh folder: nobody else can hold it yet
        (run_dir / "config.yaml").write_text(dump_config(cfg), encoding="utf-8")
    try:
        _items(cfg, family, run_dir, resume, items, done, pending, graph, resources, ragas_llm, progress)
    finally:
        if own is not None:
            own.release()
    return run_dir


def _items(cfg, family, run_dir: Path, resume, items, done, pending, graph, resources, ragas_llm, progress) -> None:
    """Run the pending items into the owned run folder and finish it (metrics, reports, status)."""
    update_status(run_dir, run_id=run_dir.name, family=cfg.family, task=cfg.task, config=cfg.name,
                  status="running", n_items=len(items), model=_model_label(cfg, resources.llm),
                  **{"resumed" if resume is not None else "started": _now()})
    if resume is not None and not pending:
        print(f"{run_dir}: every item already has a result; metrics and report rewritten", flush=True)
    writer = ResultWriter(run_dir / "results.jsonl")
    if pending:
        from evidex.graphs.phoenix import maybe_enable_phoenix

        maybe_enable_phoenix(cfg)
        bar = Progress(len(items), initial=len(done), desc=cfg.name, enabled=progress)
        try:
            _execute(pending, cfg, family, graph, run_dir, resources, ragas_llm, writer, bar)
        except KeyboardInterrupt:
            update_status(run_dir, status="interrupted", interrupted=_now(), reason="stopped (Ctrl-C or kill)")
            bar.close()
            print(f"\ninterrupted: resume with  evidex run --resume {run_dir}", flush=True)
            raise
        except BaseException as exc:  # the executor itself failed (a Ray cluster lost, ...): say so, then raise
            update_status(run_dir, status="failed", failed=_now(), reason=f"{type(exc).__name__}: {exc}"[:500])
            bar.close()
            raise
        bar.close()
    finished = {"status": "complete", "finished": _now(), "memory": memory_mb()}
    finalize_run(run_dir, cfg, status=finished)  # the reports show the final status, not "running"
    update_status(run_dir, **finished)


def _make_run_dir(run_dir: Path) -> None:
    try:
        run_dir.mkdir(parents=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise RunError(f"cannot create the run folder {run_dir}: {exc.strerror}; --out must be a folder") from None


def _execute(pending, cfg, family, graph, run_dir, resources, ragas_llm, writer, bar: Progress) -> None:
    def record(row):
        if writer.append(row):
            bar.update(1, failed=int(row["error"] is not None), note=f"{row['latency_s']:.0f}s")

    if cfg.run.executor == "ray":  # workers build their own graphs; this process writes every row
        from evidex.graphs.ray_executor import execute_on_ray

        update_status(run_dir, executor=execute_on_ray(pending, cfg, family, run_dir, record))
        return

    def one(item):
        return run_one(graph, item, cfg, family, run_dir, resources, ragas_llm)

    start = time.monotonic()
    _execute_local(pending, cfg, one, record)
    update_status(run_dir, executor={"name": "local", "workers": min(cfg.run.concurrency, len(pending)),
                                     "items_s": round(time.monotonic() - start, 2)})


def _execute_local(pending, cfg, one, record) -> None:
    if cfg.run.concurrency <= 1:
        for item in pending:
            record(one(item))
        return
    with ThreadPoolExecutor(max_workers=cfg.run.concurrency) as pool:
        queue = list(pending)
        running = set()
        try:
            while queue or running:
                while queue and len(running) < cfg.run.concurrency:
                    running.add(pool.submit(one, queue.pop(0)))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    record(fut.result())
        except KeyboardInterrupt:
            queue.clear()
            for fut in running:
                fut.cancel()
            raise


def _model_label(cfg: TaskConfig, llm) -> str:
    """The model reports and traces name: an ``llm=`` object by its class and model name (not the config's spec),
    else the config's label."""
    if llm is not None and cfg.uses_model:
        from evidex.agents.models import describe_model

        return describe_model(llm)
    return cfg.model_label


def finalize_run(run_dir: Path, cfg: TaskConfig, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """Aggregate results.jsonl into metrics.json, report.md and report.html. ``status``: fields about to be
    written to ``run.json`` (the final status), shown in the reports over what run.json says now."""
    from evidex.evaluators.report import write_markdown_report
    from evidex.evaluators.report_html import write_html_report
    from evidex.evaluators.summary import summarize_run

    family = get_family(cfg.family)
    rows, dropped = unique_rows(read_results(run_dir / "results.jsonl"))
    if dropped:  # folders written before run locks: two resumes at once wrote some items twice
        log.warning("%s: %d duplicate rows not counted (evidex run --repair %s removes them)", run_dir,
                    dropped, run_dir)
    model = (status or {}).get("model") or read_status(run_dir).get("model") or cfg.model_label
    summary = summarize_run(rows, run_id=run_dir.name, task=cfg.task, config_name=cfg.name, model=model,
                            family=cfg.family, aggregate=family.aggregate, headline=family.report_columns,
                            lower_is_better=sorted(family.lower_is_better))
    try:
        sections = family.finish_run(cfg, run_dir, rows, summary) if rows else []
    except Exception as exc:  # noqa: BLE001 - the family's extras must not cost the run its metrics and reports
        log.warning("%s: the %s family's finish_run failed: %s", run_dir, cfg.family, exc)
        sections = []
    if sections:
        summary["sections"] = [s.model_dump() for s in sections]
    degraded = [r for r in rows if r.get("degraded")]
    summary["n_degraded"] = len(degraded)  # items whose hybrid search lost a part (error or warning, by config)
    parts: dict[str, int] = {}
    for r in degraded:
        for part in {d.get("part", "?") for d in r["degraded"]}:
            parts[part] = parts.get(part, 0) + 1
    summary["degraded"] = {f"{p}_unavailable": n for p, n in sorted(parts.items())}
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    shown = {**read_status(run_dir), **(status or {})}
    write_markdown_report(run_dir / "report.md", summary, rows, status=shown)
    write_html_report(run_dir, summary=summary, rows=rows, status=shown)
    return summary


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def repair_run(run_dir: Path) -> dict[str, Any]:
    """``graphs.run --repair RUN_DIR``: one row per item in results.jsonl (a torn last line dropped, duplicates of
    folders written before run locks removed, keeping each item's first row unless a later one succeeded where it
    failed), metrics and reports recomputed, and a run left "running" by a dead owner marked interrupted. Takes the
    run's lock: a run in progress is refused. Returns what was done."""
    run_dir = Path(run_dir)
    cfg = load_run_config(run_dir)
    lock = _own(run_dir)
    try:
        path = run_dir / "results.jsonl"
        rows, dropped = unique_rows(read_results(path))
        if dropped:
            tmp = path.with_suffix(".jsonl.tmp")
            with open(tmp, "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, default=str, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            tmp.replace(path)
        status = read_status(run_dir)
        n_items = status.get("n_items")
        complete = n_items is not None and len(rows) >= int(n_items)
        final = {"status": "complete" if complete else status.get("status", "interrupted"), "repaired": _now()}
        finalize_run(run_dir, cfg, status=final)
        update_status(run_dir, **final)
    finally:
        lock.release()
    return {"run": str(run_dir), "rows": len(rows), "duplicates_removed": dropped, "status": final["status"]}

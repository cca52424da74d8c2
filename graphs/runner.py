"""Run a task end to end into ``runs/<run_id>/``, one checkpointed line per item, resumable.

Layout: ``config.yaml`` (resolved), ``run.json`` (status), ``results.jsonl`` (id, prediction, decisions with
reasons, per-item metrics, error, latency, tokens), ``metrics.json``, ``report.md``, ``traces/<item>.json``.
Each finished item is appended and fsynced, so Ctrl-C or a kill loses at most the items in flight, and
``--resume`` runs exactly the items that have no line yet.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from tqdm import tqdm

from evidex.tools.claims import TaskItem

from evidex.tools.claim_data import load_task
from evidex.graphs.config import ConfigError, GraphConfig, dump_config, validate
from evidex.graphs.tracing import RunTreeTracer, safe_name
from evidex.tools.runfolder import ResultWriter, read_results

log = logging.getLogger(__name__)


class RunError(RuntimeError):
    pass


def new_run_dir(cfg: GraphConfig, out: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = out / f"{stamp}-{safe_name(cfg.name)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = Path(f"{base}-{n}")
    return path


def load_run_config(run_dir: Path) -> GraphConfig:
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


def _write_status(run_dir: Path, **fields: Any) -> None:
    path = run_dir / "run.json"
    data = json.loads(path.read_text()) if path.is_file() else {}
    data.update(fields)
    path.write_text(json.dumps(data, indent=2, default=str))


def item_tags(item: TaskItem) -> list[str]:
    tags = [item.input.task]
    if "control" in item.input.id:
        tags.append("control")
    if item.gold.missing_ids:
        tags.append("has_missing")
    if item.gold.wrong_ids:
        tags.append("has_wrong")
    return tags


def run_one(graph, item: TaskItem, cfg: GraphConfig, run_dir: Path, embedder, ragas_llm=None) -> dict[str, Any]:
    """Invoke the graph on one item; never raises — errors are recorded on the row."""
    from evidex.evaluators.explainers import score_item

    tracer = RunTreeTracer(run_dir / "traces" if cfg.tracing.enabled else None, item.input.id)
    row: dict[str, Any] = {"id": item.input.id, "task": item.input.task, "tags": item_tags(item),
                           "input": item.input.model_dump(), "prediction": None, "metrics": {}, "error": None}
    start = time.perf_counter()
    try:
        out = graph.invoke({"input": item.input}, config={"callbacks": [tracer], "run_name": cfg.name,
                                                          "metadata": {"item_id": item.input.id},
                                                          "tags": [f"task:{cfg.task}"]})
        pred = out["prediction"]
        row["prediction"] = pred.model_dump()
    except Exception as exc:  # noqa: BLE001 - any failure of one item is recorded, the run goes on
        row["error"] = f"{type(exc).__name__}: {exc}"
        pred = None
    row["latency_s"] = round(time.perf_counter() - start, 3)
    tree = tracer.last_tree or {}
    row["tokens"] = {"prompt": tree.get("prompt_tokens", 0), "completion": tree.get("completion_tokens", 0)}
    if cfg.tracing.enabled:
        row["trace"] = f"traces/{safe_name(item.input.id)}.json"
    if pred is not None:
        try:
            row["metrics"] = score_item(item.input, item.gold, pred,
                                        embedder=embedder if cfg.metrics.similarity else _NoSimilarity(),
                                        explanations=cfg.steps.write)
            if ragas_llm is not None:
                row["metrics"].update(_ragas_for(item, pred, ragas_llm, embedder))
        except Exception as exc:  # noqa: BLE001
            row["error"] = f"scoring failed: {type(exc).__name__}: {exc}"
    return row


class _NoSimilarity:
    """Embedder stand-in when similarity metrics are switched off: every cosine is NaN-free zero."""

    def encode(self, texts):
        import numpy as np
        return np.zeros((len(texts), 1), dtype="float32")


def _ragas_for(item: TaskItem, pred, llm, embedder) -> dict[str, float]:
    from evidex.evaluators.ragas_metrics import RagasSample, ragas_scores

    samples = [RagasSample(user_input=item.input.claims[k].text, response=v,
                           retrieved_contexts=list(pred.evidence_texts.values()))
               for k, v in pred.explanations.items() if k in item.input.claims]
    if not samples:
        return {}
    scores = ragas_scores(samples, llm, embedder)
    keys = {k for s in scores for k in s}
    return {f"ragas_{k}": float(sum(s.get(k, float("nan")) for s in scores) / len(scores)) for k in keys}


def check_data_files(cfg: GraphConfig) -> None:
    """Load (download if needed) the KB and claim catalog the config uses before the run starts: a missing or
    malformed file would otherwise fail every item one by one. Errors name the config key."""
    from evidex.tools.claim_data import load_claim_catalog, load_kb
    from evidex.tools.datasets import DataNotFoundError

    # The cascade reads the KB to judge given items, and always in selection / assignment (it decides there);
    # selection compares its two claims only, without the catalog.
    cascade = cfg.judge.strategy == "cascade" and (cfg.steps.judge or cfg.graph != "explainer")
    if not (cfg.steps.gather or cascade):
        return
    catalog = cfg.judge.claim_catalog if cfg.graph != "selection" else None
    for key, path, load in (("retrieval.kb", cfg.retrieval.kb, load_kb),
                            ("judge.claim_catalog", catalog, load_claim_catalog)):
        if path is not None:
            try:
                load(path)
            except (DataNotFoundError, ValueError) as exc:
                raise type(exc)(f"{key}: {exc}") from None


def run_task(cfg: GraphConfig, *, out_dir: Path | None = None, resume: Path | None = None, llm=None,
             embedder=None, index=None, progress: bool = True) -> Path:
    """Run (or finish) a task; returns the run folder."""
    from evidex.tools.embeddings import get_embeddings
    from evidex.graphs import build_graph
    from evidex.tools.settings import get_settings

    if resume is not None:
        run_dir = Path(resume)
        cfg = load_run_config(run_dir)
    for warning in cfg.judge.ignored_settings():
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    check_data_files(cfg)
    ds = cfg.dataset
    try:
        items = load_task(cfg.task, limit=ds.limit, shuffle=ds.shuffle, seed=ds.seed, with_controls=ds.controls,
                          file=ds.file)
    except ValueError as exc:
        raise ValueError(f"dataset.file: {exc}" if ds.file else str(exc)) from None
    done = {row["id"] for row in read_results(run_dir / "results.jsonl")} if resume is not None else set()
    pending = [it for it in items if it.input.id not in done]
    embedder = embedder or get_embeddings(cfg.retrieval.embedding_model)
    # Model, data and judge are built before a new run folder exists: a bad --llm or a missing file is one error
    # and leaves nothing behind.
    graph = build_graph(cfg, llm=llm, embedder=embedder, index=index) if pending else None
    ragas_llm = _ragas_llm(cfg, graph_llm=llm) if pending and cfg.metrics.ragas else None
    if resume is None:
        run_dir = new_run_dir(cfg, Path(out_dir or cfg.run.out or get_settings().runs_dir))
        _make_run_dir(run_dir)
        (run_dir / "config.yaml").write_text(dump_config(cfg), encoding="utf-8")
    _write_status(run_dir, run_id=run_dir.name, task=cfg.task, config=cfg.name, status="running",
                  n_items=len(items), model=cfg.model.spec if cfg.uses_model else "none (model-free)",
                  **{"resumed" if resume is not None else "started": _now()})
    if resume is not None and not pending:
        print(f"{run_dir}: every item already has a result; metrics and report rewritten", flush=True)
    writer = ResultWriter(run_dir / "results.jsonl")
    if pending:
        from evidex.graphs.phoenix import maybe_enable_phoenix

        maybe_enable_phoenix(cfg)
        bar = tqdm(total=len(items), initial=len(done), desc=cfg.name, unit="item", disable=not progress,
                   dynamic_ncols=True)
        try:
            _execute(pending, cfg, graph, run_dir, embedder, ragas_llm, writer, bar)
        except KeyboardInterrupt:
            _write_status(run_dir, status="interrupted", interrupted=_now())
            bar.close()
            print(f"\ninterrupted: resume with  python -m graphs.run --resume {run_dir}", flush=True)
            raise
        bar.close()
    finalize_run(run_dir, cfg)
    _write_status(run_dir, status="complete", finished=_now())
    return run_dir


def _make_run_dir(run_dir: Path) -> None:
    try:
        run_dir.mkdir(parents=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise RunError(f"cannot create the run folder {run_dir}: {exc.strerror}; --out must be a folder") from None


def _execute(pending, cfg, graph, run_dir, embedder, ragas_llm, writer, bar) -> None:
    errors = 0

    def record(row):
        nonlocal errors
        writer.append(row)
        errors += row["error"] is not None
        bar.set_postfix(errors=errors, last=f"{row['latency_s']:.0f}s")
        bar.update(1)

    if cfg.run.concurrency <= 1:
        for item in pending:
            record(run_one(graph, item, cfg, run_dir, embedder, ragas_llm))
        return
    with ThreadPoolExecutor(max_workers=cfg.run.concurrency) as pool:
        queue = list(pending)
        running = set()
        try:
            while queue or running:
                while queue and len(running) < cfg.run.concurrency:
                    running.add(pool.submit(run_one, graph, queue.pop(0), cfg, run_dir, embedder, ragas_llm))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    record(fut.result())
        except KeyboardInterrupt:
            queue.clear()
            for fut in running:
                fut.cancel()
            raise


def _ragas_llm(cfg: GraphConfig, graph_llm=None):
    from evidex.agents.models import make_chat_model

    if cfg.metrics.ragas_llm:
        return make_chat_model(cfg.metrics.ragas_llm, temperature=0.0, max_tokens=1024)
    return graph_llm or make_chat_model(cfg.model.spec, temperature=0.0, max_tokens=1024, base_url=cfg.model.base_url)


def finalize_run(run_dir: Path, cfg: GraphConfig) -> dict[str, Any]:
    """Aggregate results.jsonl into metrics.json and report.md."""
    from evidex.evaluators.report import summarize_run, write_markdown_report

    rows = read_results(run_dir / "results.jsonl")
    summary = summarize_run(rows, run_id=run_dir.name, task=cfg.task, config_name=cfg.name, model=cfg.model.spec)
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    write_markdown_report(run_dir / "report.md", summary, rows)
    from evidex.evaluators.report_html import write_html_report

    write_html_report(run_dir, summary=summary, rows=rows)
    return summary


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

"""What the ``qasper`` family registers: QASPER questions as run items, ingesting their papers into the store before
a run, the QASPER graph, per-question scores with the official metric (``evaluators.qasper``), and the run's
official-format predictions plus the by-type report section."""
from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

from pydantic import Field

from evidex.graphs.config import ConfigError
from evidex.graphs.qa.qasper_config import QasperTaskConfig
from evidex.graphs.registry import Resources
from evidex.tools.qa import PaperQuestion, QuestionItem
from evidex.tools.qasper_data import QasperAnswer, QasperDataError, QasperPaper, load_qasper
from evidex.tools.runfolder import GroundedAnswer, ReportChart, ReportSection

REPORT_COLUMNS = ("answer_f1", "evidence_f1", "exact_match", "evidence_f1_text_only", "answer_f1_extractive",
                  "answer_f1_abstractive", "answer_f1_boolean", "answer_f1_none", "yes_no_accuracy",
                  "unanswerable_recall_micro", "unanswerable_precision_micro", "predicted_unanswerable")


class QasperItem(QuestionItem):
    """One QASPER question (scoped to its paper) and, for the scorer only, the annotators' answers."""

    paper_id: str
    answers: list[QasperAnswer] = Field(default_factory=list)

    def public_input(self) -> dict:
        return {**self.question.model_dump(exclude={"answer_format"}), "paper_id": self.paper_id}


# -------------------------------------------------------------------------------------------------- data
_CACHE: dict[tuple[str, int, int], list[QasperPaper]] = {}
_CACHE_LOCK = threading.Lock()


def data_path(cfg: QasperTaskConfig) -> Path:
    from evidex.tools.datasets import resolve_data_file

    if not cfg.dataset.file:
        raise ValueError("dataset.file: give the QASPER file (--data qasper-dev-v0.3.json, official JSON or Hugging "
                         "Face rows)")
    try:
        return resolve_data_file(cfg.dataset.file)
    except FileNotFoundError as exc:
        raise ValueError(f"dataset.file: {exc}") from None


def papers(cfg: QasperTaskConfig) -> list[QasperPaper]:
    """The papers of the configured file (read once per file version)."""
    path = data_path(cfg)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    with _CACHE_LOCK:
        if key not in _CACHE:
            try:
                _CACHE[key] = load_qasper(path)
            except QasperDataError as exc:
                raise ValueError(f"dataset.file: {exc}") from None
        return _CACHE[key]


def check_data(cfg: QasperTaskConfig) -> None:
    papers(cfg)


def load_items(cfg: QasperTaskConfig) -> list[QasperItem]:
    """Every question of the file in file order (papers, then their questions), or shuffled with
    ``dataset.seed`` when ``dataset.shuffle``; ``dataset.offset`` skipped, then the first ``dataset.limit``."""
    from evidex.agents.prompts import load_prompt

    from evidex.tools.qasper_answer import is_boolean_question

    formats = {}
    for key in ("answer_prompt", "boolean_prompt"):
        name = getattr(cfg.qasper, key)
        try:
            formats[key] = load_prompt(name) if name else None
        except FileNotFoundError as exc:
            raise ConfigError(f"qasper.{key}: {exc}") from None

    def answer_format(question: str) -> str:
        if formats["boolean_prompt"] and is_boolean_question(question):
            return formats["boolean_prompt"]
        return formats["answer_prompt"]

    items = [QasperItem(question=PaperQuestion(id=q.question_id, question=q.question,
                                               answer_format=answer_format(q.question), pdf_ids=[p.store_id]),
                        paper_id=p.paper_id, answers=q.answers)
             for p in papers(cfg) for q in p.qas]
    if cfg.dataset.shuffle:
        random.Random(cfg.dataset.seed).shuffle(items)
    return cfg.dataset.window(items)


def prepare(cfg: QasperTaskConfig, items: list[QasperItem], resources: Resources, progress: bool = True) -> None:
    """Ingest the papers of ``items`` into the store (papers already there are skipped)."""
    from evidex.tools.ingest.errors import IngestError
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.store import StoreError

    if not (cfg.store.db or cfg.store.store_dir):
        raise ConfigError("store.db: name the store the QASPER papers go into (--db NAME)")
    needed = {it.paper_id for it in items}
    todo = [p for p in papers(cfg) if p.paper_id in needed]
    try:
        report = ingest_qasper(todo, cfg.store.db, store_dir=cfg.store.store_dir, config=cfg.qasper.ingest_config,
                               embeddings=resources.embedder, progress=progress)
    except (IngestError, StoreError) as exc:
        raise ConfigError(f"store: {exc}") from None
    new = report.count("ingested") + report.count("reindexed")
    if progress or new:
        print(f"store {cfg.store.db or cfg.store.store_dir}: {len(todo)} papers ({new} ingested, "
              f"{report.count('skipped')} already there) in {report.seconds.get('total', 0):.1f} s", flush=True)


# -------------------------------------------------------------------------------------------------- graph
def build_graph(cfg: QasperTaskConfig, resources: Resources | None = None):
    from evidex.graphs.qa.family import build_qa_graph
    from evidex.graphs.qa.qasper_graph import build_qasper_graph
    from evidex.tools.store import StoreError, store_paths

    if not (resources and resources.defer_model):  # a graph built only to be shown needs no store yet
        try:
            paths = store_paths(cfg.store.db, cfg.store.store_dir)
        except StoreError as exc:
            raise ConfigError(f"store: {exc}") from None
        if not paths.db.exists():
            raise ConfigError(f"store: no paper store at {paths.root}. Run without --skip-ingest to ingest the QASPER "
                              "papers first (or python -m evidex.tools.ingest.qasper DATA --db NAME).")
    return build_qasper_graph(cfg, build_qa_graph(cfg, resources))


# -------------------------------------------------------------------------------------------------- scoring
def score_item(cfg: QasperTaskConfig, item: QasperItem, pred, resources: Resources) -> dict[str, float]:
    from evidex.evaluators.qasper import item_metrics, score_question

    out = item_metrics(score_question(pred.answer or "", list(getattr(pred, "evidence", []) or []), item.answers))
    out["turns"] = float(pred.turns)
    return out


def item_tags(item: QasperItem) -> list[str]:
    """``gold:<type>``: the type of the first annotator's answer (the official bins follow the best-matching
    annotator instead, see the by-type report section)."""
    from evidex.evaluators.qasper import reference_of

    return [f"gold:{reference_of(item.answers[0]).type}"] if item.answers else []


def grounded_answers(item: QasperItem, pred) -> list[GroundedAnswer]:
    if not pred.answer:
        return []
    return [GroundedAnswer(question=item.question.question, answer=pred.answer, contexts=list(pred.evidence))]


# -------------------------------------------------------------------------------------------------- run folder
def finish_run(cfg: QasperTaskConfig, run_dir: Path, rows: list[dict[str, Any]],
               summary: dict[str, Any]) -> list[ReportSection]:
    """Write ``predictions.jsonl`` (official format) and ``qasper_metrics.json``; return the report section with the
    official scores beside the constant "Unanswerable" baseline on the same questions and LED-base."""
    import json

    from evidex.evaluators.qasper import (ANSWER_TYPES, LED_BASE, constant_predictions, evaluate,
                                          predictions_from_rows, split_of, write_predictions)

    preds = predictions_from_rows(rows)
    write_predictions(run_dir / "predictions.jsonl", preds)
    ids = {r["id"] for r in rows}
    gold = {q.question_id: q.answers for p in papers(cfg) for q in p.qas if q.question_id in ids}
    result = evaluate(gold, {p.question_id: p for p in preds})
    baseline = evaluate(gold, constant_predictions(gold))
    result["baseline_unanswerable"] = baseline
    result["runtime_s"] = round(sum(float(r.get("latency_s") or 0) for r in rows), 1)
    (run_dir / "qasper_metrics.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    split = split_of(cfg.dataset.file or "")
    leds = [(f"LED-base ({s}, paper)", LED_BASE[s]) for s in ([split] if split else ["dev", "test"])]
    columns = ["answer type", "questions", "this run", '"Unanswerable" (same questions)'] + [n for n, _ in leds]
    table: list[list[Any]] = []
    def binned(res: dict, t: str):  # an empty bin has no F1 (the official script prints 0 for it)
        return res["answer_f1_by_type"].get(t) if res["questions_by_type"].get(t) else None

    for t in ANSWER_TYPES:
        table.append([t, result["questions_by_type"].get(t, 0), binned(result, t), binned(baseline, t)]
                     + [led[t] for _, led in leds])
    table.append(["Answer-F1", result["questions"], result["answer_f1"], baseline["answer_f1"]]
                 + [led["answer_f1"] for _, led in leds])
    table.append(["Evidence-F1", result["questions"], result["evidence_f1"], baseline["evidence_f1"]]
                 + [led["evidence_f1"] for _, led in leds])
    table.append(["Evidence-F1 (text only)", result["questions"], result["evidence_f1_text_only"],
                  baseline["evidence_f1_text_only"]] + [None for _ in leds])
    table.append(["Exact match", result["questions"], result["exact_match"], baseline["exact_match"]]
                 + [None for _ in leds])
    cats = [*ANSWER_TYPES, "Answer-F1", "Evidence-F1"]
    series = {"this run": [row[2] for row in table[: len(cats)]],
              '"Unanswerable"': [row[3] for row in table[: len(cats)]]}
    for i, (name, _) in enumerate(leds):
        series[name] = [row[4 + i] for row in table[: len(cats)]]
    note = (f"Official QASPER metric, 0-100, over the run's {result['questions']} questions; "
            f"{result['missing_predictions']} failed items count as missing (0), as the official script counts them. "
            "A question's type is the type of the annotation its answer matched best (ties: the first annotator). "
            f"Yes/no accuracy {_fmt(result['yes_no_accuracy'])}, unanswerable recall "
            f"{_fmt(result['unanswerable_recall'])} / precision {_fmt(result['unanswerable_precision'])}; "
            f"runtime {result['runtime_s']} s. LED-base: Dasigi et al. 2021, Q + full text + evidence scaffold.")
    return [ReportSection(id="qasper-by-type", title="QASPER: Answer-F1 by answer type", columns=columns, rows=table,
                          note=note, chart=ReportChart(title="QASPER F1 by answer type (0-100)", categories=cats,
                                                       series=series, max_value=100.0))]


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"

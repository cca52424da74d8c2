"""The official QASPER metric (allenai/qasper-led-baseline ``scripts/evaluator.py``), re-implemented exactly, plus
the diagnostics evidex reports beside it.

    python -m evidex.evaluators.qasper --predictions predictions.jsonl --gold qasper-dev-v0.3.json
    python -m evidex.evaluators.qasper --predictions predictions.jsonl --gold qasper-dev-v0.3.json --text_evidence_only
    python -m evidex.evaluators.qasper --run runs/<run_id>   # a qasper run: writes predictions.jsonl, prints tables

Official semantics (``specs/qasper.md`` §3):

* each annotation becomes a reference ``(answer, evidence, type)``: unanswerable -> ``"Unanswerable"``, ``[]``,
  ``none``; else extractive spans joined with ``", "`` (``extractive``); else the free-form answer
  (``abstractive``); else ``"Yes"``/``"No"`` (``boolean``). ``--text_evidence_only`` drops gold evidence strings
  that contain ``FLOAT SELECTED`` (figures and tables);
* Answer-F1: SQuAD v1.1 token F1 (lowercase, punctuation deleted, a/an/the removed, whitespace collapsed;
  multiset overlap), the maximum over references; the question goes into the type bin of the reference that
  reached the maximum (ties: the first annotator);
* Evidence-F1: F1 of the predicted against the gold evidence strings by exact equality (both empty = 1), the
  maximum over references;
* means over *every* gold question; a question without a prediction scores 0 on both and is counted as missing.

Beside those: exact match (max over references), yes/no accuracy (questions with a boolean reference: the
prediction is one of their Yes/No answers), and unanswerable detection (recall and precision of predicting
"Unanswerable" against questions with an unanswerable reference). The CLI prints JSON scaled 0-100 like the
paper's tables; per-item functions return 0-1 (what run folders and reports use).
"""
from __future__ import annotations

import argparse
import json
import re
import string
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evidex.tools.qasper_data import QasperAnswer, QasperDataError, QasperPaper, load_qasper

ANSWER_TYPES = ("extractive", "abstractive", "boolean", "none")
UNANSWERABLE = "Unanswerable"
FLOAT_MARK = "FLOAT SELECTED"
_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")

# Published reference rows (specs/qasper.md §4): LED-base, Q + full text + evidence scaffold (Dasigi et al. 2021,
# Tables 2 and 3), dev and test. Answer-F1 by type, overall, and Evidence-F1; 0-100.
LED_BASE = {
    "dev": {"extractive": 24.62, "abstractive": 13.86, "boolean": 63.64, "none": 38.89, "answer_f1": 28.01,
            "evidence_f1": 23.94},
    "test": {"extractive": 29.97, "abstractive": 15.02, "boolean": 68.90, "none": 44.97, "answer_f1": 33.63,
             "evidence_f1": 29.85},
}


class Reference(BaseModel):
    answer: str
    evidence: list[str] = Field(default_factory=list)
    type: str


class Prediction(BaseModel):
    """One line of the official predictions file."""

    question_id: str
    predicted_answer: str = ""
    predicted_evidence: list[str] = Field(default_factory=list)


class QuestionScore(BaseModel):
    """One question's scores (0-1) and where the official metric puts it."""

    answer_f1: float
    answer_type: str  # the type of the reference that reached the max (the official by-type bin)
    evidence_f1: float
    evidence_f1_text_only: float
    exact_match: float
    yes_no_correct: float | None = None  # None: no boolean reference
    predicted_unanswerable: bool
    gold_unanswerable: bool  # some reference is unanswerable


# ---------------------------------------------------------------------------------------------- official parts
def normalize_answer(s: str) -> str:
    """SQuAD v1.1: lowercase, delete punctuation, remove articles, collapse whitespace."""
    text = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1_score(prediction: str, ground_truth: str) -> float:
    pred = normalize_answer(prediction).split()
    gold = normalize_answer(ground_truth).split()
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def paragraph_f1_score(prediction: Sequence[str], ground_truth: Sequence[str]) -> float:
    """Set overlap by exact string equality; precision and recall divide by the list lengths (as the official
    script does, duplicates included)."""
    if not ground_truth and not prediction:
        return 1.0
    same = len(set(ground_truth) & set(prediction))
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction), same / len(ground_truth)
    return 2 * precision * recall / (precision + recall)


def reference_of(answer: QasperAnswer, text_evidence_only: bool = False) -> Reference:
    """One annotation as the official script reads it."""
    if answer.unanswerable:
        return Reference(answer=UNANSWERABLE, evidence=[], type="none")
    if answer.extractive_spans:
        text, kind = ", ".join(answer.extractive_spans), "extractive"
    elif answer.free_form_answer:
        text, kind = answer.free_form_answer, "abstractive"
    elif answer.yes_no is True:
        text, kind = "Yes", "boolean"
    elif answer.yes_no is False:
        text, kind = "No", "boolean"
    else:
        raise QasperDataError("an annotation has no answer (not unanswerable, no spans, no free-form answer, "
                              "no yes/no)")
    evidence = [e for e in answer.evidence if FLOAT_MARK not in e] if text_evidence_only else list(answer.evidence)
    return Reference(answer=text, evidence=evidence, type=kind)


def references(answers: Iterable[QasperAnswer], text_evidence_only: bool = False) -> list[Reference]:
    return [reference_of(a, text_evidence_only) for a in answers]


def gold_references(papers: Iterable[QasperPaper], text_evidence_only: bool = False) -> dict[str, list[Reference]]:
    """question_id -> references, for every question of ``papers`` (file order)."""
    return {q.question_id: references(q.answers, text_evidence_only) for p in papers for q in p.qas}


# ----------------------------------------------------------------------------------------------- per question
def score_question(answer: str, evidence: Sequence[str], answers: Sequence[QasperAnswer]) -> QuestionScore:
    """Every score of one prediction against one question's annotations."""
    refs = references(answers)
    if not refs:
        raise QasperDataError("a question has no annotations to score against")
    text_refs = references(answers, text_evidence_only=True)
    # the official max: a stable sort on F1, so ties keep the first annotator's type
    f1, kind = sorted(((token_f1_score(answer, r.answer), r.type) for r in refs), key=lambda x: x[0], reverse=True)[0]
    booleans = [r.answer for r in refs if r.type == "boolean"]
    predicted_none = normalize_answer(answer) == normalize_answer(UNANSWERABLE)
    return QuestionScore(
        answer_f1=f1, answer_type=kind,
        evidence_f1=max(paragraph_f1_score(evidence, r.evidence) for r in refs),
        evidence_f1_text_only=max(paragraph_f1_score(evidence, r.evidence) for r in text_refs),
        exact_match=max(exact_match_score(answer, r.answer) for r in refs),
        yes_no_correct=float(normalize_answer(answer) in {normalize_answer(b) for b in booleans}) if booleans else None,
        predicted_unanswerable=predicted_none,
        gold_unanswerable=any(r.type == "none" for r in refs),
    )


def item_metrics(score: QuestionScore) -> dict[str, float]:
    """A question's scores as run-folder metrics (0-1). Means over items give the corpus numbers: ``answer_f1``,
    ``evidence_f1``, ``answer_f1_<type>`` (present only in the question's bin, so its mean is the official
    by-type number); ``unanswerable_tp/fp/fn`` aggregate to unanswerable precision/recall/F1."""
    out = {"answer_f1": score.answer_f1, "evidence_f1": score.evidence_f1,
           "evidence_f1_text_only": score.evidence_f1_text_only, "exact_match": score.exact_match,
           f"answer_f1_{score.answer_type}": score.answer_f1,
           "predicted_unanswerable": float(score.predicted_unanswerable),
           "unanswerable_tp": float(score.predicted_unanswerable and score.gold_unanswerable),
           "unanswerable_fp": float(score.predicted_unanswerable and not score.gold_unanswerable),
           "unanswerable_fn": float(not score.predicted_unanswerable and score.gold_unanswerable)}
    if score.yes_no_correct is not None:
        out["yes_no_accuracy"] = score.yes_no_correct
    return out


# ----------------------------------------------------------------------------------------------- corpus level
def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def evaluate(gold: Mapping[str, Sequence[QasperAnswer]], predictions: Mapping[str, Prediction]) -> dict[str, Any]:
    """Corpus scores over every gold question (0-100, like the paper): the official ``answer_f1``,
    ``answer_f1_by_type``, ``evidence_f1``, ``evidence_f1_text_only`` and ``missing_predictions``, then exact
    match, yes/no accuracy, unanswerable detection, and the question count per type bin."""
    answer_f1, evidence_f1, evidence_text, em = [], [], [], []
    by_type: dict[str, list[float]] = {t: [] for t in ANSWER_TYPES}
    yes_no: list[float] = []
    tp = fp = fn = 0
    missing = 0
    for qid, answers in gold.items():
        pred = predictions.get(qid)
        if pred is None:
            missing += 1
            answer_f1.append(0.0)
            evidence_f1.append(0.0)
            evidence_text.append(0.0)
            em.append(0.0)
            refs = references(answers)
            if any(r.type == "boolean" for r in refs):
                yes_no.append(0.0)
            fn += any(r.type == "none" for r in refs)
            continue
        s = score_question(pred.predicted_answer, pred.predicted_evidence, answers)
        answer_f1.append(s.answer_f1)
        evidence_f1.append(s.evidence_f1)
        evidence_text.append(s.evidence_f1_text_only)
        em.append(s.exact_match)
        by_type.setdefault(s.answer_type, []).append(s.answer_f1)
        if s.yes_no_correct is not None:
            yes_no.append(s.yes_no_correct)
        tp += s.predicted_unanswerable and s.gold_unanswerable
        fp += s.predicted_unanswerable and not s.gold_unanswerable
        fn += (not s.predicted_unanswerable) and s.gold_unanswerable
    pct = lambda x: round(100 * x, 4)  # noqa: E731
    return {
        "answer_f1": pct(_mean(answer_f1)),
        "answer_f1_by_type": {t: pct(_mean(v)) for t, v in by_type.items()},
        "evidence_f1": pct(_mean(evidence_f1)),
        "evidence_f1_text_only": pct(_mean(evidence_text)),
        "missing_predictions": missing,
        "exact_match": pct(_mean(em)),
        "yes_no_accuracy": pct(_mean(yes_no)) if yes_no else None,
        "unanswerable_recall": pct(tp / (tp + fn)) if tp + fn else None,
        "unanswerable_precision": pct(tp / (tp + fp)) if tp + fp else None,
        "questions": len(gold),
        "questions_by_type": {t: len(v) for t, v in by_type.items()},
    }


def constant_predictions(question_ids: Iterable[str], answer: str = UNANSWERABLE) -> dict[str, Prediction]:
    """The trivial baseline: the same answer with no evidence for every question."""
    return {q: Prediction(question_id=q, predicted_answer=answer) for q in question_ids}


# ----------------------------------------------------------------------------------------------- files
def read_predictions(path: str | Path) -> dict[str, Prediction]:
    """An official predictions file (JSON lines ``{question_id, predicted_answer, predicted_evidence}``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such predictions file (JSON lines with question_id, predicted_answer, "
                                "predicted_evidence)")
    out: dict[str, Prediction] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            p = Prediction.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValueError) as exc:
            raise ValueError(f"{path} line {n}: not a QASPER prediction ({str(exc).splitlines()[0]}); expected "
                             '{"question_id": ..., "predicted_answer": ..., "predicted_evidence": [...]}') from None
        out[p.question_id] = p
    return out


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(p.model_dump(), ensure_ascii=False) + "\n" for p in predictions),
                   encoding="utf-8")
    tmp.replace(path)
    return path


def predictions_from_rows(rows: Iterable[dict[str, Any]]) -> list[Prediction]:
    """Official predictions from a qasper run's ``results.jsonl`` rows (failed items have none: they count as
    missing, as the official script counts them)."""
    out = []
    for r in rows:
        pred = r.get("prediction")
        if r.get("error") is None and isinstance(pred, dict) and pred.get("answer") is not None:
            out.append(Prediction(question_id=r["id"], predicted_answer=pred.get("answer") or "",
                                  predicted_evidence=list(pred.get("evidence") or [])))
    return out


# ----------------------------------------------------------------------------------------------- console
def format_tables(result: Mapping[str, Any], *, runtime_s: float | None = None, title: str = "QASPER",
                  baseline: Mapping[str, Any] | None = None, split: str | None = None) -> str:
    """The console tables: overall scores, then Answer-F1 by type beside the constant "Unanswerable" baseline
    (on the same questions) and LED-base (published, ``split``)."""
    lines = [f"{title}: {result['questions']} questions, {result['missing_predictions']} missing"
             + (f", runtime {runtime_s:.1f} s" if runtime_s is not None else "")]
    rows = [("Answer-F1", result["answer_f1"]), ("Exact match", result["exact_match"]),
            ("Evidence-F1", result["evidence_f1"]), ("Evidence-F1 (text only)", result["evidence_f1_text_only"]),
            ("Yes/no accuracy", result.get("yes_no_accuracy")),
            ("Unanswerable recall", result.get("unanswerable_recall")),
            ("Unanswerable precision", result.get("unanswerable_precision"))]
    width = max(len(r[0]) for r in rows)
    lines += [f"  {name:<{width}}  {_cell(value)}" for name, value in rows]
    head = ["type", "questions", "this run"]
    columns: list[tuple[str, Mapping[str, Any]]] = []
    if baseline is not None:
        columns.append(('"Unanswerable"', baseline))
    if split in LED_BASE:
        columns.append((f"LED-base ({split})", {"answer_f1_by_type": LED_BASE[split],
                                                "answer_f1": LED_BASE[split]["answer_f1"],
                                                "evidence_f1": LED_BASE[split]["evidence_f1"]}))
    head += [c for c, _ in columns]
    table = [head]
    for t in ANSWER_TYPES:
        table.append([t, str(result["questions_by_type"].get(t, 0)), _cell(result["answer_f1_by_type"].get(t))]
                     + [_cell(c["answer_f1_by_type"].get(t)) for _, c in columns])
    table.append(["overall", str(result["questions"]), _cell(result["answer_f1"])]
                 + [_cell(c.get("answer_f1")) for _, c in columns])
    table.append(["evidence", "", _cell(result["evidence_f1"])] + [_cell(c.get("evidence_f1")) for _, c in columns])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines.append("")
    lines.append("Answer-F1 by type (bin = the best-matching reference's type)")
    for i, row in enumerate(table):
        lines.append("  " + "  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))))
        if i == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def split_of(path: str | Path) -> str | None:
    """``dev``/``test`` from a QASPER file name (for the LED-base reference row), else None."""
    name = Path(path).name.lower()
    for split, marks in (("dev", ("dev", "validation")), ("test", ("test",))):
        if any(m in name for m in marks):
            return split
    return None


# ----------------------------------------------------------------------------------------------- CLI
def _score_files(predictions: Path, gold_path: Path, text_evidence_only: bool) -> dict[str, Any]:
    papers = load_qasper(gold_path)
    gold = {q.question_id: q.answers for p in papers for q in p.qas}
    preds = read_predictions(predictions)
    result = evaluate(gold, preds)
    if text_evidence_only:  # the official flag: the headline Evidence-F1 is the text-only one
        result["evidence_f1"] = result["evidence_f1_text_only"]
    result["text_evidence_only"] = text_evidence_only
    result["baseline_unanswerable"] = evaluate(gold, constant_predictions(gold))
    return result


def _score_run(run_dir: Path, gold_path: Path | None) -> tuple[dict[str, Any], str]:
    import yaml

    from evidex.tools.datasets import resolve_data_file
    from evidex.tools.runfolder import read_rows

    if not (run_dir / "results.jsonl").is_file():
        raise FileNotFoundError(f"{run_dir}: not a run folder (no results.jsonl)")
    if gold_path is None:
        cfg = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")) or {}
        file = (cfg.get("dataset") or {}).get("file")
        if not file:
            raise ValueError(f"{run_dir}/config.yaml names no dataset.file; pass --gold")
        gold_path = resolve_data_file(file)
    rows = read_rows(run_dir / "results.jsonl")
    preds = predictions_from_rows(rows)
    write_predictions(run_dir / "predictions.jsonl", preds)
    ids = {r["id"] for r in rows}
    papers = load_qasper(gold_path)
    gold = {q.question_id: q.answers for p in papers for q in p.qas if q.question_id in ids}
    result = evaluate(gold, {p.question_id: p for p in preds})
    result["baseline_unanswerable"] = evaluate(gold, constant_predictions(gold))
    result["runtime_s"] = round(sum(float(r.get("latency_s") or 0) for r in rows), 1)
    (run_dir / "qasper_metrics.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result, split_of(gold_path) or ""


def main(argv: list[str] | None = None) -> int:
    from evidex.tools.cli_help import plain_help

    p = argparse.ArgumentParser(prog="python -m evidex.evaluators.qasper", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--predictions", type=Path, help="JSON lines: question_id, predicted_answer, predicted_evidence")
    p.add_argument("--gold", type=Path, help="QASPER file (official JSON or Hugging Face rows)")
    p.add_argument("--text_evidence_only", "--text-evidence-only", action="store_true",
                   help="drop FLOAT SELECTED (figure/table) gold evidence, as the official flag does")
    p.add_argument("--run", type=Path, metavar="RUN_DIR",
                   help="a qasper run folder: write its predictions.jsonl and qasper_metrics.json, print the tables "
                        "(--gold defaults to the run's dataset.file; scored over the run's questions)")
    p.add_argument("--out", type=Path, help="also write the JSON result to this file")
    p.add_argument("--table", action="store_true", help="print the console tables after the JSON")
    args = p.parse_args(argv)
    start = time.perf_counter()
    try:
        if args.run:
            result, split = _score_run(args.run, args.gold)
            print(format_tables(result, runtime_s=result["runtime_s"], title=f"QASPER run {args.run.name}",
                                baseline=result["baseline_unanswerable"], split=split))
            print(f"\nwrote {args.run / 'predictions.jsonl'} and {args.run / 'qasper_metrics.json'}")
            return 0
        if not (args.predictions and args.gold):
            p.error("give --predictions P.jsonl --gold QASPER.json, or --run RUN_DIR")
        result = _score_files(args.predictions, args.gold, args.text_evidence_only)
    except (QasperDataError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    if args.table:
        print(format_tables(result, runtime_s=time.perf_counter() - start, baseline=result["baseline_unanswerable"],
                            split=split_of(args.gold)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

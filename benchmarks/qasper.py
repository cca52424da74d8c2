"""QASPER benchmark: retrieval-only Evidence-F1 (no LLM), and the full pipeline on a subset.

    python -m benchmarks.qasper                                   # retrieval only, every dev question
    python -m benchmarks.qasper --modes bm25,hybrid --ks 1,2,3
    python -m benchmarks.qasper --pipeline --limit 100 --config qasper/qasper,qasper/neusym
    python -m benchmarks.qasper --pipeline --offset 300 --limit 100    # a later window (report after tuning)
    python -m benchmarks.qasper --pipeline --from-runs runs/A runs/B     # tabulate finished runs
    python -m benchmarks.qasper --replay-gold --offset 300             # no model: each answer call gets the gold
    python -m benchmarks.qasper --compare runs/A runs/B                  # same prompts, answers and evidence?

Retrieval only: each question's text is searched over its own paper's paragraph chunks (``chunks.text_content``,
filtered to the paper) with BM25, dense (MiniLM) and hybrid (RRF) search; the top k paragraphs (the abstract is
skipped: it is never gold evidence) are the predicted evidence, scored with the official Evidence-F1 (max over
annotators; also text-only). The constant "Unanswerable" prediction (no evidence) is the row to beat: an empty
evidence list is right for every unanswerable question. ``--oracle`` adds the evidence rules of the QASPER graph
driven by the first annotator's answer instead of a model's (upper bounds). Results:
``benchmarks/results/qasper.json`` under ``retrieval``.

Pipeline: each config runs through ``graphs.runner.run_task`` (a normal, resumable run folder) on the first
``--limit`` questions; the table shows Answer-F1 by type, Evidence-F1, exact match and latency, beside the
constant baseline on the same questions. Results: ``benchmarks/results/qasper.json`` under ``pipeline``.

``--replay-gold`` runs the pipeline without a model: a scripted model (``agents.scripted``, ``by_prompt``) answers
each question's answer calls with its first annotator's answer, so everything before the model (retrieval, the
prompt) and after it (shaping, the unanswerable guard, evidence) runs as in a real run, in seconds. ``--compare``
then tells, item by item, whether two runs (two versions of the code, say) sent the model the same prompts and
ended with the same answer and evidence: a change that must not move the report windows is checked this way
before a model run (``qasper.json`` under ``replay_gold`` and ``compare``).

The papers are ingested into ``--db`` first (skipped when already there; ``--skip-ingest`` never touches it).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

DEV = "qasper/qasper-dev-v0.3.reconstructed.json"
STORE = "qasper"
RESULTS = Path("benchmarks/results/qasper.json")
MODES = ("bm25", "dense", "hybrid")
KS = (1, 2, 3, 5)


def data_name(path: Path, given: str) -> str:
    """How results name the data: the path under EVIDEX_DATA_DIR when it is there, else the file name."""
    from evidex.tools.settings import get_settings

    root = get_settings().data_dir
    try:
        return str(path.resolve().relative_to(Path(root).resolve())) if root else path.name
    except ValueError:
        return Path(given).name


def ingest(papers, db: str, skip: bool) -> dict:
    from evidex.tools.ingest.qasper import ingest_qasper

    if skip:
        return {"skipped": True}
    report = ingest_qasper(papers, db)
    return {"ingested": report.count("ingested") + report.count("reindexed"), "already": report.count("skipped"),
            "seconds": report.seconds}


def evidence_maps(db: str, store_ids: list[str]) -> dict[str, dict[int, str | None]]:
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.qasper_answer import page_evidence

    store = PaperStore(db)
    return {sid: page_evidence(store.pages([sid])) for sid in store_ids}


def oracle_evidence(engine, flt: str, question: str, refs, ranked_texts: list[str], by_page: dict,
                    threshold: float) -> dict:
    """Evidence chosen with the first annotator's answer standing in for the model's (upper bounds of the evidence
    rules of ``graphs.qa.qasper_graph``): [] when it is unanswerable; else the retrieved paragraph the answer came
    from (answer_overlap) or a search for question + answer (answer_search)."""
    from evidex.tools.qasper_answer import evidence_from_pages, overlap_order, overlap_scores
    from evidex.tools.search import SearchArgs

    first = refs[0]
    if first.type == "none":
        return {"hybrid k=2 + first annotator's abstention": [], "answer_overlap (gold answer)": [],
                "answer_search k=1 (gold answer)": []}
    top4 = ranked_texts[:4]
    scores = overlap_scores(first.answer, top4)
    overlap = ([top4[overlap_order(first.answer, top4)[0]]] if scores and max(scores) >= threshold else top4[:2])
    hits = engine.search(SearchArgs(query=f"{question} {first.answer}"[:1900], table="chunks", column="text_content",
                                    filter=flt, mode="hybrid", limit=3)).hits
    return {"hybrid k=2 + first annotator's abstention": ranked_texts[:2], "answer_overlap (gold answer)": overlap,
            "answer_search k=1 (gold answer)": [t for _, t in evidence_from_pages([h.page_number for h in hits],
                                                                                  by_page, 1)]}


def retrieval(papers, db: str, modes: list[str], ks: list[int], oracle: bool = False) -> tuple[list[dict], float]:
    """Evidence-F1 of the top-k retrieved paragraphs for every question, per mode and k (0-100); with ``oracle``,
    also the evidence rules driven by the first annotator's answer (over hybrid retrieval)."""
    from evidex.evaluators.qasper import paragraph_f1_score, references
    from evidex.tools.paperstore import scope_filter
    from evidex.tools.qasper_answer import evidence_from_pages
    from evidex.tools.search import SearchArgs, get_engine

    engine = get_engine(db)
    maps = evidence_maps(db, [p.store_id for p in papers])
    depth = max(ks) + 2  # the abstract may take a slot
    scores = {(m, k): ([], []) for m in modes for k in ks}
    oracles: dict[str, tuple[list[float], list[float]]] = {}
    start = time.perf_counter()
    for paper in papers:  # grouped by paper: the BM25 filter mask is computed once per paper
        flt = scope_filter([paper.store_id])
        for q in paper.qas:
            refs, text_refs = references(q.answers), references(q.answers, text_evidence_only=True)
            for mode in modes:
                hits = engine.search(SearchArgs(query=q.question[:2000], table="chunks", column="text_content",
                                                filter=flt, mode=mode, limit=depth)).hits
                ranked = [h.page_number for h in hits]
                for k in ks:
                    pred = [t for _, t in evidence_from_pages(ranked, maps[paper.store_id], k)]
                    full, text = scores[(mode, k)]
                    full.append(max(paragraph_f1_score(pred, r.evidence) for r in refs))
                    text.append(max(paragraph_f1_score(pred, r.evidence) for r in text_refs))
                if oracle and mode == "hybrid":
                    texts = [t for _, t in evidence_from_pages(ranked, maps[paper.store_id], None)]
                    for name, pred in oracle_evidence(engine, flt, q.question, refs, texts, maps[paper.store_id], 0.3).items():
                        full, text = oracles.setdefault(name, ([], []))
                        full.append(max(paragraph_f1_score(pred, r.evidence) for r in refs))
                        text.append(max(paragraph_f1_score(pred, r.evidence) for r in text_refs))
    seconds = time.perf_counter() - start
    rows = [{"mode": m, "k": k, "evidence_f1": round(100 * sum(f) / len(f), 2),
             "evidence_f1_text_only": round(100 * sum(t) / len(t), 2)}
            for (m, k), (f, t) in scores.items()]
    rows += [{"mode": f"oracle: {name}", "k": "", "evidence_f1": round(100 * sum(f) / len(f), 2),
              "evidence_f1_text_only": round(100 * sum(t) / len(t), 2)} for name, (f, t) in oracles.items()]
    return rows, seconds


def constant_row(papers) -> dict:
    from evidex.evaluators.qasper import constant_predictions, evaluate

    gold = {q.question_id: q.answers for p in papers for q in p.qas}
    r = evaluate(gold, constant_predictions(gold))
    return {"mode": '"Unanswerable" (no evidence)', "k": 0, "evidence_f1": round(r["evidence_f1"], 2),
            "evidence_f1_text_only": round(r["evidence_f1_text_only"], 2), "answer_f1": round(r["answer_f1"], 2)}


def print_table(title: str, rows: list[dict]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    cols = list(dict.fromkeys(k for r in rows for k in r if k != "run"))
    table = Table(title=title)
    for c in cols:
        table.add_column(escape(c), justify="left" if c in ("mode", "config") else "right")
    for r in rows:
        table.add_row(*[escape(str(r.get(c, ""))) for c in cols])
    Console(width=max(200, Console().width)).print(table)


def pipeline_row(run_dir: Path) -> dict:
    missing = [f for f in ("qasper_metrics.json", "metrics.json") if not (run_dir / f).is_file()]
    if missing:  # an interrupted run has results but no scores yet
        raise FileNotFoundError(f"{run_dir}: no {' or '.join(missing)}; finish the run first "
                                f"(python -m graphs.run --resume {run_dir})")
    metrics = json.loads((run_dir / "qasper_metrics.json").read_text())
    summary = json.loads((run_dir / "metrics.json").read_text())
    base = metrics["baseline_unanswerable"]
    row = {"config": summary["config"], "run": run_dir.name, "model": summary["model"], "n": metrics["questions"],
           "errors": metrics["missing_predictions"], "answer_f1": round(metrics["answer_f1"], 2)}
    row.update({f"{t} (n)": f"{v:.2f} ({metrics['questions_by_type'][t]})" if metrics["questions_by_type"][t] else ""
                for t, v in metrics["answer_f1_by_type"].items()})
    row.update({"evidence_f1": round(metrics["evidence_f1"], 2),
                "evidence_f1 text": round(metrics["evidence_f1_text_only"], 2),
                "EM": round(metrics["exact_match"], 2),
                '"Unanswerable" ans/ev': f"{base['answer_f1']:.2f}/{base['evidence_f1']:.2f}",
                "median s": summary["latency_s"].get("median")})
    return row


def gold_script(papers, path: Path) -> Path:
    """Write a scripted model file (``by_prompt``) answering each question's answer calls with its first annotator's
    answer (``{"answer": ...}``): matched by the question and its paper's store id (a question such as "What
    datasets do they use?" is asked of many papers), or by the question alone when no other paper asks it."""
    from collections import Counter

    from evidex.evaluators.qasper import references

    asked = Counter(q.question.strip() for paper in papers for q in paper.qas)
    rules = []
    for paper in papers:
        for q in paper.qas:
            if not q.answers:
                continue
            reply = {"answer": references(q.answers)[0].answer}
            rules.append({"contains": [q.question.strip(), paper.store_id], "reply": reply})
            if asked[q.question.strip()] == 1:
                rules.append({"contains": [q.question.strip()], "reply": reply})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"by_prompt": rules, "default": {"answer": "Unanswerable"}}), encoding="utf-8")
    return path


def model_calls(tree: dict | None) -> list[str]:
    """The prompts of a run tree's model calls, in order."""
    from evidex.graphs.trace_tree import walk

    calls = []
    for _, node in walk(tree or {}):
        if node.get("run_type") in ("llm", "chat_model"):
            inputs = node.get("inputs") or {}
            calls.append(inputs["prompts"][0] if inputs.get("prompts") else json.dumps(inputs, sort_keys=True))
    return calls


def compare_runs(before: Path, after: Path) -> dict:
    """Item by item, did two runs send the model the same prompts, and end with the same answer and evidence?"""
    from evidex.graphs.trace_tree import load_items

    old = {it.id: it for it in load_items(before)}
    new = {it.id: it for it in load_items(after)}
    both = [i for i in old if i in new]
    prompts, outcome = [], []
    for i in both:
        a, b = (old[i].row.get("prediction") or {}), (new[i].row.get("prediction") or {})
        if model_calls(old[i].tree) != model_calls(new[i].tree):
            prompts.append(i)
        if (a.get("answer"), a.get("evidence"), old[i].row.get("error")) != (b.get("answer"), b.get("evidence"),
                                                                             new[i].row.get("error")):
            outcome.append(i)
    return {"before": before.name, "after": after.name, "items": len(both),
            "only_before": len(old) - len(both), "only_after": len(new) - len(both),
            "same_prompts": len(both) - len(prompts), "same_answer_and_evidence": len(both) - len(outcome),
            "prompts_differ": prompts, "outcome_differs": outcome}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.qasper", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, help=f"QASPER file (default: {DEV} under EVIDEX_DATA_DIR)")
    p.add_argument("--db", default=STORE, help=f"store name (default {STORE})")
    p.add_argument("--skip-ingest", action="store_true", help="use the store as it is")
    p.add_argument("--modes", default=",".join(MODES), help="retrieval modes (bm25, dense, hybrid)")
    p.add_argument("--ks", default=",".join(map(str, KS)), help="paragraphs kept as evidence")
    p.add_argument("--oracle", action="store_true",
                   help="also rows with the first annotator's answer standing in for the model's (upper bounds of "
                        "the evidence rules; needs hybrid in --modes)")
    p.add_argument("--pipeline", action="store_true", help="run the QA pipeline instead (see --config, --limit)")
    p.add_argument("--config", default="qasper/qasper", help="pipeline: comma-separated configs (qasper/<method>)")
    p.add_argument("--limit", type=int, default=100, help="pipeline: first N questions (default 100)")
    p.add_argument("--offset", type=int, default=0, help="pipeline: skip the first N questions (tune on one window, "
                                                         "report on another)")
    p.add_argument("--llm", help="pipeline: model spec (default: the config's, local)")
    p.add_argument("--replay-gold", action="store_true",
                   help="run the pipeline with no model: each answer call gets the first annotator's answer (see "
                        "above)")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("RUN_BEFORE", "RUN_AFTER"),
                   help="did two runs send the same prompts and end with the same answers and evidence?")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="pipeline: override a config value for every config")
    p.add_argument("--out", type=Path, default=Path("runs"), help="pipeline: parent folder of the run folders")
    p.add_argument("--from-runs", nargs="+", type=Path, metavar="RUN_DIR", help="pipeline: tabulate finished runs")
    p.add_argument("--json", type=Path, help="results file (default benchmarks/results/qasper.json, under "
                   "'retrieval' or 'pipeline')")
    args = p.parse_args(argv)

    from evidex.tools.datasets import resolve_data_file
    from evidex.tools.qasper_data import QasperDataError, load_qasper

    if args.compare:
        missing = [str(d) for d in args.compare if not (d / "results.jsonl").is_file()]
        if missing:
            p.error(f"not a run folder (no results.jsonl): {', '.join(missing)}")
        result = compare_runs(*args.compare)
        print(f"{result['items']} items in both runs: same model prompts {result['same_prompts']}, same answer and "
              f"evidence {result['same_answer_and_evidence']}")
        for key in ("prompts_differ", "outcome_differs"):
            if result[key]:
                print(f"  {key.replace('_', ' ')}: {', '.join(result[key])}")
        write_results(args.json or RESULTS, result, part="compare")
        return 0
    if args.replay_gold and (args.llm or args.from_runs):
        p.error("--replay-gold is the model and runs the pipeline: leave out --llm and --from-runs")
    args.pipeline = args.pipeline or args.replay_gold
    if args.pipeline and args.from_runs:
        try:
            rows = [pipeline_row(d) for d in args.from_runs]
        except FileNotFoundError as exc:
            p.error(str(exc))
        print_table("QASPER pipeline (official metric, 0-100)", rows)
        write_results(args.json or RESULTS, {"rows": rows}, part="pipeline")
        return 0
    try:
        path = args.data.expanduser().resolve() if args.data else resolve_data_file(DEV)
        papers = load_qasper(path)
    except (QasperDataError, FileNotFoundError) as exc:
        p.error(str(exc))
    name = data_name(path, str(args.data or DEV))
    if args.pipeline:
        from evidex.graphs.runner import run_task
        from evidex.graphs.tasks import load_config

        sets = [f"dataset.file={path}", f"store.db={args.db}", f"dataset.limit={args.limit}",
                f"dataset.offset={args.offset}", *args.overrides]
        if args.replay_gold:
            args.llm = f"scripted:{gold_script(papers, (args.out / 'qasper_gold_replies.json').resolve())}"
        sets += [f"model.spec={args.llm}"] if args.llm else []
        sets += ["run.prepare=false"] if args.skip_ingest else []
        rows = []
        for config in [c.strip() for c in args.config.split(",") if c.strip()]:
            run_dir = run_task(load_config(config, sets), out_dir=args.out)
            rows.append(pipeline_row(run_dir))
            if args.replay_gold:  # the spec names a file of this machine
                rows[-1]["model"] = "replay of the first annotator's answers"
            print_table("QASPER pipeline (official metric, 0-100)", rows)
        write_results(args.json or RESULTS,
                      {"data": name, "offset": args.offset, "limit": args.limit, "store": args.db, "rows": rows},
                      part="replay_gold" if args.replay_gold else "pipeline")
        return 0

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    ks = sorted({int(k) for k in args.ks.split(",") if k.strip()})
    bad = [m for m in modes if m not in MODES]
    if bad or not ks or min(ks) < 1:
        p.error(f"--modes from {', '.join(MODES)}; --ks positive integers")
    load_start = [round(x, 2) for x in os.getloadavg()]
    store = ingest(papers, args.db, args.skip_ingest)
    rows, seconds = retrieval(papers, args.db, modes, ks, args.oracle)
    rows.append(constant_row(papers))
    n = sum(len(pp.qas) for pp in papers)
    print_table(f"QASPER retrieval-only Evidence-F1 (0-100): {n} questions, {seconds:.1f} s", rows)
    write_results(args.json or RESULTS,
                  {"data": name, "store": args.db, "papers": len(papers), "questions": n, "seconds": round(seconds, 1),
                   "searches": n * len(modes), "oracle_rows": args.oracle, "ingest": store,
                   "cpu_count": os.cpu_count(), "load_avg_start": load_start,
                   "load_avg_end": [round(x, 2) for x in os.getloadavg()], "rows": rows}, part="retrieval")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

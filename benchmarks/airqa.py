"""AirQA benchmark: NeuSym against every baseline and ablation, on the same store, questions and model.

    python -m benchmarks.airqa --build-store                     # the corpus store (58 PDFs, AirQA uuids), once
    python -m benchmarks.airqa --limit 10                        # every method on the first 10 questions
    python -m benchmarks.airqa --methods airqa,classic_rag --llm openai:gpt-4o-mini
    python -m benchmarks.airqa --methods airqa,classic_rag --split holdout   # questions never tuned on
    python -m benchmarks.airqa --from-runs runs/A runs/B         # tabulate finished runs

Questions: the AirQA sample questions whose papers are all in ``../shared/corpus`` plus the questions written for
this benchmark over corpus papers (``benchmarks/data/airqa_corpus_questions.jsonl``; written before any tuning
and kept), split by id into dev (tuning) and test (reported); the holdout split is 24 questions written later,
blind to the system (``benchmarks/data/airqa_holdout_questions.jsonl``), never tuned on. Each method runs
through ``graphs.runner.run_task`` (a normal, resumable run folder per method); the table shows overall and
per-tag score, turns, prompt/completion tokens and latency per question. JSON goes to
``benchmarks/results/airqa.json``, one key per split (``dev``, ``test``, ``holdout``, ``pool_dev``, ``pool_test``,
``pool_tables``, ``pool_blind``, ``pool_described_tables``, ``pool_blind2``) holding its latest result.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

METHODS = ("airqa", "classic_rag", "iterative_rag", "question_only", "title_abstract", "full_text",
           "neusym_vector_only", "neusym_sql_only")
WRITTEN = Path(__file__).parent / "data" / "airqa_corpus_questions.jsonl"
# written after the dev/test numbers were reported, blind to the system, never tuned on: the held-out split
HOLDOUT = Path(__file__).parent / "data" / "airqa_holdout_questions.jsonl"
# written blind over 50 papers of ../shared/corpus/pool that nobody tuned on; split by paper (field "split")
POOL = Path(__file__).parent / "data" / "airqa_pool_questions.jsonl"
# 14 table questions over 13 pool papers, written blind on 2026-12-03 to check table rules found on pool_test; a
# tuning set since (docs/results.md says which rules came from which questions)
POOL_TABLES = Path(__file__).parent / "data" / "airqa_pool_table_questions.jsonl"
# 24 questions of every kind over the 6 pool papers no other question used, written blind on 2026-12-05 and run
# once on the code of that day, never tuned on
POOL_BLIND = Path(__file__).parent / "data" / "airqa_pool_blind_questions.jsonl"
# 8 questions over 8 other pool papers, each about a table it describes without its number, written blind on
# 2026-12-05 to check the probe's described-table look-up (written from 2 pool_blind questions) on other papers
POOL_DESCRIBED = Path(__file__).parent / "data" / "airqa_pool_described_table_questions.jsonl"
# 24 questions of every kind over 8 pool papers that had one question each, written blind on 2026-12-05 (after the
# gap and equation arithmetic) by a helper who saw no code or results, fixed before the system first ran them
POOL_BLIND2 = Path(__file__).parent / "data" / "airqa_pool_blind2_questions.jsonl"
# 24 more over the 8 pool papers that still had one question each, written blind on 2026-12-05 (after the counted-noun
# binding) by a helper who saw no code or results, fixed before the system first ran them
POOL_BLIND3 = Path(__file__).parent / "data" / "airqa_pool_blind3_questions.jsonl"
# 16 questions about what a figure prints (axis titles, ticks, legends, panels, printed values, diagram labels) over
# 13 pool papers no blind set uses, written blind on 2026-12-05 by a helper who saw no code or results, fixed before
# the system first ran them (after the chart reading of figure text was written from the blind sets' figures)
POOL_FIGURES = Path(__file__).parent / "data" / "airqa_pool_figures_questions.jsonl"
# 12 questions that compare table cells (two systems printed as columns, counted down the rows; rows counted against a
# reference row) over 12 pool papers other than the 3 those readers were written from, written blind on 2026-12-05 by
# a helper who saw no code or results, fixed before the system first ran them
POOL_COMPARISON = Path(__file__).parent / "data" / "airqa_pool_comparison_questions.jsonl"
# 10 questions asking which organization a named author is at, over 10 pool papers (5 marking affiliations after the
# names, 5 printing names and affiliations in columns), written blind on 2026-12-05 by a helper who saw no code or
# results, fixed before the system first ran them
POOL_AFFILIATIONS = Path(__file__).parent / "data" / "airqa_pool_affiliation_questions.jsonl"
# 16 more questions about what a figure prints (values on bars, series compared, legends, axis titles, panels, diagram
# labels) over 14 pool papers whose figures no set asked about, written blind on 2026-12-06 by a helper who saw no
# code or results, fixed before the system first ran them
POOL_FIGURES2 = Path(__file__).parent / "data" / "airqa_pool_figures2_questions.jsonl"
# 16 more questions about what one figure prints (values printed in a diagram, series compared, legends, headings and
# panel titles, panel counts, diagram labels) over 13 pool papers whose figures no earlier set asked about, written
# blind on 2026-12-06 by a helper who saw no code or results, fixed before the system first ran them
POOL_FIGURES3 = Path(__file__).parent / "data" / "airqa_pool_figures3_questions.jsonl"
# the two largest kinds of the AirQA benchmark: 14 questions naming a paper by what it contributes (which of the 60
# pool papers is it) and 10 questions needing a fact from each of two named papers (20 papers, none of the 14),
# written blind on 2026-12-06 by a helper who saw no code or results, fixed before the system first ran them
POOL_RETRIEVAL = Path(__file__).parent / "data" / "airqa_pool_retrieval_questions.jsonl"
# 12 numbers computed from two values stated apart (totals, ratios and differences, across two papers or within one)
# over 15 pool papers none of pool_retrieval's two-paper questions uses, written blind on 2026-12-06 by a helper who
# saw no code or results, fixed before the system first ran them
POOL_ARITHMETIC = Path(__file__).parent / "data" / "airqa_pool_arithmetic_questions.jsonl"
# 20 questions needing a fact from each of two named papers (lists of two values, yes/no comparisons, which paper has
# the larger value, differences and ratios; 40 pool papers, no pair an earlier set asked about), written blind on
# 2026-12-06 by a helper who saw no code or results, fixed before the system first ran them
POOL_MULTI = Path(__file__).parent / "data" / "airqa_pool_multi_questions.jsonl"
# 20 more two-paper questions of the same kinds (6 lists, 4 yes/no, 5 which paper, 5 differences, ratios and a total;
# 40 pool papers, no pair an earlier set asked about), written blind on 2026-12-06 by a helper who saw no code or
# results, fixed before the system first ran them
POOL_MULTI2 = Path(__file__).parent / "data" / "airqa_pool_multi2_questions.jsonl"
# 24 questions in the mix of the AirQA benchmark (6 which paper, 8 needing two papers, 10 over one paper: text, table,
# image, formula, metadata; 31 pool papers), written blind on 2026-12-06 by a helper who saw no code or results,
# fixed before the system first ran them
POOL_BLIND4 = Path(__file__).parent / "data" / "airqa_pool_blind4_questions.jsonl"
# 12 table questions over two-level headers and things printed as columns (5 which of N is highest, 4 counts against
# a reference row, 3 cells by row and two-level column; 12 pool papers, tables no earlier question asked about),
# written blind on 2026-12-06 by a helper who saw no code or results, fixed before the system first ran them
POOL_TABLES2 = Path(__file__).parent / "data" / "airqa_pool_tables2_questions.jsonl"
# 12 more of the same kinds over 12 other pool papers, written blind on 2026-12-06 by a helper who saw no code or
# results, after the header repairs written from pool_tables2's misses and before the system first ran them
POOL_TABLES3 = Path(__file__).parent / "data" / "airqa_pool_tables3_questions.jsonl"
# 24 more questions in the AirQA benchmark's mix over 29 pool papers (no two-paper pair an earlier set used), written
# blind on 2026-12-06 by a helper who saw no code or results, fixed before the system first ran them
POOL_BLIND5 = Path(__file__).parent / "data" / "airqa_pool_blind5_questions.jsonl"
# and 24 more over 32 pool papers the same way (2026-12-06, evening), fixed before the system first ran them
POOL_BLIND6 = Path(__file__).parent / "data" / "airqa_pool_blind6_questions.jsonl"
# and 24 more over 28 pool papers, asking mostly of pages no earlier set asked about (2026-12-07), fixed before the
# system first ran them
POOL_BLIND7 = Path(__file__).parent / "data" / "airqa_pool_blind7_questions.jsonl"
# and 24 more over 31 pool papers, again mostly of pages no earlier set asked about (2026-12-07), fixed before the
# system first ran them
POOL_BLIND8 = Path(__file__).parent / "data" / "airqa_pool_blind8_questions.jsonl"
# and 24 more over 31 pool papers, mostly of pages no earlier set asked about (2026-12-07, morning), fixed before the
# system first ran them
POOL_BLIND9 = Path(__file__).parent / "data" / "airqa_pool_blind9_questions.jsonl"
# 20 more two-paper questions over 28 pool papers in new pairs, half of them a difference, total or ratio of one
# value from each paper (2026-12-07), fixed before the system first ran them
POOL_MULTI3 = Path(__file__).parent / "data" / "airqa_pool_multi3_questions.jsonl"
# and 24 more in the AirQA benchmark's mix over 30 pool papers, none of their 32 gold pages asked about before
# (2026-12-07, afternoon), fixed before the system first ran them
POOL_BLIND10 = Path(__file__).parent / "data" / "airqa_pool_blind10_questions.jsonl"
# and 24 more the same way over 31 pool papers, again on pages no earlier set asked about (2026-12-07, evening)
POOL_BLIND11 = Path(__file__).parent / "data" / "airqa_pool_blind11_questions.jsonl"
# and 24 more the same way over 28 pool papers, on pages no earlier set asked about (2026-12-07, night)
POOL_BLIND12 = Path(__file__).parent / "data" / "airqa_pool_blind12_questions.jsonl"
SETS = {"pool_tables": POOL_TABLES, "pool_blind": POOL_BLIND, "pool_described_tables": POOL_DESCRIBED,
        "pool_blind2": POOL_BLIND2, "pool_blind3": POOL_BLIND3, "pool_figures": POOL_FIGURES,
        "pool_comparison": POOL_COMPARISON, "pool_affiliations": POOL_AFFILIATIONS, "pool_figures2": POOL_FIGURES2,
        "pool_figures3": POOL_FIGURES3, "pool_retrieval": POOL_RETRIEVAL,
        "pool_arithmetic": POOL_ARITHMETIC, "pool_multi": POOL_MULTI,
        "pool_multi2": POOL_MULTI2, "pool_blind4": POOL_BLIND4,
        "pool_tables2": POOL_TABLES2, "pool_tables3": POOL_TABLES3, "pool_blind5": POOL_BLIND5,
        "pool_blind6": POOL_BLIND6, "pool_blind7": POOL_BLIND7, "pool_blind8": POOL_BLIND8,
        "pool_blind9": POOL_BLIND9, "pool_multi3": POOL_MULTI3, "pool_blind10": POOL_BLIND10,
        "pool_blind11": POOL_BLIND11, "pool_blind12": POOL_BLIND12}
SPLITS = ("dev", "test", "all", "holdout", "pool_dev", "pool_test", *SETS)
SAMPLE = "airqa/airqa_dev_sample.jsonl"
STORE = "corpus"
TAGS = ("single", "multiple", "retrieval", "text", "table", "image", "formula", "metadata", "objective", "subjective")


def corpus_uuids(corpus: Path) -> dict[str, str]:
    """AirQA uuid -> conference_year of the corpus papers that are AirQA papers."""
    manifest = json.loads((corpus / "corpus_manifest.json").read_text())
    return {e["airqa"][0]["uuid"]: e["airqa"][0]["conference_year"] for e in manifest if e["airqa"]}


def split_of(uuid: str) -> str:
    """A fixed split by question id: ``dev`` (about a third) is for tuning prompts and settings, ``test`` for the
    reported numbers. The same question always lands in the same split."""
    return "dev" if int(uuid.replace("-", "")[:8], 16) % 3 == 0 else "test"


def question_file(corpus: Path, out: Path, split: str = "all") -> tuple[Path, dict[str, int]]:
    """One JSONL of the sample questions answerable from the corpus plus the written ones (of ``split``); the
    ``holdout`` split is the held-out written questions alone."""
    from evidex.evaluators.airqa import read_jsonl
    from evidex.tools.datasets import resolve_data_file

    if split == "holdout":
        sample, written = [], read_jsonl(HOLDOUT, required=("uuid",))
    elif split in SETS:
        sample, written = [], read_jsonl(SETS[split], required=("uuid",))
    elif split.startswith("pool_"):
        sample, written = [], [r for r in read_jsonl(POOL, required=("uuid",)) if r["split"] == split]
    else:
        ids = set(corpus_uuids(corpus))
        sample = [r for r in read_jsonl(resolve_data_file(SAMPLE), required=("uuid",))
                  if (r["anchor_pdf"] or r["reference_pdf"]) and set(r["anchor_pdf"] + r["reference_pdf"]) <= ids]
        written = read_jsonl(WRITTEN, required=("uuid",)) if WRITTEN.is_file() else []
        if split != "all":
            sample = [r for r in sample if split_of(r["uuid"]) == split]
            written = [r for r in written if split_of(r["uuid"]) == split]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in sample + written))
    return out, {"sample": len(sample), "written": len(written)}


def build_store(corpus: Path, db: str, config: Path | None = None) -> None:
    """Ingest the corpus with each AirQA paper's conference_year, so store paper ids are the AirQA uuids
    (``config``: an ingestion config file instead of the default, e.g. another embedding backend)."""
    import tempfile

    from evidex.tools.ingest import ingest

    manifest = json.loads((corpus / "corpus_manifest.json").read_text())
    with tempfile.TemporaryDirectory() as meta:
        for e in manifest:
            if e["airqa"]:
                stem = Path(e["file"]).stem
                (Path(meta) / f"{stem}.json").write_text(json.dumps({"conference_year": e["airqa"][0]["conference_year"]}))
        report = ingest([corpus / "pdfs"], db=db, metadata_dir=meta, workers=1, config=config)
    print(f"store {db}: {sum(f.status == 'ingested' for f in report.files)} ingested, "
          f"{sum(f.status == 'failed' for f in report.files)} failed")


def row_from_summary(summary: dict) -> dict:
    m, tags = summary.get("metrics", {}), summary.get("by_tag", {})
    row = {"method": summary["config"], "run": summary["run_id"], "n": summary["n_items"], "errors": summary["n_errors"]}
    for key in ("score", "answered", "citations_valid", "turns"):
        if key in m and m[key].get("mean") is not None:
            row[key] = round(m[key]["mean"], 3)
    for tag in TAGS:
        s = (tags.get(tag) or {}).get("score")
        if s and s.get("mean") is not None:
            row[f"score[{tag}]"] = round(s["mean"], 3)
    row["latency median s"] = summary["latency_s"].get("median")
    row["prompt tok/q"] = summary["prompt_tokens"].get("mean")
    row["completion tok/q"] = summary["completion_tokens"].get("mean")
    return row


def row_on_questions(run_dir: Path, ids: list[str]) -> dict:
    """One method's row over only ``ids`` (the questions every method answered), from its results.jsonl: the
    side-by-side table when some methods ran on fewer questions."""
    from statistics import mean, median

    from evidex.tools.runfolder import read_results

    config = json.loads((run_dir / "run.json").read_text())["config"]
    rows = [r for r in read_results(run_dir / "results.jsonl") if r["id"] in set(ids)]
    ok = [r for r in rows if not r.get("error")]
    row = {"method": config, "run": run_dir.name, "n": len(rows), "errors": len(rows) - len(ok)}
    for key in ("score", "answered", "citations_valid", "turns"):
        values = [r["metrics"][key] for r in ok if r["metrics"].get(key) is not None]
        if values:
            row[key] = round(mean(values), 3)
    for tag in TAGS:
        values = [r["metrics"]["score"] for r in ok if tag in r.get("tags", []) and r["metrics"].get("score") is not None]
        if values:
            row[f"score[{tag}]"] = round(mean(values), 3)
    row["latency median s"] = round(median(r["latency_s"] for r in rows), 3) if rows else None
    row["prompt tok/q"] = round(mean(r["tokens"].get("prompt", 0) for r in rows), 1) if rows else None
    row["completion tok/q"] = round(mean(r["tokens"].get("completion", 0) for r in rows), 1) if rows else None
    return row


def run_row(run_dir: Path) -> dict:
    """A run's row: from its summary when it finished, else from the questions it answered so far (an interrupted
    run; the row says how many of how many, and how to finish it)."""
    from evidex.tools.runfolder import read_results

    if (run_dir / "metrics.json").is_file():
        return row_from_summary(json.loads((run_dir / "metrics.json").read_text()))
    if not (run_dir / "run.json").is_file():
        raise FileNotFoundError(f"{run_dir}: not a run folder (no run.json)")
    planned = json.loads((run_dir / "run.json").read_text()).get("n_items")
    answered = [r["id"] for r in read_results(run_dir / "results.jsonl")]  # none yet: no file, no rows
    print(f"{run_dir.name}: unfinished, {len(answered)} of {planned} questions answered; its row covers those "
          f"(finish it with python -m graphs.run --resume {run_dir})")
    return {**row_on_questions(run_dir, answered), "unfinished": f"{len(answered)}/{planned}"}


def recorded_split(run_dir: Path) -> str | None:
    """The split a run answered, from the question file its ``config.yaml`` names (``airqa_benchmark_<split>.jsonl``,
    as this benchmark writes it); None when it does not say."""
    import re

    import yaml

    cfg = run_dir / "config.yaml"
    if not cfg.is_file():
        return None
    file = ((yaml.safe_load(cfg.read_text()) or {}).get("dataset") or {}).get("file") or ""
    m = re.fullmatch(r"airqa_benchmark_(\w+)\.jsonl", Path(str(file)).name)
    return m.group(1) if m and m.group(1) in SPLITS else None


def split_of_runs(run_dirs: list[Path], given: str | None) -> str:
    """The results key for tabulated runs: the split they recorded. A ``--split`` that contradicts it, runs that
    answered different splits, or runs that record none without ``--split`` are refused, so a tabulation never
    overwrites another split's result."""
    recorded = {d.name: recorded_split(d) for d in run_dirs}
    known = {s for s in recorded.values() if s}
    if len(known) > 1:
        raise SystemExit(f"the runs answered different splits ({', '.join(f'{k}: {v}' for k, v in recorded.items())}"
                         "); tabulate each split on its own")
    if given and known and given not in known:
        raise SystemExit(f"--split {given}, but the runs answered {known.pop()} (their config.yaml says so); drop "
                         "--split or pass that one")
    if given:
        return given
    if known:
        return known.pop()
    raise SystemExit("the runs do not record which split they answered (no airqa_benchmark_<split>.jsonl in their "
                     "config.yaml); pass --split")


def common_questions(run_dirs: list[Path]) -> list[str]:
    """The question ids every run answered."""
    from evidex.tools.runfolder import read_results

    sets = [{r["id"] for r in read_results(d / "results.jsonl")} for d in run_dirs]
    return sorted(set.intersection(*sets)) if sets else []


def question_scores(run_dir: Path) -> dict[str, float | None]:
    """Each question's score in a run (None: an item error), kept in the results JSON so a later look at which
    questions a change won or lost does not need the run folder."""
    from evidex.tools.runfolder import read_results

    return {r["id"]: (None if r.get("error") else r["metrics"].get("score"))
            for r in read_results(run_dir / "results.jsonl")}


def print_rows(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    cols = list(dict.fromkeys(k for r in rows for k in r if k != "run"))
    table = Table(title="AirQA: NeuSym vs baselines (same store, questions and model)")
    for c in cols:
        table.add_column(c, justify="left" if c == "method" else "right")
    for r in rows:
        table.add_row(*[str(r.get(c, "")) for c in cols])
    Console(width=max(160, Console().width)).print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.airqa", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", help="configs under configs/airqa/ (airqa = NeuSym; default: all of them, or none "
                   "with --build-store)")
    p.add_argument("--limit", type=int, help="first N questions")
    p.add_argument("--split", choices=SPLITS, default=None,
                   help="dev: tune on these; test: report these (default); all: dev and test; holdout: questions "
                        "written later and never tuned on; pool_dev / pool_test: questions over the pool papers "
                        "(--db pool: evidex ingest ../shared/corpus/pool/pdfs --db pool --metadata-dir "
                        "../shared/corpus/pool/metadata), tune on pool_dev, report pool_test; pool_tables: 14 table "
                        "questions over pool papers; pool_blind: 24 questions of every kind over the 6 pool papers "
                        "no other split uses; pool_described_tables: 8 questions about a table described without "
                        "its number; pool_blind2 and pool_blind3: 24 questions of every kind over 8 pool papers "
                        "each, written blind; pool_figures: 16 questions about what a figure prints, written "
                        "blind; pool_comparison: 12 table comparisons (columns counted down the rows, rows against "
                        "a reference row), written blind; pool_affiliations: 10 questions on an author's organization, written "
                        "blind; pool_figures2 and pool_figures3: 16 more figure questions each, written blind; "
                        "pool_retrieval: 14 questions asking which paper, 10 needing two papers, written blind; "
                        "pool_arithmetic: 12 totals, ratios and differences of two stated values, written blind; "
                        "pool_multi, pool_multi2 and pool_multi3: 20 questions each needing a fact from each of two papers, "
                        "written blind; pool_blind4: 24 questions in the AirQA benchmark's mix (which paper, two "
                        "papers, one paper), written blind, and pool_blind5 to pool_blind12 the same; pool_tables2 and pool_tables3: 12 table questions "
                        "each over two-level headers, written blind "
                        "(default test; with --from-runs: the split the runs answered, as their config.yaml "
                        "records it)")
    p.add_argument("--llm", help="model spec (default: local)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value for every method, e.g. --set qa.warm_start=true")
    p.add_argument("--db", default=STORE, help=f"store name (default {STORE})")
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    p.add_argument("--build-store", action="store_true", help="ingest the corpus into --db first")
    p.add_argument("--ingest-config", type=Path, help="with --build-store: ingestion config file (default: the "
                   "default ingestion config)")
    p.add_argument("--out", type=Path, default=Path("runs"))
    p.add_argument("--json", type=Path, default=Path("benchmarks/results/airqa.json"),
                   help="results file, one key per split (default benchmarks/results/airqa.json)")
    p.add_argument("--from-runs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--note", help="a note stored with the results (what was run, on which questions)")
    p.add_argument("--common", action="store_true",
                   help="with --from-runs: also tabulate every run over only the questions all of them answered")
    args = p.parse_args(argv)
    rows, common, run_dirs = [], [], []
    if args.from_runs:
        run_dirs = list(args.from_runs)
        args.split = split_of_runs(run_dirs, args.split)
        rows = [run_row(d) for d in run_dirs]
        if args.common:
            ids = common_questions(args.from_runs)
            common = [row_on_questions(d, ids) for d in args.from_runs]
    else:
        from evidex.graphs.runner import run_task
        from evidex.graphs.tasks import load_config

        args.split = args.split or "test"

        if not args.split.startswith("pool_") and not (args.corpus / "corpus_manifest.json").is_file():
            p.error(f"{args.corpus} holds no corpus_manifest.json (pass --corpus ../shared/corpus)")
        if args.build_store:
            build_store(args.corpus, args.db, args.ingest_config)
            if args.methods is None:  # --build-store alone builds the store and runs nothing
                return 0
        questions, counts = question_file(args.corpus, args.out / f"airqa_benchmark_{args.split}.jsonl", args.split)
        print(f"questions ({args.split}): {counts['sample']} from the AirQA sample, {counts['written']} written for "
              "the corpus")
        sets = [f"dataset.file={questions.resolve()}", f"store.db={args.db}"]
        sets += [f"dataset.limit={args.limit}"] if args.limit else []
        sets += [f"model.spec={args.llm}"] if args.llm else []
        sets += list(args.overrides)
        methods = ",".join(METHODS) if args.methods is None else args.methods
        configs = [load_config(f"airqa/{m.strip()}", sets) for m in methods.split(",") if m.strip()]
        if not configs:  # --methods "": no run, so no results file to overwrite
            return 0
        for cfg in configs:
            run_dir = run_task(cfg, out_dir=args.out)
            run_dirs.append(run_dir)
            rows.append(row_from_summary(json.loads((run_dir / "metrics.json").read_text())))
            print_rows(rows)
    print_rows(rows)
    result = {"split": args.split, "rows": rows, **({"note": args.note} if args.note else {}),
              "per_question": {d.name: question_scores(d) for d in run_dirs}}
    if common:
        print_rows(common)
        result["common_questions"] = {"n": common[0]["n"], "rows": common}
    # one key per split, each split's latest result (the pool splits beside dev/test/holdout)
    write_results(args.json, result, part=args.split)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Code readers, without a model: on each question set, how often each reader applies, answers, and is right.

    python -m benchmarks.code_readers --corpus-db corpus --pool-db pool       # -> airqa.json part code_readers

A reader that answers by code earns its place on questions over papers other than the ones it was written from
(docs/question-answering.md). This reads every question of a set through the probe's lookups (metadata and the
tables, figures and equations it names; no passage search, so no embedder and no model), asks every registered
reader but ``model`` whether it applies and what it answers, and scores the answer with the question's own
evaluator. Sets: ``corpus`` (the AirQA dev, test and holdout questions over the 58 corpus papers),
``pool_dev`` (the pool tuning split) and ``pool_tables`` (14 table questions written blind over pool papers to
check rules found on pool_test). pool_test is left out on purpose: it is the reported split, read only by
full runs.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks import write_results
from benchmarks.airqa import question_file

SPLITS = {"corpus": ("all", "holdout"), "pool_dev": ("pool_dev",), "pool_tables": ("pool_tables",)}  # set: its splits


def questions_of(name: str, corpus: Path, scratch: Path) -> list:
    """The AirQA questions of set ``name`` (:class:`tools.qa.QAItem`), read as the airqa task reads them."""
    from evidex.graphs.qa.family import load_airqa
    from evidex.graphs.tasks import config_for_task

    items = []
    for split in SPLITS[name]:
        path, _ = question_file(corpus, scratch / f"{split}.jsonl", split)
        items += load_airqa(config_for_task("airqa", [f"dataset.file={path.resolve()}"]))
    return items


def check_readers(store, questions: list) -> dict[str, dict]:
    """Per code reader: of ``questions`` (:class:`tools.qa.QAItem`), those it applies to, answers and answers right,
    and each answer with its score."""
    from evidex.agents.readers import ReadRequest, get_reader, reader_names
    from evidex.evaluators.airqa import evaluate
    from evidex.tools.qa.probe import probe
    from evidex.tools.qa.question import parse_question

    readers = [get_reader(n) for n in reader_names() if n != "model"]
    out = {r.name: {"questions": len(questions), "applies": 0, "answers": 0, "correct": 0, "answered": []}
           for r in readers}
    for item in questions:
        q = parse_question(item.question)
        context = probe(store, q, 0)
        for reader in readers:
            if not reader.applies(q, context):
                continue
            part = out[reader.name]
            part["applies"] += 1
            answer = reader.read(ReadRequest(question=q, context=context))
            if answer is None:
                continue
            score = evaluate(answer.value, item.evaluator).score
            part["answers"] += 1
            part["correct"] += int(score == 1.0)
            part["answered"].append({"id": q.id, "answer": answer.value, "score": score})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus"), help="folder with corpus_manifest.json")
    p.add_argument("--corpus-db", default="corpus", help="store of the 58 corpus papers (default corpus)")
    p.add_argument("--pool-db", default="pool", help="store of the pool papers (default pool)")
    p.add_argument("--scratch", type=Path, default=Path("runs/code_readers"), help="where question files are written")
    p.add_argument("--json", type=Path, default=Path("benchmarks/results/airqa.json"))
    args = p.parse_args(argv)
    if not (args.corpus / "corpus_manifest.json").is_file():
        p.error(f"{args.corpus} holds no corpus_manifest.json (pass --corpus ../shared/corpus)")
    from evidex.tools.paperstore import PaperStore

    result = {}
    for name, db in (("corpus", args.corpus_db), ("pool_dev", args.pool_db), ("pool_tables", args.pool_db)):
        questions = questions_of(name, args.corpus, args.scratch)
        result[name] = {"store": db, "readers": check_readers(PaperStore.open(db=db), questions)}
    print(f"{'set':10s} {'reader':10s} {'questions':>9s} {'applies':>8s} {'answers':>8s} {'correct':>8s}")
    for name, part in result.items():
        for reader, r in part["readers"].items():
            print(f"{name:10s} {reader:10s} {r['questions']:9d} {r['applies']:8d} {r['answers']:8d} {r['correct']:8d}")
    write_results(args.json, result, part="code_readers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

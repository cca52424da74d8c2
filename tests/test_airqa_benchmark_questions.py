"""The questions written for the AirQA benchmark over corpus papers (benchmarks/data/airqa_corpus_questions.jsonl,
and the held-out airqa_holdout_questions.jsonl): well-formed, objective, about corpus AirQA papers, and scored 1 by
their own gold and 0 by a constant answer."""
from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from pathlib import Path

import pytest

from evidex.evaluators.airqa import EVAL_FUNCS, evaluate, requires_judge
from test_airqa_eval import as_prediction, gold_value  # the gold-derivation used on the real sample

QUESTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "airqa_corpus_questions.jsonl"
HOLDOUT = QUESTIONS.with_name("airqa_holdout_questions.jsonl")
ROWS = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
HELD = [json.loads(line) for line in HOLDOUT.read_text().splitlines() if line.strip()]
MINIMUM = {"text": 12, "table": 10, "image": 5, "formula": 5, "metadata": 6, "multiple": 4, "retrieval": 3}


def test_enough_questions_of_every_kind():
    tags = Counter(t for r in ROWS for t in r["tags"])
    assert len(ROWS) >= 40 and len({r["uuid"] for r in ROWS}) == len(ROWS)
    assert all(tags[t] >= n for t, n in MINIMUM.items()), tags
    assert all(r["uuid"] == str(uuid.uuid5(uuid.NAMESPACE_DNS, r["question"])) for r in ROWS)


def test_the_held_out_split_is_its_own_questions(tmp_path):
    from benchmarks.airqa import question_file

    assert len(HELD) >= 20 and not {r["uuid"] for r in HELD} & {r["uuid"] for r in ROWS}
    assert all(r["uuid"] == str(uuid.uuid5(uuid.NAMESPACE_DNS, r["question"])) for r in HELD)
    path, counts = question_file(Path("../shared/corpus"), tmp_path / "held.jsonl", "holdout")
    assert counts == {"sample": 0, "written": len(HELD)}
    assert [json.loads(line)["uuid"] for line in path.read_text().splitlines()] == [r["uuid"] for r in HELD]


@pytest.mark.parametrize("row", ROWS + HELD, ids=lambda r: r["uuid"][:8])
def test_each_question_is_objective_and_scores_its_own_gold(row):
    assert "objective" in row["tags"] and not requires_judge(row["evaluator"])
    assert row["evaluator"]["eval_func"] in EVAL_FUNCS and row["answer_format"] and row["gold_pages"]
    gold = evaluate(as_prediction(gold_value(row["evaluator"])), row["evaluator"])
    assert gold.score == 1.0 and not gold.error, gold
    assert evaluate("zzz", row["evaluator"]).score == 0


def test_questions_are_about_corpus_airqa_papers():
    manifest_path = Path(os.environ.get("EVIDEX_DATA_DIR", "../shared/data")).parent / "corpus" / "corpus_manifest.json"
    if not manifest_path.is_file():
        pytest.skip(f"{manifest_path} not found (the shared corpus beside EVIDEX_DATA_DIR)")
    airqa = {e["airqa"][0]["uuid"] for e in json.loads(manifest_path.read_text()) if e["airqa"]}
    for r in ROWS + HELD:
        assert set(r["anchor_pdf"] + r["reference_pdf"] + [g["pdf"] for g in r["gold_pages"]]) <= airqa, r["uuid"]
    assert len({p for r in ROWS for p in r["anchor_pdf"]}) >= 20


def test_side_by_side_on_the_questions_every_method_answered(tmp_path):
    """Methods run on different numbers of questions are also compared on the ones all of them answered."""
    from benchmarks.airqa import common_questions, row_on_questions

    def run(name, scores):
        d = tmp_path / name
        d.mkdir()
        (d / "run.json").write_text(json.dumps({"config": name, "n_items": 3, "status": "running"}))
        (d / "results.jsonl").write_text("".join(json.dumps({
            "id": qid, "tags": ["table"], "error": None, "latency_s": 10.0, "tokens": {"prompt": 100, "completion": 5},
            "metrics": {"score": s, "turns": 1.0}}) + "\n" for qid, s in scores.items()))
        return d

    a = run("airqa", {"q1": 1.0, "q2": 0.0, "q3": 1.0})
    b = run("full_text", {"q1": 0.0, "q2": 0.0})
    assert common_questions([a, b]) == ["q1", "q2"]
    row = row_on_questions(a, ["q1", "q2"])
    assert row["n"] == 2 and row["score"] == 0.5 and row["score[table]"] == 0.5 and row["prompt tok/q"] == 100


def test_an_unfinished_run_is_tabulated_over_what_it_answered(tmp_path, capsys):
    """An interrupted run (no metrics.json yet) gets a row over the questions it answered, saying how many of how
    many and how to finish it; a folder that is no run is named."""
    from benchmarks.airqa import main

    d = tmp_path / "20261126-000000-airqa"
    d.mkdir()
    (d / "run.json").write_text(json.dumps({"config": "airqa", "n_items": 3, "status": "running"}))
    (d / "results.jsonl").write_text("".join(json.dumps({
        "id": qid, "tags": ["text"], "error": None, "latency_s": 10.0, "tokens": {"prompt": 100, "completion": 5},
        "metrics": {"score": s}}) + "\n" for qid, s in (("q1", 1.0), ("q2", 0.0))))
    out = tmp_path / "rows.json"
    out.write_text(json.dumps({"dev": {"rows": []}}))  # another split's latest result stays beside it
    with pytest.raises(SystemExit, match="pass --split"):  # the run does not say which split it answered
        main(["--from-runs", str(d), "--json", str(out)])
    assert main(["--from-runs", str(d), "--json", str(out), "--split", "test"]) == 0
    written = json.loads(out.read_text())
    assert written["dev"] == {"rows": []}
    result = written["test"]  # one key per split
    row = result["rows"][0]
    assert row["method"] == "airqa" and row["n"] == 2 and row["score"] == 0.5 and row["unfinished"] == "2/3"
    assert result["per_question"] == {d.name: {"q1": 1.0, "q2": 0.0}}  # which questions won or lost, kept
    assert f"graphs.run --resume {d}" in capsys.readouterr().out
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        main(["--from-runs", str(tmp_path), "--json", str(out), "--split", "test"])


def test_tabulated_runs_land_under_the_split_they_answered(tmp_path):
    """Runs tabulated later are written under the split their config.yaml records, beside the other splits; a
    --split that contradicts it, or runs of two splits, are refused before anything is written."""
    from benchmarks.airqa import main

    def run(name, split):
        d = tmp_path / name
        d.mkdir()
        (d / "run.json").write_text(json.dumps({"config": "airqa", "n_items": 1, "status": "running"}))
        (d / "config.yaml").write_text(f"dataset:\n  file: /somewhere/airqa_benchmark_{split}.jsonl\n")
        (d / "results.jsonl").write_text(json.dumps({
            "id": "q1", "tags": ["text"], "error": None, "latency_s": 1.0, "tokens": {"prompt": 1, "completion": 1},
            "metrics": {"score": 1.0}}) + "\n")
        return d

    out = tmp_path / "airqa.json"
    out.write_text(json.dumps({"test": {"rows": ["kept"]}}))
    a, b = run("20261129-000000-airqa", "pool_test"), run("20261129-000001-classic_rag", "pool_test")
    assert main(["--from-runs", str(a), str(b), "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["test"] == {"rows": ["kept"]} and written["pool_test"]["split"] == "pool_test"
    with pytest.raises(SystemExit, match="answered pool_test"):
        main(["--from-runs", str(a), "--json", str(out), "--split", "test"])
    with pytest.raises(SystemExit, match="different splits"):
        main(["--from-runs", str(a), str(run("20261129-000002-airqa", "dev")), "--json", str(out)])
    assert json.loads(out.read_text()) == written

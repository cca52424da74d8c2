"""benchmarks.qasper on the tiny QASPER file: retrieval-only Evidence-F1 per mode and k beside the constant
"Unanswerable" row, written without machine paths."""
from __future__ import annotations

import json

import pytest

from qasper_tiny import HashEmbeddings, write_official, hash_queries as use_hash_queries


@pytest.fixture
def cache(tmp_path, monkeypatch):
    from evidex.tools.settings import get_settings

    monkeypatch.setenv("EVIDEX_CACHE_DIR", str(tmp_path / "cache"))
    get_settings.cache_clear()
    yield tmp_path
    monkeypatch.undo()
    get_settings.cache_clear()


def test_retrieval_only_rows(cache, capsys):
    from benchmarks.qasper import main
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.qasper_data import load_qasper

    data = write_official(cache)
    ingest_qasper(load_qasper(data), "qasper_bench", embeddings=HashEmbeddings(), progress=False)
    out = cache / "r.json"
    assert main(["--data", str(data), "--db", "qasper_bench", "--skip-ingest", "--modes", "bm25", "--ks", "1,2",
                 "--oracle", "--json", str(out)]) == 0
    result = json.loads(out.read_text())["retrieval"]  # one key per part of the benchmark
    assert result["questions"] == 5 and result["data"] == "qasper-dev-tiny.json" and result["store"] == "qasper_bench"
    rows = {(r["mode"], r["k"]): r for r in result["rows"]}
    assert set(rows) >= {("bm25", 1), ("bm25", 2), ('"Unanswerable" (no evidence)', 0)}
    # q-data, q-resnet and q-tok find their paragraph at rank 1 with BM25; q-none is answerable by one annotator
    assert 0 < rows[("bm25", 1)]["evidence_f1"] <= 100
    assert rows[('"Unanswerable" (no evidence)', 0)]["evidence_f1"] == pytest.approx(20.0)
    assert "Evidence-F1" in capsys.readouterr().out


def test_tabulating_an_unfinished_run_says_how_to_finish_it(tmp_path, capsys):
    from benchmarks.qasper import main

    run = tmp_path / "20261126-181938-qasper"
    run.mkdir()
    (run / "results.jsonl").write_text("")  # interrupted: rows but no scores
    with pytest.raises(SystemExit) as exc:
        main(["--pipeline", "--from-runs", str(run), "--json", str(tmp_path / "r.json")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no qasper_metrics.json or metrics.json" in err and f"--resume {run}" in err
    assert not (tmp_path / "r.json").exists()


@pytest.fixture
def hash_queries(monkeypatch):
    use_hash_queries(monkeypatch)


def test_gold_replay_runs_the_whole_path_without_a_model_and_compare_sees_a_changed_prompt(cache, hash_queries,
                                                                                           capsys):
    """``--replay-gold`` answers each answer call with the first annotator's answer (by question and paper), so the
    pipeline scores near the gold with no model; ``--compare`` finds two replays with the same settings identical and
    names the items whose prompts a setting changed."""
    from benchmarks.qasper import main
    from evidex.tools.ingest.qasper import ingest_qasper
    from evidex.tools.qasper_data import load_qasper

    data = write_official(cache)
    ingest_qasper(load_qasper(data), "qasper_bench", embeddings=HashEmbeddings(), progress=False)
    out, runs = cache / "r.json", cache / "runs"
    base = ["--replay-gold", "--data", str(data), "--db", "qasper_bench", "--skip-ingest",
            "--out", str(runs), "--json", str(out), "--set", "qa.retrieval_mode=bm25"]
    assert main(base) == 0
    replay = json.loads(out.read_text())
    assert "pipeline" not in replay  # a replay never stands in for a model's result
    (row,) = replay["replay_gold"]["rows"]
    assert row["n"] == 5 and row["errors"] == 0 and row["answer_f1"] > 60  # the constant answer scores 20
    assert row["model"] == "replay of the first annotator's answers" and str(cache) not in out.read_text()
    assert main(base) == 0
    assert main(base + ["--set", "qa.retrieval_limit=1"]) == 0
    first, second, fewer = sorted(d for d in runs.iterdir() if d.is_dir())
    capsys.readouterr()
    assert main(["--compare", str(first), str(second), "--json", str(out)]) == 0
    same = json.loads(out.read_text())["compare"]
    assert same["items"] == 5 and same["same_prompts"] == 5 and same["same_answer_and_evidence"] == 5
    assert "5 items in both runs: same model prompts 5" in capsys.readouterr().out
    assert main(["--compare", str(first), str(fewer), "--json", str(out)]) == 0
    changed = json.loads(out.read_text())["compare"]
    assert changed["same_prompts"] < 5 and len(changed["prompts_differ"]) == 5 - changed["same_prompts"]
    with pytest.raises(SystemExit):
        main(["--compare", str(first), str(cache)])
    with pytest.raises(SystemExit):
        main(base + ["--llm", "local"])  # the replay is the model

"""The runner (graphs.runner.run_task) and the CLI end to end, with scripted models on real CIViC items:
interrupt + resume, torn-line repair, malformed model output as a per-item error, and the run folder layout
(config.yaml, run.json, results.jsonl, metrics.json, report.md, LangSmith-style traces)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evidex.tools.claim_data import load_task
from evidex.graphs import config_for_task as _config_for_task
from evidex.graphs.runner import read_results, run_task


# These tests script the model's stance calls (judge.llm_stance, off by default) as well as the grounded writer's
# reasons call: the stance call is the one whose malformed reply ends an item (the writer falls back instead); a
# test's own settings still win.
MODEL_STANCE = ("judge.llm_stance=true",)


def config_for_task(task, sets=()):
    return _config_for_task(task, [*MODEL_STANCE, *sets])


LANGSMITH_FIELDS = {"id", "trace_id", "parent_run_id", "dotted_order", "run_type", "name", "inputs", "outputs",
                    "error", "start_time", "end_time", "tags", "extra", "events", "child_runs"}


def lines(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()]


def items_for(cfg):
    ds = cfg.dataset
    return load_task(cfg.task, limit=ds.limit, shuffle=ds.shuffle, seed=ds.seed, with_controls=ds.controls)


def claim_of(item) -> str:
    return item.input.claims["claim"].text


def run(cfg, tmp_path, responder, embedder, kb_index, **kw):
    from evidex.agents.scripted import ScriptedChatModel

    return run_task(cfg, out_dir=tmp_path, llm=ScriptedChatModel(responses=responder), embedder=embedder,
                    index=kb_index, progress=False, **kw)


def walk(tree: dict):
    yield tree
    for child in tree.get("child_runs", []):
        yield from walk(child)


# ------------------------------------------------------------------------------------------------ 4. resume
def test_interrupt_then_resume(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("baseline")
    # one item in flight (civic's default is two), so the interruption lands on a known item
    cfg = config_for_task("baseline", ["dataset.limit=3", "run.concurrency=1"])
    items = items_for(cfg)
    assert len(items) == 3 and len({claim_of(it) for it in items}) == 3
    first, second = claim_of(items[0]), claim_of(items[1])

    def interrupt_on_second_item(call):
        if second in call.claims.values():
            raise KeyboardInterrupt
        return None

    r1 = kit.Responder(hook=interrupt_on_second_item)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path, r1, embedder, kb_index)
    run_dir = next(tmp_path.iterdir())
    status = json.loads((run_dir / "run.json").read_text())
    assert status["status"] == "interrupted" and status["n_items"] == 3 and "interrupted" in status
    rows = lines(run_dir / "results.jsonl")
    assert [r["id"] for r in rows] == [items[0].input.id]
    assert rows[0]["error"] is None and rows[0]["prediction"]["explanations"]["claim"]
    assert not (run_dir / "metrics.json").exists()
    first_calls = len(r1.calls_for_claim(first))
    assert first_calls >= 2  # stance(s) + reasons
    assert len(r1.calls_for_claim(second)) == 1  # the interrupted call, nothing after it
    assert len(r1.calls) == first_calls + 1
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["task"] == "baseline" and saved["dataset"]["limit"] == 3

    r2 = kit.Responder()
    assert run(None, tmp_path, r2, embedder, kb_index, resume=run_dir) == run_dir
    assert list(tmp_path.iterdir()) == [run_dir]  # resumed in place, no new run folder
    rows = lines(run_dir / "results.jsonl")
    ids = [r["id"] for r in rows]
    assert ids == [it.input.id for it in items] and len(set(ids)) == 3
    assert all(r["error"] is None for r in rows)
    assert r2.calls_for_claim(first) == []  # the finished item was not run again
    assert r2.calls_for_claim(second) and r2.calls_for_claim(claim_of(items[2]))
    assert len(r1.calls_for_claim(first)) == first_calls
    status = json.loads((run_dir / "run.json").read_text())
    assert status["status"] == "complete" and "finished" in status
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["n_items"] == 3 and metrics["n_ok"] == 3 and metrics["n_errors"] == 0
    # the runner used the config's seed: the saved inputs are the seeded shuffle
    for row, item in zip(rows, items):
        assert [e["id"] for e in row["input"]["evidence"]] == [e.id for e in item.input.evidence]


def test_report_of_a_resumed_run_shows_its_final_status(tmp_path, kit, embedder, kb_index):
    """Interrupt, resume: report.md and report.html say the run is complete (and when it finished), not
    "running" (the reports used to be written before run.json got its final status)."""
    kit.require_task_data("baseline")
    cfg = config_for_task("baseline", ["dataset.limit=2"])
    second = claim_of(items_for(cfg)[1])

    def interrupt_on_second_item(call):
        if second in call.claims.values():
            raise KeyboardInterrupt
        return None

    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path, kit.Responder(hook=interrupt_on_second_item), embedder, kb_index)
    run_dir = next(tmp_path.iterdir())
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    run(None, tmp_path, kit.Responder(), embedder, kb_index, resume=run_dir)
    status = json.loads((run_dir / "run.json").read_text())
    assert status["status"] == "complete" and status["finished"] and status["resumed"]
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert f"Status: complete (finished {status['finished']}; resumed {status['resumed']})" in md
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert '<span class="k">status</span>complete<' in html and status["finished"] in html
    assert "running" not in md and ">running<" not in html
    # a fresh run that is never interrupted says complete too
    fresh = run(cfg, tmp_path / "fresh", kit.Responder(), embedder, kb_index)
    assert "Status: complete (finished " in (fresh / "report.md").read_text(encoding="utf-8")
    assert '<span class="k">status</span>complete<' in (fresh / "report.html").read_text(encoding="utf-8")


def test_resume_repairs_a_torn_last_line(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("baseline")
    # one item in flight: with civic's two, the rows land in finishing order and the torn one may be either
    cfg = config_for_task("baseline", ["dataset.limit=2", "run.concurrency=1"])
    items = items_for(cfg)
    run_dir = run(cfg, tmp_path, kit.Responder(), embedder, kb_index)
    results = run_dir / "results.jsonl"
    good = results.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(good) == 2
    # killed while writing the second row: half a line, no newline
    results.write_text(good[0] + good[1][: len(good[1]) // 2], encoding="utf-8")
    with pytest.raises(json.JSONDecodeError):
        lines(results)

    r2 = kit.Responder()
    run(None, tmp_path, r2, embedder, kb_index, resume=run_dir)
    rows = lines(results)  # every line parses again
    assert [r["id"] for r in rows] == [it.input.id for it in items]
    assert r2.calls_for_claim(claim_of(items[0])) == []
    assert r2.calls_for_claim(claim_of(items[1]))  # the torn item was run again
    assert json.loads((run_dir / "metrics.json").read_text())["n_items"] == 2


def test_read_results_truncates_only_the_torn_tail(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n{"id": "c", "pred', encoding="utf-8")
    assert [r["id"] for r in read_results(path)] == ["a", "b"]
    assert path.read_text(encoding="utf-8") == '{"id": "a"}\n{"id": "b"}\n'
    assert read_results(tmp_path / "absent.jsonl") == []


def test_row_without_trailing_newline_survives_the_next_append(tmp_path):
    from evidex.graphs.runner import ResultWriter

    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}', encoding="utf-8")  # killed just before the final "\n"
    assert [r["id"] for r in read_results(path)] == ["a", "b"]  # resume counts b as done ...
    ResultWriter(path).append({"id": "c"})  # ... and appends the next item
    assert [r["id"] for r in read_results(path)] == ["a", "b", "c"]


def test_concurrent_run_records_every_item_once(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("wrong_evidence")
    cfg = config_for_task("wrong_evidence", ["dataset.limit=3", "run.concurrency=2"])
    items = items_for(cfg)
    responder = kit.Responder()
    run_dir = run(cfg, tmp_path, responder, embedder, kb_index)
    rows = lines(run_dir / "results.jsonl")
    assert sorted(r["id"] for r in rows) == sorted(it.input.id for it in items)
    assert all(r["error"] is None for r in rows)
    for it in items:  # each item's writer ran exactly once, even with two in flight
        assert [c.role for c in responder.calls_for_claim(claim_of(it))].count("reasons") == 1
    assert json.loads((run_dir / "metrics.json").read_text())["n_ok"] == 3


# ------------------------------------------------------------------------------------------------ 5. bad output
def test_malformed_model_output_is_an_item_error(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("baseline")
    cfg = config_for_task("baseline", ["dataset.limit=2"])
    items = items_for(cfg)
    broken = claim_of(items[0])

    def garbage_stances(call):
        if call.role == "stances" and broken in call.claims.values():
            return "Sure! not json"
        return None

    responder = kit.Responder(hook=garbage_stances)
    run_dir = run(cfg, tmp_path, responder, embedder, kb_index)
    rows = {r["id"]: r for r in lines(run_dir / "results.jsonl")}
    assert set(rows) == {it.input.id for it in items}
    bad, ok = rows[items[0].input.id], rows[items[1].input.id]
    assert bad["error"].startswith("StructuredOutputError: judge_stances[")  # names the id asked alone
    assert "after one repair" in bad["error"]
    assert bad["prediction"] is None and bad["metrics"] == {}
    assert bad["latency_s"] >= 0 and (run_dir / bad["trace"]).is_file()
    assert ok["error"] is None and ok["prediction"]["explanations"]["claim"]
    # the batch was asked, then repaired with the error quoted; the item ended before the writer
    calls = responder.calls_for_claim(broken)
    assert [c.role for c in calls] == ["stances"] * len(calls)
    assert not calls[0].repair and calls[1].repair
    assert "Sure! not json" in calls[1].prompt and "no JSON object in reply" in calls[1].prompt
    assert [c.repair for c in responder.calls_for_claim(claim_of(items[1]))] == \
        [False] * len(responder.calls_for_claim(claim_of(items[1])))
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["n_items"] == 2 and metrics["n_ok"] == 1 and metrics["n_errors"] == 1
    assert metrics["errors"] == [{"id": items[0].input.id, "error": bad["error"]}]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert "StructuredOutputError" in (run_dir / "report.md").read_text(encoding="utf-8")


def test_everything_malformed_fails_each_item_after_one_repair(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("baseline")
    cfg = config_for_task("baseline", ["dataset.limit=2", "run.concurrency=1"])
    responder = kit.Responder(hook=lambda call: "Sure! not json")
    run_dir = run(cfg, tmp_path, responder, embedder, kb_index)
    rows = lines(run_dir / "results.jsonl")
    assert len(rows) == 2 and all("StructuredOutputError" in r["error"] for r in rows)
    # the batch fails twice, then the first id asked alone fails twice and ends the item: 4 calls per item
    assert [(c.role, c.repair) for c in responder.calls] == [("stances", False), ("stances", True)] * 4
    assert [len(kit.task_ids(c.prompt)) > 1 for c in responder.calls] == [True, True, False, False] * 2
    assert all("judge_stances[" in r["error"] for r in rows)  # the error names the id asked alone
    assert json.loads((run_dir / "metrics.json").read_text())["n_errors"] == 2


def test_repair_reply_is_accepted(tmp_path, kit, embedder, kb_index):
    """One bad reply followed by a valid one is not an error."""
    kit.require_task_data("baseline")
    cfg = config_for_task("baseline", ["dataset.limit=1"])
    seen = set()

    def first_stances_bad(call):
        if call.role == "stances" and not seen:
            seen.add(1)
            return "```json\n{}\n```"  # parses, but names none of the ids
        return None

    responder = kit.Responder(hook=first_stances_bad)
    run_dir = run(cfg, tmp_path, responder, embedder, kb_index)
    row = lines(run_dir / "results.jsonl")[0]
    assert row["error"] is None
    assert [(c.role, c.repair) for c in responder.calls] == [("stances", False), ("stances", True), ("reasons", False)]
    assert row["prediction"]["explanations"]["claim"]


# ------------------------------------------------------------------------------------------------ traces + tokens
def test_trace_and_tokens_are_recorded(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("wrong_evidence")
    cfg = config_for_task("wrong_evidence", ["dataset.limit=1"])
    responder = kit.Responder()
    run_dir = run(cfg, tmp_path, responder, embedder, kb_index)
    row = lines(run_dir / "results.jsonl")[0]
    tree = json.loads((run_dir / row["trace"]).read_text())
    assert LANGSMITH_FIELDS <= set(tree)
    assert tree["run_type"] == "chain" and tree["name"] == "wrong_evidence" and tree["parent_run_id"] is None
    assert tree["extra"]["metadata"]["item_id"] == row["id"] and "task:wrong_evidence" in tree["tags"]
    runs = list(walk(tree))
    llm_runs = [r for r in runs if r["run_type"] == "llm"]
    assert len(llm_runs) == len(responder.calls)
    assert {r["trace_id"] for r in runs} == {tree["id"]}
    nodes = {r["name"] for r in runs}
    assert {"judge_given", "findings", "stance", "write", "finalize"} <= nodes
    assert any(r["name"].startswith("judge_stances") for r in llm_runs)  # the batched stance calls
    assert row["tokens"]["calls"] == tree["llm_calls"] == len(llm_runs)
    assert row["tokens"]["cached"] == tree["cached_prompt_tokens"] == 0  # the scripted model reports no cache
    for r in runs:
        assert r["start_time"] <= r["end_time"]
    # tokens: the scripted model reports whitespace-split word counts; the root sums its llm runs
    prompt_words = sum(len(c.prompt.split()) for c in responder.calls)
    assert tree["prompt_tokens"] == prompt_words == row["tokens"]["prompt"]
    assert tree["completion_tokens"] == row["tokens"]["completion"] > 0
    assert tree["total_tokens"] == tree["prompt_tokens"] + tree["completion_tokens"]


def test_tracing_off_writes_no_traces(tmp_path, kit, embedder, kb_index):
    kit.require_task_data("baseline")
    cfg = config_for_task("baseline", ["dataset.limit=1", "tracing.enabled=false"])
    run_dir = run(cfg, tmp_path, kit.Responder(), embedder, kb_index)
    row = lines(run_dir / "results.jsonl")[0]
    assert "trace" not in row and not (run_dir / "traces").exists()
    assert row["tokens"]["prompt"] > 0  # tokens are still counted


# ------------------------------------------------------------------------------------------------ 7. CLI e2e
def test_cli_end_to_end_with_scripted_file(tmp_path, kit, embedder, kb_index, use_test_cache, capsys):
    """``python -m graphs.run --task wrong_evidence --limit 2 --llm scripted:<file>``. With the model stance off,
    the only model call per item is the grounded writer's reasons call; one reply naming every given id of both
    items fits whichever ids a call asks about, so the replies do not depend on which item runs first. What is
    kept is the relevance gate's decision."""
    from evidex.agents.civic.claim_catalog import ClaimCatalog
    from evidex.agents.civic.relevance_gate import gate_given
    from evidex.tools.claim_data import load_claim_catalog
    from evidex.graphs.run import main

    kit.require_task_data("wrong_evidence")
    sets = ["judge.llm_stance=false"]
    cfg = config_for_task("wrong_evidence", ["dataset.limit=2", *sets])
    items = items_for(cfg)
    catalog = ClaimCatalog(kb_index, load_claim_catalog(cfg.gate.claim_catalog))
    kept = {}
    for item in items:
        gates = gate_given(kb_index, item.input.claims["claim"], item.input.evidence, cfg.gate.keep_rank,
                           catalog=catalog, check=cfg.gate.given_claim_check())
        kept[item.input.id] = [e.id for e, g in zip(item.input.evidence, gates) if g.passed]
    assert any(kept.values()), "the gate keeps something on the first two wrong_evidence items"
    reply = {e.id: "what the item itself reports" for item in items for e in item.input.evidence}
    replies = [reply] * len(items)
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    out = tmp_path / "runs"

    argv = ["--task", "wrong_evidence", "--limit", "2", "--llm", f"scripted:{script}", "--out", str(out),
            "--no-progress"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    (run_dir,) = list(out.iterdir())
    assert f"run folder: {run_dir}" in printed and "items: 2/2 ok, errors: 0" in printed

    assert {p.name for p in run_dir.iterdir()} >= {"config.yaml", "run.json", "results.jsonl", "metrics.json",
                                                  "report.md", "traces"}
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["model"]["spec"] == f"scripted:{script}" and saved["dataset"]["limit"] == 2
    assert saved["judge"]["llm_stance"] is False
    order = [it.input.id for it in items]
    # two items in flight (civic's default): rows land in finishing order
    rows = sorted(lines(run_dir / "results.jsonl"), key=lambda r: order.index(r["id"]))
    assert [r["id"] for r in rows] == order
    for row, item in zip(rows, items):
        assert row["error"] is None, row["error"]
        pred = row["prediction"]
        assert pred["kept_ids"] == kept[item.input.id]
        assert set(pred["discarded_ids"]) == {e.id for e in item.input.evidence} - set(kept[item.input.id])
        assert set(pred["cited_ids"]["claim"]) <= set(pred["kept_ids"])
        assert all(d["basis"].startswith("on topic: ranks ") and d["label"] == "supports"
                   for d in pred["decisions"] if d["kept"])  # model stance off: the gate's label, its reason the basis
        assert "discard_f1" in row["metrics"] and "citation_validity" in row["metrics"]
        assert row["metrics"]["citation_validity"] == 1.0
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["n_items"] == 2 and metrics["n_ok"] == 2 and metrics["n_errors"] == 0
    assert metrics["task"] == "wrong_evidence" and metrics["model"] == f"scripted:{script}"
    assert "discard_f1_micro" in metrics["metrics"]
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "wrong_evidence" in report and "discard" in report
    traces = sorted((run_dir / "traces").glob("*.json"))
    assert [t.stem for t in traces] == sorted(it.input.id for it in items)
    n_llm = 0
    for t in traces:
        tree = json.loads(t.read_text())
        assert LANGSMITH_FIELDS <= set(tree)
        for r in walk(tree):
            assert {"id", "run_type", "name", "child_runs", "start_time", "end_time"} <= set(r)
            assert r["start_time"] and r["end_time"]
            n_llm += r["run_type"] == "llm"
    assert n_llm == len(replies)  # every scripted reply was used, no more calls were made
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"


def test_cli_resume_of_a_finished_run_is_a_no_op(tmp_path, kit, embedder, kb_index, use_test_cache, capsys):
    """--resume on a complete run runs nothing (no model needed) and rewrites the same metrics."""
    from evidex.graphs.run import main

    kit.require_task_data("baseline")
    cfg = config_for_task("baseline", ["dataset.limit=1",
                                       "model.spec=scripted:/nonexistent.json"])
    run_dir = run(cfg, tmp_path, kit.Responder(), embedder, kb_index)
    before = lines(run_dir / "results.jsonl")
    assert main(["--resume", str(run_dir), "--no-progress"]) == 0
    assert lines(run_dir / "results.jsonl") == before
    assert "items: 1/1 ok" in capsys.readouterr().out


def test_a_missing_kb_or_claim_catalog_fails_before_the_run(tmp_path, kit):
    from evidex.tools.datasets import DataNotFoundError

    kit.require_task_data("mixed")
    cfg = config_for_task("mixed", ["dataset.limit=2", "gate.claim_catalog=nope/claims.json"])
    with pytest.raises(DataNotFoundError, match="gate.claim_catalog: .*nope/claims.json"):
        run_task(cfg, out_dir=tmp_path, progress=False)
    assert not any(tmp_path.iterdir())  # no half-made run folder


@pytest.mark.parametrize("key, content, message", [
    ("retrieval.kb", '[{"evidence_id": 1', "retrieval.kb: .*is not valid JSON"),
    ("retrieval.kb", '{"evidence_id": 1}', "retrieval.kb: .*must hold a JSON list of objects"),
    ("retrieval.kb", '[{"id": 1, "text": "x"}]', "retrieval.kb: .*is not a knowledge base"),
    ("gate.claim_catalog", '[{"evidence_id": 1, "description": "x"}]', "gate.claim_catalog: .*holds no claims"),
    ("dataset.file", '[{"claim": "x"}]', "dataset.file: .*is not a mixed file: an item lacks field"),
])
def test_a_malformed_data_file_fails_before_the_run(tmp_path, kit, key, content, message):
    """A KB, catalog or task file in the wrong shape is one error naming the key, not one failure per item."""
    kit.require_task_data("mixed")
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "runs"
    cfg = config_for_task("mixed", ["dataset.limit=2", "steps.write=false", "judge.llm_stance=false",
                                    f"{key}={bad}"])
    with pytest.raises(ValueError, match=message):
        run_task(cfg, out_dir=out, progress=False)
    assert not out.exists()


def test_a_bad_model_spec_fails_before_the_run_folder_exists(tmp_path, kit, use_test_cache, capsys):
    """A model the config needs is built before the run folder: one error, nothing left behind."""
    from evidex.graphs.run import main

    kit.require_task_data("baseline")
    out = tmp_path / "runs"
    assert main(["--task", "baseline", "--limit", "1", "--llm", "scripted:/nonexistent.json", "--out", str(out),
                 "--no-progress"]) == 1
    assert "nonexistent.json" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_a_model_free_run_never_builds_the_model(tmp_path, kit, embedder, kb_index, monkeypatch):
    """Gate-only (no writer, no model stance): the configured model is never built, so a spec that cannot be
    built does not matter, and every file of the run says no model was used."""
    import evidex.agents.models

    kit.require_task_data("mixed")

    def refuse(*_a, **_k):
        raise AssertionError("the model was built for a model-free config")

    monkeypatch.setattr(evidex.agents.models, "make_chat_model", refuse)
    cfg = config_for_task("mixed", ["dataset.limit=2", "steps.write=false", "judge.llm_stance=false",
                                    "model.spec=scripted:/nonexistent.json"])
    assert not cfg.uses_model
    run_dir = run_task(cfg, out_dir=tmp_path, embedder=embedder, index=kb_index, progress=False)
    rows = lines(run_dir / "results.jsonl")
    assert len(rows) == 2 and all(r["error"] is None for r in rows)
    assert json.loads((run_dir / "run.json").read_text())["model"] == "none (model-free)"
    assert json.loads((run_dir / "metrics.json").read_text())["model"] == "none (model-free)"
    assert "model none (model-free)" in (run_dir / "report.md").read_text()
    html = (run_dir / "report.html").read_text()
    header = html.split("<main>", 1)[0]  # the run's facts; the resolved config below still names the spec
    assert "none (model-free)" in header and "scripted" not in header


@pytest.mark.parametrize("sets, expected", [
    ([], True),
    (["steps.write=false"], True),  # the model labels kept items (stance)
    (["steps.write=false", "judge.llm_stance=false"], False),
    (["steps.write=false", "judge.llm_stance=false", "judge.strategy=llm"], True),
])
def test_uses_model_follows_the_steps(sets, expected):
    assert config_for_task("mixed", sets).uses_model is expected


def test_selection_and_assignment_use_the_model_unless_the_cascade_decides_and_nothing_is_written(embedder):
    from evidex.graphs import ConfigError, build_graph

    for task in ("selection", "assignment"):
        assert not config_for_task(task, ["steps.write=false"]).uses_model
        assert config_for_task(task, ["steps.write=false", "judge.strategy=llm"]).uses_model
        # a gate that cannot choose between claims is refused when the graph is built, not on the first item
        with pytest.raises(ConfigError, match="gate 'given_rank' cannot"):
            build_graph(config_for_task(task, ["steps.write=false", "gate.name=given_rank"]), embedder=embedder)


def test_selection_checks_the_kb_it_ranks_with_before_the_run(tmp_path, kit):
    """Model-free selection ranks evidence in the KB (its judge step is off): a missing KB is caught up front."""
    from evidex.tools.datasets import DataNotFoundError

    kit.require_task_data("selection")
    cfg = config_for_task("selection", ["dataset.limit=1", "steps.write=false", "retrieval.kb=nope/kb.json"])
    with pytest.raises(DataNotFoundError, match="retrieval.kb: .*nope/kb.json"):
        run_task(cfg, out_dir=tmp_path, progress=False)
    assert not any(tmp_path.iterdir())


def test_cli_exit_status_when_every_item_fails(tmp_path, kit, embedder, kb_index, use_test_cache, capsys):
    """Every item failing (here: replies that never parse) is a failed run: exit status 1 naming results.jsonl."""
    from evidex.graphs.run import main

    kit.require_task_data("baseline")
    script = tmp_path / "junk.json"
    script.write_text(json.dumps(["not json at all"] * 20), encoding="utf-8")
    out = tmp_path / "runs"
    # (the grounded writer salvages a reply that never parses: the model's stance call cannot)
    assert main(["--task", "baseline", "--limit", "1", "--llm", f"scripted:{script}", "--out", str(out),
                 "--set", "judge.llm_stance=true", "--no-progress"]) == 1
    assert "every item failed" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--limit", "--concurrency"])
def test_cli_rejects_a_count_below_one_naming_the_flag(flag, capsys):
    from evidex.graphs.run import main

    assert main(["--task", "mixed", flag, "0"]) == 2
    assert f"{flag} must be at least 1" in capsys.readouterr().err


def test_cli_resume_errors_are_one_line(tmp_path, capsys):
    from evidex.graphs.run import main

    assert main(["--resume", str(tmp_path / "gone")]) == 1
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "config.yaml").write_text("name: [unclosed", encoding="utf-8")
    assert main(["--resume", str(tmp_path)]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_cli_out_must_be_a_folder(tmp_path, kit, use_test_cache, capsys):
    from evidex.graphs.run import main

    kit.require_task_data("baseline")
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["--task", "baseline", "--limit", "1", "--out", str(afile), "--no-progress",
                 "--set", "steps.write=false", "--set", "judge.llm_stance=false"]) == 1
    assert "--out must be a folder" in capsys.readouterr().err

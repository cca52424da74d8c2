"""Task configs (graphs.config, graphs.tasks) and the CLI's config handling (graphs.run): every task has a config, YAML
``extends:`` composes, ``--set`` overrides are typed, and every error names the file/key and what is allowed."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from evidex.graphs.claims.config import ClaimTaskConfig
from evidex.graphs.qa.config import QATaskConfig
from evidex.graphs.config import PACKAGED_CONFIG_DIR, ConfigError, apply_overrides, dump_config
from evidex.graphs.tasks import config_for_task, load_config, task_table, validate
from evidex.graphs.run import main

CLAIM_TASKS = ["assignment", "baseline", "missing_evidence", "mixed", "r4c", "selection", "wrong_claim",
               "wrong_evidence"]
TASKS = sorted(CLAIM_TASKS + ["airqa", "qasper"])


def write(path, text: str):
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------------ shipped configs
def test_every_task_has_a_config():
    table = task_table()
    assert sorted(table) == TASKS
    for task, entry in table.items():
        cfg = config_for_task(task)
        assert isinstance(cfg, ClaimTaskConfig if task in CLAIM_TASKS else QATaskConfig)
        assert cfg.task == task and cfg.name == task and cfg.family == entry.family
        assert entry.path.is_file() and entry.description, task
        assert entry.path.parent.name == entry.family  # configs/<family>/<task>.yaml
        assert cfg.model.spec == "local" and cfg.dataset.seed == 13
        assert cfg.dataset.shuffle is (task in CLAIM_TASKS)  # claim inputs are shuffled against order bias


def test_task_configs_switch_steps_and_graphs():
    graphs = {t: config_for_task(t).graph for t in CLAIM_TASKS}
    assert graphs == {**{t: "explainer" for t in CLAIM_TASKS}, "selection": "selection", "assignment": "assignment"}
    gather = {t for t in CLAIM_TASKS if config_for_task(t).steps.gather}
    assert gather == {"missing_evidence", "mixed"}
    assert config_for_task("selection").steps.judge is False
    r4c = config_for_task("r4c")
    # r4c extends the shared _base and overrides a nested section without dropping its siblings
    assert r4c.family == "r4c" and r4c.gate.name == "given_rank" and r4c.gate.keep_top == 3
    assert not r4c.steps.gather and r4c.retrieval.kb is None  # no KB
    assert r4c.prompts.evidence_chars == 420 and r4c.prompts.context_chars == 240
    assert r4c.retrieval.mode == "hybrid" and r4c.retrieval.k == 10
    assert config_for_task("mixed").judge.strategy == "cascade" and config_for_task("mixed").gate.name == "civic"
    assert config_for_task("mixed").family == "civic"
    assert {t for t in CLAIM_TASKS if config_for_task(t).steps.verdict} == {"wrong_claim"}
    assert config_for_task("mixed").prompts.evidence_chars == 360


def test_task_settings_stay_few_and_each_one_is_described():
    """At most 80 task settings across the families' config models (ablations are config files, not switches),
    and every setting of every task says what it does (``evidex config TASK``)."""
    from evidex.graphs.show_config import count_settings, describe

    assert count_settings()["total"] <= 80, count_settings()["new_per_family"]
    for task in task_table():
        assert [r["key"] for r in describe(config_for_task(task)) if not r["description"].strip()] == [], task


def test_load_config_by_name_and_path():
    by_name = load_config("civic/mixed")
    table = task_table()
    by_path = load_config(str(table["mixed"].path))
    assert by_name == by_path == config_for_task("mixed")


def test_dump_config_round_trips():
    cfg = config_for_task("assignment", ["retrieval.k=9", "judge.llm_stance=false"])
    again = validate(yaml.safe_load(dump_config(cfg)), "dumped")
    assert again == cfg and again.retrieval.k == 9 and again.judge.llm_stance is False


# ------------------------------------------------------------------------------------------------ overrides
def test_overrides_are_typed():
    cfg = config_for_task("mixed", ["retrieval.k=8", "judge.llm_stance=false", "dataset.seed=7",
                                    "model.spec=scripted:/tmp/replies.json", "gate.candidate_ratio=0.5",
                                    "dataset.limit=3", "metrics.ragas_llm=null"])
    assert cfg.retrieval.k == 8 and isinstance(cfg.retrieval.k, int)
    assert cfg.judge.llm_stance is False
    assert cfg.dataset.seed == 7 and cfg.dataset.limit == 3
    assert cfg.model.spec == "scripted:/tmp/replies.json"
    assert cfg.gate.candidate_ratio == 0.5
    assert cfg.metrics.ragas_llm is None
    # untouched siblings survive
    assert cfg.retrieval.mode == "hybrid" and cfg.gate.keep_rank == 30


def test_apply_overrides_does_not_mutate_its_input():
    base = {"retrieval": {"k": 6, "mode": "hybrid"}}
    out = apply_overrides(base, ["retrieval.k=3", "new.section.key=x"])
    assert base == {"retrieval": {"k": 6, "mode": "hybrid"}}
    assert out == {"retrieval": {"k": 3, "mode": "hybrid"}, "new": {"section": {"key": "x"}}}


def test_set_without_equals_sign():
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["retrieval.k"])
    msg = str(info.value)
    assert "'retrieval.k'" in msg and "expected key.path=value" in msg and "--set" in msg


def test_set_into_a_value_is_rejected():
    with pytest.raises(ConfigError, match=r"'k' is not a section"):
        config_for_task("mixed", ["retrieval.k.deep=1"])


def test_bad_value_names_key_and_allowed_values():
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["retrieval.mode=fuzzy"])
    msg = str(info.value)
    assert "mixed.yaml" in msg
    assert "retrieval.mode" in msg and "'fuzzy'" in msg
    assert "'dense', 'bm25' or 'hybrid'" in msg
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["retrieval.k=0"])
    assert "retrieval.k" in str(info.value) and "greater than or equal to 1" in str(info.value)
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["judge.strategy=vote"])
    assert "judge.strategy" in str(info.value) and "'cascade' or 'llm'" in str(info.value)
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["gate.name=vote"])
    assert "gate" in str(info.value) and "'given_rank', 'civic'" in str(info.value)


def test_unknown_override_key_lists_allowed_keys():
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["retrieval.fuzz=1"])
    msg = str(info.value)
    assert "retrieval.fuzz" in msg and "unknown key" in msg
    assert "allowed here: kb, mode, k, embedding_model" in msg
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed", ["gate.keep_rnak=10"])
    msg = str(info.value)
    assert "gate.civic.keep_rnak" in msg and "allowed here: name, keep_rank, candidate_ratio" in msg


# ------------------------------------------------------------------------------------------------ YAML files
def test_malformed_yaml_names_file_and_line(tmp_path):
    bad = write(tmp_path / "bad.yaml", """
        extends: _base
        name: bad
        task: mixed
        retrieval:
          k: 6
         mode: dense
        """)
    with pytest.raises(ConfigError) as info:
        load_config(str(bad))
    msg = str(info.value)
    assert str(bad) in msg and "malformed YAML" in msg
    assert "line 6" in msg, msg  # the mis-indented `mode:` line


def test_malformed_yaml_unclosed_bracket_line(tmp_path):
    bad = write(tmp_path / "bracket.yaml", """
        name: bracket
        task: mixed
        steps: {judge: true, gather: false
        """)
    with pytest.raises(ConfigError) as info:
        load_config(str(bad))
    assert str(bad) in str(info.value) and "line " in str(info.value)


def test_top_level_must_be_a_mapping(tmp_path):
    bad = write(tmp_path / "list.yaml", "- a\n- b\n")
    with pytest.raises(ConfigError, match=r"list.yaml: the top level must be a mapping of keys, got list"):
        load_config(str(bad))


def test_unknown_key_in_file_names_key_file_and_allowed(tmp_path, monkeypatch):
    cfg = write(tmp_path / "typo.yaml", f"""
        extends: {PACKAGED_CONFIG_DIR / 'civic' / '_base.yaml'}
        name: typo
        task: mixed
        retreival:
          k: 4
        judge:
          keep_rnak: 10
        gate:
          keep_rnak: 10
        """)
    with pytest.raises(ConfigError) as info:
        load_config(str(cfg))
    msg = str(info.value)
    assert msg.startswith(f"{cfg}: invalid config")
    assert "retreival: Extra inputs are not permitted" in msg
    assert ("allowed here: name, description, family, task, model, dataset, metrics, run, tracing, graph, retrieval, "
            "steps, judge, gate, prompts") in msg
    assert "judge.keep_rnak" in msg and "allowed here: strategy, llm_stance, stance_batch_size" in msg
    assert "gate.civic.keep_rnak" in msg and ("allowed here: name, keep_rank, candidate_ratio, candidate_facets, "
                                              "candidate_max_overlap") in msg


def test_missing_required_and_unknown_task_in_file(tmp_path):
    cfg = write(tmp_path / "notask.yaml", "name: x\nfamily: civic\ntask: guessing\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(cfg))
    msg = str(info.value)
    assert "task" in msg and "'guessing'" in msg and "'baseline'" in msg and "'wrong_claim'" in msg


def test_extends_merges_relative_to_the_file(tmp_path):
    write(tmp_path / "parent.yaml", """
        name: parent
        task: baseline
        retrieval: {k: 9, mode: bm25}
        prompts: {evidence_chars: 500}
        """)
    child = write(tmp_path / "child.yaml", """
        extends: parent
        name: child
        retrieval: {k: 3}
        """)
    cfg = load_config(str(child))
    assert cfg.name == "child" and cfg.task == "baseline"
    assert cfg.retrieval.k == 3 and cfg.retrieval.mode == "bm25"  # deep merge keeps the parent's siblings
    assert cfg.prompts.evidence_chars == 500


def test_extends_cycle(tmp_path):
    a = write(tmp_path / "a.yaml", "extends: b\nname: a\ntask: baseline\n")
    write(tmp_path / "b.yaml", "extends: a.yaml\nname: b\ntask: baseline\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(a))
    msg = str(info.value)
    assert "circular `extends:`" in msg
    assert "a.yaml -> " in msg and "b.yaml -> " in msg


def test_extends_itself(tmp_path):
    me = write(tmp_path / "me.yaml", "extends: me\nname: me\ntask: baseline\n")
    with pytest.raises(ConfigError, match="circular `extends:`"):
        load_config(str(me))


def test_extends_missing_parent(tmp_path):
    orphan = write(tmp_path / "orphan.yaml", "extends: no_such_parent\nname: o\ntask: baseline\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(orphan))
    assert "'no_such_parent' not found" in str(info.value) and "civic/mixed" in str(info.value)


def test_extends_must_be_a_string(tmp_path):
    bad = write(tmp_path / "num.yaml", "extends: [a, b]\nname: n\ntask: baseline\n")
    with pytest.raises(ConfigError, match=r"`extends` must be a config name or path"):
        load_config(str(bad))


def test_unknown_config_name_lists_known():
    with pytest.raises(ConfigError) as info:
        load_config("civic/nope")
    assert "'civic/nope' not found" in str(info.value) and "civic/baseline" in str(info.value)


def test_unknown_task_lists_tasks():
    with pytest.raises(ConfigError) as info:
        config_for_task("nope")
    assert "Unknown task 'nope'" in str(info.value)
    assert ", ".join(TASKS) in str(info.value)


# ------------------------------------------------------------------------------------------------ CLI
def test_cli_list_prints_all_tasks(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    families = [ln.split(":")[0] for ln in out.splitlines() if ln and not ln.startswith(" ")]
    assert families == ["civic", "r4c", "airqa", "qasper"]  # grouped by family, each with its description
    lines = [ln for ln in out.splitlines() if ln.startswith("  ") and not ln.startswith("  configs ")]
    assert sorted(ln.split()[0] for ln in lines) == TASKS
    table = task_table()
    for ln in lines:
        task = ln.split()[0]
        assert table[task].description[:40] in ln  # one-line description
    assert "[civic/mixed]" in out and "[r4c/r4c]" in out
    assert out.index("civic:") < out.index("  mixed") < out.index("r4c:") < out.index("  r4c ")
    assert "airqa/classic_rag" in out  # a family's other configs, for --config


def test_cli_unknown_task_exits_2_and_lists_tasks(capsys):
    assert main(["--task", "nope", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "config error" in err and "Unknown task 'nope'" in err
    for task in TASKS:
        assert task in err


def test_cli_set_without_equals_exits_2(capsys):
    assert main(["--task", "mixed", "--set", "retrieval.k", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "config error" in err and "expected key.path=value" in err


def test_cli_bad_value_exits_2(capsys):
    assert main(["--task", "mixed", "--set", "retrieval.mode=fuzzy", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "retrieval.mode" in err and "'dense', 'bm25' or 'hybrid'" in err


def test_cli_malformed_config_file_exits_2(tmp_path, capsys):
    bad = write(tmp_path / "broken.yaml", "name: x\ntask: [mixed\n")
    assert main(["--config", str(bad), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "malformed YAML" in err and "line " in err


def test_cli_needs_a_task(capsys):
    assert main([]) == 2
    assert "give --task T" in capsys.readouterr().err


def test_cli_resume_refuses_overrides(tmp_path, capsys):
    assert main(["--resume", str(tmp_path), "--task", "mixed"]) == 2
    assert "--resume continues a run with its saved config.yaml" in capsys.readouterr().err


def test_cli_resume_of_a_non_run_folder_exits_1(tmp_path, capsys):
    assert main(["--resume", str(tmp_path), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "is not a run folder (no config.yaml)" in err


def test_cli_interrupt_exits_130(monkeypatch, capsys):
    import evidex.graphs.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evidex.graphs.runner, "run_task", interrupted)
    assert main(["--task", "baseline", "--no-progress"]) == 130
    assert "finished items are saved" in capsys.readouterr().err


def test_cli_passes_limit_llm_and_sets_to_the_config(monkeypatch, tmp_path):
    import evidex.graphs.runner

    seen = {}

    def fake_run(cfg, **kwargs):
        seen["cfg"], seen["kwargs"] = cfg, kwargs
        raise KeyboardInterrupt

    monkeypatch.setattr(evidex.graphs.runner, "run_task", fake_run)
    assert main(["--task", "selection", "--limit", "4", "--offset", "2", "--llm", "scripted:x.json", "--concurrency", "2",
                 "--set", "retrieval.k=5", "--out", str(tmp_path), "--no-progress"]) == 130
    cfg = seen["cfg"]
    assert cfg.task == "selection" and cfg.dataset.limit == 4 and cfg.dataset.offset == 2
    assert cfg.model.spec == "scripted:x.json"
    assert cfg.run.concurrency == 2 and cfg.retrieval.k == 5
    assert seen["kwargs"]["out_dir"] == tmp_path and seen["kwargs"]["progress"] is False


def test_broken_task_config_is_reported_not_hidden(tmp_path, monkeypatch):
    import shutil

    configs = tmp_path / "configs"
    shutil.copytree(PACKAGED_CONFIG_DIR, configs)
    mixed = configs / "civic" / "mixed.yaml"
    mixed.write_text("extends: _base\nname: mixed\ntask: mixed\nsteps: {judge: true, gather: true\n")
    monkeypatch.setenv("EVIDEX_CONFIG_DIR", str(configs))  # the user's tree shadows the shipped files
    assert sorted(task_table()) == [t for t in TASKS if t != "mixed"]  # what happens today
    with pytest.raises(ConfigError) as info:
        config_for_task("mixed")
    assert str(mixed) in str(info.value) and "line " in str(info.value)


def test_config_dir_copy_loads_like_the_original(tmp_path, monkeypatch):
    """Control for the test above: an intact copy of configs/ gives the same eight tasks."""
    import shutil

    configs = tmp_path / "configs"
    shutil.copytree(PACKAGED_CONFIG_DIR, configs)
    monkeypatch.setenv("EVIDEX_CONFIG_DIR", str(configs))
    assert sorted(task_table()) == TASKS
    assert all(e.path.is_relative_to(configs) for e in task_table().values())
    assert config_for_task("mixed").steps.gather is True


def test_config_defaults_match_the_library_defaults():
    """The CIViC gate's settings and the retrieval library each spell the penalty defaults: they must agree, so a
    graph run and a direct ``gather_candidates`` call rank the KB the same way."""
    from evidex.agents.civic.gate import CivicGateSettings
    from evidex.agents.civic.query_planner import CLAIM_PENALTY, RIVAL_VARIANT_PENALTY

    assert CivicGateSettings().rival_variant_penalty == RIVAL_VARIANT_PENALTY
    assert CivicGateSettings().claim_penalty == CLAIM_PENALTY


def test_a_setting_the_config_overrides_is_reported():
    """gate.keep_rank is superseded by the competing-claim rule; setting it explicitly gets a warning."""
    assert config_for_task("mixed").warnings() == []
    (msg,) = config_for_task("mixed", ["gate.keep_rank=20"]).warnings()
    assert "gate.given_claim_keep_rank" in msg
    assert config_for_task("mixed", ["gate.keep_rank=20", "gate.given_claim_margin=null"]).warnings() == []


def test_the_qa_families_share_one_qa_settings_model_and_every_qa_config_loads():
    """One ``qa`` settings model for every QA family and method (an ablation is a config file, not a graph of
    its own); the readers list names registered readers, the model last; a switch that was deleted when its other
    branch lost is an unknown key, named with the keys that exist."""
    from evidex.agents.readers import DEFAULT_READERS
    from evidex.graphs.qa.config import QASettings
    from evidex.graphs.qa.qasper_config import QasperTaskConfig

    assert QATaskConfig.model_fields["qa"].annotation is QASettings
    assert QasperTaskConfig.model_fields["qa"].annotation is QASettings
    loaded = [load_config(f"{family}/{path.stem}") for family in ("airqa", "qasper")
              for path in sorted((PACKAGED_CONFIG_DIR / family).glob("*.yaml")) if not path.stem.startswith("_")]
    assert len(loaded) >= 10 and all(isinstance(cfg.qa, QASettings) for cfg in loaded)
    assert all(cfg.qa.readers[-1] == "model" for cfg in loaded)
    assert config_for_task("airqa").qa.readers == list(DEFAULT_READERS)
    methods = {cfg.name: cfg.qa.method for cfg in loaded}
    assert methods["airqa"] == "neusym" and methods["iterative_rag"] == "iterative_rag"
    assert methods["neusym_vector_only"] == "neusym"  # an ablation: the same graph, fewer actions
    assert "sql" not in load_config("airqa/neusym_vector_only").qa.actions
    for deleted in ("qa.warm_start=multiview", "qa.quote_first=true", "qa.table_cells=true", "qa.answer_step=evidence"):
        key = deleted.split("=")[0]
        with pytest.raises(ConfigError, match=rf"{key}: .*unknown key; allowed here: method, readers, "):
            config_for_task("airqa", [deleted])

"""The fast claim-explainer path (issue 20) with scripted models: the speed presets, batched stance calls
(same labels as per-item calls, graceful degradation on malformed replies), a stable shared prompt prefix,
trimmed evidence that still carries every cited id, and the local server's parallel slots."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
import yaml

from evidex.agents.claim_prompt import PROMPT_STYLES, clip, prompt_style
from evidex.agents.evidence_judge import judge_evidence, judge_stances, stance_item_schema
from evidex.agents.scripted import ScriptedChatModel
from evidex.agents.structured import StructuredOutputError, salvage_per_id
from evidex.graphs import build_graph
from evidex.graphs import config_for_task as _config_for_task
from evidex.graphs.config import dump_config
from evidex.graphs.tasks import validate
from evidex.tools.claims import Claim, Evidence

COMPACT = PROMPT_STYLES["compact"]
# These tests are about the fast and legacy paths (the model's batched stance calls and free writing); civic's
# default is now the grounded path with the gate's stance (tests/test_grounded_writer.py).
FREE_WRITING = ("speed.path=fast", "judge.llm_stance=true")


def config_for_task(task, sets=()):
    return _config_for_task(task, [*FREE_WRITING, *sets])

CLAIMS = {"claim": Claim(text="BRAF V600E predicts response to vemurafenib in melanoma",
                         context={"Disease": "Melanoma", "Therapies": "Vemurafenib"})}
EVIDENCE = [Evidence(id=str(100 + n), text=f"Study {n}: patients with BRAF V600E melanoma treated with vemurafenib "
                                          f"showed outcome number {n} in a cohort of {10 * n + 7} patients.")
            for n in range(11)]


def label_of(eid: str) -> str:
    """A fixed, id-dependent stance: what a consistent model would answer in any call."""
    return "contradicts" if zlib.crc32(eid.encode()) % 3 == 0 else "supports"


# ------------------------------------------------------------------------------------------------ presets
def test_speed_presets_fill_unset_settings_and_legacy_is_the_old_path():
    fast, legacy = config_for_task("mixed"), config_for_task("mixed", ["speed.path=legacy"])
    assert fast.speed.path == "fast"
    assert fast.judge.stance_batch is True and fast.prompts.style == "compact"
    assert fast.prompts.reason_chars == 36 and fast.prompts.write_evidence_chars == 220
    assert fast.judge.stance_reasons is False and legacy.judge.stance_reasons is True
    assert prompt_style(fast.prompts.style).max_sentences == 4 and prompt_style(legacy.prompts.style).max_sentences == 5
    # legacy: exactly the settings before the fast path
    assert legacy.judge.stance_batch is False and legacy.prompts.style == "full"
    assert legacy.prompts.reason_chars == 56 and legacy.prompts.evidence_chars == 360
    assert legacy.prompts.write_evidence_chars == legacy.prompts.evidence_chars
    # an explicit setting wins over the preset
    mixed = config_for_task("mixed", ["speed.path=legacy", "judge.stance_batch=true", "prompts.reason_chars=30"])
    assert mixed.judge.stance_batch is True and mixed.prompts.reason_chars == 30 and mixed.prompts.style == "full"
    # a family config that names no path keeps the old one
    from evidex.graphs.claims.config import SpeedConfig
    assert SpeedConfig().path == "legacy"


def test_a_saved_config_resumes_with_the_resolved_settings():
    cfg = config_for_task("mixed", ["speed.path=fast"])
    again = validate(yaml.safe_load(dump_config(cfg)), "config.yaml")
    assert again.model_dump() == cfg.model_dump()
    assert "stance_batch: true" in dump_config(cfg) and "style: compact" in dump_config(cfg)


# ------------------------------------------------------------------------------------------------ batched stances
def _responder(kit, **kw):
    return kit.Responder(stance_label=label_of, **kw)


def test_batched_stances_give_the_per_item_labels(kit):
    per_item = _responder(kit)
    one_by_one = judge_evidence(ScriptedChatModel(responses=per_item), CLAIMS, EVIDENCE, evidence_chars=300,
                                context_chars=240, reason_chars=36, stance_only=True, style=COMPACT)
    batched_r = _responder(kit)
    batched = judge_stances(ScriptedChatModel(responses=batched_r), CLAIMS, EVIDENCE, evidence_chars=300,
                            context_chars=240, reason_chars=36, batch_size=4, style=COMPACT)
    assert [(j.id, j.label) for j in batched] == [(j.id, j.label) for j in one_by_one]
    assert {j.label for j in batched} == {"supports", "contradicts"}  # the check can fail
    assert len(per_item.calls) == len(EVIDENCE) and len(batched_r.calls) == 3  # 11 ids in batches of 4
    assert [kit.task_ids(c.prompt) for c in batched_r.calls] == [[e.id for e in EVIDENCE[i: i + 4]]
                                                                 for i in (0, 4, 8)]
    # every batch shows all items under one prefix, so llama.cpp evaluates the evidence once
    prefixes = {c.prompt[:c.prompt.rindex("TASK: ")] for c in batched_r.calls}
    assert len(prefixes) == 1
    prefix = prefixes.pop()
    assert all(f"[{e.id}]" in prefix for e in EVIDENCE)
    assert all(set(c.ids) == {e.id for e in EVIDENCE} for c in batched_r.calls)


def test_missing_ids_are_kept_from_the_valid_part_and_asked_alone(kit):
    """The batch (and its repair) leaves out two ids: the valid entries are kept, the two are asked one by one."""
    dropped = {"103", "107"}

    def hook(call):
        ids = kit.task_ids(call.prompt)
        if len(ids) > 1:
            return json.dumps({i: {"evidence_finding": f"finding {i}", "label": label_of(i)}
                               for i in ids if i not in dropped})
        return None

    r = _responder(kit, hook=hook)
    out = judge_stances(ScriptedChatModel(responses=r), CLAIMS, EVIDENCE, evidence_chars=300, context_chars=240,
                        reason_chars=36, batch_size=8, style=COMPACT)
    assert [(j.id, j.label) for j in out] == [(e.id, label_of(e.id)) for e in EVIDENCE]
    asked = [(kit.task_ids(c.prompt), c.repair) for c in r.calls]
    batch1 = [e.id for e in EVIDENCE[:8]]
    assert asked[:2] == [(batch1, False), (batch1, True)]  # the batch, its repair
    assert sorted(ids[0] for ids, _ in asked[2:4]) == sorted(dropped)  # then each dropped id alone
    assert asked[4:] == [([e.id for e in EVIDENCE[8:]], False)]  # the next batch is unaffected


def test_a_list_instead_of_the_keyed_object_is_salvaged(kit):
    def hook(call):
        ids = kit.task_ids(call.prompt)
        return json.dumps([{"id": i, "evidence_finding": f"finding {i}", "label": label_of(i)} for i in ids])

    r = _responder(kit, hook=hook)
    out = judge_stances(ScriptedChatModel(responses=r), CLAIMS, EVIDENCE[:5], evidence_chars=300, context_chars=240,
                        reason_chars=36, batch_size=8, style=COMPACT)
    assert [(j.id, j.label, j.reason) for j in out] == [(e.id, label_of(e.id), f"finding {e.id}") for e in EVIDENCE[:5]]
    assert len(r.calls) == 2  # batch + repair, nothing asked again


def test_a_repaired_batch_needs_no_fallback(kit):
    seen = []

    def hook(call):
        if not seen:
            seen.append(1)
            return "Sure! Here are the stances."
        return None

    r = _responder(kit, hook=hook)
    out = judge_stances(ScriptedChatModel(responses=r), CLAIMS, EVIDENCE[:5], evidence_chars=300, context_chars=240,
                        reason_chars=36, batch_size=8, style=COMPACT)
    assert [j.label for j in out] == [label_of(e.id) for e in EVIDENCE[:5]]
    assert [c.repair for c in r.calls] == [False, True]


def test_garbage_everywhere_is_an_error_naming_the_item(kit):
    r = _responder(kit, hook=lambda call: "no json at all")
    with pytest.raises(StructuredOutputError, match=r"judge_stances\[100\]"):
        judge_stances(ScriptedChatModel(responses=r), CLAIMS, EVIDENCE[:3], evidence_chars=300, context_chars=240,
                      reason_chars=36, batch_size=8, style=COMPACT)
    assert len(r.calls) == 4  # batch + repair, then the first id alone + repair


def test_salvage_keeps_only_valid_entries_for_known_ids():
    item = stance_item_schema(20)
    replies = ['{"1": {"evidence_finding": "ok", "label": "supports"}, "2": {"label": "maybe"}, '
               '"9": {"evidence_finding": "x", "label": "supports"}}',
               '```json\n{"[2]": {"evidence_finding": "fixed", "label": "contradicts"}, '
               '"3": {"evidence_finding": "' + "far too long " * 5 + '", "label": "supports"}}\n```']
    got = salvage_per_id(replies, item, ["1", "2", "3"])
    assert {k: (v.evidence_finding, v.label) for k, v in got.items()} == {"1": ("ok", "supports"),
                                                                          "2": ("fixed", "contradicts")}
    assert salvage_per_id(["nothing", ""], item, ["1"]) == {}


def test_labels_only_stances(kit):
    r = _responder(kit)
    out = judge_stances(ScriptedChatModel(responses=r), CLAIMS, EVIDENCE, evidence_chars=300, context_chars=240,
                        reason_chars=36, batch_size=8, style=COMPACT, reasons=False)
    assert [(j.id, j.label, j.reason) for j in out] == [(e.id, label_of(e.id), "") for e in EVIDENCE]
    assert all("TASK: Label each of" in c.prompt for c in r.calls) and len(r.calls) == 2
    # a list of objects is salvaged by their "label"
    item = stance_item_schema(36, reasons=False)
    got = salvage_per_id(['[{"id": "1", "label": "contradicts"}, {"id": "2", "label": "maybe"}]', '{"3": "supports"}'],
                         item, ["1", "2", "3"])
    assert got == {"1": "contradicts", "3": "supports"}


def test_labels_only_in_the_graph_keeps_the_gate_reasons(kit, embedder, kb_index):
    _, _, with_reasons, _ = _run("baseline", kit, embedder, kb_index, ["steps.verify=false", "speed.path=fast",
                                                                       "judge.stance_reasons=true"])
    _, _, labels_only, r = _run("baseline", kit, embedder, kb_index, ["steps.verify=false", "speed.path=fast"])
    assert {c.role for c in r.calls} == {"stances", "writer"}
    for a, b in zip(with_reasons, labels_only):
        assert [(d.id, d.kept, d.label) for d in a.decisions] == [(d.id, d.kept, d.label) for d in b.decisions]
        assert all(d.reason.startswith("scripted stance") for d in a.decisions if d.kept)
        assert all(d.reason.strip() and not d.reason.startswith("scripted") for d in b.decisions if d.kept)


def test_reasons_are_capped_by_the_schema_and_the_prompt(kit):
    r = _responder(kit, hook=lambda call: json.dumps({i: {"evidence_finding": "x" * 50, "label": "supports"}
                                                       for i in kit.task_ids(call.prompt)}))
    with pytest.raises(StructuredOutputError):
        judge_stances(ScriptedChatModel(responses=r), CLAIMS, EVIDENCE[:1], evidence_chars=300, context_chars=240,
                      reason_chars=36, style=COMPACT)
    assert "at most 5 words" in r.calls[0].prompt.rsplit("TASK: ", 1)[1]


# ------------------------------------------------------------------------------------------------ the graph
def _run(task, kit, embedder, kb_index, sets, **kw):
    kit.require_task_data(task)
    cfg = config_for_task(task, ["dataset.limit=2", *sets])
    responder = kit.Responder(**kw)
    graph = build_graph(cfg, llm=ScriptedChatModel(responses=responder), embedder=embedder, index=kb_index)
    from evidex.tools.claim_data import load_task

    ds = cfg.dataset
    items = load_task(task, limit=ds.limit, shuffle=ds.shuffle, seed=ds.seed)[:2]
    preds = [graph.invoke({"input": it.input})["prediction"] for it in items]
    return cfg, items, preds, responder


@pytest.mark.parametrize("chars", [300, 80])
def test_trimmed_writer_evidence_still_shows_every_cited_id(chars, kit, embedder, kb_index):
    cfg, items, preds, responder = _run("mixed", kit, embedder, kb_index, [f"prompts.write_evidence_chars={chars}"])
    writers = [c for c in responder.calls if c.role == "writer"]
    assert len(writers) == len(preds) == 2
    for pred, call in zip(preds, writers):
        shown = kit.evidence_lines(call.prompt)
        assert set(shown) == set(pred.kept_ids)  # every kept item, none dropped by the trim
        assert set(pred.cited_ids["claim"]) <= set(shown)  # so every cited id is in the prompt
        assert all(len(text) <= chars + 2 for text in shown.values())  # clipped to the cap (+ " …")
        assert any(text.endswith(" …") for text in shown.values())  # and the cap really cut something
        for eid, text in shown.items():
            assert text == clip(pred.evidence_texts[eid], chars)


def test_fast_labels_agree_with_legacy_labels_on_real_items(kit, embedder, kb_index):
    """Same consistent scripted model, both paths: the same kept items with the same stance labels."""
    _, _, fast, rf = _run("mixed", kit, embedder, kb_index, ["speed.path=fast", "steps.verify=false"],
                          stance_label=label_of)
    _, _, legacy, rl = _run("mixed", kit, embedder, kb_index, ["speed.path=legacy", "steps.verify=false"],
                            stance_label=label_of)
    for a, b in zip(fast, legacy):
        assert [(d.id, d.kept, d.label) for d in a.decisions] == [(d.id, d.kept, d.label) for d in b.decisions]
    assert {r for r in rf.roles()} == {"stances", "writer"} and {r for r in rl.roles()} == {"stance", "writer"}
    assert len(rf.calls) < len(rl.calls)


def test_compact_prompts_put_fixed_instructions_first_and_item_content_last(kit, embedder, kb_index):
    _, items, _, responder = _run("mixed", kit, embedder, kb_index, ["speed.path=fast"])
    systems = {c.prompt.split("\n\nHUMAN: ", 1)[0] for c in responder.calls}
    assert len(systems) == 1  # one system prompt for every call of every item: cached across items
    system = systems.pop()
    assert "Stances:" in system and "Explain:" in system  # the roles' instructions live there
    for c in responder.calls:
        task = c.prompt[c.prompt.rindex("TASK: "):]
        assert task.count("\n") == 0 and len(task) < 200, task  # short TASK line, last
        assert c.prompt.index("CLAIM:") < c.prompt.index("EVIDENCE:") < c.prompt.index("TASK: ")


# ------------------------------------------------------------------------------------------------ parallel slots
def test_local_server_params_give_each_slot_its_context_and_cache_prompts():
    pytest.importorskip("xllamacpp")
    from evidex.agents.local_llm import server_params

    one = server_params(Path("model.gguf"), n_ctx=4096, parallel=1)
    two = server_params(Path("model.gguf"), n_ctx=4096, parallel=2)
    assert (one.n_parallel, one.n_ctx) == (1, 4096)
    assert (two.n_parallel, two.n_ctx) == (2, 8192)  # 4096 per slot
    assert two.cache_prompt and two.cont_batching and not two.kv_unified


@pytest.mark.parametrize("sets,slots", [([], 2), (["run.concurrency=1"], 1), (["run.concurrency=2", "model.slots=1"], 1),
                                        (["model.slots=3"], 3)])  # civic runs two items at once by default
def test_the_model_gets_one_slot_per_item_in_flight(sets, slots, monkeypatch, embedder, kb_index):
    import evidex.agents.models

    seen = {}

    def fake(spec, **kw):
        seen.update(kw)
        return ScriptedChatModel(responses=[])

    monkeypatch.setattr(evidex.agents.models, "make_chat_model", fake)
    cfg = config_for_task("baseline", sets)
    assert cfg.model_slots == slots
    build_graph(cfg, embedder=embedder, index=kb_index)
    assert seen["parallel"] == slots

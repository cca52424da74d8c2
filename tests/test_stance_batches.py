"""The model's stance calls (``judge.llm_stance``) with scripted models: kept items labelled in batched label-only
calls (graceful degradation on malformed replies), a stable shared prompt prefix, the gate's reasons kept, one
system prompt for every claim role, and the local server's parallel slots."""
from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field, create_model

from evidex.agents.evidence_judge import StanceLabel, judge_stances
from evidex.agents.scripted import ScriptedChatModel
from evidex.agents.structured import StructuredOutputError, salvage_per_id
from evidex.graphs import build_graph
from evidex.graphs import config_for_task
from evidex.tools.claims import Claim, Evidence

CLAIMS = {"claim": Claim(text="BRAF V600E predicts response to vemurafenib in melanoma",
                         context={"Disease": "Melanoma", "Therapies": "Vemurafenib"})}
EVIDENCE = [Evidence(id=str(100 + n), text=f"Study {n}: patients with BRAF V600E melanoma treated with vemurafenib "
                                          f"showed outcome number {n} in a cohort of {10 * n + 7} patients.")
            for n in range(11)]


def label_of(eid: str) -> str:
    """A fixed, id-dependent stance: what a consistent model would answer in any call."""
    return "contradicts" if zlib.crc32(eid.encode()) % 3 == 0 else "supports"


def _responder(kit, **kw):
    return kit.Responder(stance_label=label_of, **kw)


def _stances(r, evidence=EVIDENCE, **kw):
    kw.setdefault("batch_size", 8)
    return judge_stances(ScriptedChatModel(responses=r), CLAIMS, evidence, evidence_chars=300, context_chars=240, **kw)


# ------------------------------------------------------------------------------------------------ batched stances
def test_batched_stances_label_every_item_under_one_prefix(kit):
    r = _responder(kit)
    out = _stances(r, batch_size=4)
    assert [(j.id, j.label, j.reason) for j in out] == [(e.id, label_of(e.id), "") for e in EVIDENCE]
    assert {j.label for j in out} == {"supports", "contradicts"}  # the check can fail
    assert len(r.calls) == 3 and all("TASK: Label each of" in c.prompt for c in r.calls)  # 11 ids in batches of 4
    assert [kit.task_ids(c.prompt) for c in r.calls] == [[e.id for e in EVIDENCE[i: i + 4]] for i in (0, 4, 8)]
    # every batch shows all items under one prefix, so llama.cpp evaluates the evidence once
    prefixes = {c.prompt[:c.prompt.rindex("TASK: ")] for c in r.calls}
    assert len(prefixes) == 1
    prefix = prefixes.pop()
    assert all(f"[{e.id}]" in prefix for e in EVIDENCE)
    assert all(set(c.ids) == {e.id for e in EVIDENCE} for c in r.calls)


def test_missing_ids_are_kept_from_the_valid_part_and_asked_alone(kit):
    """The batch (and its repair) leaves out two ids: the valid entries are kept, the two are asked one by one."""
    dropped = {"103", "107"}

    def hook(call):
        ids = kit.task_ids(call.prompt)
        if len(ids) > 1:
            return json.dumps({i: label_of(i) for i in ids if i not in dropped})
        return None

    r = _responder(kit, hook=hook)
    out = _stances(r)
    assert [(j.id, j.label) for j in out] == [(e.id, label_of(e.id)) for e in EVIDENCE]
    asked = [(kit.task_ids(c.prompt), c.repair) for c in r.calls]
    batch1 = [e.id for e in EVIDENCE[:8]]
    assert asked[:2] == [(batch1, False), (batch1, True)]  # the batch, its repair
    assert sorted(ids[0] for ids, _ in asked[2:4]) == sorted(dropped)  # then each dropped id alone
    assert asked[4:] == [([e.id for e in EVIDENCE[8:]], False)]  # the next batch is unaffected


def test_a_list_instead_of_the_keyed_object_is_salvaged(kit):
    def hook(call):
        return json.dumps([{"id": i, "label": label_of(i)} for i in kit.task_ids(call.prompt)])

    r = _responder(kit, hook=hook)
    out = _stances(r, EVIDENCE[:5])
    assert [(j.id, j.label) for j in out] == [(e.id, label_of(e.id)) for e in EVIDENCE[:5]]
    assert len(r.calls) == 2  # batch + repair, nothing asked again


def test_a_repaired_batch_needs_no_fallback(kit):
    seen = []

    def hook(call):
        if not seen:
            seen.append(1)
            return "Sure! Here are the stances."
        return None

    r = _responder(kit, hook=hook)
    out = _stances(r, EVIDENCE[:5])
    assert [j.label for j in out] == [label_of(e.id) for e in EVIDENCE[:5]]
    assert [c.repair for c in r.calls] == [False, True]


def test_garbage_everywhere_is_an_error_naming_the_item(kit):
    r = _responder(kit, hook=lambda call: "no json at all")
    with pytest.raises(StructuredOutputError, match=r"judge_stances\[100\]"):
        _stances(r, EVIDENCE[:3])
    assert len(r.calls) == 4  # batch + repair, then the first id alone + repair


def test_salvage_keeps_only_valid_entries_for_known_ids():
    item = create_model("ItemAssignment", reason=(str, Field(max_length=20)),
                        claim=(Literal["A", "B", "neither"], ...))
    replies = ['{"1": {"reason": "ok", "claim": "A"}, "2": {"claim": "maybe"}, "9": {"reason": "x", "claim": "B"}}',
               '```json\n{"[2]": {"reason": "fixed", "claim": "B"}, '
               '"3": {"reason": "' + "far too long " * 5 + '", "claim": "A"}}\n```']
    got = salvage_per_id(replies, item, ["1", "2", "3"])
    assert {k: (v.reason, v.claim) for k, v in got.items()} == {"1": ("ok", "A"), "2": ("fixed", "B")}
    assert salvage_per_id(["nothing", ""], item, ["1"]) == {}
    # labels: a list of objects is salvaged by their "label"
    got = salvage_per_id(['[{"id": "1", "label": "contradicts"}, {"id": "2", "label": "maybe"}]', '{"3": "supports"}'],
                         StanceLabel, ["1", "2", "3"])
    assert got == {"1": "contradicts", "3": "supports"}


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


def test_model_stances_keep_the_gate_reasons(kit, embedder, kb_index):
    """Decisions only (no writer): the model's labels replace the gate's "supports", its reasons stay."""
    _, _, gate_only, r0 = _run("baseline", kit, embedder, kb_index, ["steps.write=false"])
    _, _, labelled, r = _run("baseline", kit, embedder, kb_index, ["steps.write=false", "judge.llm_stance=true"],
                             stance_label=label_of)
    assert r0.calls == [] and {c.role for c in r.calls} == {"stances"}
    for a, b in zip(gate_only, labelled):
        assert [(d.id, d.kept, d.reason) for d in a.decisions] == [(d.id, d.kept, d.reason) for d in b.decisions]
        assert [d.label for d in b.decisions if d.kept] == [label_of(d.id) for d in b.decisions if d.kept]
    assert any(d.label == "contradicts" for p in labelled for d in p.decisions)


def test_one_system_prompt_fixed_instructions_first_and_item_content_last(kit, embedder, kb_index):
    _, items, _, responder = _run("mixed", kit, embedder, kb_index, ["judge.llm_stance=true"])
    assert set(responder.roles()) == {"stances", "reasons"}
    systems = {c.prompt.split("\n\nHUMAN: ", 1)[0] for c in responder.calls}
    assert len(systems) == 1  # one system prompt for every call of every item: cached across items
    system = systems.pop()
    assert "Stances:" in system and "Reasons:" in system  # the roles' instructions live there
    for c in responder.calls:
        task = c.prompt[c.prompt.rindex("TASK: "):]
        assert task.count("\n") == 0, task  # one TASK line, last
        last = c.prompt[c.prompt.rindex("HUMAN: "):]
        assert last.index("CLAIM:") < last.index("EVIDENCE:") < last.index("TASK: ")


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

"""Embedding a claim graph in other LangChain/LangGraph apps (scripted model, no data files, no network):
typed schemas, subgraph node, tool of a tool-calling agent, LCEL, .batch, .stream, astream_events(v2), and the
``langgraph.json`` / ``graphs.studio`` factories for LangGraph Studio."""
from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from evidex.tools.claims import ClaimInput, ClaimPrediction

REPO = Path(__file__).resolve().parents[1]


class ParentState(BaseModel):
    """A host app's state: it shares ``input``/``prediction`` with the claim graph and adds its own key."""

    input: ClaimInput
    prediction: ClaimPrediction | None = None
    summary: str = ""


class FakeEmbedder:
    """Constant vectors: every cosine is 1, so nothing needs MiniLM."""

    model_name = "fake"

    def encode(self, texts):
        return np.full((len(texts), 4), 0.5, dtype="float32")


def claim_input(item_id: str = "emb-1", claim: str = "BRAF V600E predicts response to vemurafenib"):
    return ClaimInput(id=item_id, task="baseline", claims={"claim": {"text": claim}}, evidence=[
        {"id": "E1", "text": "Vemurafenib improved response rates in BRAF V600E melanoma in a phase 3 trial."},
        {"id": "E2", "text": "BRAF V600E melanoma patients treated with vemurafenib had longer survival."}])


@pytest.fixture(scope="module")
def graph(kit):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs import build_graph, config_for_task

    cfg = config_for_task("baseline", ["judge.strategy=llm"])
    return build_graph(cfg, llm=ScriptedChatModel(responses=kit.Responder()), embedder=FakeEmbedder())


def test_typed_schemas(graph):
    ins, outs = graph.get_input_jsonschema(), graph.get_output_jsonschema()
    assert ins["properties"].keys() == {"input"} and ins["required"] == ["input"]
    assert {"id", "task", "claims", "evidence"} <= set(ins["$defs"]["ClaimInput"]["properties"])
    assert outs["properties"].keys() == {"prediction"}
    assert {"decisions", "kept_ids", "explanations", "cited_ids"} <= set(outs["$defs"]["ClaimPrediction"]["properties"])
    assert graph.name == "baseline"


def test_invoke_accepts_plain_dicts(graph):
    out = graph.invoke({"input": claim_input().model_dump()})
    pred = out["prediction"]
    assert pred.id == "emb-1" and set(pred.kept_ids) == {"E1", "E2"} and "[E1]" in pred.explanations["claim"]


def test_subgraph_node(graph):
    """The compiled graph as one node of a parent StateGraph that shares the ``input``/``prediction`` keys."""
    from langgraph.graph import END, START, StateGraph

    def summarize(state: ParentState) -> dict:
        p = state.prediction
        return {"summary": f"{p.id}: kept {len(p.kept_ids)}, cited {sorted(p.cited_ids.get('claim', []))}"}

    parent = StateGraph(ParentState)
    parent.add_node("explain", graph)
    parent.add_node("summarize", summarize)
    parent.add_edge(START, "explain")
    parent.add_edge("explain", "summarize")
    parent.add_edge("summarize", END)
    app = parent.compile(name="parent")
    out = app.invoke({"input": claim_input("sub-1")})
    assert out["prediction"].id == "sub-1"
    assert out["summary"].startswith("sub-1: kept 2, cited ['E1', 'E2']")
    # with subgraphs=True the inner nodes stream under the subgraph's namespace
    namespaces = {ns for ns, _ in app.stream({"input": claim_input("sub-2")}, stream_mode="updates", subgraphs=True)}
    assert () in namespaces and any(ns and ns[0].startswith("explain:") for ns in namespaces)


def test_as_tool_in_tool_calling_agent(graph):
    """``graph.as_tool`` used by ``langchain.agents.create_agent`` driven by a fake tool-calling model."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as_tool is marked beta
        tool = graph.as_tool(name="explain_claim", description="Judge the evidence and explain the claim.")
    assert tool.name == "explain_claim" and set(tool.args) == {"input"}

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            assert [t.name for t in tools] == ["explain_claim"]
            return self

    call = {"name": "explain_claim", "args": {"input": claim_input("tool-1").model_dump()}, "id": "call_1"}
    model = ToolCallingFake(messages=iter([AIMessage(content="", tool_calls=[call]),
                                           AIMessage(content="The evidence supports the claim.")]))
    agent = create_agent(model, tools=[tool])
    out = agent.invoke({"messages": [HumanMessage("Explain claim tool-1")]})
    tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_msgs) == 1 and tool_msgs[0].tool_call_id == "call_1"
    assert "tool-1" in tool_msgs[0].content and "[E1]" in tool_msgs[0].content
    assert out["messages"][-1].content == "The evidence supports the claim."


def test_lcel_composition(graph):
    from langchain_core.runnables import RunnableLambda

    chain = (RunnableLambda(lambda text: {"input": claim_input("lcel-1", text)}) | graph
             | RunnableLambda(lambda out: out["prediction"].explanations["claim"]))
    text = chain.invoke("BRAF V600E predicts response to vemurafenib")
    assert isinstance(text, str) and "[E1]" in text


def test_batch(graph):
    outs = graph.batch([{"input": claim_input(f"batch-{i}")} for i in range(3)], config={"max_concurrency": 2})
    assert [o["prediction"].id for o in outs] == ["batch-0", "batch-1", "batch-2"]


def test_stream_updates_and_values(graph):
    updates = list(graph.stream({"input": claim_input("stream-1")}, stream_mode="updates"))
    assert [next(iter(u)) for u in updates] == ["judge_given", "findings", "write", "finalize"]
    assert updates[-1]["finalize"]["prediction"].id == "stream-1"
    values = list(graph.stream({"input": claim_input("stream-2")}, stream_mode="values"))
    assert values[-1]["prediction"].id == "stream-2"


def test_astream_events_v2(graph):
    async def collect():
        return [e async for e in graph.astream_events({"input": claim_input("events-1")}, version="v2")]

    events = asyncio.run(collect())
    kinds = [(e["event"], e["name"]) for e in events]
    assert kinds[0] == ("on_chain_start", "baseline") and kinds[-1] == ("on_chain_end", "baseline")
    assert ("on_chat_model_start", "judge_given[E1]") in kinds
    assert ("on_chat_model_end", "write_reasons[claim]") in kinds
    assert {"judge_given", "findings", "write", "finalize"} <= {n for k, n in kinds if k == "on_chain_start"}
    assert events[-1]["data"]["output"]["prediction"].id == "events-1"


# -- LangGraph Studio -------------------------------------------------------------------------------------------
def test_langgraph_json_registers_every_task():
    import importlib

    from evidex.graphs.tasks import task_table

    spec = json.loads((REPO / "langgraph.json").read_text())
    assert spec["dependencies"] == ["."]
    assert set(spec["graphs"]) == set(task_table())
    studio = importlib.import_module("evidex.graphs.studio")
    assert set(studio.TASKS) == set(spec["graphs"])
    for name, target in spec["graphs"].items():
        module, attr = target.split(":")
        assert module == "evidex.graphs.studio"  # module syntax: works for an app that only installed evidex
        assert attr == name and callable(studio.__dict__[attr])  # the server reads the module's __dict__


def test_studio_factory_builds_from_config(tmp_path, monkeypatch):
    import evidex.tools.embeddings
    from evidex.graphs import studio

    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"evidence_finding": "r1", "label": "supports"}, {"evidence_finding": "r2", "label": "supports"},
                                   # the grounded writer's one "why" sentence (the default path)
                                   {"sentences": [{"text": "Vemurafenib improves response and survival",
                                                   "ids": ["E1", "E2"]}]}]))
    monkeypatch.setattr(evidex.tools.embeddings, "get_embeddings", lambda *a, **k: FakeEmbedder())
    monkeypatch.setenv(studio.OVERRIDES_ENV, f"model.spec=scripted:{replies}; judge.strategy=llm")
    g = studio.graph_for_task("baseline")
    assert g.name == "baseline" and g.get_input_jsonschema()["properties"].keys() == {"input"}
    pred = g.invoke({"input": claim_input("studio-1")})["prediction"]
    assert pred.kept_ids == ["E1", "E2"] and "E2]" in pred.explanations["claim"]

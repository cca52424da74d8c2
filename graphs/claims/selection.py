"""Selection graph: which of two claims does the evidence support? Then explain the chosen claim.

    select -> [findings -> write] -> finalize
"""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from evidex.agents.selector import select_claim
from evidex.tools.claims import EvidenceDecision
from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.explainer import add_writing
from evidex.graphs.claims.nodes import make_finalize
from evidex.graphs.claims.state import ClaimGraphInput, ClaimGraphOutput, ClaimGraphState


def build_selection(deps: GraphDeps):
    p = deps.config.prompts
    if deps.config.judge.gated:
        deps.require("select", "selection with judge.strategy=cascade")

    def select(state: ClaimGraphState) -> dict:
        if deps.config.judge.gated:
            answer, reason = deps.gate.select(state.input.claims, state.input.evidence)
        else:
            choice = select_claim(deps.llm, state.input.claims, state.input.evidence,
                                  evidence_chars=p.evidence_chars, context_chars=p.context_chars,
                                  reason_chars=p.reason_chars)
            answer, reason = choice.answer, choice.reason
        decisions = [EvidenceDecision(id=e.id, source="given", label="supports", kept=True, reason=reason)
                     for e in state.input.evidence]
        return {"selected_claim": answer, "decisions": decisions}

    g = StateGraph(ClaimGraphState, input_schema=ClaimGraphInput, output_schema=ClaimGraphOutput)
    g.add_node("select", select)
    g.add_node("finalize", make_finalize(deps))
    g.add_edge(START, "select")
    add_writing(g, deps, "select", lambda s: [s.selected_claim] if s.selected_claim else [])
    g.add_edge("finalize", END)
    return g.compile(name=deps.config.name)

"""Assignment graph: each evidence item -> claim A, claim B or neither; then one explanation per claim.

    assign -> [findings -> write A, B] -> finalize
"""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from evidex.agents.assigner import Assignment, assign_evidence
from evidex.tools.claims import EvidenceDecision
from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.explainer import add_writing
from evidex.graphs.claims.nodes import make_finalize
from evidex.graphs.claims.state import ClaimGraphInput, ClaimGraphOutput, ClaimGraphState


def build_assignment(deps: GraphDeps):
    p = deps.config.prompts
    if deps.config.judge.gated:
        deps.require("assign", "assignment with judge.strategy=cascade")

    def assign(state: ClaimGraphState) -> dict:
        if deps.config.judge.gated:
            table = deps.gate.assign(state.input.claims, state.input.evidence)
            assigned = [Assignment(id=i, claim=c, reason=r) for i, (c, r) in table.items()]
        else:
            assigned = assign_evidence(deps.llm, state.input.claims, state.input.evidence,
                                       evidence_chars=p.evidence_chars, context_chars=p.context_chars,
                                       reason_chars=p.reason_chars)
        return {"decisions": [EvidenceDecision(id=a.id, source="given", claim=a.claim, reason=a.reason,
                                               label="irrelevant" if a.claim == "neither" else "supports",
                                               kept=a.claim != "neither") for a in assigned]}

    g = StateGraph(ClaimGraphState, input_schema=ClaimGraphInput, output_schema=ClaimGraphOutput)
    g.add_node("assign", assign)
    g.add_node("finalize", make_finalize(deps))
    g.add_edge(START, "assign")
    add_writing(g, deps, "assign", lambda s: ["A", "B"])
    g.add_edge("finalize", END)
    return g.compile(name=deps.config.name)

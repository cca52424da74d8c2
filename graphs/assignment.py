"""Assignment graph: each evidence item -> claim A, claim B or neither; then one explanation per claim.

    assign -> [write A, B -> verify -> (revise)] -> finalize
"""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from evidex.agents.assigner import assign_evidence
from evidex.tools.claims import EvidenceDecision
from evidex.graphs.deps import GraphDeps
from evidex.graphs.explainer import add_writing
from evidex.graphs.nodes import finalize
from evidex.graphs.state import ClaimGraphInput, ClaimGraphOutput, ClaimGraphState


def build_assignment(deps: GraphDeps):
    p = deps.config.prompts

    def assign(state: ClaimGraphState) -> dict:
        if deps.config.judge.strategy == "cascade":
            from evidex.agents.assigner import Assignment
            from evidex.agents.civic.relevance_gate import assign_by_relevance

            catalog, check = deps.given_claim_rule()
            table = assign_by_relevance(deps.index, state.input.claims, state.input.evidence,
                                        deps.config.judge.keep_rank, catalog=catalog, check=check)
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
    g.add_node("finalize", finalize)
    g.add_edge(START, "assign")
    add_writing(g, deps, "assign", lambda s: ["A", "B"])
    g.add_edge("finalize", END)
    return g.compile(name=deps.config.name)

"""The claim-explainer graph (baseline, missing_evidence, wrong_evidence, mixed, r4c, wrong_claim).

    judge_given -> [gather] -> [stance] -> [write -> verify -> (revise -> verify)] -> finalize
    judge_given -> [gather] -> findings -> [stance] -> write (grounded, checks itself) -> finalize

With the cascade judge, judge_given and gather are model-free gates and ``stance`` labels the kept items: one
call per item (``speed.path: legacy``) or a few batched calls whose prompt prefix the writer then reuses
(``fast``; see graphs/claims/config.py).

Which steps run is set by ``steps:`` in the task's YAML, not by separate graphs.
"""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.grounded import make_findings, make_grounded_write
from evidex.graphs.claims.nodes import (keep_all_given, make_finalize, make_gather, make_judge_given, make_revise,
                                       make_stance, make_verify, make_write, needs_revision)
from evidex.graphs.claims.state import ClaimGraphInput, ClaimGraphOutput, ClaimGraphState


def add_writing(graph: StateGraph, deps: GraphDeps, after: str, claim_keys) -> None:
    """write -> verify -> (revise -> verify) -> finalize, or straight to finalize when writing is off. The
    grounded writer checks its own sentences as it writes, so it goes straight to finalize."""
    steps = deps.config.steps
    if not steps.write:
        graph.add_edge(after, "finalize")
        return
    if deps.config.explain.mode == "grounded":
        if "findings" not in graph.nodes:  # selection/assignment: no stance node needed them earlier
            graph.add_node("findings", make_findings(deps))
            graph.add_edge(after, "findings")
            after = "findings"
        graph.add_node("write", make_grounded_write(deps, claim_keys))
        graph.add_edge(after, "write")
        graph.add_edge("write", "finalize")
        return
    graph.add_node("write", make_write(deps, claim_keys))
    graph.add_edge(after, "write")
    if not steps.verify:
        graph.add_edge("write", "finalize")
        return
    graph.add_node("verify", make_verify(deps))
    graph.add_node("revise", make_revise(deps))
    graph.add_edge("write", "verify")
    graph.add_conditional_edges("verify", lambda s: "revise" if needs_revision(s) else "finalize",
                                {"revise": "revise", "finalize": "finalize"})
    graph.add_edge("revise", "verify")


def build_explainer(deps: GraphDeps):
    steps = deps.config.steps
    g = StateGraph(ClaimGraphState, input_schema=ClaimGraphInput, output_schema=ClaimGraphOutput)
    g.add_node("judge_given", make_judge_given(deps) if steps.judge else keep_all_given)
    g.add_node("finalize", make_finalize(deps))
    g.add_edge(START, "judge_given")
    last = "judge_given"
    if steps.gather:
        g.add_node("gather", make_gather(deps))
        g.add_edge("judge_given", "gather")
        last = "gather"
    if deps.config.explain.mode == "grounded" and steps.write and deps.config.stance_step:
        g.add_node("findings", make_findings(deps))  # the stance call is shown the findings
        g.add_edge(last, "findings")
        last = "findings"
    if deps.config.stance_step:
        g.add_node("stance", make_stance(deps))
        g.add_edge(last, "stance")
        last = "stance"
    add_writing(g, deps, last, lambda s: list(s.input.claims))
    g.add_edge("finalize", END)
    return g.compile(name=deps.config.name)

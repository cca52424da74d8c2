"""The claim-explainer graph (baseline, missing_evidence, wrong_evidence, mixed, r4c, wrong_claim).

    judge_given -> [gather] -> findings -> [stance] -> write -> finalize      (steps.write on)
    judge_given -> [gather] -> [stance] -> finalize                          (decisions only)

With the cascade judge, judge_given and gather are model-free gates; ``stance`` (``judge.llm_stance``) has the
model label the kept items in a few batched calls, shown each item's finding; ``write`` is the grounded writer
(graphs/claims/grounded.py), which checks its own sentences as it writes.

Which steps run is set by ``steps:`` in the task's YAML, not by separate graphs.
"""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.grounded import make_findings, make_grounded_write
from evidex.graphs.claims.nodes import keep_all_given, make_finalize, make_gather, make_judge_given, make_stance
from evidex.graphs.claims.state import ClaimGraphInput, ClaimGraphOutput, ClaimGraphState


def add_writing(graph: StateGraph, deps: GraphDeps, after: str, claim_keys) -> None:
    """[findings ->] write -> finalize, or straight to finalize when writing is off."""
    if not deps.config.steps.write:
        graph.add_edge(after, "finalize")
        return
    if "findings" not in graph.nodes:  # selection/assignment: no stance node needed them earlier
        graph.add_node("findings", make_findings(deps))
        graph.add_edge(after, "findings")
        after = "findings"
    graph.add_node("write", make_grounded_write(deps, claim_keys))
    graph.add_edge(after, "write")
    graph.add_edge("write", "finalize")


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
    if steps.write and deps.config.stance_step:
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

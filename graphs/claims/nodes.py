"""Nodes shared by the claim graphs. Each is a small function ``(state) -> partial update``; model calls live
in ``agents/``, model-free decisions in the configured evidence gate (``agents.evidence_gate``), search in
``tools/``. Built as closures over :class:`GraphDeps`."""
from __future__ import annotations

from collections.abc import Callable

from evidex.agents.evidence_judge import judge_evidence, judge_stances
from evidex.tools.cited_text import parse_citations
from evidex.tools.claims import ClaimPrediction, Evidence, EvidenceDecision
from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.state import ClaimGraphState

KEEP = ("supports", "contradicts")
Node = Callable[[ClaimGraphState], dict]


def kept_decisions(state: ClaimGraphState, claim_key: str | None = None) -> list[EvidenceDecision]:
    out = [d for d in state.decisions if d.kept]
    if claim_key in ("A", "B"):
        out = [d for d in out if d.claim == claim_key]
    return out


def _texts(state: ClaimGraphState) -> dict[str, str]:
    return {**state.retrieved, **{e.id: e.text for e in state.input.evidence}}


def _cascade(items: list[Evidence], gates, source: str) -> list[EvidenceDecision]:
    """Decisions from the relevance gate. Kept items get a provisional "supports" that the stance node refines."""
    return [EvidenceDecision(id=e.id, source=source, label="supports" if g.passed else "irrelevant", reason=g.reason,
                             kept=g.passed, score=g.score) for e, g in zip(items, gates)]


def _model_judged(deps: GraphDeps, state: ClaimGraphState, items: list[Evidence], source: str, name: str,
                  scores: dict[str, float] | None = None) -> list[EvidenceDecision]:
    """Decisions from the model alone (``judge.strategy: llm``): kept when it says supports or contradicts."""
    p = deps.config.prompts
    judged = judge_evidence(deps.llm, state.input.claims, items, evidence_chars=p.evidence_chars,
                            context_chars=p.context_chars, reason_chars=p.reason_chars, name=name)
    return [EvidenceDecision(id=x.id, source=source, label=x.label, reason=x.reason, kept=x.label in KEEP,
                             score=(scores or {}).get(x.id)) for x in judged]


def make_stance(deps: GraphDeps) -> Node:
    """The model labels every kept item supports/contradicts (``judge.llm_stance``, cascade strategy), in batched
    label-only calls shown each item's finding as the grounded writer's prompt shows it; an item keeps the gate's
    reason (the writer replaces it with a checked one)."""
    p, j = deps.config.prompts, deps.config.judge

    def stance(state: ClaimGraphState) -> dict:
        kept = [Evidence(id=e.id, text=state.findings.get(e.id) or e.text) for e in _kept_evidence(state, None)]
        judged = judge_stances(deps.llm, state.input.claims, kept, evidence_chars=4000,
                               context_chars=p.context_chars, batch_size=j.stance_batch_size)
        by_id = {d.id: d for d in state.decisions if d.kept}
        return {"decisions": [by_id[x.id].model_copy(update={"label": x.label}) for x in judged]}
    return stance


def make_judge_given(deps: GraphDeps) -> Node:
    if deps.config.judge.gated:
        deps.require("judge_given", "steps.judge with judge.strategy=cascade")

    def judge_given(state: ClaimGraphState) -> dict:
        evidence = state.input.evidence
        if deps.config.judge.gated:
            gates = deps.gate.judge_given(state.input.claims["claim"], evidence)
            return {"decisions": _cascade(evidence, gates, "given")}
        return {"decisions": _model_judged(deps, state, evidence, "given", "judge_given")}
    return judge_given


def keep_all_given(state: ClaimGraphState) -> dict:
    """Used when judging is switched off: every given item is kept as-is."""
    return {"decisions": [EvidenceDecision(id=e.id, source="given", label="supports", reason="not judged (step off)",
                                           kept=True) for e in state.input.evidence]}


def make_gather(deps: GraphDeps) -> Node:
    cfg = deps.config
    deps.require("gather", "steps.gather")
    if cfg.judge.gated:
        deps.require("judge_candidates", "steps.gather with judge.strategy=cascade")

    def gather(state: ClaimGraphState) -> dict:
        claim = state.input.claims["claim"]
        kept = {d.id for d in state.decisions if d.kept} if state.decisions else None
        found = deps.gate.gather(claim, state.input.evidence, kept_ids=kept, k=cfg.retrieval.k)
        hits = found.hits
        candidates = [Evidence(id=h.id, text=h.text) for h in hits]
        if cfg.judge.gated:
            kept_texts = None if kept is None else {e.id: e.text for e in state.input.evidence if e.id in kept}
            decisions = _cascade(candidates, deps.gate.judge_candidates(claim, hits, kept_texts), "retrieved")
        else:
            decisions = _model_judged(deps, state, candidates, "retrieved", "judge_candidates",
                                      scores={h.id: h.score for h in hits})
        return {"decisions": decisions, "queries": found.queries, "retrieved": {c.id: c.text for c in candidates}}
    return gather


def _scope(deps: GraphDeps, key: str) -> str | None:
    """Assignment explains each claim from its own items; other graphs use all kept evidence."""
    return key if deps.config.graph == "assignment" else None


def _kept_evidence(state: ClaimGraphState, claim_key: str | None) -> list[Evidence]:
    texts = _texts(state)
    return [Evidence(id=d.id, text=texts[d.id]) for d in kept_decisions(state, claim_key) if d.id in texts]


def verdict(decisions: list[EvidenceDecision]) -> bool:
    """Is the claim supported at all? When most given items are on topic and at least one supports it: a single
    stray item that slips through the gate should not make an unsupported claim "supported"."""
    given_dec = [d for d in decisions if d.source == "given"]
    kept_given = [d for d in given_dec if d.kept]
    return bool(given_dec) and len(kept_given) * 2 >= len(given_dec) and any(d.label == "supports" for d in kept_given)


def make_finalize(deps: GraphDeps) -> Node:
    with_verdict = deps.config.steps.verdict

    def finalize_node(state: ClaimGraphState) -> dict:
        return finalize(state, verdict(state.decisions) if with_verdict else None)
    return finalize_node


def finalize(state: ClaimGraphState, supported: bool | None = None) -> dict:
    texts = _texts(state)
    kept = [d.id for d in state.decisions if d.kept]
    given = {e.id for e in state.input.evidence}
    assignment = {d.id: d.claim for d in state.decisions if d.claim is not None}
    pred = ClaimPrediction(
        id=state.input.id, task=state.input.task, decisions=state.decisions, kept_ids=kept,
        added_ids=[d.id for d in state.decisions if d.kept and d.source == "retrieved"],
        discarded_ids=[d.id for d in state.decisions if d.source == "given" and not d.kept and d.id in given],
        explanations=state.explanations,
        cited_ids={k: parse_citations(v) for k, v in state.explanations.items()},
        selected_claim=state.selected_claim, assignment=assignment, supported=supported,
        queries=state.queries, verification=state.verification,
        evidence_texts={i: texts[i] for i in kept if i in texts},
    )
    return {"prediction": pred}

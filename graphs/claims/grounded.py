"""Nodes of the grounded writing path (``explain.mode: grounded``; agents/grounded_writer.py).

    findings  each kept item's and each discarded given item's finding: the span of its own text that says most
              about the claim (tools/findings.py), a short one for its reason and a longer one for the
              explanation, from one embedding call per item
    [stance]  the shared stance node, shown the findings instead of whole evidence texts (graphs/claims/nodes.py)
    write     every reason rewritten as one finished sentence (label + finding; the gate's note kept as
              ``basis``), then per claim: the verdict, the model's checked "why" sentences, findings to fill
"""
from __future__ import annotations

from collections.abc import Callable

from evidex.agents.grounded_writer import (compose, reason_sentence, safe_why, unsupported_explanation, verdict_of,
                                           verdict_phrase, write_why)
from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.nodes import Node, _scope, _texts, kept_decisions, verdict
from evidex.graphs.claims.state import ClaimGraphState
from evidex.tools.claims import Evidence, EvidenceDecision
from evidex.tools.findings import findings_within


def _shown(state: ClaimGraphState) -> list[EvidenceDecision]:
    """The decisions a reader sees: kept items and discarded given ones (retrieved candidates left out were never
    evidence)."""
    return [d for d in state.decisions if d.kept or d.source == "given"]


def make_findings(deps: GraphDeps) -> Node:
    short, long = deps.config.explain.finding_words, deps.config.explain.sentence_words

    def findings(state: ClaimGraphState) -> dict:
        texts = _texts(state)
        wanted = {d.id: texts[d.id] for d in _shown(state) if d.id in texts}
        claim = " ".join(c.text for c in state.input.claims.values())
        found = findings_within(claim, wanted, deps.embedder, (short, long))
        return {"findings": found[short], "long_findings": found[long]}
    return findings


def finding_evidence(state: ClaimGraphState, items: list[Evidence]) -> list[Evidence]:
    """``items`` with their finding as text (the whole text when an item has none)."""
    return [Evidence(id=e.id, text=state.findings.get(e.id) or e.text) for e in items]


def _strongest_first(decisions: list[EvidenceDecision]) -> list[EvidenceDecision]:
    """Given items before retrieved ones (the user chose them), each group by the gate's score when it has one."""
    def key(d: EvidenceDecision) -> tuple:
        return (d.source != "given", -(d.score if d.score is not None else 0.0))
    return sorted(decisions, key=key)


def make_grounded_write(deps: GraphDeps, claim_keys: Callable[[ClaimGraphState], list[str]]) -> Node:
    cfg = deps.config
    x, p = cfg.explain, cfg.prompts

    def write(state: ClaimGraphState) -> dict:
        texts = _texts(state)
        reasons = [d.model_copy(update={"reason": reason_sentence(d, state.findings.get(d.id)),
                                        "basis": d.basis or d.reason}) for d in _shown(state)]
        explanations, records = {}, {}
        if cfg.steps.verdict and not verdict(state.decisions):  # wrong_claim: the claim itself is rejected
            given = [d for d in state.decisions if d.source == "given"]
            for key in claim_keys(state):
                written = unsupported_explanation(state.input.claims[key].text, sum(d.kept for d in given), len(given))
                explanations[key], records[key] = written.text, written.record()
            return {"decisions": reasons, "explanations": explanations, "verification": records}
        for key in claim_keys(state):
            kept = _strongest_first(kept_decisions(state, _scope(deps, key)))
            labels = {d.id: d.label for d in kept}
            order = [d.id for d in kept]
            claim = state.input.claims[key]
            why, failure = [], None
            if kept and x.why_sentences:
                # the short findings (the reasons'): a smaller prompt, and the model cannot copy whole sentences
                shown = [Evidence(id=i, text=state.findings[i]) for i in order if i in state.findings]
                shown = shown[: x.findings_shown]
                supporting = [i for i in order if labels[i] == "supports"]
                contradicting = [i for i in order if labels[i] == "contradicts"]
                phrase = verdict_phrase(verdict_of(list(labels.values())), supporting, contradicting)
                if shown:
                    why, failure = safe_why(lambda: write_why(
                        deps.llm, {key: claim}, shown, verdict=phrase, n=x.why_sentences, words=x.why_words,
                        context_chars=p.context_chars, max_tokens=x.why_tokens, style=deps.style,
                        name=f"write_why[{key}]"))
            written = compose(claim.text, labels, order, state.long_findings, why, sentences=x.sentences,
                              labels_texts=texts, judge=deps.support_judge)
            explanations[key] = written.text
            records[key] = {**written.record(), **({"why_failed": failure} if failure else {})}
        return {"decisions": reasons, "explanations": explanations, "verification": records}
    return write

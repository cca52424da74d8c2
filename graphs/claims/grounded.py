"""Nodes of the grounded writing path (agents/grounded_writer.py), the one way the claim graphs write.

    findings  each kept item's and each discarded given item's finding: the span of its own text that says most
              about the claim (tools/findings.py), one the model is shown and a longer one for the explanation,
              from one embedding call per item
    [stance]  the shared stance node, shown the findings instead of whole evidence texts (graphs/claims/nodes.py)
    write     per claim, one grammar-bound call for the reasons of all its kept items, each checked by code; the
              items whose fact failed are asked once more, alone and with a steeper penalty on retelling (what
              fails again falls back to an honest short reason); each discarded given item named by code (what it
              is about instead, and the known claim it fits); then the explanation: the verdict, what the
              strongest items show, how strong and consistent the evidence is, and what the claim's subject is when
              the claim's context summarises it
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from evidex.agents.grounded_writer import (EXPLANATION_SENTENCES, FINDING_WORDS, FINDINGS_SHOWN, REASON_WORDS,
                                           RETELLING_AGAIN, SENTENCE_WORDS, Reason, background_of, compose,
                                           dropped_reason, kept_reason, safe_reasons, shown_item,
                                           unsupported_explanation, write_reasons)
from evidex.graphs.claims.deps import GraphDeps
from evidex.graphs.claims.nodes import Node, _scope, _texts, kept_decisions, verdict
from evidex.graphs.claims.state import ClaimGraphState
from evidex.tools.claims import Claim, Evidence, EvidenceDecision
from evidex.tools.findings import findings_within


def _shown(state: ClaimGraphState) -> list[EvidenceDecision]:
    """The decisions a reader sees: kept items and discarded given ones (retrieved candidates left out were never
    evidence)."""
    return [d for d in state.decisions if d.kept or d.source == "given"]


def make_findings(deps: GraphDeps) -> Node:
    short, long = FINDING_WORDS, SENTENCE_WORDS

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


def _merged(claims: list[Claim]) -> Claim:
    """Several claims read as one, for checking what an item set aside by all of them is about."""
    context: dict[str, str] = {}
    for c in claims:
        for k, v in c.context.items():
            context[k] = f"{context[k]} {v}" if k in context else v
    return Claim(text=" ".join(c.text for c in claims), context=context)


def make_grounded_write(deps: GraphDeps, claim_keys: Callable[[ClaimGraphState], list[str]]) -> Node:
    cfg = deps.config

    def write(state: ClaimGraphState) -> dict:
        texts = _texts(state)

        def facts(key: str, claim: Claim, items: list[EvidenceDecision], call: str,
                  **how) -> tuple[dict[str, str], str | None]:
            """The model's key facts for ``items`` (shown as their findings) from one call, or why there are none."""
            shown = [shown_item(d.id, state.findings.get(d.id), texts[d.id]) for d in items]
            return safe_reasons(lambda: write_reasons(deps.llm, {key: claim}, shown, words=REASON_WORDS,
                                                      name=f"{call}[{key}]", **how))
        keys = claim_keys(state)
        dropped = [d for d in state.decisions if d.source == "given" and not d.kept]
        reasons: dict[str, Reason] = {}
        records: dict = {}
        explanations: dict[str, str] = {}
        rejected = cfg.steps.verdict and not verdict(state.decisions)  # wrong_claim: the claim itself is rejected
        for n, key in enumerate(keys):
            claim = state.input.claims[key]
            kept = _strongest_first(kept_decisions(state, _scope(deps, key)))
            asked = [d for d in kept if d.id in texts][:FINDINGS_SHOWN]
            written, failure = facts(key, claim, asked, "write_reasons") if asked else ({}, None)
            for d in kept:
                reasons[d.id] = kept_reason(d, written.get(d.id), texts.get(d.id, ""), claim)
            again = [d for d in asked if reasons[d.id].source == "fallback" and d.id in written]
            refailure = None
            if again:
                rewritten, refailure = facts(key, claim, again, "rewrite_reasons", sampling=RETELLING_AGAIN)
                for d in again:
                    second = kept_reason(d, rewritten.get(d.id), texts[d.id], claim)
                    if second.source == "model":
                        reasons[d.id] = replace(second, retried=True)
            if n == 0 and dropped:
                about_claim = _merged([state.input.claims[k] for k in keys]) if len(keys) > 1 else claim
                owners = deps.gate.owners(claim, [d.id for d in dropped]) if len(keys) == 1 else {}
                for d in dropped:
                    reasons[d.id] = dropped_reason(texts.get(d.id, ""), about_claim, owners.get(d.id))
            labels = {d.id: d.label for d in kept}
            order = [d.id for d in kept]
            if rejected:
                given = [d for d in state.decisions if d.source == "given"]
                composed = unsupported_explanation(claim.text, sum(d.kept for d in given), len(given))
            else:
                composed = compose(claim.text, labels, order, reasons, state.long_findings, sentences=EXPLANATION_SENTENCES,
                                   texts=texts, judge=deps.support_judge, background=background_of(claim.context))
            explanations[key] = composed.text
            records[key] = {**composed.record(), **({"reasons_failed": failure} if failure else {}),
                            **({"second_reasons_failed": refailure} if refailure else {})}
        records["reasons"] = {i: r.record() for i, r in reasons.items()}
        decisions = [d.model_copy(update={"reason": reasons[d.id].text, "basis": d.basis or d.reason})
                     for d in _shown(state) if d.id in reasons]
        return {"decisions": decisions, "explanations": explanations, "verification": records}
    return write

"""The grounded writer: an explanation built from the decisions, so it cannot contradict them.

    verdict   what the kept items add up to (supported / refuted / mixed / not enough evidence), stated first
              with the ids behind it; a template over the labels, no model
    why       the model says in a sentence or two why the findings add up to that verdict, citing ids (the
              schema allows only kept ids); it sees each kept item's finding (its own words, ``tools.findings``)
    check     a model sentence stays only when it is finished, the side it takes (keyword cues, read against
              the claim) is the label of every id it cites, it does not cite both sides, and the support judge
              accepts it against the full text of what it cites; anything else is dropped, never patched
    findings  the explanation is filled up to ``sentences`` with the findings of the kept items, verbatim, one
              per sentence: strongest first, those the model did not cite before those it did

Every kept or discarded item also gets a reason that is one finished sentence: its label and its finding
(:func:`reason_sentence`), instead of a model reply cut at a token cap.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, Field, create_model

from evidex.agents.claim_prompt import PromptStyle, messages
from evidex.agents.prompts import render
from evidex.agents.structured import StructuredOutputError, call_structured
from evidex.tools.cited_text import is_complete_sentence, sentence_stance, strip_citations
from evidex.tools.claims import Claim, Evidence, EvidenceDecision

Verdict = Literal["supported", "refuted", "mixed", "not enough evidence"]
Judge = Callable[[str, list[str]], bool]  # (sentence without citations, cited texts) -> supported?
MAX_VERDICT_IDS = 6  # a longer list of ids reads as noise; the findings cite the rest
MAX_SENTENCE_WORDS = 40


def verdict_of(labels: Sequence[str]) -> Verdict:
    sup, con = labels.count("supports"), labels.count("contradicts")
    if sup and con:
        return "mixed"
    if con:
        return "refuted"
    return "supported" if sup else "not enough evidence"


def _claim_clause(text: str) -> str:
    """The claim as the object of "the claim that ...": a plain capitalised first word is lower-cased, a gene or
    variant name ("HER2", "R167Q") is left alone."""
    text = " ".join(text.split()).rstrip(" .")
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower() and first.isalpha():
        text = first.lower() + text[len(first):]
    return text


def _cite(ids: Sequence[str]) -> str:
    return f"[{', '.join(ids[:MAX_VERDICT_IDS])}]"


def verdict_sentences(claim: str, supporting: Sequence[str], contradicting: Sequence[str]) -> list[str]:
    """The opening: the verdict and the ids behind it (one side per sentence, so no sentence cites both)."""
    clause = _claim_clause(claim)
    verdict = verdict_of(["supports"] * len(supporting) + ["contradicts"] * len(contradicting))
    if verdict == "supported":
        return [f"The evidence supports the claim that {clause} {_cite(supporting)}."]
    if verdict == "refuted":
        return [f"The evidence contradicts the claim that {clause} {_cite(contradicting)}."]
    if verdict == "mixed":
        return [f"The evidence on the claim that {clause} is mixed.",
                f"{_count(len(supporting))} support it {_cite(supporting)}.",
                f"{_count(len(contradicting))} contradict it {_cite(contradicting)}."]
    return [f"There is not enough evidence for the claim that {clause}: no item was kept as evidence for it."]


def _count(n: int) -> str:
    return "One item" if n == 1 else f"{n} items"


# -- reasons --------------------------------------------------------------------------------------------------
REASON_LEADS = {"supports": "Supports the claim", "contradicts": "Contradicts the claim",
                "irrelevant": "Not about this claim"}
REASON_WORDS = 25  # a reason is a lead of at most 4 words and a finding of at most 21


def reason_sentence(decision: EvidenceDecision, finding: str | None) -> str:
    """One finished sentence: the decision and, when there is one, the item's finding in its own words."""
    lead = REASON_LEADS.get(decision.label, "Set aside")
    if not finding:
        return f"{lead}."
    return f"{lead}: {finding.rstrip(' .;:')}."


# -- the model's "why" ----------------------------------------------------------------------------------------
def why_schema(ids: list[str], n: int, max_chars: int = 220) -> type[BaseModel]:
    # the grammar closes the string at max_chars: a rambling sentence ends cut (and the check drops it) instead
    # of running into the token cap and costing a whole second call
    sentence = create_model("WhySentence", text=(str, Field(min_length=10, max_length=max_chars)),
                            ids=(list[Literal[tuple(ids)]], Field(min_length=1, max_length=4)))  # type: ignore[misc]
    return create_model("Why", sentences=(list[sentence], Field(min_length=1, max_length=n)))


def verdict_phrase(verdict: Verdict, supporting: Sequence[str], contradicting: Sequence[str]) -> str:
    sup = ", ".join(f"[{i}]" for i in supporting) or "none"
    con = ", ".join(f"[{i}]" for i in contradicting) or "none"
    return f"{verdict} (supporting: {sup}; contradicting: {con})"


def write_why(llm: BaseChatModel, claims: dict[str, Claim], findings: list[Evidence], *, verdict: str, n: int,
              words: int, context_chars: int, max_tokens: int, style: PromptStyle,
              name: str = "write_why") -> list[tuple[str, list[str]]]:
    """The model's ``n`` sentences (text, cited ids) on why the findings add up to ``verdict``. A sentence the
    grammar closed at its length cap was cut, whatever its last word: it comes back marked with ``CUT``."""
    task = render(style.write, verdict=verdict, n=n, words=words).strip()
    # same layout as the stance call over findings (graphs/claims/nodes.py), so llama.cpp reuses its prefix
    msgs = messages(claims, findings, task, evidence_chars=4000, context_chars=context_chars, system=style.system)
    # no repair round: an unusable reply costs the explanation one sentence, not a second call
    max_chars = words * 7
    result = call_structured(llm, why_schema([f.id for f in findings], n, max_chars=max_chars), msgs, name=name,
                             max_tokens=max_tokens, repair=False)
    return [(CUT + s.text if len(s.text) >= max_chars - 1 else s.text, list(dict.fromkeys(s.ids)))
            for s in result.sentences]


CUT = "\x00cut\x00"  # marks a model sentence that reached its length cap (never in model text: JSON strips NUL)


# -- the check ------------------------------------------------------------------------------------------------
def sentence_problem(text: str, ids: Sequence[str], labels: Mapping[str, str], claim: str,
                     judge: Judge | None, texts: Mapping[str, str]) -> str | None:
    """Why a model sentence cannot stay (None: it stays)."""
    if text.startswith(CUT) or not is_complete_sentence(text, max_words=MAX_SENTENCE_WORDS):
        return "not a finished sentence"
    sides = {labels.get(i) for i in ids} & {"supports", "contradicts"}
    stance = sentence_stance(text, claim)
    if stance != "neutral" and len(sides) > 1:
        return "cites evidence on both sides while taking one"
    if stance != "neutral" and sides and stance not in sides:
        return f"reads as '{stance}' but cites items labelled '{sides.pop()}'"
    if judge is not None and not judge(text, [texts[i] for i in ids if i in texts]):
        return "not supported by the evidence it cites"
    return None


@dataclass
class GroundedExplanation:
    text: str
    sentences: list[dict] = field(default_factory=list)  # every sentence written or considered, with its fate
    verdict: Verdict = "not enough evidence"

    def record(self) -> dict:
        kept = [s for s in self.sentences if s["kept"]]
        return {"ok": True, "verdict": self.verdict, "problems": [], "sentences": self.sentences,
                "model_sentences": sum(s["source"] == "model" for s in self.sentences),
                "model_sentences_kept": sum(s["source"] == "model" for s in kept)}


def unsupported_explanation(claim: str, kept: int, given: int) -> GroundedExplanation:
    """The claim-level verdict said no (``steps.verdict``: too few of the given items are about the claim): one
    sentence saying so, citing nothing, so no finding reads as support for a claim the graph rejects."""
    text = (f"The evidence does not support the claim that {_claim_clause(claim)}: only {kept} of the {given} "
            f"given items are about it.")
    return GroundedExplanation(text=text, sentences=[{"text": text, "source": "verdict", "kept": True}],
                               verdict="not enough evidence")


def compose(claim: str, labels: Mapping[str, str], order: Sequence[str], findings: Mapping[str, str],
            why: Sequence[tuple[str, list[str]]], *, sentences: int, labels_texts: Mapping[str, str],
            judge: Judge | None) -> GroundedExplanation:
    """Verdict, the model sentences that pass the check, then findings up to ``sentences`` in all.
    ``order``: the kept ids, strongest first; ``labels_texts``: full evidence texts, for the support judge."""
    supporting = [i for i in order if labels.get(i) == "supports"]
    contradicting = [i for i in order if labels.get(i) == "contradicts"]
    opening = verdict_sentences(claim, supporting, contradicting)
    record = [{"text": s, "source": "verdict", "kept": True} for s in opening]
    body: list[str] = []
    cited: set[str] = set()
    for text, ids in why:
        cut = text.startswith(CUT)
        text = " ".join(strip_citations(text.removeprefix(CUT)).split()).rstrip()  # ids go in the citation group
        text = text if text.endswith((".", "!", "?")) else text + "."
        problem = "cut at the length cap" if cut else sentence_problem(text, ids, labels, claim, judge, labels_texts)
        record.append({"text": text, "ids": ids, "source": "model", "kept": problem is None, "problem": problem})
        if problem is None:
            body.append(f"{text[:-1].rstrip()} [{', '.join(ids)}].")
            cited.update(ids)
    room = max(0, sentences - len(opening) - len(body))
    # items the model did not cite come first; then the cited ones, whose finding adds the concrete detail
    for item_id in [i for i in order if i not in cited and i in findings] + [i for i in order if i in cited
                                                                              and i in findings]:
        if room == 0:
            break
        finding = findings[item_id]
        text = f"{finding[:1].upper()}{finding[1:]} [{item_id}]."
        # a finding worded against its own label (a "supports" item whose best span mentions resistance to
        # another drug) would read as a contradiction: the next finding is used instead
        problem = sentence_problem(text, [item_id], labels, claim, None, labels_texts)
        record.append({"text": text, "ids": [item_id], "source": "finding", "kept": problem is None,
                       "problem": problem})
        if problem is None:
            body.append(text)
            room -= 1
    return GroundedExplanation(text=" ".join(opening + body), sentences=record,
                               verdict=verdict_of([labels[i] for i in order if i in labels]))


def safe_why(call: Callable[[], list[tuple[str, list[str]]]]) -> tuple[list[tuple[str, list[str]]], str | None]:
    """The model's sentences, or none and the reason when its reply never fit the schema: the explanation is
    then the verdict and the findings, rather than an item error."""
    try:
        return call(), None
    except StructuredOutputError as exc:
        return [], f"model reply unusable: {str(exc)[:160]}"

"""The grounded writer: reasons that are reasons, and an explanation built from them that cannot contradict the
decisions.

    reasons      one grammar-bound call per claim: for every kept item (up to 16) its key fact in the model's own
                 words ("<design, patients>: <result with the item's numbers>"); the model sees the claim and each
                 item's design (``tools.evidence_design``) and finding (``tools.findings``), never whole texts.
                 Code links the fact to the claim from the item's label and the claim's own words ("<fact>, which
                 supports the claim that <claim>"), so no reason draws a conclusion the decision did not; when only
                 the fact's lead states a design or a count the item does not, code restates the lead as the
                 item's stated design. (The model wrote its own link until run 20261202-101808-mixed: as often a
                 boilerplate or a wrong inference as a reason, and a third of its output tokens.) A given item set
                 aside is named by code: the variant, gene, drug or disease of its own text that the claim never
                 uses, and the known claim it fits
    check        each reason is checked by code (``tools.reasons``): a finished sentence, every number and name it
                 states is in the evidence (or the claim), it names the claim's entity, its fact is not an evidence
                 sentence retold, and its fact's side (keyword cues) is the item's label; what fails falls back to an
                 honest short reason that says so
    verdict      what the kept items add up to (supported / refuted / mixed / not enough evidence), first, with
                 how consistent they are ("All 4 kept items ... support"), how many report clinical and how many
                 preclinical studies, and the ids behind it; a template over the labels and designs, no model
    explanation  the verdict; what the claim's subject is, from the claim's own context when it summarises it
                 (two sentences at most, naming that source instead of an id); what the strongest kept evidence
                 shows (the checked reasons of the strongest items, strongest design first, with their numbers);
                 every evidence sentence cites ids, and a sentence whose side
                 is not the label of every id it cites is never written. (A closing strength sentence naming the
                 designs was tried and dropped: its framing words fail the overlap support judge, sentence support
                 0.944 -> 0.883 on a 16-item dev run, for no gain in similarity or completeness.)
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field, create_model

from evidex.agents.claim_prompt import REASONS, REASONS_EXAMPLE, messages, with_example
from evidex.agents.prompts import render
from evidex.agents.structured import StructuredOutputError, call_structured
from evidex.tools.cited_text import is_complete_sentence, sentence_stance, split_sentences, strip_citations
from evidex.tools.claims import Claim, Evidence, EvidenceDecision
from evidex.tools.evidence_design import design_of, strength
from evidex.tools.reasons import (COPY, LEAD_WORDS, MAX_REASON_WORDS, UNBACKED, copies_sentence, evidence_spelling,
                                  kept_reason_problem, other_phrases)

Verdict = Literal["supported", "refuted", "mixed", "not enough evidence"]
Judge = Callable[[str, list[str]], bool]  # (sentence without citations, cited texts) -> supported?
MAX_VERDICT_IDS = 6  # a longer list of ids reads as noise; the reasons cite the rest
MAX_SENTENCE_WORDS = 40
# Budgets of the grounded path (fixed: they were settings that no run changed; issue 51 cut the settings)
REASON_WORDS = 20  # the longest key fact the model is asked for (its schema caps it at 9 characters a word)
FINDING_WORDS = 30  # the finding the model is shown per item
SENTENCE_WORDS = 45  # a finding used as an explanation sentence when an item has no checked reason
EXPLANATION_SENTENCES = 5  # at most, the verdict first (the 3-5; the gold explanations are syntheses)
BACKGROUND_SENTENCES = 2  # at most, from the claim's own summary of its subject (what the variant is), when it has one
FINDINGS_SHOWN = 16  # kept items the model writes reasons for (strongest first); the rest get the fallback reason


def verdict_of(labels: Sequence[str]) -> Verdict:
    sup, con = labels.count("supports"), labels.count("contradicts")
    if sup and con:
        return "mixed"
    if con:
        return "refuted"
    return "supported" if sup else "not enough evidence"


def _claim_clause(text: str) -> str:
    """The claim as the object of "the claim that ...": a plain capitalised first word is lower-cased ("The
    actress ...", "Patients with ..."); a gene or variant name ("HER2", "R167Q") or the first word of a name of
    several words ("Eenasul Fateh ...", "Art Laboe and ...") is left alone."""
    text = " ".join(text.split()).rstrip(" .")
    first, _, rest = text.partition(" ")
    name = rest[:1].isupper() and first.lower() not in _ARTICLES
    if first[:1].isupper() and first[1:].islower() and first.isalpha() and not name:
        text = first.lower() + text[len(first):]
    return text


_ARTICLES = frozenset({"the", "a", "an", "this", "these", "those", "that", "its", "their", "in", "on", "at", "of"})


def _cite(ids: Sequence[str]) -> str:
    return f"[{', '.join(ids[:MAX_VERDICT_IDS])}]"


def verdict_sentences(claim: str, supporting: Sequence[str], contradicting: Sequence[str],
                      kinds: str = "") -> list[str]:
    """The opening: the verdict, how many items are behind it and the ids (one side per sentence, so no sentence
    cites both). ``kinds``: how the items split between clinical and preclinical ("2 clinical, 1 preclinical")."""
    clause = _claim_clause(claim)
    verdict = verdict_of(["supports"] * len(supporting) + ["contradicts"] * len(contradicting))
    split = f" ({kinds})" if kinds else ""
    if verdict == "supported":  # the claim first, as a reader states a finding, then what backs it
        who = f"all {len(supporting)} kept items{split} support this" if len(supporting) > 1 else \
            f"the one kept item{split} supports this"
        return [f"{clause[:1].upper()}{clause[1:]}: {who} {_cite(supporting)}."]
    if verdict == "refuted":
        who = f"All {len(contradicting)} kept items{split} contradict" if len(contradicting) > 1 else \
            f"The one kept item{split} contradicts"
        return [f"{who} the claim that {clause} {_cite(contradicting)}."]
    if verdict == "mixed":
        return [f"The evidence on the claim that {clause} is mixed{split}.",
                f"{_count(len(supporting))} support it {_cite(supporting)}.",
                f"{_count(len(contradicting))} contradict it {_cite(contradicting)}."]
    return [f"There is not enough evidence for the claim that {clause}: no item was kept as evidence for it."]


def kinds_of(texts: Sequence[str]) -> str:
    """How many of ``texts`` report clinical and how many preclinical studies ("2 clinical, 1 preclinical");
    empty when none states a design."""
    designs = [d for t in texts if (d := design_of(t)) is not None]
    clinical = sum(d.clinical for d in designs)
    parts = [f"{clinical} clinical" if clinical else "", f"{len(designs) - clinical} preclinical"
             if len(designs) > clinical else ""]
    return ", ".join(p for p in parts if p)


def _count(n: int) -> str:
    return "One item" if n == 1 else f"{n} items"


# -- what the model is shown ----------------------------------------------------------------------------------
def shown_item(item_id: str, finding: str | None, text: str) -> Evidence:
    """An item as the reasons call shows it: its design, when its text states one, then its finding (the whole
    text when it has none)."""
    design = design_of(text)
    body = (finding or text).rstrip(" .")
    return Evidence(id=item_id, text=f"{design.name}: {body}" if design else body)


# -- the reasons call -----------------------------------------------------------------------------------------
def reasons_schema(kept: list[str], reason_chars: int) -> type[BaseModel]:
    """A JSON object with one required key per kept id, in order, each a reason. The grammar closes each string
    at its length cap."""
    fields = {f"k{i}": (str, Field(alias=eid, min_length=8, max_length=reason_chars)) for i, eid in enumerate(kept)}
    return create_model("Reasons", __config__=ConfigDict(populate_by_name=True), **fields)


# Decoding that keeps the model from retelling an item's sentence: llama.cpp's DRY sampler lowers a token that
# would extend a run of more than 6 tokens already in the prompt, more steeply the longer the run (a name or a
# number stays within it). The words it then bends are spelled as the item spells them (``evidence_spelling``).
# Stronger settings, tried on R4C windows of 50 items (kept-item reasons passing today's check; 0.8/6 first):
# multiplier 2.0: 0-49 126 -> 118 of 150, 50-99 113 -> 122 of 147, 100-149 115 -> 115 of 150 (a tie: 354 -> 355);
# multiplier 3.5 on 50-99: 117; runs of more than 4 tokens on 100-149: 118, with item ids written as years.
NO_RETELLING = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 6, "dry_penalty_last_n": 8192}
# The second decode, for the items whose fact did not stand (a retold sentence, a fact the item does not state,
# the claim's entity missing): only those items are shown, with a steeper penalty on retelling.
RETELLING_AGAIN = {**NO_RETELLING, "dry_multiplier": 2.0}

CUT = "\x00cut\x00"  # marks a model text that reached its length cap (never in model text: JSON strips NUL)


def write_reasons(llm: BaseChatModel, claims: dict[str, Claim], kept: list[Evidence], *, words: int,
                  name: str = "write_reasons", sampling: Mapping[str, float] = NO_RETELLING) -> dict[str, str]:
    """Key facts by kept id from one call; a text the grammar closed at its cap comes back marked with ``CUT``.
    The model sees the claim without its context fields: on the 8 mixed items with the most fallbacks, a
    variant summary under the claim made it retell item sentences (25 of 58 reasons failed the check, 17 of them
    copies, against 13 and 9 without it) and cost 12% more prompt tokens.
    Items are shown and keyed by their ids: numbered 1..N instead (fewer key tokens; run 20261202-145737-mixed,
    0.82x the main command's time), the model moved facts between neighbouring items (24 facts the item does not
    state, against 5). Raises :class:`StructuredOutputError` when the reply never fits the schema."""
    kept_ids = [e.id for e in kept]
    task = render(REASONS, words=words).strip()
    msgs = with_example(messages(claims, kept, task, evidence_chars=4000, context_chars=0), REASONS_EXAMPLE)
    reason_chars = words * 9  # bounds a runaway reply; the check holds a reason to MAX_REASON_WORDS
    schema = reasons_schema(kept_ids, reason_chars)
    # the grammar caps every string; at least one token per 3 characters of each, plus its key and quotes
    max_tokens = 24 + len(kept_ids) * (reason_chars // 3 + 10)
    result = call_structured(llm, schema, msgs, name=name, max_tokens=max_tokens, repair=False,
                             llama_sampling=dict(sampling))

    def marked(text: str) -> str:
        text = " ".join(text.split())
        return CUT + text if len(text) >= reason_chars - 1 else text
    return {eid: marked(getattr(result, f"k{i}")) for i, eid in enumerate(kept_ids)}


def safe_reasons(call: Callable[[], dict[str, str]]) -> tuple[dict[str, str], str | None]:
    """The model's reasons, or none and the reason when its reply never fit the schema: every item then gets its
    honest fallback reason, rather than an item error."""
    try:
        return call(), None
    except StructuredOutputError as exc:
        return {}, f"model reply unusable: {str(exc)[:160]}"


# -- reasons --------------------------------------------------------------------------------------------------
LABEL_WORDS = {"supports": "supporting", "contradicts": "contrary"}


@dataclass
class Reason:
    """The reason shown for one decision, where it came from (the model's checked text, the honest fallback for a
    kept item, or code naming what a set-aside item is about) and, for a model text that did not stand, why.
    ``fact``: when code wrote the link to the claim, the model's key fact alone (the explanation uses a supporting
    item's fact, :func:`fact_of`, since its verdict has already named the claim)."""

    text: str
    source: Literal["model", "fallback", "code"]
    problem: str | None = None
    written: str | None = None  # the model's text when it did not stand (for the run's record)
    fact: str | None = None
    retried: bool = False  # the model's fact came from the second decode (``RETELLING_AGAIN``)

    def record(self) -> dict:
        return {"source": self.source, **({"retried": True} if self.retried else {}),
                **({"problem": self.problem} if self.problem else {}),
                **({"written": self.written} if self.written and self.source == "fallback" else {})}


def _finish(text: str) -> str:
    text = " ".join(strip_citations(text).split()).rstrip(" ;:,")
    if text and not text.endswith((".", "!", "?")):
        text += "."
    return text[:1].upper() + text[1:]


def _claim_forms(claim: str) -> tuple[str, str]:
    """A claim as a clause (:func:`_claim_clause`), in full and without its asides (bracketed parts, and what
    follows its first comma), for a reason that must stay within ``MAX_REASON_WORDS``."""
    clause = _claim_clause(claim)
    return clause, re.sub(r"\s*\([^)]*\)", "", clause).split(", ")[0]


def _within_cap(sentences: Sequence[str]) -> str:
    """The first of ``sentences`` (longest first) within ``MAX_REASON_WORDS``, else the last."""
    return next((t for t in sentences if len(t.split()) <= MAX_REASON_WORDS), sentences[-1])


LINKS = {"supports": "which supports the claim that", "contradicts": "which goes against the claim that"}


def linked(fact: str, label: str, claim: str) -> str:
    """The reason: the item's key fact, then how it bears on the claim, written by code from the item's label and
    the claim's own words (the claim in full, else without its asides, else "the claim" alone: whichever keeps
    the reason within ``MAX_REASON_WORDS``; a fact that then names none of the claim's names fails the check)."""
    fact = _finish(fact)[:-1].rstrip(" ,;:")
    link = LINKS.get(label, "which bears on the claim that")
    forms = [f"{fact}, {link} {c}." for c in _claim_forms(claim)]
    return _within_cap([*forms, f"{fact}, {link.removesuffix(' that')}."])


# A link of the model's own, when it writes one against the prompt ("<fact>, so <what it shows>"): it is dropped,
# code writes the link (a "which" or "indicating" clause stays: it carries facts)
_SO_LINK = re.compile(r",\s*(?:so|thus)\b", re.I)


def _problem(text: str, fact: str, label: str, evidence: str, claim: Claim) -> str | None:
    """Why ``text``, a kept item's reason whose own words (the model's) are ``fact``, cannot stand (None: it can)."""
    if problem := kept_reason_problem(text, evidence, claim.text, claim.context):
        return problem
    if copies_sentence(fact, evidence):
        return COPY
    stance = sentence_stance(fact, claim.text)
    return f"reads as '{stance}' but the item is labelled '{label}'" if stance not in ("neutral", label) else None


def fact_of(reason: str) -> str:
    """A reason's key fact, without the link to the claim it ends with ("<fact>, so <what it shows>": the last
    "so" or "thus"; a "which" or "indicating" clause carries facts, "Old Trafford is part of Stretford, which is in
    Greater Manchester"); the whole reason when it has no such link or the part before it is under four words."""
    links = list(_SO_LINK.finditer(reason))
    head = reason[: links[-1].start()] if links else reason
    return _finish(head) if head != reason and len(head.split()) >= 4 else reason


def kept_reason(decision: EvidenceDecision, written: str | None, evidence: str, claim: Claim) -> Reason:
    """The reason for a kept item: the model's key fact, linked to the claim by code, when it passes the check;
    else an honest short reason.

    The model writes the item's key fact, "<design, patients>: <result with the item's numbers>" (decoded with a
    penalty on retelling the item's sentences, ``NO_RETELLING``; its words spelt as the item spells them); code
    writes how it bears on the claim from the item's label and the claim's own words (:func:`linked`), so a reason never
    draws a conclusion the decision did not. The whole reason is then checked (no fact the evidence does not
    state, the claim's entity named, not one evidence sentence retold word for word, not the other side); when
    only its lead states what the evidence does not ("Phase 3, 469 patients:" for a trial of another size), the
    lead is restated as the design the item's text states, or dropped."""
    problem = "no reason written"
    if written:
        text = evidence_spelling(_finish(written.removeprefix(CUT)), f"{evidence} {claim.text}")
        if written.startswith(CUT):
            problem = "cut at the length cap"
        else:
            reason, problem = _standing(text, decision.label, evidence, claim)
            if reason is None and problem.startswith(UNBACKED) and (lead := _restated_lead(text, evidence)):
                reason = _standing(lead, decision.label, evidence, claim)[0]
            if reason is not None:
                return reason
    return Reason(fallback_reason(decision, evidence), "fallback", problem,
                  written.removeprefix(CUT) if written else None)


def _standing(text: str, label: str, evidence: str, claim: Claim) -> tuple[Reason | None, str]:
    """The model's fact ``text`` (any link of its own dropped) linked to the claim, as a reason that stands; else
    None and why not."""
    fact = fact_of(text)
    reason = linked(fact, label, claim.text)
    problem = _problem(reason, fact, label, evidence, claim)
    return (Reason(reason, "model", fact=_finish(fact)), "") if problem is None else (None, problem)


_LEAD = re.compile(r"^([^:]{1,60}):\s+(?=\S)")  # "Phase 3, 469 patients: ..." (the prompt's "<design, patients>:")


def _restated_lead(text: str, evidence: str) -> str | None:
    """``text`` with its lead ("<design, patients>:") replaced by the design the item's text states, or dropped
    when it states none; None when ``text`` has no such lead."""
    match = _LEAD.match(text)
    if not match or len(match.group(1).split()) > LEAD_WORDS:  # the lead the copy rule also sets apart
        return None
    rest = text[match.end():]
    design = design_of(evidence)
    return f"{design.name[:1].upper()}{design.name[1:]}: {rest}" if design else rest[:1].upper() + rest[1:]


def fallback_reason(decision: EvidenceDecision, evidence: str) -> str:
    """What can be said honestly without a checked reason: the label and the item's design."""
    design = design_of(evidence)
    what = f"{_article(design.name)} {design.name} on the claim's subject" if design else "on the claim's subject"
    return f"Kept as {LABEL_WORDS.get(decision.label, 'relevant')} evidence: {what} (no reason passed the check)."


def _article(phrase: str) -> str:
    return "an" if phrase[:1] in "aeiou" else "a"


def dropped_reason(text: str, claim: Claim, owner: Claim | None = None) -> Reason:
    """Why a given item was set aside, by code: what it is about instead (the names of its own text that the
    claim never uses, each whole: its variant, gene, drug, disease, person or place) and the known claim it
    belongs to."""
    own = other_phrases(text, claim.text, claim.context)
    lead = f"Not about this claim: it is about {_join(own)}" if own else \
        "Not about this claim: it ranks far from the claim among the evidence"
    tails = [""]
    if owner:  # the known claim in full, else without its asides, else only that there is one (a reason stays short)
        tails = [f', and it fits the known claim "{c}" better' for c in _claim_forms(owner.text)]
        tails.append(", and it fits another known claim better")
    return Reason(_within_cap([_finish(lead + tail + ".") for tail in tails]), "code")


def _join(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# -- the explanation ------------------------------------------------------------------------------------------
def background_of(context: Mapping[str, str], limit: int = BACKGROUND_SENTENCES) -> list[str]:
    """What the claim's subject is, in the words of the claim's own context: the first ``limit`` sentences of its
    first prose field (a summary of the variant, say; a field of names, a disease or a drug list, is not prose),
    each naming the field it came from ("... (variant summary)."). Sentences over ``MAX_SENTENCE_WORDS`` words
    are skipped; they read as a paragraph, not a fact."""
    for key, value in context.items():
        sentences = [s for s in split_sentences(value) if is_complete_sentence(s, max_words=MAX_SENTENCE_WORDS)]
        if sentences and len(value.split()) >= 12 and value.rstrip().endswith((".", "!", "?")):
            source = " ".join(key.split()).lower()
            return [f"{s.rstrip(' .')} ({source})." for s in sentences[:limit]]
    return []


def sentence_problem(text: str, ids: Sequence[str], labels: Mapping[str, str], claim: str,
                     judge: Judge | None, texts: Mapping[str, str]) -> str | None:
    """Why a sentence cannot stand in the explanation (None: it can)."""
    if not is_complete_sentence(text, max_words=MAX_SENTENCE_WORDS):
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
        return {"ok": True, "verdict": self.verdict, "problems": [], "sentences": self.sentences,
                "reason_sentences": sum(s["source"] == "reason" for s in self.sentences if s["kept"])}


def unsupported_explanation(claim: str, kept: int, given: int) -> GroundedExplanation:
    """The claim-level verdict said no (``steps.verdict``: too few of the given items are about the claim): one
    sentence saying so, citing nothing, so no finding reads as support for a claim the graph rejects."""
    text = (f"The evidence does not support the claim that {_claim_clause(claim)}: only {kept} of the {given} "
            f"given items are about it.")
    return GroundedExplanation(text=text, sentences=[{"text": text, "source": "verdict", "kept": True}],
                               verdict="not enough evidence")


def strongest_first(order: Sequence[str], texts: Mapping[str, str]) -> list[str]:
    """``order`` sorted by the strength of the design each text states (stable: ties keep their order)."""
    return sorted(order, key=lambda i: -strength(texts.get(i, "")))


_STOP = re.compile(r"[.!?]+$")
_QUOTED_STOP = re.compile(r"[.!?]+(?=[\"'\u201d\u2019)]+$)")


def cited(text: str, ids: Sequence[str]) -> str:
    """``text`` with its citation before its final stop: 'It is "a new category." [3].' would read as two
    sentences, the second citing nothing but ids; 'It is "a new category" [3].' is one."""
    body = _QUOTED_STOP.sub("", _STOP.sub("", text.rstrip()))
    return f"{body.rstrip()} {_cite(ids)}."


def _said(text: str) -> str:
    """What a sentence says, apart from case and punctuation (two items' sentences that say the same)."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def compose(claim: str, labels: Mapping[str, str], order: Sequence[str], reasons: Mapping[str, Reason],
            findings: Mapping[str, str], *, sentences: int, texts: Mapping[str, str],
            judge: Judge | None = None, background: Sequence[str] = ()) -> GroundedExplanation:
    """The verdict, what the strongest kept items show, then how consistent and strong the evidence is.

    ``order``: kept ids (given before retrieved, each by the gate's score); ``reasons``: their checked reasons;
    ``findings``: their long findings (used when an item has no checked reason); ``texts``: full evidence texts.
    ``background``: what the claim's subject is (:func:`background_of`), said after the verdict and before the
    evidence, in the words of the claim's own context and naming it, so it cites no evidence id.
    At most ``sentences`` sentences (the verdict may take three when the evidence is mixed); the background only
    takes the room the evidence leaves."""
    supporting = [i for i in order if labels.get(i) == "supports"]
    contradicting = [i for i in order if labels.get(i) == "contradicts"]
    opening = verdict_sentences(claim, supporting, contradicting, kinds_of([texts[i] for i in order if i in texts]))
    record = [{"text": s, "source": "verdict", "kept": True} for s in opening]
    room = max(1, sentences - len(opening))
    body: list[str] = []
    said: dict[str, tuple[int, dict, str]] = {}  # what a body sentence says -> its place, its record, its text
    for item_id in strongest_first(order, texts):
        if len(body) >= room:
            break
        reason = reasons.get(item_id)
        if reason is not None and reason.source == "model":
            # the verdict has named the claim: a supporting item's sentence is its fact, not the claim again
            against = labels.get(item_id) == "contradicts"
            text, source = reason.text if against else (reason.fact or fact_of(reason.text)), "reason"
        elif findings.get(item_id):
            text, source = _finish(findings[item_id]), "finding"
        else:
            continue
        if (seen := said.get(_said(text))) is not None and labels.get(seen[1]["ids"][0]) == labels.get(item_id):
            # two items that show the same thing: one sentence citing both, not the same sentence twice
            at, entry, first = seen
            entry["ids"].append(item_id)
            body[at] = entry["text"] = cited(first, entry["ids"])
            continue
        sentence = cited(text, [item_id])
        problem = sentence_problem(sentence, [item_id], labels, claim, judge, texts)
        record.append({"text": sentence, "ids": [item_id], "source": source, "kept": problem is None,
                       "problem": problem})
        if problem is None:
            said[_said(text)] = (len(body), record[-1], text)
            body.append(sentence)
    about = list(background[:max(0, sentences - len(opening) - len(body))]) if body else []
    record[len(opening):len(opening)] = [{"text": s, "source": "background", "kept": True} for s in about]
    return GroundedExplanation(text=" ".join(opening + about + body), sentences=record,
                               verdict=verdict_of([labels[i] for i in order if i in labels]))


__all__ = ["CUT", "GroundedExplanation", "NO_RETELLING", "RETELLING_AGAIN", "background_of", "cited",
           "MAX_REASON_WORDS", "Reason", "compose", "dropped_reason", "fact_of", "fallback_reason", "kept_reason",
           "linked", "reasons_schema", "safe_reasons", "sentence_problem", "shown_item", "strongest_first",
           "unsupported_explanation", "verdict_of", "verdict_sentences", "write_reasons"]

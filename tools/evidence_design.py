"""What kind of study an evidence item reports, read from its words: how strong a reader should take it.

A tumour board weighs a phase 3 trial above a case report and a case report above a cell line. This reader
names the design an evidence text states (the first that matches, strongest first) and ranks it; a text that
names none (a paragraph of prose, a Wikipedia article) has no design, and nothing is said about its strength.

    approval        a regulatory approval (FDA, EMA) or a guideline
    phase 3 trial   also a randomised trial or a meta-analysis
    phase 2 trial   also phase 1/2
    phase 1 trial
    clinical trial  a trial named by its registry number only
    patient study   a cohort, a retrospective or prospective study, "N patients"
    family study    affected families, kindreds, probands (inherited disease)
    case series     "N of M tumours / samples / cases"
    case report     one patient
    mouse study     mice, xenografts
    cell study      cell lines, in vitro

Model-free: regular expressions over the text, a few microseconds per item.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# (design, weight, pattern): strongest first; the first pattern that matches names the design.
_DESIGNS: tuple[tuple[str, float, str], ...] = (
    ("approval", 7.0, r"\b(?:fda|ema)\b[^.]{0,80}\bapprov\w*|\bfood and drug administration\b|\bguidelines?\b"),
    ("phase 3 trial", 6.0, r"\bphase[\s-]*(?:3|iii)\b|\brandomi[sz]ed\b|\bmeta-analys[ie]s\b"),
    ("phase 2 trial", 5.0, r"\bphase[\s-]*(?:2|ii|1/2|i/ii|1b/2|ib/ii)\b"),
    ("phase 1 trial", 4.0, r"\bphase[\s-]*(?:1|i|1b|ib)\b"),
    ("clinical trial", 4.0, r"\bclinical trial\b|\bnct\d{6,}"),
    ("patient study", 3.0, r"\bcohort\b|\bretrospective\b|\bprospective\b|\b\d[\d,]* (?:\w+ ){0,3}patients\b"),
    ("family study", 3.0, r"\bfamil(?:y|ies)\b|\bkindreds?\b|\bprobands?\b"),
    ("case series", 2.5, r"\b\d+ (?:of|out of) (?:the )?\d+\b|\b\d+/\d+\b|\b\d+% of\b"),
    ("case report", 2.0, r"\bcase (?:report|study)\b|\b\d+[- ](?:year|yr)s?[- ]old\b|\ba patient\b|\bone patient\b"),
    ("mouse study", 1.5, r"\bmice\b|\bmouse\b|\bxenograft\w*\b|\bmurine\b"),
    ("cell study", 1.0, r"\bcell lines?\b|\bin vitro\b|\bba/f3\b|\bcells\b"),
)
_COMPILED = tuple((name, weight, re.compile(pattern, re.I)) for name, weight, pattern in _DESIGNS)
CLINICAL = 2.0  # weights at or above this are studies in patients
PLURAL = {"approval": "approvals", "patient study": "patient studies", "family study": "family studies",
          "case series": "case series", "mouse study": "mouse studies", "cell study": "cell studies"}


@dataclass(frozen=True)
class Design:
    name: str
    weight: float
    span: str = ""  # the words of the text that state it ("Phase III", "Ba/F3 cells", "14 of 19")

    @property
    def clinical(self) -> bool:
        return self.weight >= CLINICAL


def design_of(text: str) -> Design | None:
    """The strongest design ``text`` states, or None when it states none."""
    for name, weight, pattern in _COMPILED:
        if m := pattern.search(text or ""):
            return Design(name, weight, " ".join(m.group().split()))
    return None


# The words around a design that name it in the text's own terms ("randomized phase 3 trial", "Ba/F3 cells").
_PHRASES = {
    "approval": r"\b(?:fda|ema)\b[^.]{0,60}?\bapproved\b|\bfood and drug administration\b|\bguidelines?\b",
    "phase 3 trial": r"(?:\brandomi[sz]ed,? )?(?:open-label )?\bphase[\s-]*(?:3|iii)\b(?: \w+)?|\brandomi[sz]ed (?:\w+ )?"
                     r"(?:trial|study)\b|\bmeta-analys[ie]s\b",
    "phase 2 trial": r"\bphase[\s-]*(?:2|ii|1/2|i/ii|1b/2|ib/ii)\b(?: \w+)?",
    "phase 1 trial": r"\bphase[\s-]*(?:1|i|1b|ib)\b(?: \w+)?",
    "clinical trial": r"\bclinical trial\b",
    "patient study": r"\b(?:retrospective|prospective) (?:\w+ )?(?:study|analysis|cohort)\b|\bcohort\b|\b\d[\d,]* patients\b",
    "family study": r"\b\d+ (?:\w+ ){0,2}famil(?:y|ies)\b|\bfamil(?:y|ies)\b|\bprobands?\b|\bkindreds?\b",
    "case series": r"\b\d+ (?:of|out of) (?:the )?\d+ (?:\w+ ){0,2}?(?:cases|tumou?rs|samples|patients|\w+omas)\b",
    "case report": r"\bcase (?:report|study)\b|\b\d+[- ](?:year|yr)s?[- ]old (?:\w+ )?(?:patient|man|woman|male|female|"
                   r"boy|girl)\b",
    "mouse study": r"\b(?:\w+ )?mice\b|\bmouse (?:xenograft )?models?\b|\bxenografts?\b",
    "cell study": r"\b(?:\w+/)?\w+ cells\b|\bcell lines?\b|\bin vitro\b",
}
_PHRASE_RES = {k: re.compile(v, re.I) for k, v in _PHRASES.items()}


def design_phrase(text: str) -> str | None:
    """The design of ``text`` in the text's own words ("randomized phase 3 trial", "Ba/F3 cells", "14 of 19
    tumors"), or its name when no phrase is found; None when the text states no design."""
    found = design_of(text)
    if found is None:
        return None
    m = _PHRASE_RES[found.name].search(text or "")
    return " ".join(m.group().split()) if m else found.name


def strength(text: str) -> float:
    """The weight of the design ``text`` states (0 when none)."""
    found = design_of(text)
    return found.weight if found else 0.0


def _plural(name: str, n: int) -> str:
    if n == 1:
        return f"1 {name}"
    return f"{n} {PLURAL.get(name, name + 's')}"


def design_counts(texts: Iterable[str]) -> list[tuple[str, int]]:
    """(design, count) over ``texts`` that state one, strongest design first."""
    counts: dict[str, int] = {}
    for t in texts:
        if (d := design_of(t)) is not None:
            counts[d.name] = counts.get(d.name, 0) + 1
    order = {name: n for n, (name, _, _) in enumerate(_DESIGNS)}
    return sorted(counts.items(), key=lambda kv: order[kv[0]])


def describe_designs(texts: Sequence[str]) -> str | None:
    """The designs of ``texts`` as a phrase ("2 phase 3 trials, 1 case report and 3 cell studies"), or None
    when no text states one."""
    parts = [_plural(name, n) for name, n in design_counts(texts)]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def strength_phrase(texts: Sequence[str]) -> str | None:
    """How strong the evidence of ``texts`` is, from its strongest design: None when no text states one."""
    designs = [d for t in texts if (d := design_of(t)) is not None]
    if not designs:
        return None
    best = max(d.weight for d in designs)
    if best >= 6.0:
        return "strong clinical evidence"
    if best >= 4.0:
        return "early clinical evidence"
    if best >= CLINICAL:
        return "clinical evidence without a trial"
    return "preclinical evidence"

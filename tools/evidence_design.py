"""What kind of study an evidence item reports, read from its words: how strong a reader should take it.

A tumour board weighs a phase 3 trial above a case report and a case report above a cell line. This reader
names the design an evidence text states (the first that matches, strongest first) and ranks it; a text that
names none (a paragraph of prose, a Wikipedia article) has no design, and nothing is said about its strength.

    approval          a regulatory approval (FDA, EMA) or a guideline
    phase 3 trial
    meta-analysis     as strong as a phase 3 trial
    randomized trial  as strong, when the text states no phase
    phase 1/2 trial   as strong as a phase 2 trial
    phase 2 trial
    phase 1 trial
    clinical trial    a trial named by its registry number only
    patient study     a cohort, a retrospective or prospective study, "N patients"
    family study      affected families, kindreds, probands (inherited disease)
    case series       "N of M tumours / samples / cases"
    case report       one patient
    mouse study       mice, xenografts
    cell study        cell lines, in vitro

Each name says only what the text states (a randomized trial is not called phase 3), because the reasons call
shows the model the name and a reason may state only what the evidence states.

Model-free: regular expressions over the text, a few microseconds per item.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# (design, weight, pattern): strongest first; the first pattern that matches names the design.
_DESIGNS: tuple[tuple[str, float, str], ...] = (
    ("approval", 7.0, r"\b(?:fda|ema)\b[^.]{0,80}\bapprov\w*|\bfood and drug administration\b|\bguidelines?\b"),
    ("phase 3 trial", 6.0, r"\bphase[\s-]*(?:3|iii)\b"),
    ("meta-analysis", 6.0, r"\bmeta-analys[ie]s\b"),
    ("randomized trial", 6.0, r"\brandomi[sz]ed\b"),
    ("phase 1/2 trial", 5.0, r"\bphase[\s-]*(?:1/2|i/ii|1b/2|ib/ii)\b"),
    ("phase 2 trial", 5.0, r"\bphase[\s-]*(?:2|ii)\b"),
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


def strength(text: str) -> float:
    """The weight of the design ``text`` states (0 when none)."""
    found = design_of(text)
    return found.weight if found else 0.0

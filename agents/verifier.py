"""Check an explanation against the kept evidence, without an LLM.

A sentence passes when it cites at least one id, every id it cites is kept evidence, and it is close enough
(MiniLM cosine) to the evidence it cites. Failing sentences become the problem list for one revision.
"""
from __future__ import annotations

import re

import numpy as np
from pydantic import BaseModel, Field

from evidex.agents.writer import _CITATION, parse_citations
from evidex.tools.text import split_sentences

_CITED_END = re.compile(r"(?<=\]\.)\s+")


class SentenceCheck(BaseModel):
    sentence: str
    cited: list[str]
    support: float | None = None
    problem: str | None = None


class Verification(BaseModel):
    ok: bool
    problems: list[str] = Field(default_factory=list)
    sentences: list[SentenceCheck] = Field(default_factory=list)


def verify_explanation(text: str, kept: dict[str, str], embedder, *, min_support: float = 0.3,
                       min_sentences: int = 2, max_sentences: int = 6) -> Verification:
    # Our writer ends every sentence with its citation ("... [12, 14]."): split there first, so a period inside
    # a sentence does not create an uncited fragment; other texts fall back to the generic splitter.
    sentences = [x.strip() for x in _CITED_END.split(text.strip()) if x.strip()] if _CITED_END.search(text) \
        else split_sentences(text)
    problems: list[str] = []
    if not sentences:
        return Verification(ok=False, problems=["The explanation is empty."])
    if not min_sentences <= len(sentences) <= max_sentences:
        problems.append(f"It has {len(sentences)} sentences; write 3-5.")
    checks = [SentenceCheck(sentence=s, cited=parse_citations(s)) for s in sentences]
    plain = [_CITATION.sub("", c.sentence).strip() for c in checks]
    to_embed = [i for i, c in enumerate(checks) if c.cited and all(x in kept for x in c.cited)]
    if to_embed and embedder is not None:
        cited_texts = sorted({x for i in to_embed for x in checks[i].cited})
        vecs = embedder.encode([plain[i] for i in to_embed] + [kept[x] for x in cited_texts])
        sent_vecs, ev_vecs = vecs[: len(to_embed)], dict(zip(cited_texts, vecs[len(to_embed):]))
        for row, i in enumerate(to_embed):
            sims = [float(np.dot(sent_vecs[row], ev_vecs[x])) for x in checks[i].cited]
            checks[i].support = round(max(sims), 4)
    for n, c in enumerate(checks, start=1):
        unknown = [x for x in c.cited if x not in kept]
        if not c.cited:
            c.problem = f"Sentence {n} cites no evidence id."
        elif unknown:
            c.problem = f"Sentence {n} cites {', '.join(unknown)}, which is not in the evidence list."
        elif c.support is not None and c.support < min_support:
            c.problem = f"Sentence {n} is not supported by the evidence it cites ({', '.join(c.cited)})."
        if c.problem:
            problems.append(c.problem)
    return Verification(ok=not problems, problems=problems, sentences=checks)

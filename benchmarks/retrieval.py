"""Retrieval-only benchmark: how much of the hidden missing evidence the non-LLM retriever finds.

For each CIViC item of ``missing_evidence`` / ``mixed`` the claim, its context and the *visible* evidence go to
:func:`agents.query_planner.gather_candidates` (given ids are excluded); the hidden ``missing_ids`` are only
used to score. Reported per task and method: recall@5/10/20 micro-averaged (found / all hidden items, the
headline number) and macro-averaged (mean over items), and MRR of the first hidden item (top 50).

Methods: ``bm25_plain`` (one query = claim + context without the long profile summary, bm25s' default
tokenizer: the earlier baseline),
``dense``, ``bm25`` and ``hybrid`` (the planner's modes), and ``hybrid_judged`` — hybrid with perfect relevance
judgements of the given items (``kept_ids`` = given minus the gold wrong ids). That last row uses gold labels
to simulate the graph's judge and is an upper bound for the kept-ids path, not a retrieval-only result.
The planner's modes demote items about another variant (``--rival-penalty``) and items that a competing CIViC
claim ranks better (``--claim-penalty``, the graph's ``gate.claim_catalog``; 0 = off), as the graph does.

Tuning used items 30..65 only (the real held-out items plus 8 simulated re-splits of the same 36 claims,
``--simulated 8``); items 0..29 are the reported test split::

    python -m benchmarks.retrieval --start 0 --limit 30
    python -m benchmarks.retrieval --start 30 --limit 36
    python -m benchmarks.retrieval --start 30 --limit 36 --simulated 8 --json /tmp/retrieval_sim.json

Results: ``benchmarks/results/retrieval.json``, one key per item window ("items 0-29", "items 30-65"), beside
``benchmarks.recovery_losses``' analysis of where recall is lost.
"""
from __future__ import annotations

import argparse
import functools
import random
import time
from pathlib import Path

from evidex.agents.civic.claim_catalog import ClaimCatalog
from evidex.tools.embeddings import get_embeddings
from evidex.agents.civic.query_planner import CLAIM_PENALTY, RIVAL_VARIANT_PENALTY, gather_candidates
from benchmarks import write_results
from evidex.tools.claims import ClaimInput, Gold, TaskItem
from evidex.tools.claim_data import load_claim_catalog, load_kb, load_task
from evidex.tools.kb_index import KBDoc, KnowledgeBaseIndex
from evidex.tools.settings import get_settings

KS = (5, 10, 20)
MRR_DEPTH = 50
METHODS = ("bm25_plain", "dense", "bm25", "hybrid", "hybrid_judged")
DEFAULT_JSON = Path("benchmarks/results/retrieval.json")

_INDEXES: dict[str, KnowledgeBaseIndex] = {}


def open_civic_index(analyzer: str = "biomed") -> KnowledgeBaseIndex:
    if analyzer not in _INDEXES:
        docs = [KBDoc(id=e.id, text=e.text) for e in load_kb()]
        _INDEXES[analyzer] = KnowledgeBaseIndex.open(
            "civic", docs, get_embeddings(), get_settings().index_dir, analyzer=analyzer)
    return _INDEXES[analyzer]


@functools.cache
def civic_catalog() -> ClaimCatalog:
    """The competing claims the graph uses by default (CIViC baseline claims, sentences and context only)."""
    return ClaimCatalog(open_civic_index(), load_claim_catalog())


def _ranked_ids(method: str, item, depth: int, rival_penalty: float = RIVAL_VARIANT_PENALTY,
                claim_penalty: float = CLAIM_PENALTY) -> list[str]:
    inp = item.input
    claim = inp.claims["claim"]
    if method == "bm25_plain":
        short_ctx = [v for key, v in claim.context.items() if key != "Molecular Profile Summary"]
        text = " ".join([claim.text, *short_ctx])
        return [h.id for h in open_civic_index("simple").search(
            text, k=depth, mode="bm25", exclude={e.id for e in inp.evidence}, depth=depth)]
    index = open_civic_index()
    fused = {"rival_penalty": rival_penalty, "catalog": civic_catalog() if claim_penalty else None,
             "claim_penalty": claim_penalty}
    if method == "hybrid_judged":
        kept = {e.id for e in inp.evidence} - set(item.gold.wrong_ids)  # gold: simulates a perfect judge
        hits = gather_candidates(index, claim, inp.evidence, kept_ids=kept, k=depth, mode="hybrid", **fused)
    else:
        hits = gather_candidates(index, claim, inp.evidence, k=depth, mode=method, **fused)
    return [h.id for h in hits]


def _score(runs: list[tuple[list[str], list[str]]]) -> dict:
    total = sum(len(m) for _, m in runs)
    out: dict = {"items": len(runs), "missing": total}
    for k in KS:
        found = [len(set(m) & set(r[:k])) for r, m in runs]
        out[f"recall@{k}"] = round(sum(found) / total, 4) if total else None
        out[f"macro_recall@{k}"] = round(sum(f / len(m) for f, (_, m) in zip(found, runs)) / len(runs), 4) \
            if runs else None
    rr = []
    for r, m in runs:
        first = next((n for n, i in enumerate(r, 1) if i in set(m)), None)
        rr.append(1.0 / first if first else 0.0)
    out["mrr"] = round(sum(rr) / len(rr), 4) if rr else None
    return out


def simulated_items(task: str, start: int, limit: int, seeds: int = 8) -> list[TaskItem]:
    """Extra tuning items: the baseline claims ``start..start+limit-1`` re-split ``seeds`` times with the
    dataset's own recipe (missing: each item hidden with p=0.3, mixed: p=0.5 plus max(1, min(3, n//3)) (+1 with
    p=0.3) wrong items drawn from other claims' KB evidence; at least one hidden, at least one kept)."""
    p, with_wrong = {"missing_evidence": (0.3, False), "mixed": (0.5, True)}[task]
    kb = load_kb()
    out: list[TaskItem] = []
    for seed in range(seeds):
        for n, base in enumerate(load_task("baseline", limit=start + limit, shuffle=False)[start:], start=start):
            ev = list(base.input.evidence)
            if len(ev) < 2:
                continue
            rng = random.Random(f"sim:{task}:{seed}:{n}")
            hidden = [e for e in ev if rng.random() < p] or [rng.choice(ev)]
            hidden = hidden[: len(ev) - 1]
            own = {e.id for e in ev}
            wrong = []
            if with_wrong:
                pool = [e for e in kb if e.id not in own]
                count = max(1, min(3, len(ev) // 3)) + (1 if rng.random() < 0.3 else 0)
                wrong = list({e.id: e for e in (rng.choice(pool) for _ in range(count))}.values())
            visible = [e for e in ev if e not in hidden] + wrong
            rng.shuffle(visible)
            out.append(TaskItem(
                input=ClaimInput(id=f"sim-{task}-{seed}-{n:03d}", task=task, claims=base.input.claims,
                                 evidence=visible),
                gold=Gold(missing_ids=[e.id for e in hidden], wrong_ids=[e.id for e in wrong])))
    return out


def run_retrieval_benchmark(tasks=("missing_evidence", "mixed"), start: int = 0, limit: int = 30,
                            methods=METHODS, simulated: int = 0,
                            rival_penalty: float = RIVAL_VARIANT_PENALTY,
                            claim_penalty: float = CLAIM_PENALTY) -> dict:
    """Recall of hidden missing evidence for items ``start .. start+limit-1`` of each task.

    ``simulated=N`` scores N re-splits of the same claims (:func:`simulated_items`) instead of the files."""
    result: dict = {"start": start, "limit": limit, "ks": list(KS), "simulated": simulated,
                    "rival_penalty": rival_penalty, "claim_penalty": claim_penalty, "tasks": {}}
    # Build/load indexes and the embedding model first so that ms_per_item is the per-query cost only.
    if "bm25_plain" in methods:
        open_civic_index("simple")
    open_civic_index().embed("warm-up")
    for task in tasks:
        items = simulated_items(task, start, limit, simulated) if simulated else \
            load_task(task, limit=start + limit)[start:]
        items = [it for it in items if it.gold.missing_ids]  # nothing hidden: recall undefined
        if not items:
            raise ValueError(f"no {task} item with hidden missing evidence in items {start}..{start + limit - 1}")
        result["tasks"][task] = {}
        for method in methods:
            for idx in _INDEXES.values():
                idx.clear_cache()  # every method pays for its own query embeddings
            t0 = time.perf_counter()
            runs = [(_ranked_ids(method, it, MRR_DEPTH, rival_penalty, claim_penalty), list(it.gold.missing_ids))
                    for it in items]
            scores = _score(runs)
            scores["ms_per_item"] = round(1000 * (time.perf_counter() - t0) / max(len(items), 1), 1)
            scores["per_item"] = {it.input.id: [r.index(m) + 1 if m in r else None for m in it.gold.missing_ids]
                                  for it, (r, _) in zip(items, runs)}
            result["tasks"][task][method] = scores
    return result


def print_table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    sim = f", {result['simulated']} simulated re-splits" if result.get("simulated") else ""
    table = Table(title=f"Missing-evidence retrieval, items {result['start']}..{result['start'] + result['limit'] - 1}"
                        f"{sim}")
    for col in ("task", "method", *(f"R@{k}" for k in KS), *(f"macroR@{k}" for k in KS), "MRR", "ms/item"):
        table.add_column(col, justify="left" if col in ("task", "method") else "right")
    for task, methods in result["tasks"].items():
        for method, s in methods.items():
            table.add_row(task, method, *(f"{s[f'recall@{k}']:.3f}" for k in KS),
                          *(f"{s[f'macro_recall@{k}']:.3f}" for k in KS), f"{s['mrr']:.3f}", f"{s['ms_per_item']:.0f}")
    Console(width=max(Console().width, 130)).print(table)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--limit", type=int, default=30)
    ap.add_argument("--tasks", nargs="+", default=["missing_evidence", "mixed"], choices=["missing_evidence", "mixed"])
    ap.add_argument("--simulated", type=int, default=0, metavar="SEEDS",
                    help="score SEEDS simulated re-splits of the baseline claims instead of the task files "
                         "(the extra tuning set; use with --start 30 --limit 36)")
    ap.add_argument("--rival-penalty", type=float, default=RIVAL_VARIANT_PENALTY,
                    help="score subtracted from KB items about another variant than the claim's (0 = off)")
    ap.add_argument("--claim-penalty", type=float, default=CLAIM_PENALTY,
                    help="weight of the competing-claims demotion (ln rank ratio, capped; 0 = off)")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the results")
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch CPU threads for query embeddings (0 = leave torch's default). One query at a time "
                         "gains nothing from more threads, and on a busy machine they spin: 1 is ~20x faster here.")
    args = ap.parse_args(argv)
    if args.start < 0 or args.limit < 1:
        ap.error("--start must be >= 0 and --limit >= 1")
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    try:
        result = run_retrieval_benchmark(tuple(args.tasks), args.start, args.limit, simulated=args.simulated,
                                         rival_penalty=args.rival_penalty, claim_penalty=args.claim_penalty)
    except ValueError as exc:
        ap.error(str(exc))
    print_table(result)
    window = f"items {args.start}-{args.start + args.limit - 1}"
    write_results(args.json, result, part=window + (f", {args.simulated} simulated" if args.simulated else ""))


if __name__ == "__main__":
    main()

"""Embedding batch size: CPU time per passage and ingestion pages/s at each batch size, the same vectors.

    python -m benchmarks.embed_batch                     # encode probe + 58-PDF ingestion at batch 64 and 8
    python -m benchmarks.embed_batch --probe-only        # the encode probe only (about 2 min)
    python -m benchmarks.embed_batch --ingest-batches 64,8,16 --pdfs 20

1. Encode probe, one torch thread: 256 corpus PDF chunks and 256 QASPER dev paragraphs (a fixed sample from the
   ``corpus`` and ``qasper`` stores), encoded whole at each batch size; CPU-ms per passage and the lowest cosine
   to the batch-64 vectors (sentence-transformers sorts a call's texts by length, so the batch size changes only
   how many run together, never a vector).
2. Ingestion: ``python -m tools.ingest --json`` of the corpus PDFs into a fresh store at each ``--ingest-batches``
   size (local executor, 2 parser processes that also embed, 1 torch thread each), alternating so the machine's
   drift hits each; pages/s and the ratio to the first size.

Why small batches win on CPU (measured, 2-core machine, 2026-11-26): a batch of 64 x 256 word pieces makes
activation tensors of ~25 MB per layer that do not fit in cache; 4-8 passages do. JSON:
``benchmarks/results/embed.json`` under ``batch``.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

DEFAULT_JSON = Path("benchmarks/results/embed.json")
PROBE_BATCHES = (64, 32, 16, 8, 4, 1)
SAMPLE = 256


def sample_passages(db: str, n: int = SAMPLE) -> list[str]:
    """A fixed sample of a store's chunk texts (ordered by a hash of the chunk id, so the same on every run)."""
    import duckdb

    from evidex.tools.store import require_store, store_paths

    con = duckdb.connect(str(require_store(store_paths(db)).db), read_only=True)
    try:
        rows = con.execute("SELECT text_content FROM chunks WHERE text_content IS NOT NULL AND trim(text_content) <> '' "
                           "ORDER BY hash(chunk_id) LIMIT ?", [n]).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def encode_probe(samples: dict[str, list[str]], batches=PROBE_BATCHES) -> list[dict]:
    import numpy as np
    import torch

    from evidex.tools.embeddings import LocalEmbeddings

    torch.set_num_threads(1)
    model = LocalEmbeddings().encoder
    model.encode(["warm-up"] * 8)
    rows = []
    for name, texts in samples.items():
        tokens = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"]
        ref = None
        for bs in batches:
            t = time.process_time()
            vecs = model.encode(texts, batch_size=bs, normalize_embeddings=True, show_progress_bar=False)
            cpu = time.process_time() - t
            ref = vecs if ref is None else ref
            rows.append({"passages": name, "n": len(texts), "mean_tokens": round(float(np.mean([len(x) for x in tokens])), 1),
                         "batch_size": bs, "cpu_ms_per_passage": round(cpu / len(texts) * 1000, 1),
                         "min_cosine_to_first": round(float((vecs * ref).sum(1).min()), 6)})
            print(f"  {name} batch {bs}: {rows[-1]['cpu_ms_per_passage']} CPU-ms/passage", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.embed_batch", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe-only", action="store_true", help="skip the ingestion runs")
    p.add_argument("--ingest-batches", default="64,8", help="batch sizes to ingest with, first = reference")
    p.add_argument("--pdfs", type=int, default=None, help="the first N corpus PDFs (default: all 58)")
    p.add_argument("--probe-stores", default="corpus,qasper", help="stores whose chunks the probe encodes")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"results file (default {DEFAULT_JSON})")
    args = p.parse_args(argv)
    load_start = [round(x, 2) for x in os.getloadavg()]
    stores = [s.strip() for s in args.probe_stores.split(",") if s.strip()]
    print("encode probe (1 torch thread) ...", flush=True)
    probe = encode_probe({s: sample_passages(s) for s in stores})
    table = Table(title="Encode probe: CPU-ms per passage by batch size (1 thread)")
    for col in ("passages", "mean tokens", "batch", "CPU-ms/passage", "min cos to batch 64"):
        table.add_column(col)
    for r in probe:
        table.add_row(r["passages"], str(r["mean_tokens"]), str(r["batch_size"]), str(r["cpu_ms_per_passage"]),
                      f"{r['min_cosine_to_first']:.6f}")
    Console().print(table)
    ingest = []
    if not args.probe_only:
        from benchmarks.ingest_executors import corpus_pdfs, ingest_each

        pdfs = corpus_pdfs(args.pdfs)
        sizes = [int(b) for b in args.ingest_batches.split(",") if b.strip()]
        ingest = ingest_each(pdfs, [{"batch_size": bs} for bs in sizes], "evidex-embed-batch-")
        first = ingest[0]["pages_per_s"]
        table = Table(title=f"Ingestion of {len(pdfs)} corpus PDFs, local executor, 2 cores")
        for col in ("batch", "pages", "dense entries", "seconds", "pages/s", "vs first", "peak MB"):
            table.add_column(col)
        for r in ingest:
            r["over_first"] = round(r["pages_per_s"] / first, 3)
            table.add_row(str(r["embedding"]["batch_size"]), str(r["pages"]), str(r["dense_entries"]), str(r["total_s"]),
                          f"{r['pages_per_s']:.2f}", f"{r['over_first']:.2f}x", f"{r['peak_rss_mb'] or 0:.0f}")
        Console().print(table)
    write_results(args.json, {"cpu_count": os.cpu_count(), "load_avg_start": load_start,
                              "load_avg_end": [round(x, 2) for x in os.getloadavg()], "probe": probe, "ingest": ingest},
                  part="batch")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

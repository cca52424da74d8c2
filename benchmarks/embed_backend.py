"""Embedding backends: torch fp32 against the fused int8 ONNX export, on speed and on retrieval quality.

    python -m benchmarks.embed_backend                          # probe + corpus ingestion + QASPER retrieval
    python -m benchmarks.embed_backend --skip qasper            # probe and corpus ingestion only
    python -m benchmarks.embed_backend --backends torch,onnx-int8 --pdfs 20

1. Encode probe, one thread: 256 corpus PDF chunks and 256 QASPER dev paragraphs (fixed samples, see
   ``benchmarks.embed_batch``) with torch fp32 (batch 8), the fp32 ONNX export and the int8 ONNX export (one
   passage per run); CPU-ms per passage and the cosine to torch's vectors.
2. Corpus ingestion: ``python -m tools.ingest --json`` of the 58 corpus PDFs into a fresh store per backend (local
   executor, 2 parser processes that also embed); pages/s, peak memory. The ``torch`` backend means torch's fp32
   vectors, which ``LocalEmbeddings`` computes with the fp32 ONNX export when it can (``tools/embeddings.py``).
3. QASPER: the dev papers ingested into a fresh store per backend (``bench-qasper-<backend>``, kept for
   inspection), timed, then ``benchmarks.qasper``'s retrieval-only Evidence-F1 (every dev question searched over
   its own paper's paragraphs, BM25 / dense / hybrid, top 1-3). BM25 rows are the control: they must not move.

The AirQA check runs the AirQA benchmark on a corpus store built with the int8 backend:
``python -m benchmarks.airqa --build-store --db corpus-onnx-int8 --ingest-config FILE``. Results:
``benchmarks/results/embed.json`` under ``backend``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

DEFAULT_JSON = Path("benchmarks/results/embed.json")
BACKENDS = ("torch", "onnx-int8")
STEPS = ("probe", "corpus", "qasper")


def encode_probe(samples: dict[str, list[str]]) -> list[dict]:
    import numpy as np
    import torch

    from evidex.tools.embeddings import LocalEmbeddings, OnnxEncoder

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # restored below: the QASPER step ingests in this process on every core
    st_model = LocalEmbeddings().encoder  # sentence-transformers itself (LocalEmbeddings' fp32 runs on ONNX)

    def torch_encode(texts):
        return st_model.encode(texts, batch_size=8, normalize_embeddings=True, show_progress_bar=False)

    encoders = {"torch fp32 (batch 8)": torch_encode,
                "onnx fp32 (fused, 1 per run)": OnnxEncoder(threads=1, variant="fp32").encode,
                "onnx int8 (fused, 1 per run)": OnnxEncoder(threads=1, variant="int8").encode}
    for encode in encoders.values():
        encode(["warm-up"] * 8)
    rows = []
    for name, texts in samples.items():
        ref = None
        for label, encode in encoders.items():
            t = time.process_time()
            vecs = encode(texts)
            cpu = time.process_time() - t
            ref = vecs if ref is None else ref
            cos = (vecs * ref).sum(1)
            rows.append({"passages": name, "n": len(texts), "encoder": label,
                         "cpu_ms_per_passage": round(cpu / len(texts) * 1000, 1),
                         "min_cosine_to_torch": round(float(cos.min()), 4), "mean_cosine_to_torch": round(float(np.mean(cos)), 4)})
            print(f"  {name} {label}: {rows[-1]['cpu_ms_per_passage']} CPU-ms/passage", flush=True)
    torch.set_num_threads(threads)
    return rows


def corpus_ingestion(backends: list[str], pdfs: int | None) -> list[dict]:
    from benchmarks.ingest_executors import corpus_pdfs, ingest_each

    return ingest_each(corpus_pdfs(pdfs), [{"backend": b} for b in backends], "evidex-embed-backend-")


def qasper_quality(backends: list[str], ks: list[int]) -> tuple[list[dict], list[dict]]:
    """(ingestion rows, Evidence-F1 rows) of the QASPER dev papers, one fresh store per backend."""
    from benchmarks.qasper import DEV, retrieval
    from evidex.tools.datasets import resolve_data_file
    from evidex.tools.ingest import load_ingest_config
    from evidex.tools.ingest.qasper import INGEST_CONFIG, ingest_qasper
    from evidex.tools.qasper_data import load_qasper
    from evidex.tools.store import store_paths

    papers = load_qasper(resolve_data_file(DEV))
    base = load_ingest_config(INGEST_CONFIG)
    ingest_rows, f1_rows = [], []
    for backend in backends:
        db = f"bench-qasper-{backend}"
        shutil.rmtree(store_paths(db).root, ignore_errors=True)
        cfg = base.model_copy(update={"embedding": base.embedding.model_copy(update={"backend": backend})})
        print(f"ingesting {len(papers)} QASPER dev papers with {backend} ...", flush=True)
        t = time.perf_counter()
        report = ingest_qasper(papers, db, config=cfg, progress=False)
        wall = time.perf_counter() - t
        ingest_rows.append({"backend": backend, "papers": len(papers), "wall_s": round(wall, 1),
                            "dense_s": round(report.seconds.get("dense", 0.0), 1)})
        print(f"  {wall:.1f} s ({ingest_rows[-1]['dense_s']} s embedding)", flush=True)
        rows, _ = retrieval(papers, db, ["bm25", "dense", "hybrid"], ks)
        f1_rows += [{"backend": backend, **r} for r in rows]
    return ingest_rows, f1_rows


def show(title: str, rows: list[dict], cols: list[str]) -> None:
    table = Table(title=title)
    for c in cols:
        table.add_column(c)
    for r in rows:
        table.add_row(*[str(r.get(c, "")) for c in cols])
    Console(width=200).print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.embed_backend", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backends", default=",".join(BACKENDS), help="ingestion backends, first = reference")
    p.add_argument("--skip", default="", help=f"comma-separated steps to skip ({', '.join(STEPS)})")
    p.add_argument("--pdfs", type=int, default=None, help="the first N corpus PDFs (default: all 58)")
    p.add_argument("--ks", default="1,2,3", help="QASPER: paragraphs kept as evidence")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"results file (default {DEFAULT_JSON})")
    args = p.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if bad := [b for b in backends if b not in BACKENDS] + [s for s in skip if s not in STEPS]:
        p.error(f"unknown backend or step: {', '.join(bad)}")
    out: dict = {"cpu_count": os.cpu_count(), "load_avg_start": [round(x, 2) for x in os.getloadavg()]}
    if "probe" not in skip:
        from benchmarks.embed_batch import sample_passages

        print("encode probe (1 thread) ...", flush=True)
        out["probe"] = encode_probe({s: sample_passages(s) for s in ("corpus", "qasper")})
        show("Encode probe: CPU-ms per passage, 1 thread", out["probe"],
             ["passages", "encoder", "cpu_ms_per_passage", "min_cosine_to_torch", "mean_cosine_to_torch"])
    if "corpus" not in skip:
        rows = out["corpus_ingestion"] = corpus_ingestion(backends, args.pdfs)
        for r in rows:
            r["backend"] = r["embedding"]["backend"]
            r["over_first"] = round(r["pages_per_s"] / rows[0]["pages_per_s"], 2)
        show("Corpus PDF ingestion, local executor, 2 cores", rows,
             ["backend", "pages", "dense_entries", "total_s", "pages_per_s", "over_first", "peak_rss_mb"])
    if "qasper" not in skip:
        ingest_rows, f1_rows = qasper_quality(backends, sorted({int(k) for k in args.ks.split(",") if k.strip()}))
        out["qasper_ingestion"], out["qasper_evidence_f1"] = ingest_rows, f1_rows
        show("QASPER dev ingestion (281 papers)", ingest_rows, ["backend", "papers", "wall_s", "dense_s"])
        show("QASPER dev retrieval-only Evidence-F1 (0-100)", f1_rows,
             ["backend", "mode", "k", "evidence_f1", "evidence_f1_text_only"])
    out["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    write_results(args.json, out, part="backend")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

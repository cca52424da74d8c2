"""Ingestion on Ray workers vs the local executor: pages per second on the same PDFs and the same cores.

    python -m benchmarks.ingest_executors                      # all 58 corpus PDFs, 1 and 2 cores, each executor
    python -m benchmarks.ingest_executors --pdfs 20 --cores 2  # a quicker look

Each configuration is one ``python -m tools.ingest --json`` process into a fresh store (nothing warm from another
run), with the same PDFs, the configured embedding model and the same number of cores:

* local, 1 core: one parser in this process, embedding with 1 torch thread (``embedding.threads: 1``);
* local, 2 cores: the default (2 parser processes, each also embedding what it parses with 1 thread), and with
  ``--embed-in writer`` (2 parser processes running ahead while this process embeds with 2 torch threads: the
  behaviour before parser processes embedded);
* ray, N cores: N Ray workers on a Ray started on loopback for the run, each parsing and embedding with 1 thread,
  the ingesting process the single writer.

Reported per run: pages, wall time of the process, the report's total (start-up of Ray included) and pages/s over
it, Ray's start-up, pages/s without it, peak memory of the ingesting process, and the Ray/local ratio at the same
cores. Configurations alternate (local, ray, local, ray, ...) so a machine's drift hits both. JSON:
``benchmarks/results/ingest.json`` under ``executors`` (beside ``benchmarks.ingest``'s ``corpus``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

DEFAULT_JSON = Path("benchmarks/results/ingest.json")
PART = "executors"  # the key of this benchmark's result in the results file


def corpus_pdfs(limit: int | None) -> list[Path]:
    from benchmarks.scale import find_corpus

    pdfs = sorted((find_corpus() / "pdfs").glob("*.pdf"))
    return pdfs[:limit] if limit else pdfs


def ingest_each(pdfs: list[Path], variants: list[dict], prefix: str = "evidex-ingest-") -> list[dict]:
    """``one_run`` of the PDFs once per embedding override in ``variants`` (local executor, 2 parser processes that
    also embed), each into a fresh store under one temporary folder; the rows in the same order."""
    rows = []
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for overrides in variants:
            label = ", ".join(f"{k} {v}" for k, v in overrides.items())
            print(f"ingesting {len(pdfs)} PDFs, {label} ...", flush=True)
            row = one_run("local", 2, pdfs, Path(tmp), "workers", embedding=overrides)
            rows.append(row)
            print(f"  {row['pages']} pages in {row['total_s']} s ({row['pages_per_s']} pages/s)", flush=True)
    return rows


def one_run(executor: str, cores: int, pdfs: list[Path], folder: Path, embed_in: str = "workers",
            embedding: dict | None = None) -> dict:
    """One ``tools.ingest --json`` process into a fresh store; ``embedding`` overrides the default config's
    embedding section (local on 1 core: its embedder held to one thread)."""
    overrides = dict(embedding or {})
    if executor == "local" and cores == 1:
        overrides.setdefault("threads", 1)
    label = "-".join(f"{k}{v}" for k, v in sorted(overrides.items()))
    store = folder / f"{executor}-{cores}-{embed_in}{'-' + label if label else ''}"
    args = [sys.executable, "-m", "evidex.tools.ingest", *map(str, pdfs), "--store-dir", str(store), "--json",
            "--quiet", "--executor", executor, "--workers", str(cores), "--embed-in", embed_in]
    if overrides:
        import yaml

        from evidex.tools.ingest import load_ingest_config

        default = load_ingest_config()
        changed = default.model_copy(update={"embedding": default.embedding.model_copy(update=overrides)})
        cfg = folder / f"config-{label}.yaml"
        cfg.write_text(yaml.safe_dump(changed.model_dump(mode="json")), encoding="utf-8")
        args += ["--config", str(cfg)]
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ), check=False)
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{executor} x{cores} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    report = json.loads(proc.stdout)
    ingested = [f for f in report["files"] if f["status"] == "ingested"]
    pages = sum(f["pages"] for f in ingested)
    total = report["seconds"]["total"]
    startup = report["executor"].get("startup_s") or 0.0
    return {"executor": executor, "embed_in": embed_in, "cores": cores, "embedding": overrides,
            "files": len(report["files"]), "ingested": len(ingested),
            "failed": sum(f["status"] == "failed" for f in report["files"]), "pages": pages,
            "wall_s": round(wall, 1), "total_s": round(total, 1), "startup_s": startup,
            "pages_per_s": round(pages / total, 2), "pages_per_s_after_startup": round(pages / max(total - startup, 1e-9), 2),
            "seconds": report["seconds"], "peak_rss_mb": report["memory"].get("peak_rss_mb"),
            "chunks": report["rows"].get("chunks"), "dense_entries": sum(report["dense_entries"].values()),
            "ray": {k: v for k, v in report["executor"].items() if k != "name"}}


def print_table(rows: list[dict]) -> None:
    table = Table(title="Ingestion: Ray workers vs local executor (same PDFs, same cores)")
    for col in ("executor", "embed in", "cores", "pages", "total s", "Ray start s", "pages/s", "pages/s w/o start",
                "vs local", "peak MB"):
        table.add_column(col, justify="right")
    local = {r["cores"]: r for r in rows if r["executor"] == "local" and r["embed_in"] == "workers"}
    for r in rows:
        ratio = ""
        if r["executor"] == "ray" and r["cores"] in local:
            ratio = f"{r['pages_per_s'] / local[r['cores']]['pages_per_s']:.2f}x"
        table.add_row(r["executor"], r["embed_in"], str(r["cores"]), str(r["pages"]), f"{r['total_s']:.1f}",
                      f"{r['startup_s']:.1f}" if r["executor"] == "ray" else "", f"{r['pages_per_s']:.2f}",
                      f"{r['pages_per_s_after_startup']:.2f}", ratio, f"{r['peak_rss_mb'] or 0:.0f}")
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ingest_executors", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pdfs", type=int, default=None, help="the first N corpus PDFs (default: all 58)")
    p.add_argument("--cores", default="1,2", help="core counts to compare, e.g. 1,2")
    p.add_argument("--note", default="", help="what else ran on the machine (kept in the JSON)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"results file, one key per part (default {DEFAULT_JSON}, under {PART})")
    args = p.parse_args(argv)
    pdfs = corpus_pdfs(args.pdfs)
    cores = [int(c) for c in args.cores.split(",") if c.strip()]
    load_start = [round(x, 2) for x in os.getloadavg()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="evidex-ingest-executors-") as tmp:
        plan = []
        for n in cores:  # with 2+ cores also parser processes that only parse (the behaviour before)
            plan += [(n, "local", "workers"), *([(n, "local", "writer")] if n > 1 else []), (n, "ray", "workers")]
        for n, executor, embed_in in plan:
            print(f"{executor} on {n} core(s), embedding in {embed_in}: {len(pdfs)} PDFs ...", flush=True)
            rows.append(one_run(executor, n, pdfs, Path(tmp), embed_in))
            print(f"  {rows[-1]['pages']} pages in {rows[-1]['total_s']} s ({rows[-1]['pages_per_s']} pages/s)",
                  flush=True)
    print_table(rows)
    local = {r["cores"]: r for r in rows if r["executor"] == "local" and r["embed_in"] == "workers"}
    ray = {r["cores"]: r for r in rows if r["executor"] == "ray"}
    writer = {r["cores"]: r for r in rows if r["embed_in"] == "writer"}
    result = {"pdfs": len(pdfs), "cpu_count": os.cpu_count(), "load_avg_start": load_start,
              "load_avg_end": [round(x, 2) for x in os.getloadavg()], "note": args.note, "rows": rows,
              "ray_over_local_pages_per_s": {str(c): round(ray[c]["pages_per_s"] / local[c]["pages_per_s"], 3)
                                             for c in cores if c in ray and c in local},
              "ray_over_local_after_startup": {str(c): round(ray[c]["pages_per_s_after_startup"] /
                                                             local[c]["pages_per_s_after_startup"], 3)
                                               for c in cores if c in ray and c in local},
              "embed_in_workers_over_writer": {str(c): round(local[c]["pages_per_s"] / writer[c]["pages_per_s"], 3)
                                               for c in cores if c in writer and c in local}}
    write_results(args.json, result, part=PART)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

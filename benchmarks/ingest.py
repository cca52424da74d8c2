"""PDF ingestion benchmark over the shared corpus (58 papers): throughput, coverage, sizes, search/SQL latency.

    python -m benchmarks.ingest                       # parse-only pass + full ingest (MiniLM) + latency
    python -m benchmarks.ingest --workers 2 --queries 60
    python -m benchmarks.ingest --latency-only        # reuse the existing benchmark store

Phases:
1. parse-only: every PDF through the parser in ``--workers`` processes, nothing written (pages/s);
2. full ingest from scratch into ``<cache>/stores/<--db>``: parse + DuckDB + MiniLM/Chroma + BM25 (pages/s).
   AirQA papers get a metadata JSON holding only their ``conference_year`` (from the manifest), so the paper
   UUID is computed from the *parsed* title and compared with the manifest UUID;
3. coverage against the manifest (tables/figures/equations/references where the manifest shows them);
4. latency p50/p95 of dense, BM25 and hybrid search (chunks.text_content, with and without filters) and of SQL.
Prints a table and writes ``benchmarks/results/ingest.json`` under ``corpus`` (``benchmarks.ingest_executors`` keeps
its result beside it under ``executors``).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from benchmarks import write_results  # noqa: E402
from evidex.tools.cli_help import plain_help  # noqa: E402

DEFAULT_JSON = Path("benchmarks/results/ingest.json")
PART = "corpus"  # the key of this benchmark's result in the results file
TARGETS = {
    "parse_pages_per_s": 10.0,
    "ingest_pages_per_s": 3.0,
    "hybrid_p50_ms": 50.0,
    "sql_p50_ms": 20.0,
}
QUERIES = [
    "rotary position embeddings context window extension",
    "hallucination detection in machine translation",
    "chain of thought prompting arithmetic reasoning",
    "structured state space models long sequences",
    "attention heads that retrieve information from long context",
    "curriculum learning difficulty of training samples",
    "metaphor mapping with GPT-3",
    "watermarking language model output robustness",
    "open information extraction from the web",
    "table structure recognition tokens",
    "evaluation of summarization faithfulness by humans",
    "citation recommendation augmented reading interface",
    "task arithmetic model merging",
    "adversarial attacks on dialogue generation",
    "low-resource speech recognition data augmentation",
    "retrieval-augmented generation knowledge-intensive tasks",
    "FlashAttention work partitioning GPU",
    "sentence representation over-smoothing contrastive",
    "protolanguage reconstruction unsupervised",
    "MapReduce fault tolerance workers",
]
SQL = [
    "SELECT count(*) FROM chunks",
    "SELECT title, num_pages FROM metadata ORDER BY num_pages DESC LIMIT 5",
    "SELECT m.title, count(*) AS n FROM tables t JOIN metadata m ON m.paper_id = t.ref_paper_id GROUP BY m.title ORDER BY n DESC LIMIT 5",
    "SELECT p.page_number, c.text_content FROM chunks c JOIN pages p ON p.page_id = c.ref_page_id WHERE c.text_content ILIKE '%attention%' LIMIT 5",
    "SELECT section_title, page_numbers FROM sections WHERE level = 1 AND section_title ILIKE '%conclusion%' LIMIT 10",
    "SELECT image_caption, bounding_box FROM images WHERE image_caption <> '' LIMIT 10",
    "SELECT reference_content FROM reference WHERE reference_content ILIKE '%transformer%' LIMIT 10",
    "SELECT equation_content, equation_number FROM equations WHERE equation_number IS NOT NULL LIMIT 10",
]


class Clock:
    """Wall time plus CPU time of this process and its finished children (the parser workers), so results
    can be normalised when other jobs share the machine: cores_equiv_pages_per_s = pages / (cpu_s / cores)."""

    def __enter__(self):
        import resource

        self._r = resource
        self.t0 = time.perf_counter()
        self.c0 = self._cpu()
        self.load0 = os.getloadavg()[0]
        return self

    def _cpu(self) -> float:
        s = self._r.getrusage(self._r.RUSAGE_SELF)
        c = self._r.getrusage(self._r.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = self._cpu() - self.c0
        self.load1 = os.getloadavg()[0]

    def stats(self, pages: int) -> dict:
        cores = os.cpu_count() or 1
        return {
            "wall_s": round(self.wall, 2),
            "cpu_s": round(self.cpu, 2),
            "cpu_share": round(self.cpu / max(self.wall * cores, 1e-9), 2),  # 1.0 = we had every core
            "pages_per_s": round(pages / self.wall, 2),
            "cores_equiv_pages_per_s": round(pages / max(self.cpu / cores, 1e-9), 2),
            "load_avg_1m": [round(self.load0, 2), round(self.load1, 2)],
        }


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def find_corpus(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tools"))
    from pdfgen_helpers import corpus_dir  # one place that knows where the shared corpus lives

    c = corpus_dir()
    if c is None:
        raise SystemExit("Corpus not found: pass --corpus DIR or set EVIDEX_CORPUS_DIR.")
    return c


def parse_only(files: list[Path], workers: int) -> dict:
    from evidex.tools.ingest.config import load_ingest_config
    from evidex.tools.ingest.pipeline import _parse_stream, sha256_file

    cfg = load_ingest_config()
    jobs = [(str(f), sha256_file(f)) for f in files]
    pages = failed = 0
    per_file = 0.0
    with Clock() as clock:
        for _, ok, payload, _, _ in _parse_stream(jobs, cfg, workers):
            if ok:
                pages += len(payload.pages)
                per_file += payload.parse_seconds
            else:
                failed += 1
    return {"pages": pages, **clock.stats(pages), "sum_parse_s": round(per_file, 2), "failed": failed}


def full_ingest(files: list[Path], manifest: list[dict], db: str, workers: int, threads: int | None) -> tuple[dict, object]:
    from evidex.tools.ingest import ingest, load_ingest_config

    cfg = load_ingest_config()
    if threads is not None:
        cfg = cfg.model_copy(update={"embedding": cfg.embedding.model_copy(update={"threads": threads})})

    meta_dir = Path(tempfile.mkdtemp(prefix="evidex-bench-meta-"))
    for e in manifest:
        if e["airqa"]:
            name = Path(e["file"]).stem
            (meta_dir / f"{name}.json").write_text(json.dumps({"conference_year": e["airqa"][0]["conference_year"]}))
    with Clock() as clock:
        report = ingest(files, db, config=cfg, metadata_dir=meta_dir, from_scratch=True, workers=workers, progress=True)
    pages = sum(f.pages for f in report.files)
    from evidex.tools.embeddings import resolve_precision

    return {
        "pages": pages,
        "embedding_precision": resolve_precision(cfg.embedding.precision),
        **clock.stats(pages),
        "seconds": report.seconds,
        "ingested": report.count("ingested"),
        "failed": [{"file": Path(f.path).name, "kind": f.error_kind, "error": f.error} for f in report.failed],
        "warnings": {Path(f.path).name: f.warnings for f in report.files if f.warnings},
    }, report


# The manifest's counts are regex heuristics ("(N)" at the end of a text line, "Table N" captions). These hits
# were checked by hand on the PDFs and are not display equations; coverage is reported with and without them.
MANIFEST_FALSE_POSITIVES: dict[str, dict[str, str]] = {
    "equations": {
        "compressive-transformer.pdf": "'(1)'-'(3)' are arrow labels inside Figure 1 (p.3); its math is inline or in Algorithms 1-2",
        "mapreduce-osdi2004.pdf": "'(1) fork', '(2) assign map' are step labels inside Figure 1 (p.3)",
        "we-understand-elliptical-sentences.pdf": "'(1)'-'(5)' number linguistic example sentences, not formulas",
        "survey-asking-clarification-questions-datasets.pdf": "'(1)'-'(5)' are enumerators of inline lists in prose",
        "detecting-mitigating-hallucinations-mt.pdf": "'(1)' ends a checklist answer on p.14 ('first section (1)')",
    },
}


def coverage(db: str, manifest: list[dict], report) -> dict:
    import duckdb

    from evidex.tools.store import TABLES, close_readonly, store_paths

    close_readonly()
    paths = store_paths(db)
    con = duckdb.connect(str(paths.db), read_only=True)
    by_name = {Path(f.path).name: f for f in report.files}
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}

    def per_paper(table: str, pid: str) -> int:
        key = "paper_id" if table == "metadata" else "ref_paper_id"
        return con.execute(f"SELECT count(*) FROM {table} WHERE CAST({key} AS VARCHAR) = ?", [pid]).fetchone()[0]

    checks = {"tables": "table_captions", "images": "figure_captions", "equations": "equation_number_lines"}
    cov: dict[str, dict] = {}
    for table, field in checks.items():
        expected = [e for e in manifest if e[field] > 0 and Path(e["file"]).name in by_name and by_name[Path(e["file"]).name].paper_id]
        hit = [e for e in expected if per_paper(table, by_name[Path(e["file"]).name].paper_id) > 0]
        found_total = sum(per_paper(table, by_name[Path(e["file"]).name].paper_id) for e in expected)
        false_pos = MANIFEST_FALSE_POSITIVES.get(table, {})
        real = [e for e in expected if Path(e["file"]).name not in false_pos]
        cov[table] = {
            "papers_expected": len(expected),
            "papers_with_rows": len(hit),
            "missing": sorted(Path(e["file"]).name for e in expected if e not in hit),
            "rows_found": found_total,
            "manifest_count": sum(e[field] for e in expected),
            "manifest_false_positives": false_pos,
            "papers_expected_checked": len(real),
            "papers_with_rows_checked": sum(1 for e in real if e in hit),
        }
    refs_papers = [n for n, f in by_name.items() if f.paper_id and per_paper("reference", f.paper_id) > 0]
    cov["reference"] = {"papers_with_rows": len(refs_papers), "papers": len(by_name)}
    uuid_ok, uuid_bad = 0, []
    for e in manifest:
        if not e["airqa"]:
            continue
        f = by_name.get(Path(e["file"]).name)
        if f is not None and f.paper_id == e["airqa"][0]["uuid"]:
            uuid_ok += 1
        else:
            uuid_bad.append(Path(e["file"]).name)
    pages_match = sum(
        1 for e in manifest
        if (f := by_name.get(Path(e["file"]).name)) is not None and f.paper_id and per_paper("pages", f.paper_id) == e["pages"]
    )
    sizes = {
        "duckdb_bytes": paths.db.stat().st_size,
        "chroma_bytes": dir_size(paths.chroma),
        "bm25_bytes": dir_size(paths.bm25),
    }
    con.close()
    return {
        "rows": rows,
        "all_tables_non_empty": all(v > 0 for v in rows.values()),
        "coverage": cov,
        "airqa_uuid": {"match": uuid_ok, "total": uuid_ok + len(uuid_bad), "mismatch": uuid_bad},
        "page_counts_match_manifest": pages_match,
        "sizes": sizes,
    }


def latency(db: str, n: int) -> dict:
    from evidex.tools.search import SearchArgs, get_engine
    from evidex.tools.sql import run_sql
    from evidex.tools.store import close_readonly

    close_readonly()
    eng = get_engine(db)
    first_pid = run_sql("SELECT CAST(paper_id AS VARCHAR) FROM metadata LIMIT 1", db).rows[0][0]
    # warm up: model, Chroma collection, BM25 index, DuckDB connection
    for mode in ("dense", "bm25", "hybrid"):
        eng.search(SearchArgs(query="warm up", table="chunks", column="text_content", mode=mode))
    run_sql(SQL[0], db)
    out: dict[str, dict] = {}
    filters = [None, "page_number <= 3", f"pdf_id == '{first_pid}'", "bbox[1] + bbox[3] < 400"]
    for mode in ("dense", "bm25", "hybrid"):
        for label, flt in (("", None), ("+filter", "x")):
            times = []
            for i in range(n):
                q = QUERIES[i % len(QUERIES)]
                f = None if flt is None else filters[1 + i % 3]
                t = time.perf_counter()
                eng.search(SearchArgs(query=q, table="chunks", column="text_content", mode=mode, filter=f, limit=5))
                times.append((time.perf_counter() - t) * 1000)
            out[mode + label] = {"p50_ms": round(pct(times, 0.5), 2), "p95_ms": round(pct(times, 0.95), 2), "n": n}
    times = []
    for i in range(n):
        t = time.perf_counter()
        run_sql(SQL[i % len(SQL)], db)
        times.append((time.perf_counter() - t) * 1000)
    out["sql"] = {"p50_ms": round(pct(times, 0.5), 2), "p95_ms": round(pct(times, 0.95), 2), "n": n}
    return out


def embedding_probe(db: str, sample: int = 256) -> dict:
    """MiniLM throughput on real chunks of the store with 1 and 2 torch threads, and the dense workload size,
    to tell the embedding cost apart from machine contention."""
    import torch

    from evidex.tools.embeddings import LocalEmbeddings
    from evidex.tools.ingest.chunking import TokenCounter
    from evidex.tools.ingest.indexer import cell_query
    from evidex.tools.ingest.config import load_ingest_config
    from evidex.tools.sql import run_sql  # noqa: F401  (ensures the store exists)
    from evidex.tools.store import close_readonly, connect_readonly, store_paths

    close_readonly()
    con = connect_readonly(store_paths(db).db)
    cfg = load_ingest_config()
    counter = TokenCounter(cfg.embedding.model)
    total_cells = total_tokens = 0
    for item in cfg.index:
        if item.dense:
            texts = [str(r[1]) for r in con.cursor().execute(cell_query(item.table, item.column, False)).fetchall()]
            total_cells += len(texts)
            total_tokens += sum(min(n, 254) + 2 for n in counter.counts(texts))  # MiniLM reads at most 256
    chunks = [str(r[0]) for r in con.cursor().execute(
        f"SELECT text_content FROM chunks USING SAMPLE {sample} ROWS (reservoir, 7)").fetchall()]
    chunk_tokens = sum(n + 2 for n in counter.counts(chunks))
    emb = LocalEmbeddings(cfg.embedding.model, batch_size=cfg.embedding.batch_size, precision=cfg.embedding.precision)
    emb.encode(chunks[:8])
    out = {"dense_cells": total_cells, "dense_tokens": total_tokens, "sample_chunks": len(chunks)}
    old = torch.get_num_threads()
    for n in (1, 2):
        torch.set_num_threads(n)
        t = time.perf_counter()
        emb.encode(chunks)
        dt = time.perf_counter() - t
        out[f"threads_{n}"] = {"chunks_per_s": round(len(chunks) / dt, 1), "tokens_per_s": round(chunk_tokens / dt)}
    torch.set_num_threads(old)
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    return out


def print_summary(result: dict, console: Console) -> None:
    t = Table(title="Ingestion benchmark (58-paper corpus)")
    t.add_column("metric")
    t.add_column("value", justify="right")
    t.add_column("target", justify="right")
    po, fi = result.get("parse_only", {}), result.get("full_ingest", {})
    if po:
        t.add_row("parse-only pages/s (wall)", str(po["pages_per_s"]), f">= {TARGETS['parse_pages_per_s']}")
        t.add_row("  same, per 2 free cores (CPU time)", str(po["cores_equiv_pages_per_s"]), f"cpu share {po['cpu_share']}")
    if fi:
        t.add_row("ingest pages/s (parse+DuckDB+MiniLM+BM25, wall)", str(fi["pages_per_s"]), f">= {TARGETS['ingest_pages_per_s']}")
        t.add_row("  same, per 2 free cores (CPU time)", str(fi["cores_equiv_pages_per_s"]), f"cpu share {fi['cpu_share']}")
        t.add_row("files ingested / failed", f"{fi['ingested']} / {len(fi['failed'])}", "58 / 0")
    cov = result.get("store", {})
    if cov:
        t.add_row("all 8 tables non-empty", str(cov["all_tables_non_empty"]), "True")
        for k, v in cov["rows"].items():
            t.add_row(f"rows {k}", str(v), "")
        for k in ("tables", "images", "equations"):
            c = cov["coverage"][k]
            t.add_row(f"papers with {k} / expected", f"{c['papers_with_rows']} / {c['papers_expected']}", "all")
            if c["manifest_false_positives"]:
                t.add_row(f"  … excluding {len(c['manifest_false_positives'])} hand-checked manifest false positives",
                          f"{c['papers_with_rows_checked']} / {c['papers_expected_checked']}", "all")
        t.add_row("papers with references", f"{cov['coverage']['reference']['papers_with_rows']} / {cov['coverage']['reference']['papers']}", "")
        u = cov["airqa_uuid"]
        t.add_row("AirQA UUID = manifest (parsed title)", f"{u['match']} / {u['total']}", "39 / 39")
        for k, v in cov["sizes"].items():
            t.add_row(k.replace("_bytes", " MB"), f"{v / 1e6:.1f}", "")
    probe = result.get("embedding_probe")
    if probe:
        for n in (1, 2):
            t.add_row(f"MiniLM chunks/s, {n} thread(s) (probe)", str(probe[f"threads_{n}"]["chunks_per_s"]), "")
        t.add_row("dense cells / tokens to embed", f"{probe['dense_cells']} / {probe['dense_tokens']}", "")
    for k, v in result.get("latency", {}).items():
        target = ""
        if k == "hybrid":
            target = f"p50 <= {TARGETS['hybrid_p50_ms']:.0f}"
        elif k == "sql":
            target = f"p50 <= {TARGETS['sql_p50_ms']:.0f}"
        t.add_row(f"{k} latency ms p50 / p95", f"{v['p50_ms']} / {v['p95_ms']}", target)
    console.print(t)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ingest", description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", help="corpus folder with pdfs/ and corpus_manifest.json")
    p.add_argument("--db", default="bench_corpus", help="store name (rebuilt from scratch)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--queries", type=int, default=60, help="queries per latency measurement")
    p.add_argument("--embed-threads", type=int, default=None, help="torch threads while embedding (default: config)")
    p.add_argument("--latency-only", action="store_true", help="skip parsing/ingestion; measure the existing store")
    p.add_argument("--embed-probe", action="store_true", help="also time MiniLM on sampled chunks (1 vs 2 threads)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON,
                   help=f"results file, one key per part (default {DEFAULT_JSON}, under {PART})")
    a = p.parse_args(argv)
    console = Console()
    corpus = find_corpus(a.corpus)
    manifest = json.loads((corpus / "corpus_manifest.json").read_text())
    files = [corpus / e["file"] for e in manifest]
    result: dict = {"corpus": f"{corpus.parent.name}/{corpus.name}", "files": len(files), "workers": a.workers, "cpu_count": os.cpu_count(), "targets": TARGETS}
    try:
        result["load_avg_start"] = os.getloadavg()
    except OSError:
        pass
    if not a.latency_only:
        console.print("[bold]1/4 parse only[/bold]")
        result["parse_only"] = parse_only(files, a.workers)
        console.print("[bold]2/4 full ingest[/bold]")
        result["full_ingest"], report = full_ingest(files, manifest, a.db, a.workers, a.embed_threads)
        result["full_ingest"]["embed_threads"] = a.embed_threads
        console.print("[bold]3/4 coverage[/bold]")
        result["store"] = coverage(a.db, manifest, report)
    console.print("[bold]4/4 latency[/bold]")
    result["latency"] = latency(a.db, a.queries)
    if a.embed_probe:
        result["embedding_probe"] = embedding_probe(a.db)
    try:
        result["load_avg_end"] = os.getloadavg()
    except OSError:
        pass
    if a.latency_only and a.json.is_file():
        old = json.loads(a.json.read_text()).get(PART)
        if old:
            old.update({k: v for k, v in result.items()
                        if k in ("latency", "embedding_probe", "load_avg_start", "load_avg_end")})
            result = old
    print_summary(result, console)
    write_results(a.json, result, part=PART)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Scale benchmark: paper stores of about 60, 250, 1,000 and 2,000 papers; ingestion rate, peak memory, store size and
search latency (BM25, dense, hybrid) at each size, plotted against size.

    python -m benchmarks.scale                                  # build what is missing, then measure every size
    python -m benchmarks.scale --sizes 60,250 --queries 20      # the small sizes only
    python -m benchmarks.scale --baseline bdf8d9f               # also time the search code of that commit, interleaved
    python -m benchmarks.scale --build-only / --search-only

Papers, in this order (each size holds the first N): the 58 corpus PDFs (``python -m tools.ingest``'s pipeline),
the QASPER dev papers (full text from the JSON), the 888 QASPER train papers (``train-papers.jsonl.gz``, markdown
full text) and, past those, QASPER papers again under new ids. QASPER papers go through the same writer and
indexer as ``tools.ingest.qasper`` (one page per paragraph), but into the PDF store's schema and index config, so
one store holds both kinds.

Stores live outside the repository (``--root``, default ``/tmp/evidex-scale``): ``build/`` grows from one size to
the next and is copied to ``size-<N>/`` when it reaches N, so a killed build resumes where it stopped (ingestion
skips what is stored) and a finished size is never rebuilt. Each build step runs in its own process, so its peak
resident memory is its own. Search is timed on the ``size-<N>`` copies: ``--queries`` QASPER dev questions over
``chunks.text_content`` (limit 10), unfiltered and filtered to one paper, p50/p90 per mode; with ``--baseline`` the
search code of that commit (``git show``) runs on the same store, query by query alternating with the current code,
and the table shows the ratio. Results: ``benchmarks/results/scale.json`` under ``sizes`` (``--store DIR``: under
``store <DIR's name>``; ``benchmarks.scale_out`` keeps its result beside them under ``scale_out``); the figure:
``docs/scale.png``.
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks import write_results  # noqa: E402
from evidex.tools.cli_help import plain_help  # noqa: E402
from evidex.tools.memory import peak_rss_mb  # noqa: E402
from evidex.tools.memory import rss_mb as current_rss_mb  # noqa: E402

DEFAULT_JSON = Path("benchmarks/results/scale.json")
PART = "sizes"  # the key of the size sweep's result in the results file
DEFAULT_PLOT = Path("docs/scale.png")
DEFAULT_ROOT = Path("/tmp/evidex-scale")
SIZES = (60, 250, 1000, 2000)
QASPER_DEV = "qasper/qasper-dev-v0.3.reconstructed.json"
QASPER_TRAIN = "qasper/train-papers.jsonl.gz"
MODES = ("bm25", "dense", "hybrid")
TARGETS = {"hybrid_p50_ms": 25.0, "hybrid_p90_ms": 50.0, "bm25_p50_ms": 10.0, "ingest_pages_per_s": 10.0,
           "peak_rss_gb": 2.5}


# ------------------------------------------------------------------------------------------------ memory


def dir_size_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


# ------------------------------------------------------------------------------------------------ papers


def markdown_paper(paper_id: str, title: str, markdown: str):
    """A QASPER train paper (markdown full text) as a QasperPaper: '## '/'### ' headings become sections (nested
    names joined by ' ::: '), blank-line separated blocks become paragraphs, '## Abstract' the abstract."""
    from evidex.tools.qasper_data import QasperPaper, QasperSection

    abstract, sections, stack = "", [], []
    current: QasperSection | None = None
    for block in re.split(r"\n\s*\n", markdown):
        block = block.strip()
        if not block or block.startswith("**Paper ID:**"):
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", block)
        if m and "\n" not in block:
            level, name = len(m.group(1)), m.group(2).strip()
            if level == 1:
                continue  # the title
            depth = level - 2
            stack = stack[:depth] + [name]
            current = QasperSection(name=" ::: ".join(stack), paragraphs=[])
            sections.append(current)
            continue
        if current is not None and current.name == "Abstract":
            abstract = (abstract + "\n\n" + block).strip()
        elif current is not None:
            current.paragraphs.append(block)
        else:
            sections.append(current := QasperSection(name=None, paragraphs=[block]))
    sections = [s for s in sections if s.name != "Abstract"]
    return QasperPaper(paper_id=paper_id, title=title, abstract=abstract, sections=sections)


def paper_plan(total: int, corpus: Path) -> list[tuple[str, object]]:
    """The first ``total`` papers in benchmark order: ("pdf", Path) then ("qasper", QasperPaper)."""
    from evidex.tools.datasets import resolve_data_file
    from evidex.tools.qasper_data import load_qasper

    plan: list[tuple[str, object]] = [("pdf", p) for p in sorted((corpus / "pdfs").glob("*.pdf"))]
    dev = load_qasper(resolve_data_file(QASPER_DEV))
    plan += [("qasper", p) for p in dev]
    if len(plan) < total:
        with gzip.open(resolve_data_file(QASPER_TRAIN), "rt", encoding="utf-8") as fh:
            train = [markdown_paper(d["paper_id"], d.get("title", ""), d["markdown"]) for d in map(json.loads, fh)]
        plan += [("qasper", p) for p in train]
    base = [p for kind, p in plan if kind == "qasper"]
    copy = 1
    while len(plan) < total:
        for p in base:
            if len(plan) >= total:
                break
            plan.append(("qasper", p.model_copy(update={"paper_id": f"{p.paper_id}-copy{copy}"})))
        copy += 1
    return plan[:total]


def find_corpus() -> Path:
    from evidex.tools.settings import get_settings

    for c in (os.environ.get("EVIDEX_CORPUS_DIR"), get_settings().data_dir and Path(get_settings().data_dir).parent / "corpus",
              Path(__file__).resolve().parents[2] / "shared" / "corpus"):
        if c and (Path(c) / "pdfs").is_dir():
            return Path(c)
    raise SystemExit("corpus not found: set EVIDEX_CORPUS_DIR to the folder holding pdfs/")


# ------------------------------------------------------------------------------------------------ building


class ReplicaVectorMemo:
    """The ingestion embedder with vectors remembered on disk (SQLite, keyed by the text's sha1), so QASPER papers
    replicated under new ids past the 1,227 real ones reuse their originals' vectors instead of paying the 2-core
    machine another half hour for identical text. Real papers are embedded for real (their texts are new); the
    build stats count vectors computed and reused, and the ingest rate is read from the sizes without replicas.
    Kept on disk rather than in a dict so the step's peak memory is ingestion's, not the memo's."""

    def __init__(self, inner, path: Path):
        import sqlite3

        self.inner = inner
        self.db = sqlite3.connect(str(path))
        self.db.execute("CREATE TABLE IF NOT EXISTS vec (sha TEXT PRIMARY KEY, v BLOB)")
        self.computed = 0
        self.reused = 0

    def __getattr__(self, name):  # model_name, signature, dimension, ... of the real embedder
        return getattr(self.inner, name)

    def encode(self, texts: list[str]):
        import numpy as np

        from evidex.tools.ingest.worker import text_key

        keys = [text_key(t) for t in texts]
        found: dict[str, bytes] = {}
        for s in range(0, len(keys), 500):
            part = keys[s : s + 500]
            q = f"SELECT sha, v FROM vec WHERE sha IN ({','.join('?' * len(part))})"
            found.update(self.db.execute(q, part).fetchall())
        text_of = dict(zip(keys, texts))  # one text per key: equal keys are equal texts
        miss_keys = [k for k in text_of if k not in found]
        if miss_keys:
            vecs = np.asarray(self.inner.encode([text_of[k] for k in miss_keys]), dtype=np.float32)
            rows = [(k, v.tobytes()) for k, v in zip(miss_keys, vecs)]
            self.db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
            self.db.commit()
            found.update(rows)
        self.computed += len(miss_keys)
        self.reused += len(keys) - len(miss_keys)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys]) if keys else self.inner.encode([])


def build_step(root: Path, size: int, workers: int) -> dict:
    """Grow ``root/build`` to ``size`` papers (resumable), then copy it to ``root/size-<size>``. Runs in its own
    process (``--build-step``); returns the step's stats."""
    import duckdb

    from evidex.tools.ingest import ingest, load_ingest_config
    from evidex.tools.ingest.indexer import make_embeddings
    from evidex.tools.ingest.qasper import _run as qasper_run
    from evidex.tools.ingest.upkeep import finish_pending_removals
    from evidex.tools.store import StorePaths, connect_writable

    build = root / "build"
    paths = StorePaths(build)
    plan = paper_plan(size, find_corpus())
    pdfs = [p for kind, p in plan if kind == "pdf"]
    qasper = [p for kind, p in plan if kind == "qasper"]
    stats: dict = {"size": size, "pdfs": len(pdfs), "qasper_papers": len(qasper)}
    t0 = time.perf_counter()
    report = ingest(pdfs, store_dir=build, workers=workers, progress=True)
    pdf_new = [f for f in report.files if f.status in ("ingested", "reindexed")]
    stats["pdf"] = {"new": len(pdf_new), "pages": sum(f.pages for f in pdf_new), "seconds": report.seconds}
    if pdf_new:
        stats["pdf"]["pages_per_s"] = round(stats["pdf"]["pages"] / max(report.seconds["total"], 1e-9), 2)
    cfg = load_ingest_config()
    con = connect_writable(paths.db)
    try:
        finish_pending_removals(con, paths)
        seconds: dict[str, float] = {"records": 0.0, "write": 0.0, "dense": 0.0, "bm25": 0.0}
        t = time.perf_counter()
        memo = ReplicaVectorMemo(make_embeddings(cfg), root / "replica-vectors.sqlite")
        qrep = qasper_run(con, qasper, cfg, paths, memo, False, True, seconds)
        seconds["total"] = time.perf_counter() - t
    finally:
        con.close()
    new_q = [f for f in qrep.files if f.status in ("ingested", "reindexed")]
    stats["qasper"] = {"new": len(new_q), "seconds": {k: round(v, 2) for k, v in seconds.items()},
                       "vectors_computed": memo.computed, "vectors_reused": memo.reused}
    stats["seconds"] = round(time.perf_counter() - t0, 1)
    con = duckdb.connect(str(paths.db), read_only=True)
    stats["papers"] = con.execute("SELECT count(*) FROM metadata").fetchone()[0]
    stats["chunks"] = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    stats["pages"] = con.execute("SELECT count(*) FROM pages").fetchone()[0]
    con.close()
    stats["peak_rss_mb"] = peak_rss_mb()
    stats["final_rss_mb"] = current_rss_mb()
    from evidex.tools.memory import children_peak_rss_mb

    stats["parser_processes_peak_rss_mb"] = children_peak_rss_mb()
    target = root / f"size-{size}"
    tmp = root / f"size-{size}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(build, tmp, ignore=shutil.ignore_patterns(".ingest.lock"))
    tmp.rename(target)
    stats["store_mb"] = dir_size_mb(target)
    stats["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    (target / "scale-build.json").write_text(json.dumps(stats, indent=1))
    return stats


def ensure_built(root: Path, size: int, workers: int) -> dict:
    done = root / f"size-{size}" / "scale-build.json"
    if done.exists():
        return json.loads(done.read_text())
    root.mkdir(parents=True, exist_ok=True)
    print(f"building {size} papers under {root} (resumable) ...", flush=True)
    env = {**os.environ}
    subprocess.run([sys.executable, "-m", "benchmarks.scale", "--root", str(root), "--build-step", str(size),
                    "--workers", str(workers)], check=True, env=env)
    return json.loads(done.read_text())


# ------------------------------------------------------------------------------------------------ searching


def baseline_search_module(commit: str):
    """The tools.search module of ``commit`` (with that commit's fetch_cells), loaded beside the current one."""
    def source(path: str) -> str:
        return subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout

    store_src = source("tools/store.py")
    store_mod = _load_source("evidex_baseline_store", store_src)
    search_src = source("tools/search.py").replace("from evidex.tools.store import", "from evidex_baseline_store import")
    return _load_source("evidex_baseline_search", search_src), store_mod


def _load_source(name: str, src: str):
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    exec(compile(src, f"<{name}>", "exec"), mod.__dict__)  # noqa: S102 - our own code from git
    return mod


def pct(values: list[float], q: float) -> float:
    import numpy as np

    return round(float(np.percentile(values, q)), 2) if values else float("nan")


def queries(n: int) -> list[tuple[str, str]]:
    """(question, store id of its paper) for the first n QASPER dev questions of distinct papers."""
    from evidex.tools.datasets import resolve_data_file
    from evidex.tools.qasper_data import load_qasper

    out = []
    for p in load_qasper(resolve_data_file(QASPER_DEV)):
        if p.qas:
            out.append((p.qas[0].question, p.store_id))
        if len(out) == n:
            break
    return out


def measure_search(store: Path, n_queries: int, baseline: str | None, repeats: int = 1) -> dict:
    from evidex.tools.search import SearchArgs, SearchEngine
    from evidex.tools.store import StorePaths

    qs = queries(n_queries)
    engines = {"new": SearchEngine(StorePaths(store))}
    arg_types = {"new": SearchArgs}
    if baseline:
        old_search, old_store = baseline_search_module(baseline)
        engines["old"] = old_search.SearchEngine(old_store.StorePaths(store))
        arg_types["old"] = old_search.SearchArgs
        engines["old"]._embeddings = engines["new"].embeddings  # one model in memory, same query vectors
    present = set(engines["new"]._bm25_pair("chunks", "text_content").papers.tolist())
    out: dict = {"queries": len(qs), "repeats": repeats}
    real = engines["new"].embeddings
    for encode in ("timed", "cached"):  # cached: query vectors computed beforehand, so only the index work is timed
        emb = real if encode == "timed" else _CachedEmbeddings(real, [q for q, _ in qs])
        for eng in engines.values():
            eng._embeddings = emb
        res = _time_queries(engines, arg_types, qs, present, repeats)
        out.update(res) if encode == "timed" else out.__setitem__("encode_excluded", res)
    out["peak_rss_mb"] = peak_rss_mb()
    out["final_rss_mb"] = current_rss_mb()
    return out


class _CachedEmbeddings:
    """Query vectors computed once up front (the engines' encode calls then cost a dict lookup)."""

    def __init__(self, real, texts: list[str]):
        self.real, self.model_name = real, getattr(real, "model_name", "")
        self.vecs = {t: v for t, v in zip(texts, real.encode(texts))}

    def encode(self, texts):
        import numpy as np

        return np.stack([self.vecs[t] if t in self.vecs else self.real.encode([t])[0] for t in texts])


def _time_queries(engines, arg_types, qs, present, repeats) -> dict:
    import numpy as np

    times: dict[tuple[str, str, str], list[float]] = {}
    overlap: dict[tuple[str, str], list[float]] = {}
    for warm in qs[:2]:  # load indexes and the model
        for name, eng in engines.items():
            for mode in MODES:
                eng.search(arg_types[name](query=warm[0], table="chunks", column="text_content", mode=mode, limit=10))
    for rep in range(repeats):
        for question, pid in qs:
            for scope in ("all", "paper"):
                if scope == "paper" and pid not in present:
                    continue
                flt = f"pdf_id == '{pid}'" if scope == "paper" else None
                for mode in MODES:
                    hits = {}
                    for name in (list(engines) if rep % 2 == 0 else list(reversed(engines))):  # alternate who goes first
                        args = arg_types[name](query=question, table="chunks", column="text_content", mode=mode, limit=10,
                                               filter=flt)
                        engines["new"]._query_vectors.clear()  # every timed search encodes its query
                        t = time.perf_counter()
                        res = engines[name].search(args)
                        times.setdefault((name, scope, mode), []).append((time.perf_counter() - t) * 1000)
                        hits[name] = [h.primary_key for h in res.hits]
                    if "old" in hits:
                        a, b = set(hits["old"]), set(hits["new"])
                        overlap.setdefault((scope, mode), []).append(len(a & b) / max(1, len(a | b)))
    out: dict = {}
    for (name, scope, mode), ts in sorted(times.items()):
        out.setdefault(name, {}).setdefault(scope, {})[mode] = {"p50_ms": pct(ts, 50), "p90_ms": pct(ts, 90), "n": len(ts)}
    if "old" in out:
        out["ratio_old_over_new_p50"] = {
            scope: {m: round(out["old"][scope][m]["p50_ms"] / max(out["new"][scope][m]["p50_ms"], 1e-9), 2)
                    for m in out["new"][scope]} for scope in out["new"]}
        out["hit_overlap_jaccard"] = {f"{s}/{m}": round(float(np.mean(v)), 3) for (s, m), v in overlap.items()}
    return out


def search_step(root: Path, size: int, n_queries: int, baseline: str | None, repeats: int) -> dict:
    """Runs in its own process (``--search-step``) so each size's memory is its own."""
    return measure_search(root / f"size-{size}", n_queries, baseline, repeats)


def run_search(root: Path, size: int, n_queries: int, baseline: str | None, repeats: int) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.scale", "--root", str(root), "--search-step", str(size),
           "--queries", str(n_queries), "--repeats", str(repeats)]
    if baseline:
        cmd += ["--baseline", baseline]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------------ report


def print_table(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="Paper-store scale (chunks.text_content, limit 10; ms)")
    for c in ("papers", "chunks", "store MB", "build peak MB", "BM25 p50/p90", "dense p50/p90", "hybrid p50/p90",
              "paper-filtered hybrid p50", "hybrid p50 w/o encoding", "old/new p50 (all: bm25 dense hybrid)"):
        t.add_column(c)
    for r in rows:
        s = r["search"]["new"]["all"]
        f = r["search"]["new"].get("paper", {}).get("hybrid", {})
        ratio = r["search"].get("ratio_old_over_new_p50", {}).get("all")
        t.add_row(str(r["build"]["papers"]), str(r["build"]["chunks"]), str(r["build"]["store_mb"]),
                  str(r["build"]["peak_rss_mb"]),
                  *(f"{s[m]['p50_ms']} / {s[m]['p90_ms']}" for m in MODES), str(f.get("p50_ms", "")),
                  str(r["search"].get("encode_excluded", {}).get("new", {}).get("all", {}).get("hybrid", {}).get("p50_ms", "")),
                  " ".join(f"{ratio[m]}x" for m in MODES) if ratio else "")
    Console().print(t)


def plot(rows: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return False
    x = [r["build"]["papers"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for mode, style in zip(MODES, ("o-", "s-", "^-")):
        for q, dash in (("p50_ms", ""), ("p90_ms", "--")):
            y = [r["search"]["new"]["all"][mode][q] for r in rows]
            axes[0].plot(x, y, style if not dash else style[0] + dash, label=f"{mode} {q[:3]}")
        if rows and "old" in rows[0]["search"]:
            axes[0].plot(x, [r["search"]["old"]["all"][mode]["p50_ms"] for r in rows], style[0] + ":", alpha=0.5,
                         label=f"{mode} p50 (baseline)")
    axes[0].set(xlabel="papers", ylabel="ms", title="search latency (unfiltered)", xscale="log", yscale="log")
    axes[0].legend(fontsize=7)
    axes[1].plot(x, [r["build"]["peak_rss_mb"] for r in rows], "o-", label="build peak RSS")
    axes[1].plot(x, [r["search"]["peak_rss_mb"] for r in rows], "s-", label="search peak RSS")
    axes[1].plot(x, [r["build"]["store_mb"] for r in rows], "^-", label="store size")
    axes[1].set(xlabel="papers", ylabel="MB", title="memory and store size")
    axes[1].legend(fontsize=7)
    rates = [r["build"].get("chunks_per_s") for r in rows]
    axes[2].plot(x, rates, "o-", label="chunks/s (this step)")
    axes[2].set(xlabel="papers", ylabel="chunks per second", title="ingestion rate")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="store sizes in papers, ascending")
    p.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="where the stores live (outside the repo)")
    p.add_argument("--queries", type=int, default=20, help="QASPER dev questions timed per size and mode")
    p.add_argument("--repeats", type=int, default=2, help="passes over the queries")
    p.add_argument("--workers", type=int, default=2, help="PDF parser processes while building")
    p.add_argument("--baseline", help="git commit whose tools/search.py is timed beside the current one")
    p.add_argument("--build-only", action="store_true", help="build missing sizes, do not time search")
    p.add_argument("--search-only", action="store_true", help="time search on the sizes already built")
    p.add_argument("--note", default="", help="what else ran on the machine (kept in the JSON)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"results file, one key per part (default {DEFAULT_JSON}, under {PART})")
    p.add_argument("--plot", type=Path, default=DEFAULT_PLOT, help=f"search-time figure (default {DEFAULT_PLOT})")
    p.add_argument("--store", type=Path, help="time search on this existing store folder instead (no build); "
                   "results go to --json under 'store NAME'")
    p.add_argument("--build-step", type=int, help=argparse.SUPPRESS)
    p.add_argument("--search-step", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.build_step:
        print(json.dumps(build_step(args.root, args.build_step, args.workers)))
        return 0
    if args.search_step:
        print(json.dumps(search_step(args.root, args.search_step, args.queries, args.baseline, args.repeats)))
        return 0
    if args.store:
        import duckdb

        load_start = [round(x, 2) for x in os.getloadavg()]
        con = duckdb.connect(str(args.store / "papers.duckdb"), read_only=True)
        info = {"papers": con.execute("SELECT count(*) FROM metadata").fetchone()[0],
                "chunks": con.execute("SELECT count(*) FROM chunks").fetchone()[0]}
        con.close()
        res = measure_search(args.store, args.queries, args.baseline, args.repeats)
        out = {"store": args.store.name, **info, "baseline_commit": args.baseline, "note": args.note,
               "cpu_count": os.cpu_count(), "load_avg_start": load_start,
               "load_avg_end": [round(x, 2) for x in os.getloadavg()], "search": res}
        print(json.dumps(res, indent=1))
        write_results(args.json, out, part=f"store {args.store.name}")
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    rows = []
    load_start = [round(x, 2) for x in os.getloadavg()]
    for size in sizes:
        if args.search_only and not (args.root / f"size-{size}" / "scale-build.json").exists():
            print(f"size {size} not built: skipped")
            continue
        build = ensure_built(args.root, size, args.workers)
        secs = build.get("seconds", 0)
        new_chunks = build["chunks"] - (rows[-1]["build"]["chunks"] if rows else 0)
        build["chunks_per_s"] = round(new_chunks / secs, 1) if secs and rows else None
        row = {"size": size, "build": build}
        if not args.build_only:
            row["search"] = run_search(args.root, size, args.queries, args.baseline, args.repeats)
        rows.append(row)
        if not args.build_only:
            print_table(rows)
    if args.build_only or not rows:
        return 0
    result = {"sizes": sizes, "queries": args.queries, "baseline_commit": args.baseline, "targets": TARGETS,
              "cpu_count": os.cpu_count(), "load_avg_start": load_start,
              "load_avg_end": [round(x, 2) for x in os.getloadavg()], "note": args.note, "rows": rows}
    big = rows[-1]["search"]["new"]["all"]
    result["targets_met_at_largest"] = {
        "hybrid_p50": big["hybrid"]["p50_ms"] <= TARGETS["hybrid_p50_ms"],
        "hybrid_p90": big["hybrid"]["p90_ms"] <= TARGETS["hybrid_p90_ms"],
        "bm25_p50": big["bm25"]["p50_ms"] <= TARGETS["bm25_p50_ms"]}
    write_results(args.json, result, part=PART)
    plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

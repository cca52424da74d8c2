"""``evidex ingest PATH... --db NAME``: ingest PDFs (files, folders, globs) into a paper store.

    evidex ingest papers/ --db mypapers                             a folder of PDFs (searched recursively)
    evidex ingest paper.pdf --store-dir ./store                     a store in a folder of your choice
    evidex ingest papers/ --db mypapers --workers 2 --json          two parser processes, the report as JSON

Then ask it: evidex ask --db mypapers "question", or open the page: evidex web --db mypapers.

Upkeep of a store:
    evidex ingest --db NAME --remove PAPER_ID_OR_PATH ...   remove papers from DuckDB, Chroma and BM25
    evidex ingest --db NAME --sync FOLDER                   gone files removed, new and changed ingested
    evidex ingest --db NAME --check                         count orphan rows and index entries
    evidex ingest --db NAME --check --repair                make DuckDB, Chroma and BM25 agree again

A store has one writer at a time; a writer meeting another process that holds the store (a writer, or a run or web
page reading it) waits up to --wait-s seconds (EVIDEX_STORE_WAIT_S, default 10), then stops with one line naming it.

Exit code 0 when every file was ingested or skipped (or the check found nothing), 1 when any file failed (the
others are committed) or the check found a problem, 2 when the command could not run or had to stop (a usage or
config error, a store held by another process, a Chroma server that does not answer: the message says what was
kept and how to go on).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evidex.tools.ingest.errors import IngestError
from evidex.tools.ingest.pipeline import IngestReport, ingest
from evidex.tools.ingest.upkeep import RepairReport, StoreCheck, UpkeepReport, check_store, remove, repair_store, sync
from evidex.tools.ray_cluster import RayClusterError
from evidex.tools.store import StoreError


def build_arg_parser() -> argparse.ArgumentParser:
    from evidex.tools.cli_help import plain_help

    p = argparse.ArgumentParser(prog="evidex ingest", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="PDF files, folders (searched recursively) or glob patterns")
    p.add_argument("--db", help="store name (under <cache_dir>/stores/NAME)")
    p.add_argument("--store-dir", help="explicit store folder (instead of --db)")
    p.add_argument("--config", default=None, help="ingestion config name in configs/ingest or a YAML path (default: default)")
    p.add_argument("--chroma-server", metavar="HOST:PORT",
                   help="keep the dense vectors in this Chroma server (chroma run --path DIR --host 127.0.0.1 --port "
                        "PORT) instead of the store folder; = vector: {mode: http, host, port} in the config. "
                        "Recorded in the store: later runs, search and --remove use it without the flag")
    p.add_argument("--metadata-dir", help="folder of AirQA-style metadata JSONs (<uuid>.json or <pdf stem>.json)")
    p.add_argument("--from-scratch", action="store_true", help="delete the store and rebuild it")
    p.add_argument("--workers", type=int, default=None,
                   help="parser processes (default: 2 when there are 3 or more PDFs to parse, else 1 in-process); with "
                        "processes, parsing the next PDFs overlaps embedding the current one. With --executor ray: Ray "
                        "workers that each parse and embed (default: one per CPU of the cluster)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local (default): parser processes on this machine (embedding as --embed-in says). ray: "
                        "PDFs parsed and embedded on Ray workers, this process the single writer to "
                        "DuckDB/Chroma/BM25 (needs pip install 'evidex[scale]'; docs/scaling-out.md)")
    p.add_argument("--embed-in", choices=("workers", "writer"), default="workers",
                   help="workers (default): parser processes / Ray workers also embed what they parse, each with its "
                        "share of the cores; writer: they only parse and this process embeds (one copy of the embedding "
                        "model in memory instead of one per worker)")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="with --executor ray: join this Ray cluster (ray start --head ...) instead of starting a Ray "
                        "on loopback for this run")
    p.add_argument("--skip-dense", action="store_true", help="parse, store and BM25-index only; embed on a later run")
    p.add_argument("--remove", nargs="+", metavar="PAPER_ID_OR_PATH",
                   help="remove these papers (metadata.paper_id, or the path a PDF was ingested from, even if the file "
                        "is gone) from DuckDB, Chroma and BM25; an unknown one stops the command before any change")
    p.add_argument("--sync", metavar="FOLDER",
                   help="make the store match FOLDER: papers ingested from it whose files are gone are removed, new and "
                        "changed PDFs ingested (papers from elsewhere stay); an interrupted sync is completed by the next")
    p.add_argument("--check", action="store_true",
                   help="after any other action (or alone): count rows and index entries that DuckDB, Chroma and BM25 "
                        "disagree on; exit 1 if there are any")
    p.add_argument("--repair", action="store_true",
                   help="with --check: make the store consistent again: finish interrupted removals, delete rows and "
                        "vectors (also on a Chroma server) that belong to no paper of the store, embed papers whose "
                        "vectors are missing, rebuild the keyword indexes")
    p.add_argument("--wait-s", type=float, metavar="SECONDS",
                   help="how long to wait for another process that holds the store (default: EVIDEX_STORE_WAIT_S or "
                        "10)")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def print_report(report: IngestReport, console: Console) -> None:
    table = Table(title=f"Ingestion into {report.store}", show_lines=False)
    for col in ("status", "file", "paper_id", "pages", "detail"):
        table.add_column(col, overflow="fold")
    style = {"ingested": "green", "skipped": "dim", "reindexed": "cyan", "failed": "bold red"}
    for f in sorted(report.files, key=lambda f: (f.status != "failed", f.path)):
        detail = f.error or (f.title or "")
        if f.warnings:
            detail += f"  [yellow]({'; '.join(f.warnings)[:160]})[/yellow]"
        table.add_row(f"[{style[f.status]}]{f.status}[/]", f.path.rsplit("/", 1)[-1], (f.paper_id or "")[:8], str(f.pages or ""), detail)
    console.print(table)
    rows = ", ".join(f"{k} {v}" for k, v in report.rows.items())
    console.print(f"rows: {rows}")
    console.print(
        f"ingested {report.count('ingested')}, skipped {report.count('skipped')}, reindexed {report.count('reindexed')}, "
        f"failed {report.count('failed')} in {report.seconds.get('total', 0):.1f}s"
    )
    ex = report.executor
    if ex.get("name") == "ray":
        console.print(f"executor: Ray at {ex.get('address')}, {ex.get('workers', 0)} worker(s) parsing and embedding"
                      f" (start-up {ex.get('startup_s', 0):.1f}s), {ex.get('worker_deaths', 0)} died, files handed out "
                      f"again: {len(ex.get('handed_out_again', []))}")
    if report.memory:
        m = report.memory
        console.print(f"memory: peak {m['peak_rss_mb']:.0f} MB resident, final {m['rss_mb']:.0f} MB"
                      + (f", parser processes peak {m['children_peak_rss_mb']:.0f} MB" if m.get("children_peak_rss_mb") else ""))


def print_upkeep(upkeep: UpkeepReport, console: Console) -> None:
    if upkeep.finished_pending:
        console.print(f"finished {upkeep.finished_pending} interrupted removal(s)")
    for r in upkeep.removed:
        console.print(f"[yellow]removed[/yellow] {r.paper_id[:8]}  {r.path or ''}  {r.title or ''}")
    if upkeep.rows:
        console.print("rows: " + ", ".join(f"{k} {v}" for k, v in upkeep.rows.items()))
        console.print(f"removed {len(upkeep.removed)} paper(s) in {upkeep.seconds:.1f}s")


def print_check(check: StoreCheck, console: Console) -> None:
    table = Table(title=f"Consistency of {check.store} ({check.papers} papers)")
    for col in ("index", "kind", "cells", "entries", "orphans", "missing"):
        table.add_column(col)
    for p in check.indexes:
        table.add_row(p.pair, p.kind, str(p.cells), str(p.entries), str(p.orphans), str(p.missing))
    console.print(table)
    if check.ok:
        console.print("[green]consistent[/green]: 0 orphan rows, 0 orphan or missing index entries")
    else:
        for line in check.problems():
            console.print(f"[red]problem:[/red] {escape(line)}")


def print_repair(repaired: RepairReport, console: Console) -> None:
    before = repaired.before
    if before.ok:
        console.print("nothing to repair")
    else:
        for line in before.problems():
            console.print(f"[yellow]found:[/yellow] {escape(line)}")
        console.print(f"repaired in {repaired.seconds:.1f}s: {repaired.rows_deleted} orphan rows and "
                      f"{repaired.vectors_deleted} orphan vectors deleted"
                      + (f" (collections {', '.join(repaired.collections_deleted)})" if repaired.collections_deleted else "")
                      + f", {repaired.papers_embedded} papers embedded again, keyword indexes rebuilt")
    print_check(repaired.after, console)


def main(argv: list[str] | None = None) -> int:
    parser = build_arg_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console(stderr=False)
    if not args.db and not args.store_dir:
        console.print("[red]error:[/red] give --db NAME or --store-dir DIR")
        return 2
    actions = sum(bool(x) for x in (args.paths, args.remove, args.sync))
    if actions > 1:
        console.print("[red]error:[/red] give PDF paths, --remove or --sync, one at a time")
        return 2
    if actions == 0 and not args.check:
        parser.print_usage()
        console.print("[red]error:[/red] give PDF paths to ingest, --remove, --sync or --check")
        return 2
    if args.repair and not args.check:
        console.print("[red]error:[/red] --repair goes with --check (evidex ingest --db NAME --check --repair)")
        return 2
    if args.wait_s is not None and args.wait_s < 0:
        console.print(f"[red]error:[/red] --wait-s must be 0 or more (got {args.wait_s:g})")
        return 2
    status = 0
    try:
        if args.remove:
            upkeep = remove(args.remove, args.db, store_dir=args.store_dir, config=args.config, progress=not args.quiet,
                            wait_s=args.wait_s)
            print(upkeep.model_dump_json(indent=1)) if args.json else print_upkeep(upkeep, console)
        elif args.sync:
            upkeep, report = sync(args.sync, args.db, store_dir=args.store_dir, config=args.config,
                                  metadata_dir=args.metadata_dir, workers=args.workers, skip_dense=args.skip_dense,
                                  progress=not args.quiet, executor=args.executor, ray_address=args.ray_address,
                                  embed_in=args.embed_in, wait_s=args.wait_s)
            if args.json:
                print(json.dumps({"removed": upkeep.model_dump(), "ingested": report.model_dump()}, indent=1))
            else:
                print_upkeep(upkeep, console)
                print_report(report, console)
            status = 1 if report.failed else 0
        elif args.paths:
            status = _ingest(args, console)
        if args.check and args.repair:
            repaired = repair_store(args.db, store_dir=args.store_dir, config=args.config, progress=not args.quiet,
                                    wait_s=args.wait_s)
            print(repaired.model_dump_json(indent=1)) if args.json else print_repair(repaired, console)
            status = status or (0 if repaired.after.ok else 1)
        elif args.check:
            check = check_store(args.db, store_dir=args.store_dir, config=args.config, wait_s=args.wait_s)
            print(check.model_dump_json(indent=1)) if args.json else print_check(check, console)
            status = status or (0 if check.ok else 1)
    except (IngestError, StoreError, RayClusterError) as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)  # one line, however long
        return 2
    return status


def _ingest(args, console: Console) -> int:
    from evidex.tools.vectorstore import parse_server

    report = ingest(
        args.paths,
        args.db,
        store_dir=args.store_dir,
        config=args.config,
        metadata_dir=args.metadata_dir,
        from_scratch=args.from_scratch,
        workers=args.workers,
        skip_dense=args.skip_dense,
        progress=not args.quiet,
        vector=parse_server(args.chroma_server) if args.chroma_server else None,
        executor=args.executor,
        ray_address=args.ray_address,
        embed_in=args.embed_in,
        wait_s=args.wait_s,
    )
    if args.json:
        print(report.model_dump_json(indent=1))
    else:
        print_report(report, console)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())

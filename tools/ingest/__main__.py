"""``python -m tools.ingest PATH... --db NAME``: ingest PDFs (files, folders, globs) into a paper store.

Exit code 0 when every file was ingested or skipped, 1 when any file failed (the others are committed),
2 on a usage/config error.
"""
from __future__ import annotations

import argparse
import logging
import sys

from rich.console import Console
from rich.table import Table

from evidex.tools.ingest.errors import IngestError
from evidex.tools.ingest.pipeline import IngestReport, ingest
from evidex.tools.store import StoreError


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.ingest", description="Ingest PDFs into a multiview paper store.")
    p.add_argument("paths", nargs="+", help="PDF files, folders (searched recursively) or glob patterns")
    p.add_argument("--db", help="store name (under <cache_dir>/stores/NAME)")
    p.add_argument("--store-dir", help="explicit store folder (instead of --db)")
    p.add_argument("--config", default=None, help="ingestion config name in configs/ingest or a YAML path (default: default)")
    p.add_argument("--metadata-dir", help="folder of AirQA-style metadata JSONs (<uuid>.json or <pdf stem>.json)")
    p.add_argument("--from-scratch", action="store_true", help="delete the store and rebuild it")
    p.add_argument("--workers", type=int, default=1, help="parser processes (default 1)")
    p.add_argument("--skip-dense", action="store_true", help="parse, store and BM25-index only; embed on a later run")
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


def main(argv: list[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console(stderr=False)
    if not args.db and not args.store_dir:
        console.print("[red]error:[/red] give --db NAME or --store-dir DIR")
        return 2
    try:
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
        )
    except (IngestError, StoreError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    if args.json:
        print(report.model_dump_json(indent=1))
    else:
        print_report(report, console)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())

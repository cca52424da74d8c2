"""A compact, live description of a paper store for agent prompts: tables, columns, types, comments, row
counts (read from DuckDB, so it always matches the data), the searchable (table, column) pairs from the
index manifest, and the search-filter grammar in two lines.

    python -m evidex.tools.schema_prompt --db NAME
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evidex.tools.store import TABLES, StoreError, connect_readonly, read_index_manifest, require_store, store_paths

FILTER_HELP = (
    "Search filters are Milvus-style conditions over pdf_id, page_number, primary_key, table_name, column_name and "
    "bbox ([x0,y0,w,h]): ==, !=, <, <=, >, >=, in [..], not in [..], like 'a%', and/or/not, + - * / ** %, bbox[0], "
    "array_length(bbox), array_contains(bbox, v). Example: pdf_id == '<uuid>' and page_number <= 3"
)


def schema_prompt(
    db: str | None = None,
    store_dir: str | Path | None = None,
    *,
    comments: bool = True,
    include_search: bool = True,
    tables: list[str] | None = None,
) -> str:
    paths = require_store(store_paths(db, store_dir))
    cur = connect_readonly(paths.db).cursor()
    try:
        cols = cur.execute(
            "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
            "WHERE schema_name = 'main' ORDER BY table_name, column_index"
        ).fetchall()
        table_comments = dict(
            cur.execute("SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()
        )
        names = [t for t in TABLES if t in table_comments] + sorted(set(table_comments) - set(TABLES))
        if tables:
            names = [t for t in names if t in tables]
        counts = {t: cur.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in names}
    finally:
        cur.close()
    by_table: dict[str, list[tuple[str, str, str | None]]] = {}
    for t, c, typ, com in cols:
        by_table.setdefault(t, []).append((c, typ, com))
    lines = [
        "Database: DuckDB, read-only, one SELECT per call. Boxes are [x0, y0, w, h] in PDF points (origin top-left); "
        "page_number is 1-based; ref_paper_id/ref_page_id link rows to metadata.paper_id/pages.page_id."
    ]
    for t in names:
        spec = TABLES.get(t)
        head = f"TABLE {t} ({counts[t]} rows)"
        if comments and table_comments.get(t):
            head += f" -- {table_comments[t]}"
        lines.append(head)
        for c, typ, com in by_table.get(t, []):
            pk = " PK" if spec is not None and c == spec.primary_key else ""
            tail = f" -- {com}" if comments and com else ""
            lines.append(f"  {c} {typ}{pk}{tail}")
    if include_search:
        manifest = read_index_manifest(paths)
        pairs = [p for p in manifest.get("pairs", []) if p.get("dense_entries") or p.get("bm25_entries")]
        if pairs:
            lines.append(f"Searchable columns (search tool; dense model {manifest.get('embedding_model')}):")
            for p in pairs:
                kinds = "+".join(k for k in ("dense", "bm25") if p.get(f"{k}_entries"))
                n = max(p.get("dense_entries", 0), p.get("bm25_entries", 0))
                lines.append(f"  {p['table']}.{p['column']}: {kinds} ({n} entries)")
            lines.append(FILTER_HELP)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evidex.tools.schema_prompt",
                                description="Print the schema prompt of a store.")
    p.add_argument("--db")
    p.add_argument("--store-dir")
    p.add_argument("--no-comments", action="store_true")
    a = p.parse_args(argv)
    try:
        print(schema_prompt(a.db, a.store_dir, comments=not a.no_comments))
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

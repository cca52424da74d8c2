"""Read-only SQL over a paper store, safe to hand to an agent.

    python -m evidex.tools.sql --db NAME "SELECT title, num_pages FROM metadata"

Two lines of defence:
1. A policy check on the parsed statement, not on regexes: DuckDB's own parser (``extract_statements``)
   must see exactly one SELECT; the token stream must not start with PRAGMA/SET/...; and the serialized
   AST (``json_serialize_sql``) plus the token stream must not call a file/network/extension/meta function
   (read_csv, read_parquet, glob, read_text, query, json_execute_serialized_sql, ...) nor name a file as a
   table. Refusals raise ``SQLPolicyError`` with the reason.
2. The engine: a ``read_only`` connection with ``enable_external_access=false``, no Python replacement scans,
   no extension autoload, a memory limit, and ``lock_configuration=true`` so no SET can undo it. Queries run on
   a cursor with a timeout (``interrupt()`` from a timer thread) and row/character caps on the result.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import decimal
import json
import sys
import threading
import time
import uuid
from pathlib import Path

import duckdb
from pydantic import BaseModel, Field

from evidex.tools.store import TABLES, StoreError, StorePaths, connect_readonly, require_store, store_paths

MAX_SQL_CHARS = 20_000
DEFAULT_MAX_ROWS = 10
DEFAULT_MAX_CHARS = 5_000
DEFAULT_TIMEOUT_S = 10.0
MAX_CELL_CHARS = 2_000

# Functions that read or write files, reach the network, run SQL from strings, or touch extensions/secrets.
DENIED_FUNCTIONS = frozenset(
    """
    read_csv read_csv_auto sniff_csv csv_scan read_parquet parquet_scan parquet_metadata parquet_schema
    parquet_file_metadata parquet_kv_metadata parquet_bloom_probe read_json read_json_auto read_json_objects
    read_json_objects_auto read_ndjson read_ndjson_auto read_ndjson_objects json_execute_serialized_sql
    read_text read_blob glob read_xlsx read_xls read_duckdb st_read st_readosm st_read_meta sqlite_scan
    sqlite_attach postgres_scan postgres_scan_pushdown postgres_attach postgres_query postgres_execute mysql_scan
    mysql_query mysql_execute iceberg_scan iceberg_metadata iceberg_snapshots delta_scan query query_table
    getenv load_aws_credentials duckdb_secrets which_secret checkpoint force_checkpoint arrow_scan
    arrow_scan_dumb pandas_scan python_map_function install_extension load_extension duckdb_extensions
    enable_profiling disable_profiling system shell httpfs http_get http_post
    """.split()
)
ALLOWED_TABLE_FUNCTIONS = frozenset(
    """
    range generate_series unnest repeat json_each json_tree duckdb_tables duckdb_columns duckdb_views
    duckdb_constraints duckdb_indexes duckdb_schemas duckdb_types duckdb_functions duckdb_keywords
    duckdb_databases duckdb_dependencies duckdb_sequences pragma_table_info pragma_show pragma_storage_info
    pragma_database_size summary
    """.split()
)
ALLOWED_LEADING = frozenset({"select", "with", "values", "from", "describe", "show", "summarize", "table", "("})


class SQLPolicyError(ValueError):
    """The statement is not allowed for the read-only SQL tool; the message says why."""


class SQLArgs(BaseModel):
    sql: str = Field(..., min_length=1, max_length=MAX_SQL_CHARS, description="one read-only SELECT statement (DuckDB dialect)")


class SQLResult(BaseModel):
    columns: list[str]
    rows: list[list]
    row_count: int  # rows returned (after caps)
    truncated: bool
    truncated_by: str | None = None  # max_rows | max_chars
    seconds: float

    def to_text(self) -> str:
        if not self.rows:
            return "[Warning]: The SQL execution result is empty; check the query (table/column names, filters)."
        lines = [json.dumps(dict(zip(self.columns, r)), ensure_ascii=False) for r in self.rows]
        if self.truncated:
            lines.append(f"... only {self.row_count} rows are displayed, the result is truncated by {self.truncated_by}.")
        else:
            lines.append(f"In total, {self.row_count} rows are displayed.")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ policy


def check_sql(sql: str, known_tables: set[str] | None = None) -> None:
    """Raise SQLPolicyError unless ``sql`` is a single read-only SELECT without file/meta functions."""
    if len(sql) > MAX_SQL_CHARS:
        raise SQLPolicyError(f"The query is too long ({len(sql)} chars, max {MAX_SQL_CHARS}).")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise SQLPolicyError(f"The query does not parse: {exc}") from None
    if len(statements) != 1:
        raise SQLPolicyError(f"Send exactly one statement (got {len(statements)}); no ';'-separated batches.")
    stmt = statements[0]
    if stmt.type != duckdb.StatementType.SELECT:
        kind = str(stmt.type).split(".")[-1]
        raise SQLPolicyError(
            f"Only read-only SELECT queries are allowed; this is a {kind} statement "
            "(DDL, DML, ATTACH, COPY, EXPORT, INSTALL/LOAD, PRAGMA, SET, CALL and transactions are refused)."
        )
    tokens = _tokens(sql)
    if not tokens:
        raise SQLPolicyError("The query is empty.")
    lead = tokens[0][1].lower()
    if lead not in ALLOWED_LEADING:
        raise SQLPolicyError(f"Statements starting with {tokens[0][1].upper()!r} are not allowed; write a SELECT.")
    for name in _called_functions(tokens):
        if name in DENIED_FUNCTIONS:
            raise SQLPolicyError(f"The function {name}() is not allowed: it reads files, the network or runs other SQL.")
    for i, (kind, text) in enumerate(tokens[:-1]):
        if kind == "keyword" and text.lower() in ("from", "join") and tokens[i + 1][0] == "string":
            raise SQLPolicyError("Reading a file by naming it in FROM ('file.csv') is not allowed; query the tables.")
    _check_ast(sql, known_tables)


def _tokens(sql: str) -> list[tuple[str, str]]:
    out = []
    toks = duckdb.tokenize(sql)
    for i, (pos, ttype) in enumerate(toks):
        end = toks[i + 1][0] if i + 1 < len(toks) else len(sql)
        kind = str(ttype).split(".")[-1]
        if kind == "comment":
            continue
        out.append((kind, sql[pos:end].strip()))
    return out


def _called_functions(tokens: list[tuple[str, str]]) -> set[str]:
    names = set()
    for (kind, text), (_, nxt) in zip(tokens, tokens[1:]):
        if kind in ("identifier", "keyword") and nxt.startswith("("):
            names.add(text.strip('"').lower().split(".")[-1])
    return names


_PARSER_LOCK = threading.Lock()
_PARSER: duckdb.DuckDBPyConnection | None = None


def _serialize(sql: str) -> str:
    """json_serialize_sql on a private in-memory connection (kept: opening one costs ~20-50 ms)."""
    global _PARSER
    with _PARSER_LOCK:
        if _PARSER is None:
            _PARSER = duckdb.connect(":memory:", config={"enable_external_access": False})
        return _PARSER.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0]


def _check_ast(sql: str, known_tables: set[str] | None) -> None:
    tree = json.loads(_serialize(sql))  # parsing only; nothing of the query is executed here
    if tree.get("error"):
        return  # statement shapes the serializer does not support (e.g. DESCRIBE); tokens + engine still apply
    ctes: set[str] = set()
    base_tables: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            fname = node.get("function_name")
            if isinstance(fname, str) and fname.lower() in DENIED_FUNCTIONS:
                raise SQLPolicyError(f"The function {fname}() is not allowed: it reads files, the network or runs other SQL.")
            if node.get("type") == "TABLE_FUNCTION":
                fn = (node.get("function") or {}).get("function_name", "")
                if fn.lower() not in ALLOWED_TABLE_FUNCTIONS:
                    raise SQLPolicyError(
                        f"The table function {fn}() is not allowed (allowed: {', '.join(sorted(ALLOWED_TABLE_FUNCTIONS))})."
                    )
            if node.get("type") == "BASE_TABLE":
                base_tables.append(str(node.get("table_name", "")))
            cte_map = node.get("cte_map")
            if isinstance(cte_map, dict):
                for entry in cte_map.get("map", []):
                    if isinstance(entry, dict) and "key" in entry:
                        ctes.add(str(entry["key"]).lower())
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(tree)
    for name in base_tables:
        if any(c in name for c in "/\\:~") or "." in name:
            raise SQLPolicyError(f"{name!r} looks like a file path; only the store's tables can be queried.")
        if known_tables is not None and name.lower() not in known_tables and name.lower() not in ctes:
            raise SQLPolicyError(
                f"Unknown table {name!r}. Tables: {', '.join(TABLES)} (plus information_schema and duckdb_* views)."
            )


# ------------------------------------------------------------------------------------------------ execution


def _jsonable(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v if not isinstance(v, str) or len(v) <= MAX_CELL_CHARS else v[:MAX_CELL_CHARS] + " ..."
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else str(v)
    if isinstance(v, (uuid.UUID, decimal.Decimal)):
        return str(v) if isinstance(v, uuid.UUID) else float(v)
    if isinstance(v, (_dt.date, _dt.datetime, _dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(v))} bytes>"
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v[:200]]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in list(v.items())[:200]}
    return str(v)


_KNOWN: dict[Path, set[str]] = {}


def _known_tables(con: duckdb.DuckDBPyConnection, db: Path) -> set[str]:
    if db not in _KNOWN:
        cur = con.cursor()
        names = {r[0].lower() for r in cur.execute("SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views()").fetchall()}
        cur.close()
        _KNOWN[db] = names
    return _KNOWN[db]


def run_sql(
    sql: str,
    db: str | None = None,
    store_dir: str | Path | None = None,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_chars: int = DEFAULT_MAX_CHARS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> SQLResult:
    """Check and run one read-only query. Raises SQLPolicyError, TimeoutError or duckdb.Error."""
    paths: StorePaths = require_store(store_paths(db, store_dir))
    con = connect_readonly(paths.db)
    check_sql(sql, _known_tables(con, paths.db.resolve()))
    cur = con.cursor()
    timer = threading.Timer(timeout_s, cur.interrupt)
    t0 = time.perf_counter()
    timer.start()
    try:
        cur.execute(sql)
        raw = cur.fetchmany(max_rows + 1)
        columns = [d[0] for d in (cur.description or [])]
    except duckdb.InterruptException:
        raise TimeoutError(f"The SQL query took longer than {timeout_s:g} s and was cancelled; add filters or a LIMIT.") from None
    finally:
        timer.cancel()
        cur.close()
    rows: list[list] = []
    used = 0
    truncated_by = "max_rows" if len(raw) > max_rows else None
    for r in raw[:max_rows]:
        row = [_jsonable(v) for v in r]
        size = len(json.dumps(row, ensure_ascii=False))
        if rows and used + size > max_chars:
            truncated_by = "max_chars"
            break
        if not rows and size > max_chars:  # one huge row: cut its cells so the cap still holds
            row = [_cap(v, max(50, max_chars // max(1, len(row)))) for v in row]
            size = len(json.dumps(row, ensure_ascii=False))
            truncated_by = truncated_by or "max_chars"
        rows.append(row)
        used += size
    return SQLResult(
        columns=columns,
        rows=rows,
        row_count=len(rows),
        truncated=truncated_by is not None,
        truncated_by=truncated_by,
        seconds=round(time.perf_counter() - t0, 4),
    )


def _cap(v, n: int):
    s = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v
    return v if len(s) <= n else s[:n] + " ..."


def sql_observation(sql: str, db: str | None = None, store_dir: str | Path | None = None, **caps) -> str:
    """Agent-facing wrapper: never raises for a bad query, returns an [Error]/[Warning] text instead."""
    try:
        return run_sql(sql, db, store_dir, **caps).to_text()
    except SQLPolicyError as exc:
        return f"[Refused]: {exc}"
    except TimeoutError as exc:
        return f"[TimeoutError]: {exc}"
    except StoreError as exc:
        return f"[Error]: {exc}"
    except duckdb.Error as exc:
        return f"[Error]: {type(exc).__name__}: {str(exc).splitlines()[0][:500]}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evidex.tools.sql",
                                description="Run one read-only SQL query on a paper store.")
    p.add_argument("query")
    p.add_argument("--db", help="store name")
    p.add_argument("--store-dir", help="store folder (instead of --db)")
    p.add_argument("--max-rows", type=int, default=DEFAULT_MAX_ROWS)
    p.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    try:
        res = run_sql(a.query, a.db, a.store_dir, max_rows=a.max_rows, max_chars=a.max_chars, timeout_s=a.timeout)
    except (SQLPolicyError, TimeoutError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except duckdb.Error as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(res.model_dump_json(indent=1) if a.json else res.to_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Read-only SQL tool: real queries work; 60+ hostile statements cannot write, read files, load extensions
or escape the row/char/time caps; the engine settings hold even when the policy check is bypassed."""
from __future__ import annotations

import json
import time
from pathlib import Path

import duckdb
import pytest

from evidex.tools.sql import SQLPolicyError, check_sql, run_sql, sql_observation
from evidex.tools.store import TABLES, close_readonly, connect_readonly, store_paths

SENTINEL = Path("/tmp/evidex_sql_sentinel")

HOSTILE = [
    # DDL / DML
    "CREATE TABLE evil(a INT)",
    "CREATE TEMP TABLE evil AS SELECT 1",
    "CREATE VIEW v AS SELECT 1",
    "CREATE MACRO m(a) AS a + 1",
    "CREATE SEQUENCE s",
    "CREATE SCHEMA evil",
    "CREATE INDEX i ON chunks(ordinal)",
    "DROP TABLE metadata",
    "ALTER TABLE metadata ADD COLUMN evil INT",
    "INSERT INTO pages (page_id) VALUES ('6ba7b810-9dad-11d1-80b4-00c04fd430c8')",
    "UPDATE metadata SET title = 'owned'",
    "DELETE FROM chunks",
    "TRUNCATE chunks",
    "WITH x AS (SELECT 1) DELETE FROM chunks",
    # files
    f"COPY metadata TO '{SENTINEL}'",
    "COPY metadata FROM '/etc/passwd'",
    f"COPY (SELECT 1) TO '{SENTINEL}' (FORMAT csv)",
    f"EXPORT DATABASE '{SENTINEL}'",
    f"IMPORT DATABASE '{SENTINEL}'",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM READ_CSV('/etc/passwd')",
    "SELECT * FROM \"read_csv\"('/etc/passwd')",
    "SELECT * FROM read_csv(['/etc/passwd', '/etc/hosts'])",
    "SELECT * FROM read_parquet('/tmp/x.parquet')",
    "SELECT * FROM parquet_scan('/tmp/x.parquet')",
    "SELECT * FROM parquet_metadata('/tmp/x.parquet')",
    "SELECT * FROM read_json('/etc/hosts')",
    "SELECT * FROM read_json_auto('/etc/hosts')",
    "SELECT * FROM read_ndjson('/etc/hosts')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT content FROM read_blob('/etc/passwd')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM \"/etc/passwd\"",
    "FROM '/etc/hosts'",
    "SELECT * FROM 'data.csv'",
    "SELECT (SELECT count(*) FROM read_text('/etc/passwd')) AS n",
    "SELECT * FROM chunks WHERE text_content IN (SELECT content FROM read_text('/etc/passwd'))",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
    "SELECT * FROM query_table('metadata')",
    "SELECT json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
    "SELECT getenv('HOME')",
    "SELECT * FROM sqlite_scan('/tmp/x.db', 'x')",
    "SELECT * FROM duckdb_secrets()",
    # attach / extensions
    f"ATTACH '{SENTINEL}.db' AS evil",
    "ATTACH ':memory:' AS mem",
    "DETACH papers",
    "INSTALL httpfs",
    "FORCE INSTALL fts",
    "LOAD httpfs",
    "LOAD '/tmp/evil.duckdb_extension'",
    # settings / meta statements
    "SET enable_external_access = true",
    "SET GLOBAL threads = 64",
    "RESET enable_external_access",
    "PRAGMA enable_profiling",
    "PRAGMA table_info('metadata')",
    "CALL pragma_version()",
    "USE memory",
    "CHECKPOINT",
    "VACUUM",
    "BEGIN TRANSACTION",
    "COMMIT",
    "PREPARE p AS SELECT 1",
    "EXECUTE p",
    # batches and comment tricks
    "SELECT 1; DROP TABLE metadata",
    "SELECT 1; SELECT 2",
    "SELECT 1 /* harmless */; DELETE FROM chunks",
    "-- comment\nDROP TABLE chunks",
    # resource / cap escapes (must be capped or cancelled, not refused)
    "SELECT * FROM range(1000000)",
    "SELECT repeat('x', 50000000) AS big",
    "SELECT string_agg(text_content, ' ') FROM chunks, range(200)",
    "SELECT count(*) FROM range(100000000000)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT a.range * b.range FROM range(100000) a, range(100000) b ORDER BY 1 DESC",
    "SELECT * FROM some_python_variable",
]


@pytest.fixture()
def store(synthetic_store):
    return synthetic_store[0]


def _fingerprint(store) -> dict:
    con = connect_readonly(store_paths(store_dir=store).db)
    cur = con.cursor()
    counts = {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    tables = sorted(r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall())
    titles = sorted(r[0] for r in cur.execute("SELECT title FROM metadata").fetchall())
    return {"counts": counts, "tables": tables, "titles": titles}


def test_real_queries(store):
    res = run_sql("SELECT title, num_pages FROM metadata ORDER BY title", store_dir=store)
    assert res.columns == ["title", "num_pages"]
    assert [r[1] for r in res.rows] == [3, 3]
    res = run_sql("SELECT count(*) FROM chunks c JOIN pages p ON p.page_id = c.ref_page_id WHERE p.page_number = 1", store_dir=store)
    assert res.rows[0][0] >= 2
    res = run_sql("DESCRIBE chunks", store_dir=store)
    assert "bounding_box" in [r[0] for r in res.rows]
    assert "In total" in run_sql("SELECT 1 AS one", store_dir=store).to_text()


def test_hostile_statements_cannot_do_harm(store):
    assert len(HOSTILE) >= 50
    before = _fingerprint(store)
    SENTINEL.unlink(missing_ok=True)
    outcomes: dict[str, str] = {}
    for sql in HOSTILE:
        t = time.perf_counter()
        try:
            res = run_sql(sql, store_dir=store, max_rows=5, max_chars=2000, timeout_s=1.5)
        except SQLPolicyError:
            outcomes[sql] = "refused"
        except TimeoutError:
            outcomes[sql] = "timeout"
        except duckdb.Error:
            outcomes[sql] = "engine_error"
        else:
            outcomes[sql] = "ran"
            assert res.row_count <= 5
            assert len(json.dumps(res.rows)) <= 2000 + 200, sql
            assert "root:" not in json.dumps(res.rows)
        assert time.perf_counter() - t < 10, f"{sql!r} was not cancelled in time"
    assert not SENTINEL.exists() and not Path(f"{SENTINEL}.db").exists()
    assert _fingerprint(store) == before
    # everything that is not a plain capped SELECT must be refused by the policy itself
    ran = {s for s, o in outcomes.items() if o in ("ran", "timeout")}
    assert ran <= {
        "SELECT * FROM range(1000000)",
        "SELECT repeat('x', 50000000) AS big",
        "SELECT string_agg(text_content, ' ') FROM chunks, range(200)",
        "SELECT count(*) FROM range(100000000000)",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT a.range * b.range FROM range(100000) a, range(100000) b ORDER BY 1 DESC",
    }, ran
    assert sum(o == "refused" for o in outcomes.values()) >= 60


def test_caps_and_timeout(store):
    res = run_sql("SELECT * FROM range(1000)", store_dir=store, max_rows=7)
    assert res.row_count == 7 and res.truncated and res.truncated_by == "max_rows"
    res = run_sql("SELECT text_content FROM chunks", store_dir=store, max_rows=100, max_chars=300)
    assert res.truncated and len(json.dumps(res.rows)) <= 300 + 100
    res = run_sql("SELECT repeat('y', 100000) AS big", store_dir=store, max_chars=500)
    assert len(json.dumps(res.rows)) < 700 and res.truncated
    t = time.perf_counter()
    with pytest.raises(TimeoutError):
        run_sql("SELECT count(*) FROM range(100000000000)", store_dir=store, timeout_s=0.5)
    assert time.perf_counter() - t < 5
    # the shared connection still works after an interrupt
    assert run_sql("SELECT 42", store_dir=store).rows == [[42]]


def test_engine_is_the_second_line_of_defence(store):
    """Bypass check_sql and talk to the locked connection directly."""
    con = connect_readonly(store_paths(store_dir=store).db)
    cur = con.cursor()
    for sql in (
        "CREATE TABLE evil(a INT)",
        "DELETE FROM chunks",
        "SELECT * FROM read_text('/etc/passwd')",
        f"COPY (SELECT 1) TO '{SENTINEL}'",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "INSTALL httpfs",
    ):
        with pytest.raises(duckdb.Error):
            cur.execute(sql)
    assert not SENTINEL.exists()


def test_policy_messages_are_actionable():
    with pytest.raises(SQLPolicyError, match="Only read-only SELECT"):
        check_sql("DROP TABLE chunks")
    with pytest.raises(SQLPolicyError, match="exactly one statement"):
        check_sql("SELECT 1; SELECT 2")
    with pytest.raises(SQLPolicyError, match="read_csv"):
        check_sql("SELECT * FROM read_csv('x')")
    with pytest.raises(SQLPolicyError, match="Unknown table"):
        check_sql("SELECT * FROM papers_table", known_tables={"chunks"})
    assert sql_observation("SELECT * FROM nowhere_table", store_dir="/nonexistent").startswith("[")


def test_writer_can_reopen_after_readers(store, synthetic_dir, fake_embeddings):
    """Ingestion closes cached read-only connections before writing to the same file."""
    from evidex.tools.ingest import ingest

    run_sql("SELECT 1", store_dir=store)
    report = ingest([synthetic_dir], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert report.count("skipped") == 2
    close_readonly()
    assert run_sql("SELECT count(*) FROM metadata", store_dir=store).rows == [[2]]

"""Library upkeep (tools.ingest.upkeep): --remove and --sync keep DuckDB, Chroma and BM25 consistent, counted row by
row and entry by entry after each operation; a sync killed halfway (a real SIGKILL of a subprocess, once while
removing and once while ingesting) leaves a store the next sync completes; bad input changes nothing."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from evidex.tools.ingest import ingest
from evidex.tools.ingest.__main__ import main as ingest_cli
from evidex.tools.ingest.upkeep import UpkeepError, check_store, remove, sync
from evidex.tools.search import SearchArgs, get_engine
from evidex.tools.store import close_readonly
from pdfgen_helpers import make_paper_pdf

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def q(store: Path, sql: str):
    close_readonly(store / "papers.duckdb")
    con = duckdb.connect(str(store / "papers.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def assert_consistent(store: Path, papers: int) -> None:
    check = check_store(store_dir=store)
    assert check.ok, check.problems()
    assert check.orphans == 0 and check.papers == papers
    assert q(store, "SELECT count(*) FROM metadata")[0][0] == papers
    chunks = q(store, "SELECT count(*) FROM chunks")[0][0]
    by_pair = {(p.pair, p.kind): p for p in check.indexes}
    assert by_pair[("chunks.text_content", "dense")].entries == chunks
    assert by_pair[("chunks.text_content", "bm25")].entries == chunks
    manifest = json.loads((store / "indexes.json").read_text())
    pair = next(p for p in manifest["pairs"] if p["table"] == "chunks")
    assert pair["dense_entries"] == chunks and pair["bm25_entries"] == chunks


def make_papers(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        make_paper_pdf(folder / f"{n}.pdf", f"Upkeep Test Paper Called {n.title()}", seed=sum(map(ord, n)))


def test_remove_by_id_and_path_then_unknown_changes_nothing(tmp_path, fake_embeddings):
    src, store = tmp_path / "in", tmp_path / "store"
    make_papers(src, ["alpha", "beta", "gamma"])
    report = ingest([src], store_dir=store, embeddings=fake_embeddings, progress=False)
    assert_consistent(store, 3)
    ids = {Path(f.path).stem: f.paper_id for f in report.files}

    r = remove([ids["alpha"]], store_dir=store, progress=False)
    assert [p.paper_id for p in r.removed] == [ids["alpha"]]
    assert_consistent(store, 2)
    r = remove([str(src / "beta.pdf")], store_dir=store, progress=False)  # by path
    assert [p.paper_id for p in r.removed] == [ids["beta"]]
    assert_consistent(store, 1)
    hits = get_engine(store_dir=store, embeddings=fake_embeddings).search(
        SearchArgs(query="upkeep test paper", table="chunks", column="text_content", mode="hybrid", limit=50)).hits
    assert hits and {h.pdf_id for h in hits} == {ids["gamma"]}

    before = q(store, "SELECT count(*) FROM chunks")[0][0]
    with pytest.raises(UpkeepError, match="Not in the store.*nope.*Nothing was removed"):
        remove([ids["gamma"], "nope"], store_dir=store, progress=False)
    with pytest.raises(UpkeepError, match="a folder"):
        remove([str(src)], store_dir=store, progress=False)
    assert q(store, "SELECT count(*) FROM chunks")[0][0] == before
    assert_consistent(store, 1)

    # the CLI: unknown id is a usage error (2), --check passes (0)
    assert ingest_cli(["--store-dir", str(store), "--remove", "0000-not-a-paper", "--quiet"]) == 2
    assert ingest_cli(["--store-dir", str(store), "--check"]) == 0
    assert ingest_cli(["--store-dir", str(store), "--sync", str(tmp_path / "missing")]) == 2
    assert_consistent(store, 1)


def test_sync_removes_gone_adds_new_and_replaces_changed(tmp_path, fake_embeddings):
    src, other, store = tmp_path / "in", tmp_path / "other", tmp_path / "store"
    make_papers(src, ["alpha", "beta", "gamma"])
    make_papers(other, ["delta"])
    ingest([other], store_dir=store, embeddings=fake_embeddings, progress=False)
    up, rep = sync(src, store_dir=store, embeddings=fake_embeddings, progress=False)
    assert rep.count("ingested") == 3 and not up.removed
    assert_consistent(store, 4)

    (src / "alpha.pdf").unlink()
    make_paper_pdf(src / "beta.pdf", "Upkeep Test Paper Called Beta Revised", seed=99)  # changed content, same path
    make_papers(src, ["epsilon"])
    up, rep = sync(src, store_dir=store, embeddings=fake_embeddings, progress=False)
    assert [Path(p.path).name for p in up.removed] == ["alpha.pdf"]
    assert rep.count("ingested") == 2 and rep.count("skipped") == 1  # beta (new version), epsilon; gamma skipped
    assert_consistent(store, 4)  # beta's old version is gone; delta (another folder) stays
    titles = {r[0] for r in q(store, "SELECT title FROM metadata")}
    assert "Upkeep Test Paper Called Beta Revised" in titles and "Upkeep Test Paper Called Beta" not in titles
    assert "Upkeep Test Paper Called Delta" in titles


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {helpers!r})
    from pdfgen_helpers import FakeEmbeddings
    import evidex.tools.ingest.pipeline as pipeline
    import evidex.tools.ingest.removal as removal
    import evidex.tools.ingest.upkeep as upkeep

    kill_at = {kill_at!r}
    real_delete, real_index = removal.delete_vectors, pipeline.DenseIndexer.index_paper
    calls = {{"n": 0}}

    def delete_vectors(paths, ids):
        if kill_at == "removal":
            print("KILL ME", flush=True)
            time.sleep(60)
        return real_delete(paths, ids)

    def index_paper(self, con, pid):
        out = real_index(self, con, pid)
        calls["n"] += 1
        if kill_at == "ingest" and calls["n"] == 2:
            con.execute("UPDATE evidex.files SET dense_indexed = true WHERE paper_id = ?", [pid])
            print("KILL ME", flush=True)
            time.sleep(60)
        return out

    removal.delete_vectors = delete_vectors
    pipeline.DenseIndexer.index_paper = index_paper
    upkeep.sync({src!r}, store_dir={store!r}, embeddings=FakeEmbeddings(), progress=False)
    print("FINISHED", flush=True)
""")


@pytest.mark.parametrize("kill_at", ["removal", "ingest"])
def test_sync_killed_halfway_is_completed_by_the_next(tmp_path, fake_embeddings, kill_at):
    src, store = tmp_path / "in", tmp_path / "store"
    make_papers(src, ["alpha", "beta", "gamma"])
    sync(src, store_dir=store, embeddings=fake_embeddings, progress=False)
    assert_consistent(store, 3)
    (src / "alpha.pdf").unlink()
    (src / "beta.pdf").unlink()
    make_papers(src, ["delta", "epsilon", "zeta"])

    script = tmp_path / "kill_sync.py"
    script.write_text(KILL_SCRIPT.format(helpers=str(HERE), kill_at=kill_at, src=str(src), store=str(store)))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        deadline = time.monotonic() + 300
        line = ""
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line or line.strip() in ("KILL ME", "FINISHED"):
                break
        assert line.strip() == "KILL ME", (line, proc.stderr.read() if proc.poll() is not None else "")
        os.kill(proc.pid, signal.SIGKILL)  # a real kill, in the middle of the sync
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    # the store is readable and its committed part is whole; what is left over is counted, not hidden
    check = check_store(store_dir=store)
    assert check.orphan_rows == {k: 0 for k in check.orphan_rows} and check.files_without_rows == 0
    if kill_at == "removal":
        assert check.pending_removals == 2 and not check.ok
        assert q(store, "SELECT count(*) FROM metadata")[0][0] == 1
    else:
        assert q(store, "SELECT count(*) FROM metadata")[0][0] == 3  # gamma + two new papers committed

    up, rep = sync(src, store_dir=store, embeddings=fake_embeddings, progress=False)
    assert not rep.failed
    assert_consistent(store, 4)  # gamma, delta, epsilon, zeta
    names = sorted(Path(r[0]).name for r in q(store, "SELECT pdf_path FROM evidex.files"))
    assert names == ["delta.pdf", "epsilon.pdf", "gamma.pdf", "zeta.pdf"]

"""Removing papers from a store, journaled (see tools/ingest/upkeep.py for the protocol): used by ingestion (a new
version of a file replaces the old paper) and by ``--remove`` / ``--sync``."""
from __future__ import annotations

import datetime as dt

from evidex.tools.store import StorePaths


def chroma_client(paths: StorePaths):
    """The store's Chroma (embedded or its server, as recorded at ingestion); None when it holds no vectors yet."""
    from evidex.tools.vectorstore import chroma_client as open_client

    return open_client(paths.root, create=False)


def delete_vectors(paths: StorePaths, paper_ids: list[str]) -> None:
    """Delete the papers' entries from every collection of the store (any model, any column)."""
    client = chroma_client(paths)
    if client is None or not paper_ids:
        return
    for col in client.list_collections():
        col = client.get_collection(col.name if hasattr(col, "name") else col, embedding_function=None)
        for s in range(0, len(paper_ids), 100):
            col.delete(where={"pdf_id": {"$in": paper_ids[s : s + 100]}})


def queue_removals(con, paper_ids: list[str]) -> None:
    """Step 1 of a removal (one transaction): rows and file records deleted, ids queued for the vector stores."""
    from evidex.tools.ingest.writer import delete_paper

    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    con.execute("BEGIN TRANSACTION")
    try:
        for pid in paper_ids:
            delete_paper(con, pid)
            con.execute("DELETE FROM evidex.files WHERE CAST(paper_id AS VARCHAR) = ?", [pid])
            con.execute("INSERT OR REPLACE INTO evidex.pending_removals VALUES (?, ?)", [pid, now])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def finish_pending_removals(con, paths: StorePaths) -> int:
    """Step 2 for every queued removal (after a kill, or right after queueing). Returns how many were finished."""
    pending = [r[0] for r in con.execute("SELECT paper_id FROM evidex.pending_removals ORDER BY 1").fetchall()]
    if not pending:
        return 0
    # a queued paper that was ingested again since keeps its rows; only vectors of deleted rows may go
    live = {r[0] for r in con.execute("SELECT CAST(paper_id AS VARCHAR) FROM evidex.files").fetchall()}
    gone = [p for p in pending if p not in live]
    delete_vectors(paths, gone)
    if len(gone) < len(pending):
        con.execute("UPDATE evidex.files SET dense_indexed = false WHERE CAST(paper_id AS VARCHAR) IN "
                    "(SELECT paper_id FROM evidex.pending_removals)")
    con.execute("DELETE FROM evidex.pending_removals WHERE paper_id IN (SELECT unnest(?::VARCHAR[]))", [pending])
    return len(pending)



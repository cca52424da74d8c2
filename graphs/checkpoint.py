"""Persistent threads: a LangGraph checkpointer for graphs used in your own app.

A graph built with a checkpointer saves its state after every node under the ``thread_id`` of the run's config,
so a thread outlives the process: read it back later (``graph.get_state``), or continue a run that stopped
halfway (``graph.invoke(None, config)`` picks up at the node that did not finish):

    from evidex.graphs import build_graph
    graph = build_graph("civic/mixed", checkpointer="sqlite:///threads.sqlite")
    config = {"configurable": {"thread_id": "claim-42"}}
    graph.invoke({"input": item}, config)
    graph.get_state(config).values["prediction"]          # also from another process, later

Where threads go (``open_checkpointer``):

* ``sqlite:///PATH`` or a plain path: one SQLite file (the default; ``langgraph-checkpoint-sqlite``);
* ``postgres://...`` / ``postgresql://...``: a Postgres database, for many processes or machines at once
  (``pip install 'evidex[postgres]'``); the LangGraph API server uses Postgres the same way (docs/scaling-out.md);
* ``memory``: in this process only (tests).
"""
from __future__ import annotations

import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

POSTGRES_MISSING = ("a postgres:// checkpointer needs langgraph-checkpoint-postgres and psycopg: "
                    "pip install 'evidex[postgres]'")


class CheckpointError(ValueError):
    """A checkpointer address that cannot be opened; the message says which forms work."""


def open_checkpointer(where: Any):
    """A LangGraph checkpointer for ``where``: a ``BaseCheckpointSaver`` (returned as is), ``sqlite:///PATH``, a
    path, ``postgres[ql]://...`` or ``memory``. The SQLite file and its folder are created when missing."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    if isinstance(where, BaseCheckpointSaver):
        return where
    if isinstance(where, Path):
        where = str(where)
    if not isinstance(where, str) or not where.strip():
        raise CheckpointError(f"checkpointer {where!r}: give sqlite:///PATH, a file path, postgres://... or memory")
    text = where.strip()
    if text == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    if text.startswith(("postgres://", "postgresql://")):
        return _postgres(text)
    if "://" in text and not text.startswith("sqlite://"):
        raise CheckpointError(f"checkpointer {text.split('://')[0]}://...: unknown kind; give sqlite:///PATH, a file "
                              "path, postgres://... or memory")
    return _sqlite(Path(text.removeprefix("sqlite://")).expanduser())


def _sqlite(path: Path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the graph's threads (SqliteSaver serialises access with its own lock); WAL lets
        # another process read threads while this one writes.
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
    except (OSError, sqlite3.Error) as exc:
        raise CheckpointError(f"checkpointer sqlite:///{path}: cannot open it ({exc})") from None
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def _postgres(url: str):
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row
    except ImportError:
        raise CheckpointError(POSTGRES_MISSING) from None
    try:
        # The settings PostgresSaver.from_conn_string uses, on a connection that lives as long as the graph.
        conn = Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    except Exception as exc:  # noqa: BLE001 - psycopg.OperationalError and friends
        host = url.split("@")[-1].split("/")[0]  # never echo the password
        raise CheckpointError(f"checkpointer postgres at {host}: cannot connect ({type(exc).__name__}); is the "
                              "server running and the address right?") from None
    saver = PostgresSaver(conn)
    saver.setup()
    return saver


def with_checkpointer(graph, checkpointer: Any):
    """A copy of the compiled ``graph`` that saves its threads to ``checkpointer`` (see :func:`open_checkpointer`)."""
    return graph.copy(update={"checkpointer": open_checkpointer(checkpointer)})


SERVER_ENV = "EVIDEX_CHECKPOINTER"


def server_checkpoint_target() -> str:
    """Where the LangGraph server keeps threads: ``$EVIDEX_CHECKPOINTER`` (``sqlite:///PATH`` or
    ``postgres://...``), else ``<cache_dir>/langgraph/threads.sqlite``."""
    import os

    from evidex.tools.settings import get_settings

    target = os.environ.get(SERVER_ENV, "").strip()
    return target or f"sqlite:///{get_settings().cache_dir / 'langgraph' / 'threads.sqlite'}"


@asynccontextmanager
async def server_checkpointer():
    """The LangGraph API server's checkpointer (``"checkpointer": {"path":
    "evidex.graphs.checkpoint.server_checkpointer"}`` in ``langgraph.json``; the server takes a dotted path, not
    ``module:name``): threads in SQLite by default, Postgres when ``EVIDEX_CHECKPOINTER`` says so, so they outlive
    the server. The server needs the async savers."""
    target = server_checkpoint_target()
    if target.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError:
            raise CheckpointError(POSTGRES_MISSING) from None
        async with AsyncPostgresSaver.from_conn_string(target) as saver:
            await saver.setup()
            yield saver
        return
    if "://" in target and not target.startswith("sqlite://"):
        raise CheckpointError(f"{SERVER_ENV}={target.split('://')[0]}://...: give sqlite:///PATH or postgres://...")
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = Path(target.removeprefix("sqlite://")).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        yield saver

"""Where a paper store's dense vectors live: an embedded Chroma (the default, ``<store>/chroma/``) or a Chroma
server reached through Chroma's HTTP client (the scale-out path, docs/scaling-out.md).

The ingestion config chooses it (``vector: {mode: http, host: 127.0.0.1, port: 8000}``); ingestion records the
choice in the store folder (``vectors.json``), so search, removal and the consistency check open the same place
without being told again. Start a server with::

    chroma run --path /data/chroma --host 127.0.0.1 --port 8000

Chroma's open-source server (1.x) has no authentication of its own: keep it on loopback (the default here), or
put it behind a proxy that checks a token and name the variable holding that token in ``token_env`` (sent as
``x-chroma-token``; the token itself is never written to the store). Each store has its own Chroma database on
the server (``database``, default ``evidex_<store folder name>``), so two stores never share collections.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evidex.tools.store import StoreError

VECTOR_FILE = "vectors.json"
TOKEN_HEADER = "x-chroma-token"


class VectorStoreError(StoreError):
    """The store's Chroma server cannot be reached or its settings are wrong; the message says what to do."""


class VectorConfig(BaseModel):
    """``vector:`` of an ingestion config: which Chroma holds the dense vectors."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["embedded", "flat", "http"] = Field(
        "embedded", description="embedded: inside this process (default): a Chroma under <store>/chroma, or, for a "
        "new store without the chroma extra installed, flat; flat: a SQLite file under <store>/vectors searched "
        "exactly, no Chroma (tools/flatvectors.py); http: a Chroma server (chroma run --path DIR --host 127.0.0.1 "
        "--port P) through its HTTP client")
    host: str = Field("127.0.0.1", description="http: the server's address (loopback by default)")
    port: int = Field(8000, ge=1, le=65535, description="http: the server's port")
    ssl: bool = Field(False, description="http: use https")
    database: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{2,62}$", description="http: the "
                                 "Chroma database of this store (created when missing); default evidex_<store name>")
    token_env: str | None = Field(None, description="http: environment variable holding a token sent as "
                                  "x-chroma-token (a proxy or hosted Chroma that checks one); the token is never stored")

    def where(self) -> str:
        if self.mode in ("embedded", "flat"):
            return self.mode
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"


def parse_server(text: str) -> VectorConfig:
    """``HOST:PORT`` (or ``http[s]://HOST:PORT``) of a Chroma server -> ``vector: {mode: http, ...}``."""
    raw = text.strip()
    ssl = raw.startswith("https://")
    hostport = raw.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise VectorStoreError(f"--chroma-server {text!r}: give HOST:PORT, e.g. 127.0.0.1:8000")
    try:
        return VectorConfig(mode="http", host=host.strip("[]"), port=int(port), ssl=ssl)
    except ValidationError as exc:
        raise VectorStoreError(f"--chroma-server {text!r}: {exc.errors()[0]['msg']}") from None


def with_store_vector(cfg, root: Path):
    """An ingestion config whose ``vector`` is the store's recorded one unless the config sets ``vector`` itself:
    adding papers or tidying a store never moves its vectors by accident."""
    if "vector" in cfg.model_fields_set:
        return cfg
    return cfg.model_copy(update={"vector": read_vector_config(root)})


def store_database(root: Path, vector: VectorConfig) -> str:
    if vector.database:
        return vector.database
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", root.name).strip("_.-") or "store"
    return f"evidex_{slug}"[:63]


def read_vector_config(root: Path) -> VectorConfig:
    """The store's recorded vector location; a store without a record is embedded."""
    path = Path(root) / VECTOR_FILE
    if not path.is_file():
        return VectorConfig()
    try:
        return VectorConfig.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        raise VectorStoreError(f"{path}: not a valid vector-store record ({exc}); delete it and ingest again") from None


def write_vector_config(root: Path, vector: VectorConfig) -> None:
    path = Path(root) / VECTOR_FILE
    if vector.mode == "embedded":
        path.unlink(missing_ok=True)  # no record = embedded, as for every store made before servers
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(vector.model_dump(), indent=1), encoding="utf-8")
    tmp.replace(path)


def uses_flat(root: Path, vector: VectorConfig) -> bool:
    """Whether an in-process store keeps its vectors flat (``tools/flatvectors.py``) rather than in Chroma: asked
    for, already so on disk, or a new store where Chroma (the ``chroma`` extra) is not installed."""
    import importlib.util

    from evidex.tools.flatvectors import has_flat_vectors

    if vector.mode != "embedded":
        return vector.mode == "flat"
    if (Path(root) / "chroma").exists():
        return False
    return has_flat_vectors(root) or importlib.util.find_spec("chromadb") is None


def chroma_client(root: Path, vector: VectorConfig | None = None, *, create: bool = True):
    """A Chroma(-shaped) client for the store at ``root`` (``vector`` = its recorded location when not given).
    In-process and ``create=False`` with no vectors yet: None."""
    root = Path(root)
    vector = vector or read_vector_config(root)
    if uses_flat(root, vector):
        from evidex.tools.flatvectors import FlatClient, has_flat_vectors

        return FlatClient(root) if create or has_flat_vectors(root) else None
    from evidex.tools.extras import require

    chromadb = require("chromadb", "chroma", "this store's Chroma vectors")
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if vector.mode == "embedded":
        folder = root / "chroma"
        if not create and not folder.exists():
            return None
        folder.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(folder), settings=settings)
    headers = {}
    if vector.token_env:
        token = os.environ.get(vector.token_env, "").strip()
        if not token:
            raise VectorStoreError(f"vector.token_env names ${vector.token_env}, which is not set; set it to the "
                                   "Chroma server's token")
        headers[TOKEN_HEADER] = token
    database = store_database(root, vector)
    try:
        admin = chromadb.AdminClient(settings=ChromaSettings(
            anonymized_telemetry=False, chroma_api_impl="chromadb.api.fastapi.FastAPI",
            chroma_server_host=vector.host, chroma_server_http_port=vector.port, chroma_server_ssl_enabled=vector.ssl,
            chroma_server_headers=headers or None))
        try:
            admin.get_database(database)
        except Exception as exc:  # noqa: BLE001 - chromadb raises NotFoundError (or a bare Exception on older servers)
            if not server_answers(vector):  # not "no such database": no server (said below, not taken as empty)
                raise exc
            if not create:
                return None
            admin.create_database(database)
        return chromadb.HttpClient(host=vector.host, port=vector.port, ssl=vector.ssl, headers=headers,
                                   settings=settings, database=database)
    except VectorStoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - httpx.ConnectError, ValueError("Could not connect ..."), ...
        raise VectorStoreError(
            f"no Chroma server answers at {vector.where()} ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}). "
            f"Start one with  chroma run --path DIR --host {vector.host} --port {vector.port}  or set "
            "vector.mode: embedded") from None


def wipe_vectors(root: Path, vector: VectorConfig | None = None) -> None:
    """Delete every vector of the store at ``root`` (its embedded folder, or its database's collections); a server
    that does not answer raises :class:`VectorStoreError` (nothing is deleted then)."""
    root = Path(root)
    vector = vector or read_vector_config(root)
    if vector.mode in ("embedded", "flat"):
        from evidex.tools.flatvectors import store_folder

        shutil.rmtree(root / "chroma", ignore_errors=True)
        shutil.rmtree(store_folder(root), ignore_errors=True)
        return
    client = chroma_client(root, vector, create=False)
    if client is None:
        return
    try:
        for col in client.list_collections():
            client.delete_collection(col.name if hasattr(col, "name") else col)
    except Exception as exc:  # noqa: BLE001 - httpx errors: said as the server being gone, when it is
        raise lost_server(root, vector, exc, "deleting the store's vectors") or exc


# ------------------------------------------------------------------------------------------------ reachability


def server_answers(vector: VectorConfig, timeout_s: float = 3.0) -> bool:
    """Whether the Chroma server of ``vector`` answers its heartbeat (an embedded Chroma always does)."""
    if vector.mode == "embedded":
        return True
    import httpx

    url = f"{vector.where()}/api/v2/heartbeat"
    headers = {}
    if vector.token_env and os.environ.get(vector.token_env):
        headers[TOKEN_HEADER] = os.environ[vector.token_env].strip()
    try:
        return httpx.get(url, timeout=timeout_s, headers=headers).status_code < 500
    except httpx.HTTPError:
        return False


def require_reachable(root: Path, *vectors: VectorConfig | None) -> None:
    """Before a destructive or writing operation: every Chroma the store uses (its recorded one, and ``vectors``)
    answers, else :class:`VectorStoreError` naming the one that does not, before anything is touched."""
    root = Path(root)
    seen: set[str] = set()
    for vector in (read_vector_config(root), *vectors):
        if vector is None or vector.mode == "embedded" or vector.where() in seen:
            continue
        seen.add(vector.where())
        if not server_answers(vector):
            raise VectorStoreError(
                f"the Chroma server at {vector.where()} that holds this store's vectors does not answer; nothing was "
                f"changed. Start it again (chroma run --path DIR --host {vector.host} --port {vector.port}) and run "
                "the same command again")
        chroma_client(root, vector)  # the store's database on it (created when missing), token checked


def lost_server(root: Path, vector: VectorConfig | None, exc: BaseException, doing: str,
                resume: str = "") -> VectorStoreError | None:
    """The error to raise when a Chroma call failed because the server stopped answering (one line: which server,
    what was being done, how to go on); None when the server still answers (the failure is something else)."""
    vector = vector or read_vector_config(Path(root))
    if isinstance(exc, VectorStoreError):
        return exc
    if vector.mode == "embedded" or server_answers(vector):
        return None
    first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    return VectorStoreError(
        f"the Chroma server at {vector.where()} stopped answering while {doing} ({type(exc).__name__}"
        f"{': ' + first if first else ''}). {resume or 'Start it again and run the same command again.'}")


# ------------------------------------------------------------------------------------------------ store identity
# Every vector carries its store's ``store_uid`` (a random id made with the store's DuckDB file, kept in
# evidex.info): a vector whose uid is not the store's own belongs to an earlier life of the store (a store deleted
# by hand, or rebuilt while its server was away) and is an orphan that the next ingestion deletes on the server.
STORE_UID_KEY = "store_uid"


def sweep_foreign_vectors(root: Path, vector: VectorConfig, store_uid: str) -> int:
    """Delete every vector of the store's collections that carries another store uid (or none); returns how many."""
    client = chroma_client(Path(root), vector, create=False)
    if client is None:
        return 0
    removed = 0
    for col in client.list_collections():
        col = client.get_collection(col.name if hasattr(col, "name") else col, embedding_function=None)
        where = {STORE_UID_KEY: {"$ne": store_uid}}
        ids = col.get(where=where, include=[])["ids"]
        if ids:
            for s in range(0, len(ids), 5000):
                col.delete(ids=ids[s : s + 5000])
            removed += len(ids)
    return removed

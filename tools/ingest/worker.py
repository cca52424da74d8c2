"""Parse *and embed* one PDF in a worker process (a Ray actor, or a local parser process), for a single writer.

The worker builds the rows the writer will store (``writer.paper_rows``, the same function, with the metadata JSON
applied as the writer applies it) and encodes the cells of the config's dense columns, so the expensive half of
ingestion runs where the parsing runs. The writer commits each paper to DuckDB in its own transaction and upserts
the vectors to Chroma, finding them by text (:class:`WorkerVectors`); a text it changes after parsing (an LLM
summary) has no worker vector and is encoded by the writer.
"""
from __future__ import annotations

import hashlib
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

from evidex.tools.ingest.config import IngestConfig
from evidex.tools.ingest.errors import PDFError

log = logging.getLogger(__name__)


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def dense_texts(paper, config: IngestConfig, lookup=None) -> list[str]:
    """The distinct non-empty cells of the config's dense columns, as the writer will store them (the filter is
    ``indexer.cell_query``'s: not null, not blank, not the string 'None'), with the metadata JSON that ``lookup``
    (a MetadataLookup) finds for the paper applied, as the writer applies it. A chunk column indexed with its section
    heading (``IndexedColumn.heading``) is indexed as another text than this: ``WorkerVectors`` encodes those cells
    itself (right, just not in parallel)."""
    from evidex.tools.ingest.metadata import apply_metadata_json
    from evidex.tools.ingest.writer import paper_rows

    js = lookup.find(Path(paper.path), paper.metadata.title)[0] if lookup is not None else None
    rows = paper_rows(paper, apply_metadata_json(paper.metadata, js), config.parser.max_cell_chars)
    texts: dict[str, None] = {}
    for c in config.index:
        if not c.dense:
            continue
        for row in rows.get(c.table, ()):
            value = row.get(c.column)
            if isinstance(value, str) and value.strip() and value != "None":
                texts[value] = None
    return list(texts)


class ParseEmbedWorker:
    """One worker (a Ray actor or a local parser process): a parser and an embedder built once, then one PDF at a
    time."""

    def __init__(self, config_json: str, embed: bool, threads: int, metadata_dir: str | None):
        from evidex.tools.ingest.metadata import MetadataLookup
        from evidex.tools.ingest.parser import make_parser
        from evidex.tools.ingest.indexer import make_embeddings

        self.config = IngestConfig.model_validate_json(config_json)
        self.lookup = MetadataLookup(Path(metadata_dir) if metadata_dir else None)
        self.parser = make_parser(self.config.parser, self.config.embedding.model)
        self.embeddings = make_embeddings(self.config, threads) if embed else None
        if self.embeddings is not None:
            if (torch := sys.modules.get("torch")) is not None:  # torch embeds only with the export extra
                torch.set_num_threads(threads)  # the CPUs Ray gave this worker, not every core of the node
            self.embeddings.encode(["warm-up"])  # load the weights now, not inside the first file's time

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid()}

    def parse(self, path: str, sha: str) -> tuple[str, bool, object, dict[str, np.ndarray] | None, float]:
        """(path, ok, ParsedPaper | (kind, message), {text sha1: vector} | None, embed seconds)."""
        try:
            paper = self.parser.parse(Path(path), sha)
        except PDFError as exc:
            return path, False, (exc.kind, str(exc)), None, 0.0
        except Exception as exc:  # noqa: BLE001 - a parser bug on one file must not stop the batch
            log.debug("parser crashed on %s:\n%s", path, traceback.format_exc())
            return path, False, ("parser_error", f"{path}: parser failed ({type(exc).__name__}: {exc})"), None, 0.0
        if self.embeddings is None:
            return path, True, paper, None, 0.0
        t = time.perf_counter()
        texts = dense_texts(paper, self.config, self.lookup)
        vectors = np.asarray(self.embeddings.encode(texts), dtype=np.float32) if texts else []
        return path, True, paper, {text_key(t): v for t, v in zip(texts, vectors)}, time.perf_counter() - t


class WorkerVectors:
    """The writer's embedder: vectors the workers computed, found by text; a text without one (changed by the
    writer after parsing) is encoded with the config's own embedder, loaded only if that ever happens."""

    def __init__(self, config: IngestConfig):
        self.config = config
        self.model_name = config.embedding.model
        self.vectors: dict[str, np.ndarray] = {}
        self._fallback = None
        self.encoded_here = 0

    def add(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors.update(vectors)

    def clear(self) -> None:
        """After each paper: vectors are only needed until its upsert (memory stays flat over a long batch)."""
        self.vectors.clear()

    def encode(self, texts: list[str]) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        missing = [t for t, k in zip(texts, keys) if k not in self.vectors]
        if missing:
            if self._fallback is None:
                from evidex.tools.ingest.indexer import make_embeddings

                self._fallback = make_embeddings(self.config)
            self.vectors.update(zip(map(text_key, missing), np.asarray(self._fallback.encode(missing), dtype=np.float32)))
            self.encoded_here += len(missing)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])

"""Optional LLM summaries of pages, sections, tables and images: a hook plus a persistent cache.

Ingestion never builds an LLM client. Pass any callable ``summariser(request) -> str`` (wrap a LangChain
chat model, a VLM for images, or a test stub) to ``tools.ingest.ingest(...)`` and set
``summaries.enabled: true`` in the ingestion config. Results are cached in ``<store>/summaries.sqlite`` by
(view, summariser name, content hash), so re-ingesting or rebuilding a store does not pay twice.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from evidex.tools.ingest.records import ParsedPaper

View = Literal["pages", "sections", "tables", "images"]


class SummaryRequest(BaseModel):
    view: View
    text: str  # page/section text, table caption + markdown, or image caption
    max_words: int = 50
    image_png: bytes | None = None  # the cropped figure, for vision models (images view only)
    paper_title: str = ""


Summariser = Callable[[SummaryRequest], str]


class SummaryCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(str(path), check_same_thread=False)
        self._con.execute("CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY, summary TEXT)")
        self._lock = threading.Lock()

    @staticmethod
    def key(request: SummaryRequest, summariser_name: str) -> str:
        h = hashlib.sha256()
        for part in (request.view, summariser_name, str(request.max_words), request.text):
            h.update(part.encode())
            h.update(b"\0")
        if request.image_png:
            h.update(hashlib.sha256(request.image_png).digest())
        return h.hexdigest()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._con.execute("SELECT summary FROM summaries WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, summary: str) -> None:
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO summaries VALUES (?, ?)", (key, summary))
            self._con.commit()

    def close(self) -> None:
        self._con.close()


def summarise_paper(
    paper: ParsedPaper,
    summariser: Summariser,
    cache: SummaryCache,
    views: list[str],
    max_words: int,
) -> int:
    """Fill the ``summary`` fields of the requested views in place; returns how many were newly computed.

    A failing summariser call leaves that summary empty and records a warning: summaries are a nice-to-have.
    """
    name = getattr(summariser, "__name__", type(summariser).__name__)
    title = paper.metadata.title
    fresh = 0

    def run(view: str, text: str, image: bytes | None = None) -> str | None:
        nonlocal fresh
        if not text.strip() and image is None:
            return None
        if len(text.split()) <= max_words and image is None:
            return text  # already short: NeuSym-RAG keeps such texts as their own summary
        req = SummaryRequest(view=view, text=text, max_words=max_words, image_png=image, paper_title=title)
        key = SummaryCache.key(req, name)
        hit = cache.get(key)
        if hit is not None:
            return hit
        try:
            out = str(summariser(req)).strip()
        except Exception as exc:  # noqa: BLE001 - any provider error becomes a warning
            paper.warnings.append(f"{view} summary failed: {type(exc).__name__}: {exc}")
            return None
        cache.put(key, out)
        fresh += 1
        return out

    if "pages" in views:
        for p in paper.pages:
            p.summary = run("pages", p.content)
    if "sections" in views:
        for s in paper.sections:
            s.summary = run("sections", f"{s.title}\n{s.content}")
    if "tables" in views:
        for t in paper.tables:
            t.summary = run("tables", f"{t.caption}\n{t.markdown}")
    if "images" in views:
        images = _render_images(paper) if paper.images else {}
        for im in paper.images:
            im.summary = run("images", im.caption, images.get((im.page_number, im.ordinal)))
    return fresh


def _render_images(paper: ParsedPaper) -> dict[tuple[int, int], bytes]:
    import pymupdf

    out: dict[tuple[int, int], bytes] = {}
    with pymupdf.open(paper.path) as doc:
        for im in paper.images:
            x, y, w, h = im.box
            if w <= 0 or h <= 0:
                continue
            clip = pymupdf.Rect(x, y, x + w, y + h)
            out[(im.page_number, im.ordinal)] = doc[im.page_number - 1].get_pixmap(dpi=110, clip=clip).tobytes("png")
    return out

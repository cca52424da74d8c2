"""PDFs uploaded from the page: a safe name under the store's own ``uploads/`` folder, then the same ingestion as
``python -m tools.ingest`` (``tools.ingest.ingest``), one file at a time, its result or error per file.

The name a browser sends is the user's (or an attacker's) text: it never becomes a path as given. It is cut to
its last component, reduced to letters, digits, ``._-``, given a ``.pdf`` ending and made unique in the folder;
the original is only ever shown back as text.
"""
from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from pathlib import Path
from typing import BinaryIO

from evidex.graphs.web.models import UploadResult
from evidex.tools.safe_text import visible_controls

UPLOADS = "uploads"
CHUNK = 1 << 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class UploadTooLargeError(ValueError):
    pass


def safe_name(name: str, limit: int = 80) -> str:
    """A file name that is only ``[A-Za-z0-9._-]``, ends in ``.pdf``, does not start with a dot and has no path."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode("ascii")
    stem = base[:-4] if base.lower().endswith(".pdf") else base
    stem = _UNSAFE.sub("_", stem).strip("._-")[:limit] or "upload"
    return f"{stem}.pdf"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def save_upload(stream: BinaryIO, original: str, store_root: Path, max_bytes: int) -> tuple[Path, bool]:
    """Copy an upload into ``<store>/uploads/`` under a safe, unused name; refuse it past ``max_bytes``. Returns
    the path and whether it was already there (the same bytes uploaded under the same name before)."""
    folder = store_root / UPLOADS
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".part-{time.time_ns()}"
    size = 0
    try:
        with tmp.open("wb") as out:
            for block in iter(lambda: stream.read(CHUNK), b""):
                size += len(block)
                if size > max_bytes:
                    shown = visible_controls(original)[:120]
                    raise UploadTooLargeError(f"{shown}: larger than {max_bytes // (1 << 20)} MB")
                out.write(block)
        name = safe_name(original)
        target = folder / name
        n = 1
        while target.exists():
            if _sha256(target) == _sha256(tmp):
                tmp.unlink()
                return target, True
            n += 1
            target = folder / f"{name[:-4]}-{n}.pdf"
        tmp.replace(target)
        return target, False
    finally:
        if tmp.exists():
            tmp.unlink()


def ingest_upload(path: Path, original: str, ingest_kwargs: dict, reused: bool = False) -> UploadResult:
    """Ingest one saved upload. A failed file is removed again (the store keeps only what it could read), and so
    is a new copy of a PDF the store already holds from another file."""
    from evidex.tools.ingest import ingest

    start = time.perf_counter()
    shown = visible_controls(original)[:200]
    try:
        report = ingest([path], progress=False, **ingest_kwargs)
    except Exception as exc:  # noqa: BLE001 - a store-level failure (lock, config mismatch) is this file's error
        path.unlink(missing_ok=True)
        return UploadResult(name=shown, status="failed", error_kind=type(exc).__name__,
                            error=visible_controls(str(exc))[:1000], seconds=round(time.perf_counter() - start, 2))
    result = next((f for f in report.files), None)
    seconds = round(time.perf_counter() - start, 2)
    if result is None:
        path.unlink(missing_ok=True)
        return UploadResult(name=shown, status="failed", error_kind="missing", error="the file was not ingested",
                            seconds=seconds)
    if result.status == "failed" or (result.status == "skipped" and not reused):
        path.unlink(missing_ok=True)
    # the error names the saved file's path: show its name only (the folder is the server's business)
    error = visible_controls(result.error.replace(str(path), path.name))[:1000] if result.error else None
    return UploadResult(name=shown, saved_as=path.name if path.exists() else None, status=result.status,
                        paper_id=result.paper_id, title=visible_controls(result.title) if result.title else None,
                        pages=result.pages, error_kind=result.error_kind, error=error, seconds=seconds)

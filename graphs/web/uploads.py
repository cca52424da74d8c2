"""PDFs uploaded from the page: a safe name under the store's own ``uploads/`` folder, then the same ingestion as
``evidex ingest`` (``tools.ingest.ingest``), one file at a time, its result or error per file.

The name a browser sends is the user's (or an attacker's) text: it never becomes a path as given. It is cut to
its last component, reduced to letters, digits, ``._-``, given a ``.pdf`` ending and made unique in the folder;
the original is only ever shown back as text.
"""
from __future__ import annotations

import hashlib
import re
import secrets
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
    """More bytes arrived than the server takes for one PDF."""


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


class UploadRefused(ValueError):
    """The request is not one PDF in the form field ``file``; the message says what to send."""


FORM_SLACK = 64 << 10  # the form's own bytes around the file (boundaries, part headers): far less than this


class UploadReceiver:
    """Reads a ``multipart/form-data`` body as it streams in and writes its one file straight into
    ``<store>/uploads/.part-*``, counting bytes as they arrive: past ``max_bytes`` of file (or ``max_bytes`` plus
    ``FORM_SLACK`` of body) it stops with :class:`UploadTooLargeError` before writing more, so at most the limit is
    ever on disk, whatever the request says (or does not say: a chunked upload has no ``Content-Length``).

        receiver = UploadReceiver(content_type, store_root, max_bytes)
        for chunk in body: receiver.feed(chunk)       # raises UploadTooLargeError / UploadRefused
        part, original = receiver.finish()            # the written file and the name the browser sent
        receiver.discard()                            # in every case: removes a part left behind
    """

    def __init__(self, content_type: str, store_root: Path, max_bytes: int) -> None:
        from python_multipart.multipart import MultipartParser, parse_options_header

        kind, params = parse_options_header(content_type or "")
        if kind != b"multipart/form-data" or not params.get(b"boundary"):
            raise UploadRefused("Send one PDF as the form field 'file' (multipart/form-data).")
        charset = params.get(b"charset", b"utf-8").decode("latin-1")
        self._charset = charset if charset.lower() in ("utf-8", "utf8", "latin-1", "iso-8859-1") else "utf-8"
        self.max_bytes = max_bytes
        self.body_bytes = 0
        self.file_bytes = 0
        self.peak_bytes = 0  # the most file bytes written (what the tests and the benchmark read back)
        self.folder = store_root / UPLOADS
        self.folder.mkdir(parents=True, exist_ok=True)
        self.part = self.folder / f".part-{time.time_ns()}-{secrets.token_hex(4)}"
        self.original: str | None = None
        self._out: BinaryIO | None = None
        self._writing = False  # inside the file part
        self._files = 0
        self._file_done = False  # the file part's closing boundary arrived
        self._header_name = b""
        self._header_value = b""
        self._disposition = b""
        self._too_large = False
        self._parse_options = parse_options_header
        self._parser = MultipartParser(params[b"boundary"], {
            "on_part_begin": self._part_begin, "on_part_data": self._part_data, "on_part_end": self._part_end,
            "on_header_field": self._header_field, "on_header_value": self._header_value_part,
            "on_header_end": self._header_end, "on_headers_finished": self._headers_finished})

    # -- the parser's callbacks ----------------------------------------------------------------------------
    def _part_begin(self) -> None:
        self._disposition = b""

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_name += data[start:end]

    def _header_value_part(self, data: bytes, start: int, end: int) -> None:
        if len(self._header_value) < 8192:
            self._header_value += data[start:end]

    def _header_end(self) -> None:
        if self._header_name.strip().lower() == b"content-disposition":
            self._disposition = self._header_value
        self._header_name = self._header_value = b""

    def _headers_finished(self) -> None:
        _, options = self._parse_options(self._disposition)
        self._writing = options.get(b"name") == b"file" and b"filename" in options
        if self._writing:
            self._files += 1
            if self._files > 1:
                raise UploadRefused("Send one PDF per request (the page sends each file on its own).")
            self.original = options[b"filename"].decode(self._charset, errors="replace")
            self._out = self.part.open("wb")

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if not self._writing or self._too_large:
            return
        if self.file_bytes + (end - start) > self.max_bytes:
            self._too_large = True  # nothing more is written; feed() raises
            return
        self._out.write(data[start:end])
        self.file_bytes += end - start
        self.peak_bytes = max(self.peak_bytes, self.file_bytes)

    def _part_end(self) -> None:
        if self._writing and self._out is not None:
            self._out.close()
            self._file_done = True
        self._writing = False

    # -- the caller's side ---------------------------------------------------------------------------------
    def _refuse_size(self) -> None:
        self.discard()
        raise UploadTooLargeError(f"The file is larger than {self.max_bytes / (1 << 20):g} MB, this server's limit "
                                  "for one PDF.")

    def feed(self, chunk: bytes) -> None:
        """One piece of the body as it arrived (blocking file I/O: call it off the event loop)."""
        from python_multipart.exceptions import FormParserError

        self.body_bytes += len(chunk)
        if self.body_bytes > self.max_bytes + FORM_SLACK:
            self._refuse_size()
        try:
            self._parser.write(chunk)
        except FormParserError as exc:
            self.discard()
            raise UploadRefused("The upload is not a well-formed form; send one PDF as the form field 'file'.") from exc
        if self._too_large:
            self._refuse_size()

    def finish(self) -> tuple[Path, str]:
        """The written part and the browser's name for it, once the whole body is in."""
        from python_multipart.exceptions import FormParserError

        try:
            self._parser.finalize()
        except FormParserError as exc:
            self.discard()
            raise UploadRefused("The upload ended early; send the PDF again.") from exc
        if self.original is None or not self.part.is_file():
            self.discard()
            raise UploadRefused("Send one PDF as the form field 'file'.")
        if not self._file_done:
            self.discard()
            raise UploadRefused("The upload ended early; send the PDF again.")
        return self.part, self.original

    def discard(self) -> None:
        if self._out is not None and not self._out.closed:
            self._out.close()
        self.part.unlink(missing_ok=True)


def place_upload(part: Path, original: str) -> tuple[Path, bool]:
    """Move a received part to a safe, unused name beside it. Returns the path and whether it was already there
    (the same bytes uploaded under the same name before; the part is then removed)."""
    folder = part.parent
    name = safe_name(original)
    target = folder / name
    n = 1
    try:
        while target.exists():
            if _sha256(target) == _sha256(part):
                return target, True
            n += 1
            target = folder / f"{name[:-4]}-{n}.pdf"
        part.replace(target)
        return target, False
    finally:
        part.unlink(missing_ok=True)


def _store_failure(exc: Exception) -> str:
    """A store-level ingestion failure as the uploader sees it: what happened and what to do, never the raw
    exception (which names the server's folders and, for a DuckDB lock, another process's id)."""
    from evidex.graphs.web.errors import failure, public

    if "lock" in str(exc).lower() and type(exc).__module__.startswith("duckdb"):
        message, _ = failure("The store is open in another program (another evidex server or an ingestion), so "
                             "this PDF was not added; add it there, or again once that program has stopped", exc,
                             context="upload: the store is locked by another process")
        return message
    if type(exc).__name__ in ("IngestError", "IngestConfigError", "StoreError", "StoreBusyError"):
        return public(str(exc))  # the project's own message, saying what to do
    message, _ = failure("The store could not take this PDF", exc, context="upload: ingestion failed")
    return message


def ingest_upload(path: Path, original: str, ingest_kwargs: dict, reused: bool = False) -> UploadResult:
    """Ingest one saved upload. A failed file is removed again (the store keeps only what it could read), and so
    is a new copy of a PDF the store already holds from another file."""
    from evidex.graphs.web.errors import public
    from evidex.tools.ingest import ingest

    start = time.perf_counter()
    shown = visible_controls(original)[:200]
    try:
        report = ingest([path], progress=False, **ingest_kwargs)
    except Exception as exc:  # noqa: BLE001 - a store-level failure (lock, config mismatch) is this file's error
        path.unlink(missing_ok=True)
        return UploadResult(name=shown, status="failed", error_kind=type(exc).__name__,
                            error=visible_controls(_store_failure(exc))[:1000],
                            seconds=round(time.perf_counter() - start, 2))
    result = next((f for f in report.files), None)
    seconds = round(time.perf_counter() - start, 2)
    if result is None:
        path.unlink(missing_ok=True)
        return UploadResult(name=shown, status="failed", error_kind="missing", error="the file was not ingested",
                            seconds=seconds)
    if result.status == "failed" or (result.status == "skipped" and not reused):
        path.unlink(missing_ok=True)
    # the error names the saved file's path: show its name only (the folder is the server's business)
    error = visible_controls(public(result.error.replace(str(path), path.name)))[:1000] if result.error else None
    return UploadResult(name=shown, saved_as=path.name if path.exists() else None, status=result.status,
                        paper_id=result.paper_id, title=visible_controls(result.title) if result.title else None,
                        pages=result.pages, error_kind=result.error_kind, error=error, seconds=seconds)

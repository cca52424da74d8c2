"""Typed ingestion errors. Each names the file and says what to do; a batch records them per file and goes on."""
from __future__ import annotations


class IngestError(RuntimeError):
    """Base class for everything ingestion raises on purpose."""


class IngestConfigError(IngestError):
    """The ingestion YAML config is invalid (the message names file, key and allowed values)."""


class PDFError(IngestError):
    """One PDF could not be ingested. ``kind`` is a short machine-readable label for summaries."""

    kind = "pdf_error"

    def __init__(self, path: str, detail: str):
        self.path = path
        self.detail = detail
        super().__init__(f"{path}: {detail}")


class EmptyPDFError(PDFError):
    kind = "empty_file"


class NotAPDFError(PDFError):
    kind = "not_a_pdf"


class CorruptPDFError(PDFError):
    kind = "corrupt"


class EncryptedPDFError(PDFError):
    kind = "encrypted"


class ScannedPDFError(PDFError):
    kind = "scanned_no_ocr"


class DuplicatePaperError(IngestError):
    """Another file already holds this paper id (same title and conference_year)."""


class StoreConfigMismatch(IngestError):
    """The store was built with different parsing/indexing settings than the ones requested."""

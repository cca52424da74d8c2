"""PDF ingestion into the multiview paper store (DuckDB + Chroma + BM25). CLI: ``evidex ingest``.

Public API::

    from evidex.tools.ingest import ingest, load_ingest_config
    report = ingest(["papers/"], db="mydocs", workers=2)

Parsers plug in through ``tools.ingest.parser.PDFParser``; summaries through a ``summariser`` callable.
"""
from evidex.tools.ingest.config import IngestConfig, load_ingest_config
from evidex.tools.ingest.errors import (
    CorruptPDFError,
    EmptyPDFError,
    EncryptedPDFError,
    IngestConfigError,
    IngestError,
    NotAPDFError,
    PDFError,
    ScannedPDFError,
    StoreConfigMismatch,
)
from evidex.tools.ingest.metadata import airqa_paper_uuid
from evidex.tools.ingest.parser import PDFParser, PyMuPDFParser
from evidex.tools.ingest.pipeline import FileResult, IngestReport, ingest
from evidex.tools.ingest.summaries import SummaryRequest

__all__ = [
    "CorruptPDFError", "EmptyPDFError", "EncryptedPDFError", "FileResult", "IngestConfig", "IngestConfigError",
    "IngestError", "IngestReport", "NotAPDFError", "PDFError", "PDFParser", "PyMuPDFParser", "ScannedPDFError",
    "StoreConfigMismatch", "SummaryRequest", "airqa_paper_uuid", "ingest", "load_ingest_config",
]

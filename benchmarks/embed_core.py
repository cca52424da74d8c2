"""The core install's embeddings (no torch) against today's, on the corpus.

    python -m benchmarks.embed_core                    # every corpus PDF's chunks (up to --limit) + AirQA questions
    python -m benchmarks.embed_core --limit 500

The core install embeds with the ``evidex-minilm-onnx`` package: the fp32 ONNX export shipped ready-made, the
int8 export quantised from it at first use, texts tokenised by ``tokenizers`` (``tools/embeddings.py``). Today's
vectors are (a) sentence-transformers' own (torch fp32, what the ``torch`` backend stands for) and (b) the int8
export as the ``onnx-int8`` backend computed it before, with transformers' tokenizer. Needs the ``export`` extra
(torch) for the references. Passages: the PDFs of ``shared/corpus/pdfs`` cut like ingestion does (page text,
200-token pieces of the model's own tokenizer); queries: the AirQA questions. Results:
``benchmarks/results/embed.json`` under ``core``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks import write_results
from evidex.tools.cli_help import plain_help

DEFAULT_JSON = Path("benchmarks/results/embed.json")
CORPUS = Path(os.environ.get("EVIDEX_CORPUS_DIR", "/work/shared/corpus/pdfs"))


def corpus_passages(folder: Path, limit: int) -> list[str]:
    import pymupdf

    from evidex.tools.ingest.chunking import TokenCounter

    counter = TokenCounter("all-MiniLM-L6-v2")
    out: list[str] = []
    for pdf in sorted(folder.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            for page in doc:
                text = " ".join(page.get_text().split())
                out += [p for p in counter.split(text, 200) if len(p) > 20]
    if len(out) > limit:  # spread over every paper, not the first few
        step = len(out) / limit
        out = [out[int(i * step)] for i in range(limit)]
    return out


def airqa_questions() -> list[str]:
    data = Path(os.environ.get("EVIDEX_DATA_DIR", "/work/shared/data")) / "airqa"
    out: list[str] = []
    for path in sorted(data.glob("*.jsonl")):
        out += [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]
    return list(dict.fromkeys(out))


def old_int8(texts: list[str], session_encoder) -> np.ndarray:
    """The ``onnx-int8`` backend as it was: the same session, transformers' tokenizer (padding, truncation 256)."""
    from transformers import AutoTokenizer

    from evidex.tools.embeddings import packaged_weights

    tok = AutoTokenizer.from_pretrained(str(packaged_weights()))
    enc = session_encoder
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for i, text in enumerate(texts):
        batch = tok([text], padding=True, truncation=True, max_length=enc.max_length, return_tensors="np")
        feed = {k: np.asarray(v, dtype=np.int64) for k, v in batch.items() if k in enc.inputs}
        hidden = enc.session.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        vec = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
        out[i] = vec / np.linalg.norm(vec, axis=1, keepdims=True)
    return out


def token_ids_equal(texts: list[str]) -> int:
    """How many texts ``tokenizers`` (the core) cuts into other ids than transformers' tokenizer did."""
    from transformers import AutoTokenizer

    from evidex.tools.embeddings import fast_tokenizer, packaged_weights

    src = packaged_weights()
    old = AutoTokenizer.from_pretrained(str(src))
    new = fast_tokenizer(src, 256)
    new.no_padding()
    return sum(old(t, truncation=True, max_length=256)["input_ids"] != new.encode(t).ids for t in texts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.embed_core", description=plain_help(__doc__))
    p.add_argument("--limit", type=int, default=2000, help="passages sampled evenly from the corpus (default 2000)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from evidex.tools.embeddings import LocalEmbeddings, OnnxEncoder, companion

    pkg = companion()
    if pkg is None:
        raise SystemExit("evidex-minilm-onnx is not installed (python -m evidex.tools.embedder_package --out DIR)")
    torch.set_num_threads(1)
    samples = {"corpus chunks": corpus_passages(CORPUS, args.limit), "AirQA questions": airqa_questions()}
    st = LocalEmbeddings().encoder
    fp32, int8 = OnnxEncoder(threads=1, variant="fp32"), OnnxEncoder(threads=1, variant="int8")
    rows = []
    for name, texts in samples.items():
        t = time.process_time()
        ref = np.asarray(st.encode(texts, batch_size=8, normalize_embeddings=True, show_progress_bar=False))
        t_ref = time.process_time() - t
        t = time.process_time()
        core32 = fp32.encode(texts)
        t32 = time.process_time() - t
        t = time.process_time()
        core8 = int8.encode(texts)
        t8 = time.process_time() - t
        before8 = old_int8(texts, int8)
        for label, vecs, today, cpu in (("core fp32 vs sentence-transformers (torch)", core32, ref, t32),
                                        ("core int8 vs onnx-int8 as before", core8, before8, t8)):
            cos = (vecs * today).sum(1)
            rows.append({"texts": name, "n": len(texts), "comparison": label, "min_cosine": round(float(cos.min()), 7),
                         "mean_cosine": round(float(cos.mean()), 7), "core_cpu_ms_per_text": round(cpu / len(texts) * 1e3, 1),
                         "torch_cpu_ms_per_text": round(t_ref / len(texts) * 1e3, 1)})
        rows[-1]["token_ids_differ"] = rows[-2]["token_ids_differ"] = token_ids_equal(texts)
    table = Table(title="Core embeddings (ONNX Runtime + tokenizers, no torch) against today's")
    for col in ("texts", "n", "comparison", "min cosine", "mean cosine", "texts with other ids", "core CPU-ms"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["texts"], str(r["n"]), r["comparison"], f"{r['min_cosine']:.7f}", f"{r['mean_cosine']:.7f}",
                      str(r["token_ids_differ"]), str(r["core_cpu_ms_per_text"]))
    Console().print(table)
    write_results(args.json, {"benchmark": "embed_core", "package": f"evidex-minilm-onnx {pkg.RECIPE}.0.0",
                              "onnx_sha256": pkg.SHA256, "corpus": "shared/corpus/pdfs", "threads": 1, "rows": rows,
                              "target": "min cosine >= 0.999"}, part="core")
    return 0 if all(r["min_cosine"] >= 0.999 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

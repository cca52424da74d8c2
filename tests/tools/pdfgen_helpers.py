"""Test helpers for the tools tests: PDFs the tests write themselves (a synthetic paper, a scanned page,
broken files), deterministic fake embeddings, and where to find the shared corpus."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pymupdf

REPO = Path(__file__).resolve().parents[2]
# Small real papers (33 pages in total) covering tables, figures, references, a TOC and an AirQA paper.
SMALL_CORPUS = [
    "g-eval-nlg-evaluation-gpt4.pdf",  # AirQA (arxiv2023), 12 pages, tables + figures + references
    "literature-graph-semantic-scholar.pdf",  # 8 pages, 4 tables
    "open-information-extraction-from-the-web.pdf",  # 7 pages, old Acrobat Distiller output
    "rag-knowledge-intensive-nlp-excerpt.pdf",  # 3 pages, has an outline (TOC)
    "layoutparser-excerpt-2p.pdf",  # 2 pages
    "otsl-table-tokenization-page9-excerpt.pdf",  # 1 page with a table
]


def corpus_dir() -> Path | None:
    env = os.environ.get("EVIDEX_CORPUS_DIR")
    candidates = [Path(env)] if env else []
    data = os.environ.get("EVIDEX_DATA_DIR")
    if data:
        candidates.append(Path(data) / ".." / "corpus")
    candidates.append(REPO.parent / "shared" / "corpus")
    for c in candidates:
        if (c / "pdfs").is_dir():
            return c.resolve()
    return None


# ------------------------------------------------------------------------------------------------ fakes


class FakeEmbeddings:
    """Deterministic bag-of-words hashing vectors: fast, offline, and similar texts get similar vectors."""

    model_name = "fake-hash-64"
    dimension = 64
    batch_size = 32

    def encode(self, texts):
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in str(t).lower().split():
                h = int(hashlib.md5(w.strip(".,:;()").encode()).hexdigest(), 16)
                out[i, h % self.dimension] += 1.0
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n else out[i]
            if not n:
                out[i, 0] = 1.0
        return out

    def embed_documents(self, texts):
        return self.encode(texts).tolist()

    def embed_query(self, text):
        return self.encode([text])[0].tolist()


# ------------------------------------------------------------------------------------------------ synthetic PDFs


def make_paper_pdf(path: Path, title: str = "Synthetic Evidence Paper About Tables", seed: int = 0) -> Path:
    """A 3-page two-level paper with abstract, numbered sections, a ruled table, a picture, an equation and
    a bracketed bibliography, written with PyMuPDF's base-14 fonts."""
    doc = pymupdf.open()
    w, h = 612, 792
    p1 = doc.new_page(width=w, height=h)
    p1.insert_text((72, 90), title, fontname="hebo", fontsize=18)
    p1.insert_text((72, 115), "Alice Example, Bob Sample and Carol Tester", fontname="helv", fontsize=11)
    p1.insert_text((72, 130), "University of Testing, Department of Examples", fontname="helv", fontsize=9)
    p1.insert_text((72, 165), "Abstract", fontname="hebo", fontsize=12)
    abstract = (
        "We study synthetic documents whose structure is known in advance. The abstract mentions quokkas "
        f"so that keyword search can find it, and the seed {seed} makes every paper different."
    )
    p1.insert_textbox(pymupdf.Rect(72, 172, 540, 240), abstract, fontname="helv", fontsize=10)
    p1.insert_text((72, 265), "1 Introduction", fontname="hebo", fontsize=12)
    intro = " ".join(
        f"Sentence {i} of the introduction explains why parsers need careful evaluation on real layouts."
        for i in range(14)
    )
    p1.insert_textbox(pymupdf.Rect(72, 272, 540, 520), intro, fontname="helv", fontsize=10)
    p1.insert_text((72, 545), "1.1 Background and Motivation", fontname="hebo", fontsize=11)
    p1.insert_textbox(
        pymupdf.Rect(72, 552, 540, 640),
        "Earlier systems ignored bounding boxes. Our motivation is evidence that points to exact regions.",
        fontname="helv",
        fontsize=10,
    )

    p2 = doc.new_page(width=w, height=h)
    p2.insert_text((72, 90), "2 Method", fontname="hebo", fontsize=12)
    p2.insert_textbox(
        pymupdf.Rect(72, 97, 540, 150),
        "The method combines a dense retriever with a keyword index. The score is defined below.",
        fontname="helv",
        fontsize=10,
    )
    p2.insert_text((250, 175), "s = α · d + (1 − α) · k", fontname="tiro", fontsize=11)
    p2.insert_text((520, 175), "(1)", fontname="helv", fontsize=10)
    p2.insert_text((72, 215), "Table 1: Accuracy of the systems on the pangolin benchmark.", fontname="helv", fontsize=9)
    rows = [["System", "Accuracy", "F1"], ["Baseline", "61.2", "58.0"], ["Ours", "74.9", "71.3"]]
    y = 225
    p2.draw_line((72, y), (400, y), width=0.8)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            p2.insert_text((80 + c * 110, y + 14), cell, fontname="helv", fontsize=9)
        y += 20
        if r == 0:
            p2.draw_line((72, y), (400, y), width=0.4)
    p2.draw_line((72, y), (400, y), width=0.8)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 120, 80), False)
    pix.set_rect(pix.irect, (200, 30, 30))
    p2.insert_image(pymupdf.Rect(150, 330, 390, 490), pixmap=pix)
    p2.insert_text((72, 510), "Figure 1: A red rectangle standing in for a chart.", fontname="helv", fontsize=9)
    p2.insert_text((72, 560), "3 Experiments", fontname="hebo", fontsize=12)
    p2.insert_textbox(
        pymupdf.Rect(72, 567, 540, 700),
        "We evaluate on three held-out splits and report accuracy. Results are in Table 1.",
        fontname="helv",
        fontsize=10,
    )

    p3 = doc.new_page(width=w, height=h)
    p3.insert_text((72, 90), "References", fontname="hebo", fontsize=12)
    refs = [
        "[1] Alice Example and Bob Sample. 2020. Parsing documents with care. In Proceedings of Tests.",
        "[2] Carol Tester. 2021. Evidence retrieval for everyone. Journal of Examples, 3(2):1-10.",
        "[3] Dan Mock. 2019. A study of bounding boxes. arXiv preprint arXiv:1901.00001.",
    ]
    y = 110
    for r in refs:
        p3.insert_text((72, y), r, fontname="helv", fontsize=9)
        y += 16
    doc.set_metadata({"title": title})
    doc.save(str(path))
    doc.close()
    return path


def make_scanned_pdf(path: Path, text: str = "Scanned page about quokkas and pangolins") -> Path:
    """A page that is only an image of text (no text layer), like a scan."""
    src = pymupdf.open()
    page = src.new_page(width=612, height=792)
    page.insert_textbox(pymupdf.Rect(72, 72, 540, 400), (text + ". ") * 6, fontname="helv", fontsize=16)
    pix = page.get_pixmap(dpi=150)
    src.close()
    doc = pymupdf.open()
    p = doc.new_page(width=612, height=792)
    p.insert_image(p.rect, pixmap=pix)
    doc.save(str(path))
    doc.close()
    return path


def make_bad_pdfs(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    good = make_paper_pdf(folder / "_tmp_good.pdf")
    data = good.read_bytes()
    good.unlink()
    out: dict[str, Path] = {}
    out["empty_file"] = folder / "zero.pdf"
    out["empty_file"].write_bytes(b"")
    out["not_a_pdf"] = folder / "notes.pdf"
    out["not_a_pdf"].write_text("<html><body>This is a download error page, not a PDF.</body></html>")
    out["corrupt"] = folder / "corrupt.pdf"
    out["corrupt"].write_bytes(b"%PDF-1.7\n" + bytes((i * 37) % 256 for i in range(5000)) + b"\n%%EOF")
    enc = pymupdf.open("pdf", data)
    out["encrypted"] = folder / "encrypted.pdf"
    enc.save(str(out["encrypted"]), encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="secret")
    enc.close()
    return out

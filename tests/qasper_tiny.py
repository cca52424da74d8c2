"""A tiny QASPER file written by the tests themselves (official layout, two papers, every answer type), its Hugging
Face twin, and a fast deterministic embedder, so the QASPER tests need neither the shared data nor MiniLM."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

P1, P2 = "2001.00001", "2001.00002"
INTRO = "Pangolins are scaly mammals. We study how pangolin detectors work on camera trap images."
DATA = "We collect the PangoSet dataset with 1,200 camera trap images from three national parks."
MODEL = "Our detector is a ResNet-50 backbone with a focal loss head, trained for 30 epochs."
RESULTS = "The detector reaches 91.2 F1 on PangoSet and beats the YOLO baseline by 4 points."
BLANK = "   "
CAPTION = "Table 1: Detection F1 on PangoSet."
Q2_TEXT = "Tokenizers split text into subword units. We compare BPE and unigram tokenizers on German."
Q2_RESULT = "Unigram tokenization improves BLEU by 0.8 over BPE on German to English."


def answer(**kw) -> dict:
    base = {"unanswerable": False, "extractive_spans": [], "yes_no": None, "free_form_answer": "", "evidence": [],
            "highlighted_evidence": []}
    return {"answer": {**base, **kw}, "annotation_id": "a", "worker_id": "w"}


def official() -> dict:
    return {
        P1: {
            "title": "Counting Pangolins with Detectors",
            "abstract": "We detect pangolins in camera trap images.",
            "full_text": [
                {"section_name": "Introduction", "paragraphs": [INTRO]},
                {"section_name": "Method ::: Data", "paragraphs": [DATA, BLANK]},
                {"section_name": "Method ::: Model", "paragraphs": [MODEL]},
                {"section_name": "Results", "paragraphs": [RESULTS]},
            ],
            "figures_and_tables": [{"caption": CAPTION, "file": "3-Table1-1.png"},
                                   {"caption": "Figure 1: A pangolin.", "file": "2-Figure1-1.png"}],
            "qas": [
                {"question": "What dataset do they use?", "question_id": "q-data",
                 "answers": [answer(extractive_spans=["PangoSet"], evidence=[DATA]),
                             answer(free_form_answer="a camera trap dataset", evidence=[DATA])]},
                {"question": "Do they use a ResNet backbone?", "question_id": "q-resnet",
                 "answers": [answer(yes_no=True, evidence=[MODEL])]},
                {"question": "How much did they pay the annotators?", "question_id": "q-none",
                 "answers": [answer(unanswerable=True), answer(extractive_spans=["nothing"], evidence=[INTRO])]},
                {"question": "What F1 does the detector reach?", "question_id": "q-f1",
                 "answers": [answer(extractive_spans=["91.2 F1"], evidence=[RESULTS, "FLOAT SELECTED: " + CAPTION])]},
            ],
        },
        P2: {
            "title": "Subword Tokenizers for German",
            "abstract": "We compare tokenizers.",
            "full_text": [{"section_name": None, "paragraphs": [Q2_TEXT]},
                          {"section_name": "Results", "paragraphs": [Q2_RESULT]}],
            "qas": [
                {"question": "Which tokenizer is better?", "question_id": "q-tok",
                 "answers": [answer(free_form_answer="unigram is better than BPE", evidence=[Q2_RESULT])]},
            ],
        },
    }


def huggingface_rows() -> list[dict]:
    """The same papers as ``allenai/qasper`` rows (columnar full_text, qas and figures_and_tables)."""
    rows = []
    for pid, p in official().items():
        rows.append({
            "id": pid, "title": p["title"], "abstract": p["abstract"],
            "full_text": {"section_name": [s["section_name"] for s in p["full_text"]],
                          "paragraphs": [s["paragraphs"] for s in p["full_text"]]},
            "figures_and_tables": {"caption": [f["caption"] for f in p.get("figures_and_tables", [])],
                                   "file": [f["file"] for f in p.get("figures_and_tables", [])]},
            "qas": {"question": [q["question"] for q in p["qas"]], "question_id": [q["question_id"] for q in p["qas"]],
                    "nlp_background": ["" for _ in p["qas"]],
                    "answers": [{"answer": [a["answer"] for a in q["answers"]],
                                 "annotation_id": [a["annotation_id"] for a in q["answers"]],
                                 "worker_id": [a["worker_id"] for a in q["answers"]]} for q in p["qas"]]},
        })
    return rows


def write_official(folder: Path, name: str = "qasper-dev-tiny.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(official()), encoding="utf-8")
    return path


class HashEmbeddings:
    """Deterministic bag-of-words vectors (fast, offline); not a real model: search with mode bm25 in runs."""

    model_name = "fake-hash-64"
    batch_size = 32

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in str(t).lower().split():
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1.0
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n else out[i]
        return out


def hash_queries(monkeypatch) -> None:
    """Queries embedded with :class:`HashEmbeddings` when a store was built with it (the evidence searches are
    hybrid), instead of loading a model of that name."""
    import evidex.tools.embeddings as embeddings

    real, fake = embeddings.get_embeddings, HashEmbeddings()

    def get_embeddings(model_name=embeddings.DEFAULT_EMBEDDING_MODEL, *args, **kwargs):
        return fake if model_name == fake.model_name else real(model_name, *args, **kwargs)

    monkeypatch.setattr(embeddings, "get_embeddings", get_embeddings)

"""Token-bounded chunks per page, counted with the embedding model's own tokenizer.

Chunks never cross a page, so each has one page and one box (the union of its lines). Units are lines, and
a detected table is a single unit (its markdown), so a chunk never holds half a table row. A unit longer
than the budget is cut at token offsets.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from evidex.tools.ingest.layout import join_lines, to_box, union_rect
from evidex.tools.ingest.records import ChunkRecord

_WORDPIECE_RE = re.compile(r"\w+|[^\w\s]")


class TokenCounter:
    """Counts tokens with the embedding model's tokenizer.json (fast Rust tokenizer, offline).
    Falls back to a word/punctuation count when the model folder has no tokenizer.json."""

    def __init__(self, model_name: str):
        self.model_name = model_name
        self._tok = _load_tokenizer(model_name)

    def counts(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        if self._tok is None:
            return [int(len(_WORDPIECE_RE.findall(t)) * 1.25) + 1 for t in texts]
        return [len(e.ids) for e in self._tok.encode_batch(texts, add_special_tokens=False)]

    def split(self, text: str, max_tokens: int) -> list[str]:
        """Cut one long text into pieces of at most max_tokens tokens, at token boundaries."""
        if self._tok is None:
            words = text.split()
            step = max(1, int(max_tokens / 1.25))
            return [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
        enc = self._tok.encode(text, add_special_tokens=False)
        pieces = []
        for i in range(0, len(enc.offsets), max_tokens):
            window = enc.offsets[i : i + max_tokens]
            pieces.append(text[window[0][0] : window[-1][1]])
        return [p for p in pieces if p.strip()]


@lru_cache(maxsize=4)
def _load_tokenizer(model_name: str):
    try:
        from tokenizers import Tokenizer

        from evidex.tools.embeddings import resolve_model_path

        path = Path(resolve_model_path(model_name)) / "tokenizer.json"
        if not path.is_file():
            return None
        tok = Tokenizer.from_file(str(path))
        tok.no_padding()
        tok.no_truncation()
        return tok
    except Exception:  # any failure means "approximate", never "crash the parse"
        return None


@dataclass
class Unit:
    text: str
    bbox: tuple[float, float, float, float]
    is_table: bool = False


def chunk_page(
    units: list[Unit], page_number: int, counter: TokenCounter, max_tokens: int, overlap_lines: int = 0
) -> list[ChunkRecord]:
    units = [u for u in units if u.text.strip()]
    if not units:
        return []
    counts = counter.counts([u.text for u in units])
    chunks: list[ChunkRecord] = []
    current: list[tuple[Unit, int]] = []
    total = 0

    def emit() -> None:
        nonlocal current, total
        if not current:
            return
        text = _join(u for u, _ in current)
        chunks.append(
            ChunkRecord(
                page_number=page_number,
                ordinal=len(chunks) + 1,
                text=text,
                token_count=sum(c for _, c in current),
                box=to_box(union_rect(u.bbox for u, _ in current)),
            )
        )
        keep = current[-overlap_lines:] if overlap_lines else []
        current = list(keep)
        total = sum(c for _, c in current)

    for unit, n in zip(units, counts):
        if n > max_tokens:
            emit()
            current, total = [], 0
            pieces = counter.split(unit.text, max_tokens)
            for piece, pn in zip(pieces, counter.counts(pieces)):
                current = [(Unit(piece, unit.bbox, unit.is_table), pn)]
                emit()
                current, total = [], 0
            continue
        if total + n > max_tokens and current:
            emit()
        current.append((unit, n))
        total += n
    emit()
    return chunks


def _join(units) -> str:
    out: list[str] = []
    run: list[str] = []
    for u in units:
        if u.is_table:
            if run:
                out.append(join_lines(run))
                run = []
            out.append(u.text)
        else:
            run.append(u.text)
    if run:
        out.append(join_lines(run))
    return "\n".join(out)

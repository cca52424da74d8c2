"""Plain-text helpers shared by the writer, the verifier and the scorers."""
from __future__ import annotations

import re

_SENTENCE_SPLIT = re.compile(
    r"\n\s*\n|(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bal\.)(?<!\bFig\.)(?<!\bDr\.)(?<!\bNo\.)"
    r"\s+(?=[A-Z0-9(\[\"])"
)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (abbreviations such as "e.g." do not end one)."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text or "") if s and s.strip()]

"""Display equations read in two dimensions (tools/ingest/equation_text.py): fractions, sums with their limits
and radicals come out as one line a reader (or a small model) can follow, on real papers of the shared corpus."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.shared_data


def _equations(corpus, name: str) -> dict[str, str]:
    from evidex.tools.ingest.config import ParserConfig
    from evidex.tools.ingest.parser import PyMuPDFParser

    paper = PyMuPDFParser(ParserConfig()).parse(corpus / "pdfs" / name, "0" * 64)
    return {e.number: e.text for e in paper.equations if e.number}


def test_sums_fractions_and_radicals_are_read_where_they_sit(corpus):
    # was "n score = X p(si) × si i=1": the limits on lines of their own, cmex's "X" for the sum
    assert _equations(corpus, "g-eval-nlg-evaluation-gpt4.pdf")["1"] == "score = ∑_{i=1}^{n} p(si) × si"
    # was "r1 t = 0.1 ln(s) + 1.": the radical's "r" and the fraction's two lines
    assert _equations(corpus, "yarn-context-window-extension.pdf")["22"] == "√((1)/(t)) = 0.1 ln(s) + 1."
    # was "1 w(t; r, s) = 1 + exp(−r × (t −s)),"
    hucurl = _equations(corpus, "hucurl-human-induced-curriculum-discovery.pdf")
    assert hucurl["2"] == "w(t; r, s) = (1)/(1 + exp(−r × (t − s))),"
    # was "N AOPC(K) = 1N X p(ˆy | xi)−p(ˆy | ˜x(K)i ) i=1": the metric's name now starts the equation
    decompx = _equations(corpus, "decompx-explaining-transformers-decisions.pdf")
    assert decompx["15"].startswith("AOPC(K) = (1)/(N) ∑_{i=1}^{N} p(")
    # two sums side by side: each keeps its own limits
    assert decompx["2"].startswith("zℓi = ∑_{h=1}^{H} ∑_{j=1}^{N} ")
    # a citation set close under a sum is no limit: the equation keeps its line text
    assert "∑_{" not in decompx["3"]


def test_a_limit_wider_than_its_sum_and_plain_lines_are_kept_whole(corpus):
    erra = _equations(corpus, "erra-explainable-recommendation-personalized-review.pdf")
    assert erra["4"].startswith("Lc = ∑_{(u,v)∈T} (1)/(|tlen|) ∑_{t=1}^{|tlen|}")
    # nothing set in two dimensions: the line as read
    assert erra["10"] == "L = plLr + λcLc + glLg + alLa + λl∥Θ∥22"
    # running text on the equation's lines ("where W ∈ ... are weight"): read by line, not glyphs interleaved
    assert "where" in erra["7"] and "weight" in erra["7"]

"""The author list read off a real first page (tools/ingest/metadata.py): affiliations, e-mails and figure text are
not authors, and marks are not part of names. Each case is a layout found wrong on the corpus or on the pool papers
nobody had tuned on (`../shared/corpus/pool/`), checked here on the PDF itself."""
from __future__ import annotations

from pathlib import Path

import pytest

from evidex.tools.ingest.config import ParserConfig
from evidex.tools.ingest.metadata import _clean_name, _marks_as_dagger
from evidex.tools.ingest.parser import PyMuPDFParser


def _authors(pdf: Path) -> list[str]:
    return PyMuPDFParser(ParserConfig(tables="off", ocr="off")).parse(pdf, "0" * 64).metadata.authors


def _pdf(corpus: Path, name: str) -> Path:
    found = sorted(corpus.glob(f"pdfs/{name}*.pdf")) + sorted(corpus.glob(f"pool/pdfs/{name}*.pdf"))
    if not found:
        pytest.skip(f"{name} is not in the shared corpus")
    return found[0]


@pytest.mark.parametrize("name, authors", [
    # bold names over plain affiliations, three to a row: "UNC Chapel Hill" under a name is not one
    ("ColD-Fusion-Collaborative-Descent", ["Shachar Don-Yehiya", "Elad Venezian", "Colin Raffel", "Noam Slonim",
                                           "Yoav Katz", "Leshem Choshen"]),
    # an affiliation line that starts with its mark: "2FAR AI"
    ("An-Invariant-Learning-Characterization", ["Carolina Zheng", "Claudia Shi", "Keyon Vafa", "Amir Feder",
                                                "David M. Blei"]),
    # Greek letters as marks ("Honovichτ", "Levyτµ")
    ("Instruction-Induction-From-Few-Examples", ["Or Honovich", "Uri Shaham", "Samuel R. Bowman", "Omer Levy"]),
    # marks with spaces between two names on one run ("Pieler1 2 Jonathan Jao1 2")
    ("Few-shot-Adaptation-Works-with-UnpredicTable", ["Jun Shern Chan", "Michael Pieler", "Jonathan Jao",
                                                      "Jérémy Scheurer", "Ethan Perez"]),
    # the first author's line overlaps the title's box; a spacing accent before its letter ("Marasovi´c")
    ("Do-Androids-Laugh-at-Electric-Sheep", ["Ana Marasović", "Jack Hessel", "Jena D. Hwang", "Lillian Lee",
                                             "Robert Mankoff", "Yejin Choi", "Jeff Da", "Rowan Zellers"]),
    # a bold name run beside its plain e-mail on one line
    ("mgp-rnn-sepsis-detection", ["Joseph Futoma", "Sanjay Hariharan", "Katherine Heller", "Mark Sendak",
                                  "Nathan Brajer", "Meredith Clement", "Armando Bedoya", "Cara O’Brien"]),
    ("lost-in-the-middle", ["Nelson F. Liu", "Kevin Lin", "John Hewitt", "Ashwin Paranjape", "Michele Bevilacqua",
                            "Fabio Petroni", "Percy Liang"]),
    ("breeding-machine-translations", ["Josef Jon", "Ondřej Bojar"]),
])
def test_the_author_list_holds_names_only(corpus, name, authors):
    assert _authors(_pdf(corpus, name)) == authors


def test_marks_come_off_names_and_accents_join_their_letters():
    assert _clean_name(_marks_as_dagger("Kyle Loα∗")) == "Kyle Lo"
    assert _clean_name(_marks_as_dagger("Ondˇrej Bojar")) == "Ondřej Bojar"
    assert _clean_name(_marks_as_dagger("Ana Marasovi´c⋄")) == "Ana Marasović"
    assert _clean_name("Αλέξανδρος Παπαδόπουλος") == "Αλέξανδρος Παπαδόπουλος"  # a Greek name keeps its letters

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


@pytest.mark.parametrize("name, expected", [
    # four names on one row over their affiliations, no marks; the first author has two lines under the name
    ("Injecting-knowledge-into-language-generation", {"Maksim Eremeev": ["Elemental Cognition", "New York University"],
                                                      "Ilya Valmianski": ["AuxHealth"],
                                                      "Xavier Amatriain": ["Curai Health"],
                                                      "Anitha Kannan": ["Curai Health"]}),
    ("does-gpt3-grasp-metaphors", {"Lennart Wachowiak": ["King’s College London"],
                                   "Dagmar Gromann": ["University of Vienna"]}),
])
def test_affiliations_printed_under_names_without_marks_are_read_by_position(corpus, name, expected):
    from evidex.tools.first_page import affiliations
    from evidex.tools.ingest.parser import first_page_affiliations

    pdf = _pdf(corpus, name)
    parsed = PyMuPDFParser(ParserConfig(tables="off", ocr="off")).parse(pdf, "0" * 64)
    authors = parsed.metadata.authors
    assert affiliations(parsed.pages[0].content, authors) == {}  # no marks: text order does not say who is where
    assert first_page_affiliations(pdf, authors) == expected


def test_affiliations_that_carry_marks_the_text_reader_missed_are_not_guessed_by_position(tmp_path):
    """Letters as marks ("Ann Beea" over "aUniv A, bLab B") put every affiliation on one line under all the
    names: by position, each author would be at all of them."""
    import pymupdf

    from evidex.tools.ingest.parser import first_page_affiliations

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "A Study of Something Rather Interesting", fontsize=16)
    page.insert_text((72, 110), "Ann Beea, Cy Deeb", fontsize=11)
    page.insert_text((72, 125), "aUniversity of Somewhere, bLab of Elsewhere", fontsize=11)
    page.insert_text((72, 170), "Abstract", fontsize=11)
    page.insert_text((72, 185), "We study something. " * 6, fontsize=9)
    doc.save(tmp_path / "p.pdf")
    assert first_page_affiliations(tmp_path / "p.pdf", ["Ann Beea", "Cy Deeb"]) == {}
    assert first_page_affiliations(tmp_path / "missing.pdf", ["Ann Bee"]) == {}


def test_the_first_page_is_parsed_once_for_each_version_of_its_file(tmp_path, monkeypatch):
    """Each affiliation question over a paper would parse its page 1 again; the reading is kept per file version,
    and a file rewritten on disk is read again."""
    import os

    import pymupdf

    from evidex.tools.ingest import parser

    def write(place: str) -> None:
        doc = pymupdf.open()
        page = doc.new_page()
        page.insert_text((72, 80), "A Study of Something Rather Interesting", fontsize=16)
        page.insert_text((72, 110), "Ann Bee", fontsize=11)
        page.insert_text((72, 125), place, fontsize=11)
        page.insert_text((72, 170), "Abstract", fontsize=11)
        page.insert_text((72, 185), "We study something. " * 6, fontsize=9)
        doc.save(tmp_path / "p.pdf")

    opened = []
    real_open = parser.pymupdf.open
    monkeypatch.setattr(parser.pymupdf, "open", lambda *a, **k: (a and opened.append(a)) or real_open(*a, **k))
    write("University of Somewhere")
    first = parser.first_page_affiliations(tmp_path / "p.pdf", ["Ann Bee"])
    assert first == {"Ann Bee": ["University of Somewhere"]}
    first["Ann Bee"].append("changed by a caller")  # a caller's copy: the kept reading is not changed
    again = parser.first_page_affiliations(str(tmp_path / "p.pdf"), ["Ann Bee"])
    assert again == {"Ann Bee": ["University of Somewhere"]}
    assert len(opened) == 1
    write("Lab of Elsewhere")
    os.utime(tmp_path / "p.pdf", ns=(1, 1))  # a new version of the file, whatever the clock's resolution
    assert parser.first_page_affiliations(tmp_path / "p.pdf", ["Ann Bee"]) == {"Ann Bee": ["Lab of Elsewhere"]}
    assert len(opened) == 2


def test_an_affiliation_question_gets_the_affiliations_the_store_reads_by_layout(corpus, tmp_path):
    """Through the store and the probe to the reader: where an author is, read off the first page's layout only
    for a question that asks it (other first-page questions keep the prompt they had)."""
    from evidex.agents.readers import ReadRequest, read_answer
    from evidex.tools.ingest import ingest
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.qa import PaperQuestion
    from evidex.tools.qa.probe import probe
    from evidex.tools.qa.question import parse_question

    ingest([_pdf(corpus, "does-gpt3-grasp-metaphors")], store_dir=tmp_path / "store", workers=1, progress=False)
    store = PaperStore(None, tmp_path / "store")
    [paper] = store.papers(None)

    def probed(text):
        q = parse_question(PaperQuestion(id="q", question=text, answer_format="A short string.",
                                         pdf_ids=[paper.paper_id]))
        return q, probe(store, q, 0)
    q, context = probed("Which institution is the second author, Dagmar Gromann, at?")
    assert context.papers[0].affiliations == {"Lennart Wachowiak": ["King’s College London"],
                                              "Dagmar Gromann": ["University of Vienna"]}
    answer = read_answer(["affiliation"], ReadRequest(question=q, context=context))
    assert (answer.value, answer.sources) == ("University of Vienna", [f"metadata.{paper.paper_id}"])
    assert probed("On which pages of the proceedings does the paper appear?")[1].papers[0].affiliations == {}

"""Table layouts read off real pages (tools/ingest/elements.py) and their column names resolved
(tools/paperstore/table_text.py). Each case is a layout found wrong on pool papers nobody had tuned on
(`../shared/corpus/pool/`), checked here on the PDF itself."""
from __future__ import annotations

from pathlib import Path

import pytest

from evidex.agents.qa.render import render_item
from evidex.tools.ingest.config import ParserConfig
from evidex.tools.ingest.parser import PyMuPDFParser
from evidex.tools.paperstore.models import Table
from evidex.tools.paperstore.table_text import centred_labels, column_names, glued_first_column

pytestmark = pytest.mark.shared_data


def _table(corpus: Path, name: str, page: int, label: str) -> Table:
    found = sorted(corpus.glob(f"pool/pdfs/{name}*.pdf"))
    if not found:
        pytest.skip(f"{name} is not in the shared corpus")
    paper = PyMuPDFParser(ParserConfig(ocr="off")).parse(found[0], "0" * 64)
    table = next(t for t in paper.tables if t.page_number == page and t.caption.startswith(label + ":"))
    return Table(key="t", paper_id="p", page=page, caption=table.caption, markdown=table.markdown)


def _cell(table: Table, row: list[str], column: str) -> str:
    j = table.columns.index(column)
    return next(r[j] for r in table.rows if all(w in r for w in row))


def test_group_labels_set_sideways_beside_their_rows(corpus):
    """"HotpotQA" and "WikiHop" are printed bottom to top at the table's left edge, a point left of its rules:
    each row keeps its dataset (PRIMERA's EM is 47.8 on HotpotQA, 61.9 on WikiHop)."""
    t = _table(corpus, "Peek-Across-Improving-Multi-Document", 6, "Table 2")
    assert _cell(t, ["HotpotQA", "PRIMERA (Xiao et al., 2022)"], "EM") == "47.8"
    assert _cell(t, ["WikiHop", "PRIMERA (Xiao et al., 2022)"], "EM") == "61.9"


def test_column_names_set_closer_than_a_word_gap(corpus):
    """"Test20 Test21" under each of seven language pairs is printed tighter than a word gap: each name goes to
    its own column, and each pair's label to its two columns (NE-EN Test20 of ConRegQE in TASK2 is 0.556)."""
    t = _table(corpus, "Improving-Translation-Quality-Estimation", 5, "Table 1")
    assert t.columns[1:3] == ["EN-DE Test20", "EN-DE Test21"] and t.columns[-1] == "avg"
    assert t.columns[13:15] == ["NE-EN Test20", "NE-EN Test21"]
    task2 = [r for r in t.rows if r[0] == "ConRegQE"][1]
    assert task2[t.columns.index("NE-EN Test20")] == "0.556"


def test_a_figure_under_a_caption_is_not_taken_for_its_table(corpus):
    """Tables 2, 3 and 4 each stand above their caption; under Table 3's caption sits a figure's ruled box and under
    Table 4's a plot, each right above its own "Figure N:" caption. Read the other way round, each caption took
    the next table or a figure (Table 3 held a figure's text, Table 2 held Table 3's numbers): the side that gives
    captions a figure's region loses the tie. FedAvg's FEDLAM Micro-F1 is 35.51 in Table 2 and 45.94 in Table 3."""
    t2 = _table(corpus, "FEDLEGAL-The-First-Real-World-Federated", 7, "Table 2")
    t3 = _table(corpus, "FEDLEGAL-The-First-Real-World-Federated", 7, "Table 3")
    assert _cell(t2, ["FedAvg"], "FEDLAM Micro-F1") == "35.51"
    assert _cell(t3, ["FedAvg"], "FEDLAM Micro-F1") == "45.94" and _cell(t3, ["Centralized"], "FEDLAM Micro-F1") == "78.14"


def test_group_labels_printed_above_the_top_rule(corpus):
    """"WordNet" and "Oxford" stand over their three columns each with the table's first rule under them: they
    belong to the table (Flan-T5 XL's ROUGE-L under hard domain shift is 48.17 on WordNet, 25.06 on Oxford)."""
    t = _table(corpus, "Interpretable-Word-Sense-Representations", 5, "Table 3")
    assert _cell(t, ["Hard domain shift"], "WordNet ROUGE-L") == "48.17"
    assert _cell(t, ["Hard domain shift"], "Oxford ROUGE-L") == "25.06"


def test_a_column_after_the_groups_keeps_its_own_name():
    """An average column past the last group has no name in the group row: it is not given the group's last."""
    header = [["", "EN-DE", "", "RO-EN", "", "avg"], ["Method", "", "", "", "", ""],
              ["", "Test20", "Test21", "Test20", "Test21", ""]]
    assert column_names(header, 6) == ["column 0", "EN-DE Test20", "EN-DE Test21", "RO-EN Test20", "RO-EN Test21",
                                       "avg"]


def test_three_header_rows_over_groups_of_three(corpus):
    """Three header rows: a source ("Zero-Shot Transfer to Instructables"), a condition ("Postcondition") and
    "Prec. Recall F-1" under each; the label columns on the left ("Heus.", "Finetuned/Self") keep their own
    names, and a wide source label set near a group's edge names the group after it."""
    t = _table(corpus, "Learning-Action-Conditions-from-Instructional", 8, "Table 3")
    assert t.columns[1:4] == ["Heus.", "Finetuned/Self", "WikiHow Precondition Prec."]
    assert t.columns[-2] == "Zero-Shot Transfer to Instructables Postcondition Recall"
    row = next(r for r in t.rows if r[:3] == ["Context.", "Y", "Y/N"])
    assert row[t.columns.index("Zero-Shot Transfer to Instructables Postcondition Recall")] == "56.51"


def test_group_labels_skip_the_label_columns():
    """Groups start at the first column of values: "Model" and "Test" on the left are no part of them."""
    header = [["", "", "", "WordNet", "", "", "Oxford", ""],
              ["Model", "Test", "BLEU", "ROUGE-L", "BERT-F1", "BLEU", "ROUGE-L", "BERT-F1"]]
    assert column_names(header, 8, first_value=2) == [
        "column 0", "Test", "WordNet BLEU", "WordNet ROUGE-L", "WordNet BERT-F1", "Oxford BLEU", "Oxford ROUGE-L",
        "Oxford BERT-F1"]


def test_a_value_column_of_its_own_before_the_groups_keeps_its_name():
    """A setting printed as numbers ("β") left of "Loss F1 ECE | Loss F1 ECE", nothing over it: the groups start
    after it and their centred labels name each group ("Set-B" over the middle of its three); before, the groups
    were looked for from "β", none were found, and "Set-A" was carried from its centre onto Set-B's loss. Columns
    under a label of their own ("No attack" over "CA PAA") stay a group of their own."""
    header = [["", "", "", "", "Set-A", "", "", "Set-B", ""],
              ["Model", "Environment", "β", "Loss", "F1", "ECE", "Loss", "F1", "ECE"]]
    assert column_names(header, 9, first_value=2) == [
        "column 0", "Environment", "β", "Set-A Loss", "Set-A F1", "Set-A ECE", "Set-B Loss", "Set-B F1", "Set-B ECE"]
    attacks = [["", "No attack", "", "Attack-1", "", "", "Attack-2", "", ""],
               ["Method", "CA", "PAA", "ASR", "QC", "PAA", "ASR", "QC", "PAA"]]
    assert column_names(attacks, 9) == ["column 0", "No attack CA", "No attack PAA", "Attack-1 ASR", "Attack-1 QC",
                                        "Attack-1 PAA", "Attack-2 ASR", "Attack-2 QC", "Attack-2 PAA"]


def test_a_group_label_split_or_glued_by_the_parse_names_its_group():
    """A two-word label printed one word over each column of its group ("Incor." | "Coref." over "r | ρ") names the
    group with both words; one cell over the first group holding one word per group ("Set-A Set-B" over "D R | D R")
    is split between the groups. A last row that repeats one glued cell ("EM F1" over every column) is no group of
    named columns, so neither repair applies there."""
    split = [["", "Incor.", "Coref.", "Incom.", "Coref.", "Overall", ""], ["Metrics", "r", "ρ", "r", "ρ", "r", "ρ"]]
    assert column_names(split, 7) == ["column 0", "Incor. Coref. r", "Incor. Coref. ρ", "Incom. Coref. r",
                                      "Incom. Coref. ρ", "Overall r", "Overall ρ"]
    glued = [["Models", "Set-A Set-B", "", "", ""], ["", "D", "R", "D", "R"]]
    assert column_names(glued, 5) == ["column 0", "Set-A D", "Set-A R", "Set-B D", "Set-B R"]
    repeated = [["", "Web", "Movies", "Events", "Shops"], ["", "EM F1", "EM F1", "EM F1", "EM F1"]]
    assert column_names(repeated, 5) == ["column 0", "Web EM F1", "Movies EM F1", "Events EM F1", "Shops EM F1"]


def test_running_text_over_a_table_is_no_label_row():
    """A line of words right on the top rule is a label row only when it reads as labels: short cells, no value,
    no sentence; the caption's own words never are."""
    from evidex.tools.ingest.elements import _labels_on_top

    region, caption = (100.0, 200.0, 400.0, 300.0), (100.0, 320.0, 400.0, 330.0)

    def line(*cells):  # cells of words, 60 points apart, ending 1 point above the rule
        words, x = [], 110.0
        for cell in cells:
            for w in cell.split():
                words.append((x, 188.0, x + 20.0, 199.0, w))
                x += 22.0
            x += 40.0
        return words

    cells = _labels_on_top(line("WordNet", "Oxford"), region, caption)
    assert [[w[4] for w in cell] for cell in cells] == [["WordNet"], ["Oxford"]]
    assert _labels_on_top(line("examples on two symbolic manipulation tasks."), region, caption) == []
    assert _labels_on_top(line("use the dataset?"), region, caption) == []
    assert _labels_on_top(line("Accuracy", "81.2"), region, caption) == []
    far = [(x0, y0 - 12, x1, y1 - 12, w) for x0, y0, x1, y1, w in line("WordNet", "Oxford")]
    assert _labels_on_top(far, region, caption) == []  # a line standing off the rule


def test_labels_centred_between_their_rows_name_every_row_of_their_group(corpus):
    """The model ("HRAN") is printed centred beside its four rows and the dataset ("DSTC7") beside its two, each
    on a line of its own between them: every row takes both labels, and the label-only lines go."""
    t = _table(corpus, "PVGRU-Generating-Diverse", 6, "Table 1")
    assert _cell(t, ["HRAN", "DSTC7", "PVGRU"], "Rouge-L") == "32.34"
    assert _cell(t, ["seq2seq", "Daily", "GRU"], "PPL") == "132.55"
    assert len(t.rows) == 16 and all(r[0] and r[1] for r in t.rows)
    # the model reads the rows as folded; a table without such labels is shown exactly as printed
    assert "|HRAN|DSTC7|PVGRU|110.75|" in t.text and "|HRAN||||" in t.markdown
    assert "HRAN|DSTC7|PVGRU" in render_item(t)
    other = _table(corpus, "Peek-Across-Improving-Multi-Document", 6, "Table 2")
    assert other.text == other.markdown
    # another paper's table: a four-row group beside a one-row group printed on its own value row
    m = _table(corpus, "Layer-wise-Fusion-with-Modality", 8, "Table 4")
    assert [r[:2] for r in m.rows] == [["PMR", x] for x in "tavm"] + [["LFMIM-ML", "m"]] + [["LFMIM", x] for x in "tavm"]


def test_labels_that_do_not_read_as_centred_are_left_as_printed():
    centred = [["", "1.0"], ["A", ""], ["", "2.0"], ["", "3.0"], ["B", ""], ["", "4.0"]]
    assert centred_labels(centred, [0]) == [["A", "1.0"], ["A", "2.0"], ["B", "3.0"], ["B", "4.0"]]
    # a section over the rows it heads (nothing above the first), a label with more rows below than above, a
    # label nearest to two rows alike, and a row no label is near: as printed
    for body in ([["A", ""], ["", "1.0"], ["", "2.0"], ["B", ""], ["", "3.0"]],
                 [["", "1.0"], ["A", ""], ["", "2.0"], ["", "3.0"]],
                 [["", "1.0"], ["A", ""], ["", "2.0"], ["B", ""], ["", "3.0"]],
                 [["", "1.0"], ["X", "5.0"], ["", "2.0"], ["A", ""], ["", "3.0"]]):
        assert centred_labels(body, [0]) == body


def test_a_first_value_column_glued_to_the_labels_is_split_again(corpus):
    """R1 is printed close to the model names: the parse reads "Model R1" and "LEAD 18.90" as one cell each, so
    R2 took R1's place. Split again, each column keeps its name (SSR's R1 is 30.07†, mBART's of the fine-tuned block
    27.02), and the model reads the table written again from its rows."""
    t = _table(corpus, "Cross-lingual-Science-Journalism-SELECT", 7, "Table 2")
    assert t.columns[1:3] == ["R1", "R2"] and t.corner == "Model"
    assert _cell(t, ["SSR"], "R1") == "30.07\u2020" and _cell(t, ["SSR"], "R2") == "12.60\u2020"
    assert _cell(t, ["mBART", "8.93"], "R1") == "27.02"
    assert [r for r in t.rows if r[0] == "FINE-TUNED"][0][:2] == ["FINE-TUNED", ""]
    assert "|SSR|30.07" in t.text


def test_labels_that_end_with_a_number_are_split_only_when_the_parse_glued_them():
    glued = [["Dataset Sampling prop.", "Epochs"], ["CommonCrawl 67.0%", "1.10"], ["Books", ""], ["C4 15.0%", "1.06"],
             ["Github 4.5%", "0.64"]]
    assert glued_first_column(glued) == [["Dataset", "Sampling prop.", "Epochs"], ["CommonCrawl", "67.0%", "1.10"],
                                         ["Books", "", ""], ["C4", "15.0%", "1.06"], ["Github", "4.5%", "0.64"]]
    for rows in ([["Layer index", "F1"], ["Layer 1", "0.51"], ["Layer 2", "0.55"], ["Layer 3", "0.58"]],  # one word
                 [["Model", "F1"], ["A 1.5", "0.51"], ["B 2.5", "0.55"], ["C 3.5", "0.58"]],  # a one-word header
                 [["Model size", "F1"], ["GPT 1.5", "0.51"], ["BERT", "0.55"], ["T5 3.5", "0.58"]],  # one not glued
                 [["Model size", "F1"], ["GPT 7", "0.51"], ["BERT 3", "0.55"], ["T5 11", "0.58"]],  # no decimals
                 [["Model size", "F1"], ["GPT 7.5", "0.51"], ["BERT 3.5", "0.55"]]):  # two rows only
        assert glued_first_column(rows) is rows


def test_a_table_described_without_its_number_is_found_by_its_caption(corpus, fake_embeddings, tmp_path):
    """"the fusion-ratio table" of a paper with eight tables is Table 4 ("Fusion ratios: # of unique source
    sentences ..."); a question naming a number, speaking of no table, or sharing too few words finds none."""
    from evidex.tools.ingest import ingest
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.qa import PaperQuestion
    from evidex.tools.qa.probe import described_table
    from evidex.tools.qa.question import parse_question

    found = sorted(corpus.glob("pool/pdfs/Generating-EDU-Extracts*.pdf"))
    if not found:
        pytest.skip("the paper is not in the shared corpus")
    report = ingest(found[:1], store_dir=tmp_path, embeddings=fake_embeddings, progress=False)
    assert not report.failed, report.failed
    store = PaperStore(None, str(tmp_path))
    paper = store.rows("SELECT CAST(ref_paper_id AS VARCHAR) AS pdf_id FROM tables LIMIT 1")[0]["pdf_id"]

    def ask(text: str):
        q = parse_question(PaperQuestion(id="q", question=text, answer_format="A single string.", pdf_ids=[paper]))
        return [t.label for t in described_table(store, [paper], q)]

    assert ask("In the fusion-ratio table of this paper (unique source sentences containing the EDUs of the implied "
               "plan), which method has the lowest fusion ratio?") == ["Table 4"]
    assert ask("In Table 2 of this paper, which method has the lowest fusion ratio?") == []
    assert ask("Which method has the lowest fusion ratio of unique source sentences?") == []
    assert ask("In the table of this paper, what is the first row?") == []

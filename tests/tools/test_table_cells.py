"""Table cells by name (qa.table_cells): a number question about the gap between two table values has the model
name the two cells (row, column); code reads them from the context's tables and subtracts."""
from __future__ import annotations

import json

from evidex.agents.paper_answer import CellName, answer_schema, cell_gap, compares, computed_value, printed_gap
from evidex.tools.table_cells import context_tables, find_cell

CONTEXT = """[metadata p1] title: A paper | authors (1): A B

[tables.t1, p1 page 7] Table 1: Performance comparison of merging LLaMA-2-7B models.
|Model|WinoGrande|GSM8k|Nor. Avg|
|---|---|---|---|
|Task Arithmetic|63.54|37.53|1.12|
|MetaGPT(ours)|64.25|45.41|1.31|

[tables.t2, p1 page 7] Table 2: The same with Mistral-7B models.
|Model|WinoGrande|GSM8k|Nor. Avg|
|---|---|---|---|
|Task Arithmetic|67.88|63.38|0.932|
|MetaGPT(ours)|68.35|66.03|0.936|

[tables.t3, p1 page 8] Table 3: Two-level header, similar row names.
||GSM8K||SVAMP||
|---|---|---|---|---|
|Model|standard|CoT|standard|CoT|
|BERT|6.5|14.3|29.5|37.5|
|SSCL-BERT|1,024|2.0|3.0|4.0|

[chunks.c1, p1 page 2] Running text with 45.41 in it."""

GAP = "In Table 1, how many points higher is the GSM8k score of MetaGPT than that of Task Arithmetic?"
FLOAT2 = "Your answer should be a Python float rounded to 2 decimal places."


def test_tables_are_read_from_the_context_blocks_with_their_labels_and_column_names():
    tables = context_tables(CONTEXT)
    assert [t.label for t in tables] == ["Table 1", "Table 2", "Table 3"]
    assert tables[0].header == ["column 0", "WinoGrande", "GSM8k", "Nor. Avg"]
    assert tables[2].header[1:] == ["GSM8K standard", "GSM8K CoT", "SVAMP standard", "SVAMP CoT"]
    assert context_tables("[chunks.c1, p1 page 2] no table here") == []


def test_a_cell_is_found_by_row_and_column_words_in_the_table_the_question_names():
    tables = context_tables(CONTEXT)
    assert find_cell(tables, "Table 1", "MetaGPT", "GSM8k").value == 45.41
    assert find_cell(tables, "Table 2", "MetaGPT", "GSM8k").value == 66.03  # the named table, not the first one
    assert find_cell(tables, "Table 3", "BERT", "GSM8K CoT").value == 14.3  # BERT's row, not SSCL-BERT's
    assert find_cell(tables, "Table 3", "SSCL-BERT", "GSM8K standard").value == 1024  # thousands comma read
    assert find_cell(tables, "Table 1", "DARE", "GSM8k") is None  # no such row
    large = context_tables("[tables.t, p page 1] Table 2: x\n|Model|Avg.|\n|---|---|\n|SimCSElarge|77.53|\n"
                           "|SSCL-SimCSElarge|79.69|\n")
    assert find_cell(large, "Table 2", "SimCSE_large", "Avg").value == 77.53  # a subscript run into its word
    transfer = context_tables("[tables.t, p page 7] Table 6: x\n|Transfer|Victim|ASR|\n|---|---|---|\n"
                              "|DialoGPT|BART|55.81|\n|DialoGPT|T5|47.50|\n|T5|BART|52.46|\n")
    assert find_cell(transfer, "Table 6", "DialoGPT to BART", "ASR").value == 55.81  # linking words dropped
    assert find_cell(transfer, "Table 6", "BART", "ASR") is None  # two rows, no question to choose by
    dims = context_tables("[tables.t, p page 8] Table 5: x\n|Model|Dimension|Avg. STS|\n|---|---|---|\n"
                          "|BERT|128|39.24|\n|BERT|256|43.22|\n|SSCL-BERT|128|61.3|\n|SSCL-BERT|256|62.42|\n")
    assert find_cell(dims, "Table 5", "SSCL-BERT 256", "Avg. STS").value == 62.42  # a numeric setting names a row
    assert find_cell(dims, "Table 5", "SSCL-BERT", "Avg. STS", "at dimension 256, how much higher").value == 62.42
    topk = context_tables("[tables.t, p page 8] Table 6: x\n||top-k2|2|3|4|\n|---|---|---|---|---|\n"
                          "|Forward Pass|ContextLS|1994|2386|2801|\n|Forward Pass|Ours|94|94|94|\n")
    assert find_cell(topk, "Table 6", "ContextLS", "top-k2 = 4").value == 2801  # the corner header names columns
    assert find_cell(topk, "Table 6", "Ours", "4").value == 94
    from_dialogpt = "By how much does the ASR from DialoGPT to the victim BART exceed 50?"
    assert find_cell(transfer, "Table 6", "BART", "ASR", from_dialogpt).value == 55.81
    assert find_cell(large, "Table 2", "SSCL-SimCSE_large", "Avg.").value == 79.69
    assert find_cell(tables, "Table 1", "MetaGPT", "MATH") is None  # no such column
    # no table named: equally good cells with different values in two tables are no answer, not a guess
    assert find_cell(tables, "", "MetaGPT", "GSM8k") is None
    assert find_cell(tables, "Table 3", "BERT", "CoT") is None  # CoT under GSM8K and under SVAMP


def test_the_gap_is_the_larger_cell_minus_the_smaller():
    first, second = CellName(row="MetaGPT", column="GSM8k"), CellName(row="Task Arithmetic", column="GSM8k")
    assert cell_gap(GAP, CONTEXT, first, second) == "45.41 - 37.53"
    assert cell_gap(GAP, CONTEXT, second, first) == "45.41 - 37.53"  # "how much lower" asks for the size too
    assert computed_value(cell_gap(GAP, CONTEXT, first, second), FLOAT2) == "7.88"
    assert cell_gap(GAP, CONTEXT, first, first) is None  # one cell twice
    assert cell_gap(GAP, CONTEXT, first, CellName(row="Nobody", column="GSM8k")) is None


def test_only_number_questions_about_a_gap_over_a_context_with_tables_name_cells():
    assert compares(GAP, FLOAT2, CONTEXT, True)
    assert not compares(GAP, FLOAT2, CONTEXT, False)  # off
    assert not compares(GAP, "Your answer should be a single string.", CONTEXT, True)
    assert not compares("In Table 1, what is MetaGPT's GSM8k score?", FLOAT2, CONTEXT, True)
    assert not compares(GAP, FLOAT2, "[chunks.c1, p1 page 2] text only", True)
    assert compares("By how much does pass@1 rise from before to after?", "A single integer.", CONTEXT, True)
    fields = answer_schema(FLOAT2, cells=True).model_json_schema()["properties"]
    assert list(fields) == ["first", "second", "answer"]  # the cells are named before the answer is written


def test_a_gap_answered_with_one_of_the_tables_cells_is_a_copied_cell():
    assert printed_gap(GAP, FLOAT2, CONTEXT, "45.41", True)  # MetaGPT's own GSM8k score, not the gap
    assert printed_gap(GAP, FLOAT2, CONTEXT, "1024", True)  # "1,024" as printed
    assert not printed_gap(GAP, FLOAT2, CONTEXT, "7.88", True)
    assert not printed_gap(GAP, FLOAT2, CONTEXT, "45.41", False)  # off
    assert not printed_gap("In Table 1, what is MetaGPT's GSM8k score?", FLOAT2, CONTEXT, "45.41", True)
    assert not printed_gap(GAP, FLOAT2, CONTEXT, "not a number", True)


def _cells_reply(first: tuple[str, str], second: tuple[str, str], answer: float) -> str:
    return json.dumps({"first": {"row": first[0], "column": first[1]},
                       "second": {"row": second[0], "column": second[1]}, "answer": answer})


def test_neusym_early_answer_subtracts_the_cells_it_named(table_paper):
    """The synthetic paper's Table 1: Baseline 61.2 / 58.0, Ours 74.9 / 71.3 (Accuracy / F1)."""
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import NeuSymSettings, StoreTools, build_neusym
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="g", question="In Table 1, how many points higher is the Accuracy of Ours than of Baseline?",
                      answer_format=FLOAT2, pdf_ids=[pdf_id])
    settings = NeuSymSettings(store_dir=store_dir, warm_start="multiview", early_answer=True, answer_step="evidence",
                              max_turns=2, table_cells=True)
    # the model's own number is wrong (it read F1); the cells it named give 74.9 - 61.2
    model = ScriptedChatModel(responses=[_cells_reply(("Ours", "Accuracy"), ("Baseline", "Accuracy"), 13.3)])
    pred = build_neusym(model, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "13.7" and pred.actions == ["answer"]
    assert '"first"' in model.prompts[0]
    assert any(c.source.startswith("tables.") for c in pred.citations)

    # cells not found and the model's own answer is a cell of the table (Ours' accuracy, not the gap): no early answer
    copied = ScriptedChatModel(responses=[
        _cells_reply(("Ours", "BLEU"), ("Baseline", "BLEU"), 74.9),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.7}}),
        _cells_reply(("Ours", "Accuracy"), ("Baseline", "Accuracy"), 74.9),
    ])
    pred = build_neusym(copied, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert len(copied.prompts) == 3 and pred.answer == "13.7"

    # cells that are not in the table: the model's own answer, which the probe does not print, is no early answer
    wrong = ScriptedChatModel(responses=[
        _cells_reply(("Ours", "BLEU"), ("Baseline", "BLEU"), 13.3),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.3}}),
        _cells_reply(("Ours", "F1"), ("Baseline", "F1"), 13.3),
    ])
    pred = build_neusym(wrong, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert len(wrong.prompts) == 3 and pred.answer == "13.3"  # 71.3 - 58.0 from the evidence answer's cells

    # off (the default): no cells asked for
    plain = ScriptedChatModel(responses=[json.dumps({"answer": 13.7}),
                                         json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.7}}),
                                         json.dumps({"answer": 13.7})])
    off = settings.model_copy(update={"table_cells": False})
    build_neusym(plain, off, StoreTools(None, store_dir)).invoke({"input": q})
    assert '"first"' not in plain.prompts[0]

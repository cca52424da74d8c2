"""Table cells by the question's words (qa.table_cells): a number question about the gap between two table values
is answered by code, which finds the two cells the question names in the table it names and subtracts."""
from __future__ import annotations

import json

from evidex.agents.paper_answer import cell_gap, compares, computed_value, looked_up, printed_gap
from evidex.tools.table_cells import context_tables, gap_cells, looked_up_cell

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


def _pair(context: str, question: str) -> tuple | None:
    found = gap_cells(context_tables(context), question)
    return None if found is None else (found[0].value, found[1].value)


TRANSFER = ("[tables.t, p page 7] Table 6: Transfer attack results.\n|Transfer|Victim|GL|ASR|\n|---|---|---|---|\n"
            "|DialoGPT|BART|20.35|55.81|\n|DialoGPT|T5|19.02|47.50|\n|BART|DialoGPT|25.73|67.27|\n"
            "|BART|T5|24.71|63.93|\n|T5|DialoGPT|23.89|47.27|\n|T5|BART|24.20|52.46|\n")


def test_the_two_cells_a_gap_question_compares_are_found_from_its_words():
    assert _pair(CONTEXT, GAP) == (45.41, 37.53)  # "MetaGPT(ours)" is said as "MetaGPT"
    assert _pair(CONTEXT, GAP.replace("Table 1", "Table 2")) == (66.03, 63.38)  # the table the question names
    # two label columns: the row whose labels the question says in the table's order, the asked one nearest "than"
    asr = ("In Table 6, how many points higher is the ASR when transferring from DialoGPT to the victim BART than to "
           "the victim T5?")
    assert _pair(TRANSFER, asr) == (55.81, 47.50)
    assert _pair(TRANSFER, asr.replace("ASR", "GL")) == (20.35, 19.02)
    # a two-level header: only the words telling the columns apart are said on each side
    cot = "In Table 3, for BERT on GSM8K, how many points higher is chain-of-thought (CoT) than standard prompting?"
    assert _pair(CONTEXT, cot) == (14.3, 6.5)  # BERT's row, not SSCL-BERT's
    # a setting printed as a number ("Dimension") and a size ("137B") name rows, not values
    dims = ("[tables.t, p page 8] Table 5: x\n|Model|Dimension|Avg. STS|\n|---|---|---|\n|BERT|128|39.24|\n"
            "|BERT|256|43.22|\n|SSCL-BERT|128|61.3|\n|SSCL-BERT|256|62.42|\n")
    assert _pair(dims, "In Table 5, at dimension 256, how many points higher is the Avg. STS of SSCL-BERT than that "
                       "of BERT?") == (62.42, 43.22)
    sizes = ("[tables.t, p page 8] Table 2: x\n|Model||GSM8K standard|GSM8K CoT|\n|---|---|---|---|\n"
             "|LaMDA|8B|3.2|1.6|\n|LaMDA|137B|6.5|14.3|\n|GPT|175B|15.6|46.9|\n")
    assert _pair(sizes, "In Table 2, for LaMDA 137B on GSM8K, how many points higher is CoT prompting than "
                        "standard prompting?") == (14.3, 6.5)
    # the corner header names numbered columns; a plural says a singular row name ("forward passes")
    topk = ("[tables.t, p page 8] Table 6: x\n||top-k2|2|3|4|\n|---|---|---|---|---|\n|BPW|ContextLS|0.100|0.033|"
            "0.021|\n|BPW|Ours|0.100|0.161|0.211|\n|Forward Pass|ContextLS|1994|2386|2801|\n"
            "|Forward Pass|Ours|94|94|94|\n")
    assert _pair(topk, "In Table 6, with top-k2 = 4, how many more forward passes does ContextLS need than the "
                       "proposed method (Ours)?") == (2801, 94)
    # a subscript run into its word ("SimCSElarge" for SimCSE_large); "exceed that of" compares
    large = ("[tables.t, p page 1] Table 2: x\n|Model|STS12|Avg.|\n|---|---|---|\n|SimCSElarge|69.17|77.53|\n"
             "|SSCL-SimCSElarge|71.98|79.69|\n")
    assert _pair(large, "In Table 2, by how many points does the average (Avg.) STS score of SSCL-SimCSE_large "
                        "exceed that of SimCSE_large?") == (79.69, 77.53)
    # "minus" and "rise from A to B"
    rev = ("[tables.t, p page 5] Table 2: x\n|Datasets|Y*;R*|X→YR|X→RY|\n|---|---|---|---|\n"
           "|ECQA|0.7943|0.5840|0.5599|\n|CoS-E|0.2415|0.2308|0.1198|\n")
    assert _pair(rev, "In Table 2, on ECQA, what is the REV score of (Y*;R*) minus the REV score of the X→RY "
                      "pairs?") == (0.7943, 0.5599)
    edit = ("[tables.t, p page 9] Table 8: x\n|Benchmark||pass@1|pass@5|\n|---|---|---|---|\n"
            "|HumanEval|before|34.76|60.98|\n|HumanEval|after|39.63|64.63|\n")
    assert _pair(edit, "In Table 8, by how many points does pass@1 on HumanEval rise from before to after the "
                       "edit?") == (34.76, 39.63)


PERPLEXITY = ("[tables.t, p page 6] Table 3: Eval. perplexities on PG-19.\n||Valid.|Test|\n|---|---|---|\n"
              "|36L TransformerXL|45.5|36.3|\n|36L Compressive Transf.|43.4|33.6|\n")


def test_row_names_that_begin_with_a_size_or_end_cut_short_are_still_named():
    """"36L TransformerXL" names a row (a size, then words), and "Compressive Transf." is said as "Compressive
    Transformer": a word cut short with a full stop is said by any word it begins."""
    q = ("In Table 3 of the paper, by how much is the test perplexity of the 36L Compressive Transformer lower than "
         "that of the 36L TransformerXL?")
    assert _pair(PERPLEXITY, q) == (33.6, 36.3)
    assert cell_gap(q, PERPLEXITY) == "36.3 - 33.6"
    # "Transf." is not said by a word it does not begin
    assert _pair(PERPLEXITY, q.replace("Compressive Transformer", "Compressive Model")) is None


MODELS = ("[tables.t8, p page 14] Table 8: Details of models we used for our evaluation.\n"
          "|Pre-trained Model|Task|Fine-tuned-Models|\n|---|---|---|\n"
          "|LLaMA-2-7b|General Knowledge|meta-llama/Llama-2-7b-chat-hf|\n"
          "|LLaMA-2-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH-7B|\n"
          "|Mistral-7b|General Knowledge|mistralai/Mistral-7B-Instruct-v0.2|\n"
          "|Mistral-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH2-7B|\n")
STRING = "Your answer should be a single string, the model name exactly as printed in the table."


def test_a_text_cell_asked_by_its_row_and_column_names_is_looked_up():
    q = ("According to Table 8 of the paper, which fine-tuned model is used for the Mathematical Reasoning task with "
         "the Mistral-7b pre-trained model?")
    assert looked_up_cell(context_tables(MODELS), q) == ("Mistral-7b | Mathematical Reasoning", "Fine-tuned-Models",
                                                         "TIGER-Lab/MAmmoTH2-7B")
    assert looked_up(q, STRING, MODELS, True) == "TIGER-Lab/MAmmoTH2-7B"
    assert looked_up(q, STRING, MODELS, False) is None  # off
    assert looked_up(q, FLOAT2, MODELS, True) is None  # numbers are left to the model
    # one of two names said: two rows say as much, so no cell is a guess
    assert looked_up_cell(context_tables(MODELS), q.replace(" with the Mistral-7b pre-trained model", "")) is None
    assert looked_up_cell(context_tables(MODELS), q.replace("Table 8", "Table 2")) is None  # a table not held
    # a row name said only as part of a longer word is not said ("Mistral-7bx")
    assert looked_up_cell(context_tables(MODELS), q.replace("Mistral-7b", "Mistral-7bx")) is None


RETRIEVERS = ("[tables.t4, p page 6] Table 4: Supervised passage EM on a dev set.\n||Passage EM|\n|---|---|\n"
              "|MDR (Xiong et al., 2021b)|81.20|\n|Baleen (Khattab et al., 2021)|86.10|\n|AISO (Zhu et al., 2021)|88.17|\n"
              "|OURS|88.89|\n")


def test_a_superlative_or_an_excluded_row_is_no_lookup():
    """"Which baseline, i.e. excluding OURS, achieves the highest Passage EM" picks a row by its values: the
    lookup had named OURS's own cell (the one row the question said), a number where a name was asked."""
    q = "In Table 4 of the paper, which baseline, i.e. excluding OURS, achieves the highest Passage EM?"
    assert looked_up(q, STRING, RETRIEVERS, True) is None
    # without the superlative, the excluded row is still not the asked one
    assert looked_up(q.replace("achieves the highest", "reports"), STRING, RETRIEVERS, True) is None
    from evidex.agents.paper_answer import answer_from_context
    from evidex.agents.scripted import ScriptedChatModel

    silent = ScriptedChatModel(responses=[])
    out = answer_from_context(silent, q, STRING, "paper p", RETRIEVERS, table_cells=True, ranked=True)
    assert out.answer == "AISO" and silent.prompts == []  # read by code from the column's rows


def test_a_looked_up_cell_is_the_answer_without_a_model_call():
    from evidex.agents.paper_answer import answer_from_context
    from evidex.agents.scripted import ScriptedChatModel

    q = ("According to Table 8 of the paper, which fine-tuned model is used for the Mathematical Reasoning task with "
         "the Mistral-7b pre-trained model?")
    silent = ScriptedChatModel(responses=[])
    out = answer_from_context(silent, q, STRING, "paper p", MODELS, table_cells=True)
    assert out.answer == "TIGER-Lab/MAmmoTH2-7B" and silent.prompts == []
    # off: the model answers
    model = ScriptedChatModel(responses=['{"answer": "TIGER-Lab/MAmmoTH-7B"}'])
    assert answer_from_context(model, q, STRING, "paper p", MODELS).answer == "TIGER-Lab/MAmmoTH-7B"


def test_no_pair_is_a_guess():
    assert _pair(CONTEXT, "How many points higher is the GSM8k score of MetaGPT than that of Task Arithmetic?") is None
    assert _pair(CONTEXT, GAP.replace("Table 1", "Table 9")) is None  # a table the context does not hold
    assert _pair(CONTEXT, "In Table 1, how many points higher is DARE than Task Arithmetic on GSM8k?") is None
    assert _pair(CONTEXT, "In Table 1, how high is the GSM8k score of MetaGPT?") is None  # no comparison
    # "BART than T5" alone: which transfer row (from DialoGPT? from T5?) is not said
    assert _pair(TRANSFER, "In Table 6, how many points higher is the ASR of BART than T5?") is None


def test_the_gap_is_the_larger_cell_minus_the_smaller_but_minus_keeps_its_order():
    assert cell_gap(GAP, CONTEXT) == "45.41 - 37.53"
    lower = "In Table 1, how many points lower is the GSM8k score of Task Arithmetic than that of MetaGPT?"
    assert cell_gap(lower, CONTEXT) == "45.41 - 37.53"  # "how much lower" asks for the size of the gap
    assert computed_value(cell_gap(GAP, CONTEXT), FLOAT2) == "7.88"
    minus = "In Table 1, what is the GSM8k score of Task Arithmetic minus that of MetaGPT?"
    assert cell_gap(minus, CONTEXT) == "37.53 - 45.41"
    assert cell_gap("In Table 1, how many points higher is Nobody than MetaGPT on GSM8k?", CONTEXT) is None


def test_only_number_questions_about_a_gap_over_a_context_with_tables_name_cells():
    assert compares(GAP, FLOAT2, CONTEXT, True)
    assert not compares(GAP, FLOAT2, CONTEXT, False)  # off
    assert not compares(GAP, "Your answer should be a single string.", CONTEXT, True)
    assert not compares("In Table 1, what is MetaGPT's GSM8k score?", FLOAT2, CONTEXT, True)
    assert not compares(GAP, FLOAT2, "[chunks.c1, p1 page 2] text only", True)
    assert compares("By how much does pass@1 rise from before to after?", "A single integer.", CONTEXT, True)
    assert compares("In Table 1, what is MetaGPT's GSM8k minus Task Arithmetic's?", FLOAT2, CONTEXT, True)


def test_a_gap_answered_with_one_of_the_tables_cells_is_a_copied_cell():
    assert printed_gap(GAP, FLOAT2, CONTEXT, "45.41", True)  # MetaGPT's own GSM8k score, not the gap
    assert printed_gap(GAP, FLOAT2, CONTEXT, "1024", True)  # "1,024" as printed
    assert not printed_gap(GAP, FLOAT2, CONTEXT, "7.88", True)
    assert not printed_gap(GAP, FLOAT2, CONTEXT, "45.41", False)  # off
    assert not printed_gap("In Table 1, what is MetaGPT's GSM8k score?", FLOAT2, CONTEXT, "45.41", True)
    assert not printed_gap(GAP, FLOAT2, CONTEXT, "not a number", True)


def test_neusym_early_answer_is_the_gap_code_reads(table_paper):
    """The synthetic paper's Table 1: Baseline 61.2 / 58.0, Ours 74.9 / 71.3 (Accuracy / F1)."""
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import NeuSymSettings, StoreTools, build_neusym
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="g", question="In Table 1, how many points higher is the Accuracy of Ours than of Baseline?",
                      answer_format=FLOAT2, pdf_ids=[pdf_id])
    settings = NeuSymSettings(store_dir=store_dir, warm_start="multiview", early_answer=True, answer_step="evidence",
                              max_turns=2, table_cells=True)
    silent = ScriptedChatModel(responses=[])  # code reads 74.9 - 61.2 from the probe's table: no model call
    pred = build_neusym(silent, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "13.7" and pred.actions == ["answer"] and silent.prompts == []
    assert any(c.source.startswith("tables.") for c in pred.citations)

    # a column the table lacks: no cells, and the model's own answer, one of the table's cells (Ours' accuracy),
    # is no early answer; the turns go on
    bleu = q.model_copy(update={"question": "In Table 1, how many points higher is the BLEU of Ours than of Baseline?"})
    copied = ScriptedChatModel(responses=[
        json.dumps({"expression": "74.9", "answer": 74.9}),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.7}}),
        json.dumps({"expression": "74.9 - 61.2", "answer": 13.7}),
    ])
    pred = build_neusym(copied, settings, StoreTools(None, store_dir)).invoke({"input": bleu})["prediction"]
    assert len(copied.prompts) == 3 and pred.answer == "13.7"

    # off: the model answers
    plain = ScriptedChatModel(responses=[json.dumps({"answer": 13.3}),
                                         json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.3}}),
                                         json.dumps({"answer": 13.3})])
    off = settings.model_copy(update={"table_cells": False})
    pred = build_neusym(plain, off, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert plain.prompts and pred.answer == "13.3"

"""The table readers (qa.readers ``table_gap`` and ``table_lookup``) over typed tables: a number question about
the gap between two values of the table it names is answered by code, which finds the two cells the question's
words name and subtracts; a text question asking for one cell by its row and column names gets that cell. Both
work on :class:`tools.paperstore.Table` items of a context (header rows resolved into column names), never on
prompt text, and pass to the next reader when no single answer is found."""
from __future__ import annotations

import json

from evidex.agents.readers import DEFAULT_READERS, ReadRequest, get_reader, read_answer
from evidex.agents.readers.checks import printed_cell, rejects
from evidex.agents.readers.table_gap import computed_value
from evidex.tools.paperstore import Paper, Passage, Table
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.cells import gap_cells, looked_up_cell
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import parse_question

FLOAT2 = "Your answer should be a Python float rounded to 2 decimal places."
STRING = "Your answer should be a single string, the model name exactly as printed in the table."


def table(caption: str, markdown: str, key: str = "t", page: int = 7) -> Table:
    return Table(key=key, paper_id="p1", page=page, caption=caption, markdown=markdown)


def ask(text: str, answer_format: str = FLOAT2):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=["p1"]))


def context(*tables: Table) -> Context:
    return Context(items=list(tables))


CONTEXT = Context(items=[
    Paper(paper_id="p1", title="A paper", authors=["A B"]),
    table("Table 1: Performance comparison of merging LLaMA-2-7B models.",
          "|Model|WinoGrande|GSM8k|Nor. Avg|\n|---|---|---|---|\n|Task Arithmetic|63.54|37.53|1.12|\n"
          "|MetaGPT(ours)|64.25|45.41|1.31|", key="t1"),
    table("Table 2: The same with Mistral-7B models.",
          "|Model|WinoGrande|GSM8k|Nor. Avg|\n|---|---|---|---|\n|Task Arithmetic|67.88|63.38|0.932|\n"
          "|MetaGPT(ours)|68.35|66.03|0.936|", key="t2"),
    table("Table 3: Two-level header, similar row names.",
          "||GSM8K||SVAMP||\n|---|---|---|---|---|\n|Model|standard|CoT|standard|CoT|\n|BERT|6.5|14.3|29.5|37.5|\n"
          "|SSCL-BERT|1,024|2.0|3.0|4.0|", key="t3", page=8),
    Passage(key="c1", paper_id="p1", page=2, text="Running text with 45.41 in it."),
])

GAP = "In Table 1, how many points higher is the GSM8k score of MetaGPT than that of Task Arithmetic?"


def test_tables_are_typed_items_with_labels_column_names_and_body_rows():
    tables = CONTEXT.tables
    assert [t.label for t in tables] == ["Table 1", "Table 2", "Table 3"] and len(CONTEXT.items) == 5
    assert tables[0].columns == ["column 0", "WinoGrande", "GSM8k", "Nor. Avg"]
    assert tables[0].rows[1] == ["MetaGPT(ours)", "64.25", "45.41", "1.31"] and len(tables[0].header_rows) == 1
    # a two-level header: the row of names under the spanning labels is header, not body
    assert tables[2].columns[1:] == ["GSM8K standard", "GSM8K CoT", "SVAMP standard", "SVAMP CoT"]
    assert [r[0] for r in tables[2].rows] == ["BERT", "SSCL-BERT"] and tables[2].source == "tables.t3"
    assert context(table("Table 9: one line", "|only a header|")).tables[0].rows == []
    assert Context(items=[CONTEXT.items[-1]]).tables == []


def _pair(ctx: Context, question: str) -> tuple | None:
    found = gap_cells(ctx.tables, ask(question))
    return None if found is None else (found[0].value, found[1].value)


TRANSFER = context(table("Table 6: Transfer attack results.",
                         "|Transfer|Victim|GL|ASR|\n|---|---|---|---|\n|DialoGPT|BART|20.35|55.81|\n"
                         "|DialoGPT|T5|19.02|47.50|\n|BART|DialoGPT|25.73|67.27|\n|BART|T5|24.71|63.93|\n"
                         "|T5|DialoGPT|23.89|47.27|\n|T5|BART|24.20|52.46|"))


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
    dims = context(table("Table 5: x", "|Model|Dimension|Avg. STS|\n|---|---|---|\n|BERT|128|39.24|\n"
                                       "|BERT|256|43.22|\n|SSCL-BERT|128|61.3|\n|SSCL-BERT|256|62.42|"))
    assert _pair(dims, "In Table 5, at dimension 256, how many points higher is the Avg. STS of SSCL-BERT than that "
                       "of BERT?") == (62.42, 43.22)
    sizes = context(table("Table 2: x", "|Model||GSM8K standard|GSM8K CoT|\n|---|---|---|---|\n|LaMDA|8B|3.2|1.6|\n"
                                        "|LaMDA|137B|6.5|14.3|\n|GPT|175B|15.6|46.9|"))
    assert _pair(sizes, "In Table 2, for LaMDA 137B on GSM8K, how many points higher is CoT prompting than "
                        "standard prompting?") == (14.3, 6.5)
    # the corner header names numbered columns; a plural says a singular row name ("forward passes")
    topk = context(table("Table 6: x", "||top-k2|2|3|4|\n|---|---|---|---|---|\n|BPW|ContextLS|0.100|0.033|0.021|\n"
                                       "|BPW|Ours|0.100|0.161|0.211|\n|Forward Pass|ContextLS|1994|2386|2801|\n"
                                       "|Forward Pass|Ours|94|94|94|"))
    assert _pair(topk, "In Table 6, with top-k2 = 4, how many more forward passes does ContextLS need than the "
                       "proposed method (Ours)?") == (2801, 94)
    # a subscript run into its word ("SimCSElarge" for SimCSE_large); "exceed that of" compares
    large = context(table("Table 2: x", "|Model|STS12|Avg.|\n|---|---|---|\n|SimCSElarge|69.17|77.53|\n"
                                        "|SSCL-SimCSElarge|71.98|79.69|"))
    assert _pair(large, "In Table 2, by how many points does the average (Avg.) STS score of SSCL-SimCSE_large "
                        "exceed that of SimCSE_large?") == (79.69, 77.53)
    # "minus" and "rise from A to B"
    rev = context(table("Table 2: x", "|Datasets|Y*;R*|X→YR|X→RY|\n|---|---|---|---|\n|ECQA|0.7943|0.5840|0.5599|\n"
                                      "|CoS-E|0.2415|0.2308|0.1198|"))
    assert _pair(rev, "In Table 2, on ECQA, what is the REV score of (Y*;R*) minus the REV score of the X→RY "
                      "pairs?") == (0.7943, 0.5599)
    edit = context(table("Table 8: x", "|Benchmark||pass@1|pass@5|\n|---|---|---|---|\n"
                                       "|HumanEval|before|34.76|60.98|\n|HumanEval|after|39.63|64.63|"))
    assert _pair(edit, "In Table 8, by how many points does pass@1 on HumanEval rise from before to after the "
                       "edit?") == (34.76, 39.63)


PERPLEXITY = context(table("Table 3: Eval. perplexities on PG-19.",
                           "||Valid.|Test|\n|---|---|---|\n|36L TransformerXL|45.5|36.3|\n"
                           "|36L Compressive Transf.|43.4|33.6|"))


def _gap(ctx: Context, question: str, answer_format: str = FLOAT2) -> Answer | None:
    q = ask(question, answer_format)
    reader = get_reader("table_gap")
    return reader.read(ReadRequest(question=q, context=ctx)) if reader.applies(q, ctx) else None


def test_row_names_that_begin_with_a_size_or_end_cut_short_are_still_named():
    """"36L TransformerXL" names a row (a size, then words), and "Compressive Transf." is said as "Compressive
    Transformer": a word cut short with a full stop is said by any word it begins."""
    q = ("In Table 3 of the paper, by how much is the test perplexity of the 36L Compressive Transformer lower than "
         "that of the 36L TransformerXL?")
    assert _pair(PERPLEXITY, q) == (33.6, 36.3)
    assert _gap(PERPLEXITY, q).expression == "36.3 - 33.6"
    # "Transf." is not said by a word it does not begin
    assert _pair(PERPLEXITY, q.replace("Compressive Transformer", "Compressive Model")) is None


MODELS = context(table("Table 8: Details of models we used for our evaluation.",
                       "|Pre-trained Model|Task|Fine-tuned-Models|\n|---|---|---|\n"
                       "|LLaMA-2-7b|General Knowledge|meta-llama/Llama-2-7b-chat-hf|\n"
                       "|LLaMA-2-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH-7B|\n"
                       "|Mistral-7b|General Knowledge|mistralai/Mistral-7B-Instruct-v0.2|\n"
                       "|Mistral-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH2-7B|", key="t8", page=14))
LOOKUP = ("According to Table 8 of the paper, which fine-tuned model is used for the Mathematical Reasoning task with "
          "the Mistral-7b pre-trained model?")


def _lookup(ctx: Context, question: str, answer_format: str = STRING) -> Answer | None:
    q = ask(question, answer_format)
    reader = get_reader("table_lookup")
    return reader.read(ReadRequest(question=q, context=ctx)) if reader.applies(q, ctx) else None


def test_a_text_cell_asked_by_its_row_and_column_names_is_looked_up():
    assert looked_up_cell(MODELS.tables, ask(LOOKUP, STRING)) == (
        "Mistral-7b | Mathematical Reasoning", "Fine-tuned-Models", "TIGER-Lab/MAmmoTH2-7B")
    answer = _lookup(MODELS, LOOKUP)
    assert answer.value == "TIGER-Lab/MAmmoTH2-7B" and answer.by_code and answer.reader == "table_lookup"
    assert answer.sources == ["tables.t8"]  # the answer cites the table it was read from
    assert _lookup(MODELS, LOOKUP, FLOAT2) is None  # numbers are left to other readers
    assert _lookup(Context(), LOOKUP) is None  # no table in the context: the reader does not apply
    # one of two names said: two rows say as much, so no cell is a guess
    assert looked_up_cell(MODELS.tables, ask(LOOKUP.replace(" with the Mistral-7b pre-trained model", ""))) is None
    assert _lookup(MODELS, LOOKUP.replace("Table 8", "Table 2")) is None  # a table the context does not hold
    # a row name said only as part of a longer word is not said ("Mistral-7bx")
    assert _lookup(MODELS, LOOKUP.replace("Mistral-7b", "Mistral-7bx")) is None


RETRIEVERS = context(table("Table 4: Supervised passage EM on a dev set.",
                           "||Passage EM|\n|---|---|\n|MDR (Xiong et al., 2021b)|81.20|\n"
                           "|Baleen (Khattab et al., 2021)|86.10|\n|AISO (Zhu et al., 2021)|88.17|\n|OURS|88.89|",
                           key="t4", page=6))


def test_a_superlative_or_an_excluded_row_is_no_lookup():
    """"Which baseline, i.e. excluding OURS, achieves the highest Passage EM" picks a row by its values: the
    lookup had named OURS's own cell (the one row the question said), a number where a name was asked."""
    from evidex.agents.scripted import ScriptedChatModel

    q = "In Table 4 of the paper, which baseline, i.e. excluding OURS, achieves the highest Passage EM?"
    assert not get_reader("table_lookup").applies(ask(q, STRING), RETRIEVERS)
    # without the superlative, the excluded row is still not the asked one
    assert _lookup(RETRIEVERS, q.replace("achieves the highest", "reports")) is None
    silent = ScriptedChatModel(responses=[])
    out = read_answer(DEFAULT_READERS, ReadRequest(question=ask(q, STRING), context=RETRIEVERS, llm=silent))
    assert out.value == "AISO" and out.reader == "ranked_rows" and silent.prompts == []  # read from the column's rows


def test_a_looked_up_cell_is_the_answer_without_a_model_call():
    from evidex.agents.scripted import ScriptedChatModel

    silent = ScriptedChatModel(responses=[])
    out = read_answer(DEFAULT_READERS, ReadRequest(question=ask(LOOKUP, STRING), context=MODELS, llm=silent))
    assert out.value == "TIGER-Lab/MAmmoTH2-7B" and out.reader == "table_lookup" and silent.prompts == []
    # a reader list without it: the model answers, from the table rendered into its prompt
    model = ScriptedChatModel(responses=['{"answer": "TIGER-Lab/MAmmoTH-7B"}'])
    out = read_answer(["table_gap", "model"], ReadRequest(question=ask(LOOKUP, STRING), context=MODELS, llm=model))
    assert out.value == "TIGER-Lab/MAmmoTH-7B" and out.reader == "model" and not out.by_code
    assert "|Mistral-7b|Mathematical Reasoning|TIGER-Lab/MAmmoTH2-7B|" in model.prompts[0]


def test_no_pair_is_a_guess():
    assert _pair(CONTEXT, "How many points higher is the GSM8k score of MetaGPT than that of Task Arithmetic?") is None
    assert _pair(CONTEXT, GAP.replace("Table 1", "Table 9")) is None  # a table the context does not hold
    assert _pair(CONTEXT, "In Table 1, how many points higher is DARE than Task Arithmetic on GSM8k?") is None
    assert _pair(CONTEXT, "In Table 1, how high is the GSM8k score of MetaGPT?") is None  # no comparison
    # "BART than T5" alone: which transfer row (from DialoGPT? from T5?) is not said
    assert _pair(TRANSFER, "In Table 6, how many points higher is the ASR of BART than T5?") is None


def test_the_gap_is_the_larger_cell_minus_the_smaller_but_minus_keeps_its_order():
    answer = _gap(CONTEXT, GAP)
    assert (answer.expression, answer.value, answer.reader, answer.by_code) == ("45.41 - 37.53", "7.88", "table_gap",
                                                                                True)
    assert answer.sources == ["tables.t1"]  # the table it names, not the other tables of the context
    lower = "In Table 1, how many points lower is the GSM8k score of Task Arithmetic than that of MetaGPT?"
    assert _gap(CONTEXT, lower).expression == "45.41 - 37.53"  # "how much lower" asks for the size of the gap
    minus = "In Table 1, what is the GSM8k score of Task Arithmetic minus that of MetaGPT?"
    assert _gap(CONTEXT, minus).expression == "37.53 - 45.41" and _gap(CONTEXT, minus).value == "-7.88"
    assert _gap(CONTEXT, "In Table 1, how many points higher is Nobody than MetaGPT on GSM8k?") is None
    # a fraction where a whole number is asked: no answer by code, the next reader answers
    assert _gap(CONTEXT, GAP, "Your answer should be a Python integer.") is None
    assert computed_value("45.41 - 37.53", "float") == "7.88" and computed_value("157,212 - 12", "int") == "157200"
    assert computed_value("6.5 / 2", "int") is None and computed_value("__import__('os')", "float") is None


def test_only_number_questions_about_a_gap_over_a_context_with_tables_apply():
    gap = get_reader("table_gap")
    assert gap.applies(ask(GAP), CONTEXT)
    assert not gap.applies(ask(GAP, "Your answer should be a single string."), CONTEXT)
    assert not gap.applies(ask("In Table 1, what is MetaGPT's GSM8k score?"), CONTEXT)
    assert not gap.applies(ask(GAP), Context(items=[CONTEXT.items[-1]]))  # passages only
    assert gap.applies(ask("By how much does pass@1 rise from before to after?", "A single integer."), CONTEXT)
    assert gap.applies(ask("In Table 1, what is MetaGPT's GSM8k minus Task Arithmetic's?"), CONTEXT)


def test_a_gap_answered_with_one_of_the_tables_cells_is_a_copied_cell():
    def said(value: str, question: str = GAP, expression: str = "") -> Answer:
        return Answer(value=value, reader="model", expression=expression)

    q = ask(GAP)
    assert printed_cell(said("45.41"), q, CONTEXT)  # MetaGPT's own GSM8k score, not the gap
    assert printed_cell(said("1024"), q, CONTEXT)  # "1,024" as printed
    assert not printed_cell(said("7.88"), q, CONTEXT)
    assert not printed_cell(said("45.41", expression="45.41 - 0"), q, CONTEXT)  # computed: the operands are checked
    assert not printed_cell(said("45.41"), ask("In Table 1, what is MetaGPT's GSM8k score?"), CONTEXT)
    assert not printed_cell(said("not a number"), q, CONTEXT)
    assert rejects(said("45.41"), q, CONTEXT) == "one table cell given for the gap between two"
    assert rejects(_gap(CONTEXT, GAP), q, CONTEXT) is None  # the operands, not the result, are in the context


def _graph(llm, store_dir: str, *settings: str):
    from evidex.graphs.qa.neusym import build_neusym
    from evidex.graphs.tasks import config_for_task

    return build_neusym(llm, config_for_task("airqa", [f"store.store_dir={store_dir}", "qa.max_turns=2", *settings]))


def test_neusym_early_answer_is_the_gap_code_reads(table_paper):
    """The synthetic paper's Table 1: Baseline 61.2 / 58.0, Ours 74.9 / 71.3 (Accuracy / F1)."""
    from evidex.agents.scripted import ScriptedChatModel

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="g", question="In Table 1, how many points higher is the Accuracy of Ours than of Baseline?",
                      answer_format=FLOAT2, pdf_ids=[pdf_id])
    silent = ScriptedChatModel(responses=[])  # code reads 74.9 - 61.2 from the probe's table: no model call
    pred = _graph(silent, store_dir).invoke({"input": q})["prediction"]
    assert pred.answer == "13.7" and pred.actions == ["answer"] and silent.prompts == []
    assert pred.reader == "table_gap" and [c.source.split(".")[0] for c in pred.citations] == ["tables"]
    assert pred.citations[0].exists

    # a column the table lacks: no cells, and the model's own answer, one of the table's cells (Ours' accuracy),
    # is no early answer; the turns go on
    bleu = q.model_copy(update={"question": "In Table 1, how many points higher is the BLEU of Ours than of Baseline?"})
    copied = ScriptedChatModel(responses=[
        json.dumps({"answer": 74.9}),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.7}}),
        json.dumps({"answer": 13.7}),
    ])
    pred = _graph(copied, store_dir).invoke({"input": bleu})["prediction"]
    assert len(copied.prompts) == 3 and pred.answer == "13.7" and pred.reader == "model"

    # without the table readers in qa.readers, the model answers
    plain = ScriptedChatModel(responses=[json.dumps({"answer": 13.3}),
                                         json.dumps({"step": {"thought": "done", "action": "answer", "answer": 13.3}}),
                                         json.dumps({"answer": 13.3})])
    pred = _graph(plain, store_dir, "qa.readers=[model]").invoke({"input": q})["prediction"]
    assert len(plain.prompts) == 3 and pred.answer == "13.3" and pred.reader == "model"

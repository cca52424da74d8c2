"""Computed answers (qa.computed_answers): a numeric answer is written as arithmetic over the context's numbers and
the calculator's result is the answer; NeuSym's early answer accepts it only when those numbers are in the probe."""
from __future__ import annotations

import json

import pytest

from evidex.agents.paper_answer import answer_schema, computed_value
from evidex.tools.text import operands_in

GAP = "In Table 1, by how many points is the Accuracy of Ours higher than that of Baseline?"
FLOAT = "A float, rounded to 1 decimal place."


@pytest.mark.parametrize("expression, fmt, expected", [
    ("225 - 175", "An integer.", "50"),
    ("79.69 - 77.53", "A float, rounded to 2 decimal places.", "2.16"),
    ("157,212", "An integer.", "157212"),  # thousands separators as papers print them
    ("max(61.2, 74.9)", FLOAT, "74.9"),  # a function's commas stay
    ("10 / 4", "An integer.", None),  # a fraction where a whole number is asked: the model's own answer stands
    ("Table 1", FLOAT, None), ("1 / 0", FLOAT, None), ("__import__('os')", FLOAT, None), ("9 ** 9 ** 9", FLOAT, None),
])
def test_an_expression_comes_to_the_format_s_number_by_the_calculator(expression, fmt, expected):
    assert computed_value(expression, fmt) == expected


def test_operands_must_be_read_in_the_context():
    ctx = "|Baseline|61.2|58.0|\n|Ours|74.9|71.3|  Amazon has 157,212 users."
    assert operands_in("74.9 - 61.2", ctx) and operands_in("(74.9 - 61.2) / 61.2 * 100", ctx)
    assert operands_in("157212", ctx)  # thousands separators aside
    assert not operands_in("74.9 - 60.2", ctx) and not operands_in("100", ctx) and not operands_in("", ctx)
    # compared as numbers: a grammar-typed 64.9 is the paper's "64.90"; a number inside a word is no operand
    assert operands_in("min(64.9, 16.6)", "|+ FFN|64.90|\n|ChrF|16.6|") and not operands_in("90", "P@R90 of 16")
    assert not operands_in("6", "16.6 and 61")


def test_only_number_formats_get_an_expression_and_it_comes_before_the_answer():
    fields = list(answer_schema(FLOAT, True, False, True).model_fields)
    assert fields == ["expression", "answer"]
    assert list(answer_schema("A string.", True, False, True).model_fields) == ["answer"]
    assert list(answer_schema("A Python list of floats.", True, False, True).model_fields) == ["answer"]
    assert list(answer_schema(FLOAT, True, True, False).model_fields) == ["quote", "answer"]


def test_neusym_early_answer_computes_when_the_numbers_are_in_the_probe(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import NeuSymSettings, StoreTools, build_neusym
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="g", question=GAP, answer_format=FLOAT, pdf_ids=[pdf_id])
    settings = NeuSymSettings(store_dir=store_dir, warm_start="multiview", early_answer=True, answer_step="evidence",
                              max_turns=2, computed_answers=True)
    # the model subtracts wrongly (12.7) but names the right cells: the calculator's 13.7 is the answer
    model = ScriptedChatModel(responses=[json.dumps({"expression": "74.9 - 61.2", "answer": 12.7})])
    pred = build_neusym(model, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "13.7" and pred.actions == ["answer"]
    assert '"expression"' in model.prompts[0] and "225 - 175" in model.prompts[0]
    assert any(c.source.startswith("tables.") for c in pred.citations)

    # numbers the probe does not hold: not grounded, the turns begin (and their answer is computed too)
    made_up = ScriptedChatModel(responses=[
        json.dumps({"expression": "80.2 - 61.2", "answer": 19}),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 1.0}}),
        json.dumps({"expression": "74.9 - 61.2", "answer": 13}),
    ])
    pred = build_neusym(made_up, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "13.7" and len(made_up.prompts) == 3

    # off (the default), the answer is the model's own and no expression is asked for
    plain = ScriptedChatModel(responses=[json.dumps({"answer": 74.9})])
    off = settings.model_copy(update={"computed_answers": False})
    pred = build_neusym(plain, off, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "74.9" and '"expression"' not in plain.prompts[0]


def test_classic_rag_computes_and_keeps_its_own_answer_when_the_expression_is_not_arithmetic(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.baselines import BaselineSettings, build_baseline
    from evidex.graphs.qa.store_tools import StoreTools
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="g", question=GAP, answer_format=FLOAT, pdf_ids=[pdf_id])
    settings = BaselineSettings(method="classic_rag", retrieval_mode="bm25", computed_answers=True)
    for reply, expected in (({"expression": "74.9 - 61.2", "answer": 12.7}, "13.7"),
                            ({"expression": "Ours minus Baseline", "answer": 12.7}, "12.7")):
        model = ScriptedChatModel(responses=[json.dumps(reply)])
        graph = build_baseline(model, settings, StoreTools(None, store_dir))
        assert graph.invoke({"input": q})["prediction"].answer == expected

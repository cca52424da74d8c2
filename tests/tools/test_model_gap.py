"""The model reader's gap: for a number asked as the gap between two values ("how many more runs does A report
than B") the model copies both values and code subtracts them; the 1.5B model, with both values in front of it,
answered 1 for 20 runs against 5. The answer rests on the two values, so NeuSym's early answer takes it only when
both are in the probe."""
from __future__ import annotations

import json

from evidex.agents.readers.model import Operand, answer_schema, difference, ratio, times, total
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.question import parse_question
from evidex.tools.text import operands_in

INT = "Your answer should be a single integer (no units, no thousands separators)."
FLOAT = "Your answer should be a Python float rounded to 2 decimal places."


def ask(text: str, answer_format: str = INT):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=["p"]))


def _pair(a: float, b: float) -> list[Operand]:
    return [Operand(name="first", value=a), Operand(name="second", value=b)]


def test_a_gap_between_two_numbers_is_subtracted_by_code():
    assert ask("How many more runs are the results of the first paper averaged over than the second's?").difference
    assert ask("By how many ROUGE-1 points does the full model outperform the baseline?", FLOAT).difference
    assert ask("What is the difference between the two learning rates?", FLOAT).difference
    # a ratio or a relative change, a superlative, or an answer that is no number: the model answers alone
    assert not ask("How many times more parameters does A have than B?").difference
    assert not ask("By what percent does A improve over B?", FLOAT).difference
    assert not ask("Which method is the highest, and by how much?").difference
    assert not ask("How many more runs does A use than B?", "Your answer should be a string.").difference
    assert not ask("How many runs are the results averaged over?").difference
    assert list(answer_schema(INT, False, 2000, "difference").model_fields) == ["compared", "answer"]
    assert answer_schema(INT, False, 2000, "difference").model_json_schema()["properties"]["compared"]["minItems"] == 2


def test_the_difference_is_absolute_and_printed_as_the_paper_prints_numbers():
    assert difference(_pair(20, 5)) == ("15", "abs(20 - 5)")
    assert difference(_pair(5, 20)) == ("15", "abs(5 - 20)")
    assert difference(_pair(20.5, 18.45)) == ("2.05", "abs(20.5 - 18.45)")  # no 2.0500000000000007
    assert difference(_pair(1293247.0, 320023)) == ("973224", "abs(1293247 - 320023)")
    # the same number twice: the model did not tell the two apart, its own answer stands
    assert difference(_pair(7, 7)) is None and difference(_pair(float("nan"), 1)) is None
    ctx = "All the results are averaged over the 20 runs. ... All the results are the average of 5 runs."
    assert operands_in("abs(20 - 5)", ctx) and not operands_in("abs(20 - 4)", ctx)


def _reply(a: float, b: float, answer: int) -> str:
    return json.dumps({"compared": [{"name": "ours", "value": a}, {"name": "theirs", "value": b}], "answer": answer})


def test_classic_rag_answers_the_subtraction_not_the_model_s_number(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.baselines import build_baseline
    from evidex.graphs.tasks import load_config

    store_dir, pdf_id = table_paper
    cfg = load_config("airqa/classic_rag", [f"store.store_dir={store_dir}", "qa.retrieval_mode=bm25"])
    q = PaperQuestion(id="g", question="By how many points does Ours beat Baseline?", answer_format=FLOAT,
                      pdf_ids=[pdf_id])
    model = ScriptedChatModel(responses=[_reply(74.9, 61.2, 3)])
    pred = build_baseline(model, cfg).invoke({"input": q})["prediction"]
    assert pred.answer == "13.7" and pred.reader == "model" and '"compared"' in model.prompts[0]
    # the same value twice: the model's own answer stands
    model = ScriptedChatModel(responses=[_reply(74.9, 74.9, 3)])
    assert build_baseline(model, cfg).invoke({"input": q})["prediction"].answer == "3.0"


def test_a_ratio_or_a_total_is_worked_out_by_code_from_the_values_the_model_copies():
    """How many times one value is another, and a total of values two papers (or one) state apart: the model lists
    the values, code divides or adds (the 1.5B model gave one paper's number as the total of two)."""
    assert ask("How many times more parameters does the XL model have than the base model?", FLOAT).arithmetic == \
        "times"
    assert ask("What is the ratio of the learning rate in A to the learning rate in B?", FLOAT).arithmetic == "ratio"
    assert ask("What is the total number of datasets across the two papers?").arithmetic == "sum"
    assert ask("How many tasks are there in total if you add the tasks of A to those of B?").arithmetic == "sum"
    assert ask("How many more runs does A use than B?").arithmetic == "difference"
    # a ratio a named table prints is a value; a total the question gives numbers for, a percent, a superlative,
    # a name, or an equation's values are other shapes
    assert ask("In Table 4, what is the ratio of rationale length to input length of group A?", FLOAT).arithmetic \
        is None
    assert ask("The experts were paid $3.25 per question. How many judgements did the total cost of $845 buy?")\
        .arithmetic is None
    assert ask("By what percent in total does A improve?", FLOAT).arithmetic is None
    assert ask("Which model has the highest total score?", "Your answer should be a string.").arithmetic is None
    assert ask("How many books does the dataset contain?").arithmetic is None
    assert ask("What is the Weighted Summed Score of the example?", FLOAT).arithmetic is None  # a name
    assert ask("How many times larger is the value Equation 2 gives at x = 4 than at x = 2?", FLOAT).arithmetic is None
    assert ratio(_pair(3000, 220)) == ("13.636363636", "3000 / 220") and ratio(_pair(1, 2)) == ("0.5", "1 / 2")
    assert times(_pair(220, 3000)) == ("13.636363636", "3000 / 220")  # the larger over the smaller
    assert ratio(_pair(4, 0)) is None and ratio(_pair(2, 2)) is None and ratio(_pair(1, 2, )[:1]) is None
    assert total(_pair(8, 3)) == ("11", "8 + 3") and total([Operand(name="only", value=101)]) == ("101", "101")
    assert total([]) is None and total(_pair(float("inf"), 1)) is None
    # a total over two named papers takes at least one value of each; over one paper, one may do
    two = answer_schema(INT, False, 2000, "sum", False, 2).model_json_schema()["properties"]["compared"]
    assert (two["minItems"], two["maxItems"]) == (2, 8)
    assert answer_schema(INT, False, 2000, "sum", False, 1).model_json_schema()["properties"]["compared"][
        "minItems"] == 1


def test_what_one_of_two_papers_values_is_does_not_hide_the_arithmetic():
    """Over two named papers, a superlative, a named table or a number's own percent sign says what one value is,
    not what the question asks: "the maximum number of epochs in A plus ...", "the ratio of A's count to the count in
    Table 14 of B", "the accuracy at 3% remaining weights". Before, each made the question no arithmetic, so the
    model worked it out alone; a gap in percentage points is a difference too."""
    def two(text: str, answer_format: str = INT):
        return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=["a", "b"]))

    assert two('What is the total number of epochs: the maximum number of epochs in "A" plus the epochs of "B"?')\
        .arithmetic == "sum"
    assert two('What is the ratio of the number of songs in "A" to the number of sentences in Table 14 of "B"?',
               FLOAT).arithmetic == "ratio"
    assert two('By how many points is the accuracy of A at 3% remaining weights (Table 1 of "A") higher than the '
               'accuracy in Table 4 of "B"?', FLOAT).arithmetic == "difference"
    assert ask("By how many percentage points is the accuracy of A higher than that of B?", FLOAT).arithmetic == \
        "difference"
    assert ask("By how many percentage points does the share of A exceed the percentage of errors in B?").arithmetic \
        == "difference"
    assert ask("How many million more parameters does A have than the two networks of B combined?").arithmetic == \
        "difference"
    assert two('What is the difference between the highest score in "A" and the highest score in "B"?', FLOAT)\
        .arithmetic == "difference"
    # over one paper the superlative is the question's own pick, and a percent asked for is a relative change
    assert ask("What is the total number of epochs of the model with the highest accuracy?").arithmetic is None
    assert ask("By what % is the accuracy of A higher than that of B?", FLOAT).arithmetic is None
    assert ask("In Table 4, what is the ratio of rationale length to input length of group A?", FLOAT).arithmetic \
        is None


def test_the_model_reader_answers_the_ratio_and_the_total_code_worked_out(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.baselines import build_baseline
    from evidex.graphs.tasks import load_config

    store_dir, pdf_id = table_paper
    cfg = load_config("airqa/classic_rag", [f"store.store_dir={store_dir}", "qa.retrieval_mode=bm25"])
    q = PaperQuestion(id="r", question="How many times higher is the score of Ours than that of Baseline?",
                      answer_format=FLOAT, pdf_ids=[pdf_id])
    model = ScriptedChatModel(responses=[_reply(74.9, 61.2, 3)])
    pred = build_baseline(model, cfg).invoke({"input": q})["prediction"]
    assert pred.answer == "1.223856209" and '"compared"' in model.prompts[0] and "larger divided" in model.prompts[0]
    q = PaperQuestion(id="t", question="What is the total number of examples of Ours and Baseline combined?",
                      answer_format=INT, pdf_ids=[pdf_id])
    model = ScriptedChatModel(responses=[_reply(75, 61, 3)])
    pred = build_baseline(model, cfg).invoke({"input": q})["prediction"]
    assert pred.answer == "136" and "their sum" in model.prompts[0]

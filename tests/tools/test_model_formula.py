"""The model reader's equation: for a number asked as the value an equation takes on values the question gives
("what score does Equation 1 give a sentence at position 9 when alpha = 2") the model writes the equation with the
values put in and code computes it; the 1.5B model worked min(9, 2 * (12 - 9)) out as 1. The expression's numbers
come from the question or the context, so NeuSym's early answer takes it when they are found in either."""
from __future__ import annotations

import json
import re

from evidex.agents.readers import rejects
from evidex.agents.readers.model import EXPRESSION_PARTS, answer_schema, computed, put_in
from evidex.tools.calc import calculate, pattern_chars
from evidex.tools.paperstore import Equation, Passage
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import parse_question

INT = "Your answer should be a single integer (no units, no thousands separators)."
FLOAT = "Your answer should be a Python float rounded to 2 decimal places."


def ask(text: str, answer_format: str = FLOAT):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=["p"]))


def test_a_value_of_an_equation_on_given_values_is_computed_by_code():
    assert ask("What score does Equation 1, s = min(x, a(n - x)), give at x = 9 with n = 12 and a = 2?", INT) \
        .applies_formula
    assert ask("Suppose the needle has 24 tokens and 6 of them are copied. What score does Equation 1 give?") \
        .applies_formula
    assert ask("With the schedule of the formula v_t = v_f (1 - t/N)^3, what is v_t at t = N/2 if v_f is 0.8?") \
        .applies_formula
    # an equation's own number, a table's or a section's is no value; a gap has its own arithmetic; a name is no
    # number; no equation named: the model answers alone
    assert not ask("To what value is the decay factor of Equation 11 set?").applies_formula
    assert not ask("How many loss terms does Eq. (4) of Section 3.2 sum, as Table 2 lists?", INT).applies_formula
    assert not ask("By how many points does Equation 2's loss beat the baseline's 3.5?").applies_formula
    assert not ask("Which symbol of Equation 3 weights the 2 losses?", "Your answer should be a string.") \
        .applies_formula
    assert not ask("What accuracy does the model reach with 8 layers?").applies_formula
    assert not ask("In the paper on GPT-4, what does Equation 3 give?").applies_formula
    assert list(answer_schema(INT, False, 2000, None, True).model_fields) == ["expression", "answer"]


def test_the_expression_is_computed_safely_and_an_integer_must_be_whole():
    assert computed("min(9, 2 * (12 - 9))", "int") == ("6", "min(9, 2 * (12 - 9))")
    assert computed("cos(pi / 2 * 3 / 9) * cos(pi / 2 * abs(0.9 - 0.4))", "float")[0] == "0.612372436"
    assert computed("0.8 - 0.8 * (1 - 0.5) ** 3", "float")[0] == "0.7"  # not 0.7000000000000001
    assert computed("0.6 * 3 + 0.4 * 4", "float")[0] == "3.4"
    assert computed("cos(π/2 * 3/9) * cos(π/2 * (0.9 − 0.4))", "float")[0] == "0.612372436"  # as the paper prints
    # no expression, names, code, or a fraction for a count: the model's own answer stands
    assert computed("x + 1", "float") is None and computed("", "float") is None
    assert computed("__import__('os').system('true')", "int") is None
    assert computed("7 / 2", "int") is None and computed("10 ** 10 ** 10", "int") is None


def test_the_grammar_holds_the_expression_to_numbers_and_the_names_calculate_reads():
    """The expression's JSON schema carries a pattern the local model decodes under: digits, signs, parentheses and
    the calculator's names, so it writes "1/(2*3)*(0.9+0.6+0.3+0.8+0.5+0.2)", not "1/(|C1| * |C2|) * sum_{i in
    C1} sum_{j in C2} s(i, j)" (which no code can compute). Every string the pattern takes is one calculate reads
    the characters of."""
    schema = answer_schema(FLOAT, False, 2000, None, True)
    prop = schema.model_json_schema()["properties"]["expression"]
    pattern = re.compile(prop["pattern"])
    for written in ("1/(2*3)*(0.9+0.6+0.3+0.8+0.5+0.2)", "1 - (6 / max(40, 50))", "2^3 − 1 × 2",
                    "cos(π/2 * 3/9) * cos(pi/2 * 0.5)", "-(0.5 * log2(0.5) + 2 * 0.25 * log2(0.25))", "1e-5 * 3",
                    "0.5 + tanh(1.0) + tanh(0)", "sigmoid(0.3) * 2"):
        assert pattern.match(written) and calculate(written) is not None, written
    for symbolic in ("1/(|C1| * |C2|) * sum_{i} s(i, j)", "0.8 - 0.8 * (1 - (N / 2) ** 3)", "x + 1", "a = 2",
                     "__import__('os')", "0.5" * 200):
        assert not pattern.match(symbolic), symbolic
    # the longest string the pattern takes fits the field; a model decoding without the grammar may still leave
    # a symbol the question sets, which code puts the number in for (below)
    assert prop["maxLength"] == pattern_chars(EXPRESSION_PARTS) and len("sigmoid" * EXPRESSION_PARTS) <= prop["maxLength"]
    assert schema(expression="Avg[Gp] * 2", answer=1.0).expression == "Avg[Gp] * 2"


def test_symbols_the_model_leaves_in_get_the_numbers_the_question_sets():
    """The 1.5B model often writes the equation as printed ("Avg[Gp] / (la - lo) * (l - lo)"); the question set
    those symbols ("Avg[G_p] = 0.6, l_a = 2 and l_o = 12 ... layer l = 7"), so code puts the numbers in."""
    q = ask("Equation (3) gives z. If Avg[G_p] = 0.6, l_a = 2 and l_o = 12, what does z give layer l = 7 "
            "(with Ti = 0, P0(Xi) equals 0.2 and t = N/2)?")
    assert q.values == {"Avg[G_p]": 0.6, "l_a": 2, "l_o": 12, "l": 7, "Ti": 0, "P0(Xi)": 0.2}  # N/2 is no number
    assert put_in("Avg[Gp] / (la - lo) * (l - lo)", q.values) == "(0.6) / ((2) - (12)) * ((7) - (12))"
    assert computed("Avg[Gp] / (la - lo) * (l - lo)", "float", q.values) == (
        "0.3", "(0.6) / ((2) - (12)) * ((7) - (12))")  # the expression the value is of, numbers put in
    # a whole name only: "l" is not put into "log" or "la"; a symbol nobody set leaves no value
    assert put_in("log(l) + la", {"l": 7, "la": 2}) == "log((7)) + (2)"
    assert computed("Avg[Gp] * k", "float", q.values) is None
    assert computed("min(x, α * (n - x))", "int", ask("At x = 9, n = 12 and α = 2?").values)[0] == "6"


def test_the_early_answer_takes_an_expression_of_the_question_s_values():
    q = ask("What score does Equation 1 give at x = 9 with n = 12 and a = 2?", INT)
    context = Context(items=[Equation(key="e1", paper_id="p", page=3, text="s_b(v) = min(x, α(n − x)) (1)"),
                             Passage(key="c1", paper_id="p", page=3, text="Sentences near the end score low.")])
    assert rejects(Answer(value="6", reader="model", expression="min(9, 2 * (12 - 9))"), q, context) is None
    # a number neither the question nor the paper gives is not grounded
    assert rejects(Answer(value="7", reader="model", expression="min(9, 2 * (12 - 8.5))"), q, context) == \
        "not found in the context"
    # for any other question the numbers must be in the context, as before
    other = ask("How many points does Ours gain at x = 9?", INT)
    assert rejects(Answer(value="6", reader="model", expression="min(9, 2 * (12 - 9))"), other, context) == \
        "not found in the context"


def test_classic_rag_answers_the_computed_value_not_the_model_s_number(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.baselines import build_baseline
    from evidex.graphs.tasks import load_config

    store_dir, pdf_id = table_paper
    cfg = load_config("airqa/classic_rag", [f"store.store_dir={store_dir}", "qa.retrieval_mode=bm25"])
    q = PaperQuestion(id="f", question="What score does Equation 1, s = min(x, a(n - x)), give at x = 9 with "
                                       "n = 12 and a = 2?", answer_format=INT, pdf_ids=[pdf_id])
    model = ScriptedChatModel(responses=[json.dumps({"expression": "min(9, 2 * (12 - 9))", "answer": 1})])
    pred = build_baseline(model, cfg).invoke({"input": q})["prediction"]
    assert pred.answer == "6" and pred.reader == "model" and '"expression"' in model.prompts[0]
    # an expression code cannot compute: the model's own answer stands
    model = ScriptedChatModel(responses=[json.dumps({"expression": "s(9)", "answer": 1})])
    assert build_baseline(model, cfg).invoke({"input": q})["prediction"].answer == "1"

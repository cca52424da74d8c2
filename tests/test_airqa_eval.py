"""The 21 AirQA evaluation functions (``evaluators/airqa.py``): hand-made cases for each, a scripted judge for the
LLM-judged ones, the no-judge path, malformed and hostile predictions, the uuid-joining scorer, the CLI, and two
checks over the real AirQA sample (gold answers fed back score 1, a constant wrong answer scores 0)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evidex.agents.scripted import ScriptedChatModel
from evidex.evaluators import airqa
from evidex.evaluators.airqa import EVAL_FUNCS, EvalResult, evaluate, parse_prediction, score_predictions

REPO = Path(__file__).resolve().parents[1]
SAMPLE = "airqa/airqa_dev_sample.jsonl"

SPEC_NAMES = {  # shared/specs/neusym.md §3.2, "evaluation/__init__.py exports 21"
    "eval_string_exact_match", "eval_string_fuzzy_match", "eval_bool_exact_match", "eval_int_exact_match",
    "eval_float_exact_match", "eval_structured_object_exact_match", "eval_element_included",
    "eval_element_list_included", "eval_element_list_overlap", "eval_paper_relevance_with_reference_answer",
    "eval_reference_answer_with_llm", "eval_candidate_reference_answer_with_llm", "eval_scoring_points_with_llm",
    "eval_partial_scoring_points_with_llm", "eval_reference_answer_and_scoring_points_with_llm",
    "eval_complex_math_formula_with_llm", "eval_conjunction", "eval_disjunction", "eval_negation",
    "eval_m3sciqa", "eval_scidqa",
}


def score(pred, func: str, llm=None, **kwargs) -> float | None:
    """Score through the public entry point, asserting no evaluator error crept in."""
    result = evaluate(pred, {"eval_func": func, "eval_kwargs": kwargs}, llm=llm)
    assert result.error is None, result.error
    return result.score


def judge(*replies: str) -> ScriptedChatModel:
    return ScriptedChatModel(responses=list(replies))


def test_registry_has_the_21_spec_functions():
    assert set(EVAL_FUNCS) == SPEC_NAMES and len(EVAL_FUNCS) == 21
    assert airqa.LLM_FUNCS <= SPEC_NAMES and airqa.LOGICAL_FUNCS <= SPEC_NAMES


# ------------------------------------------------------------------------------------------------ parsing
@pytest.mark.parametrize("raw, value", [
    ('["a", "b"]', ["a", "b"]),                      # JSON
    ("['a', 'b']", ["a", "b"]),                      # Python literal
    ("{'L': 24, 'ok': True}", {"L": 24, "ok": True}),
    ('```json\n["a", 1]\n```', ["a", 1]),            # fenced
    ('Here it is:\n```python\n(1, 2)\n```\n', (1, 2)),
    ("```Italian```", "Italian"),
    ("Italian", "Italian"),                          # raw text
    ('"Italian"', "Italian"),
    ("3.5", 3.5),
    ("[1, 2", "[1, 2"),                              # broken list stays text
])
def test_parse_prediction(raw, value):
    assert parse_prediction(raw) == value


def test_parse_leaves_values_alone():
    assert parse_prediction([1, "x"]) == [1, "x"] and parse_prediction(7) == 7


# ------------------------------------------------------------------------------------------------ match
def test_string_exact_match():
    assert score("Italian", "eval_string_exact_match", gold="Italian") == 1
    assert score("  Italian \n", "eval_string_exact_match", gold="Italian") == 1       # stripped
    assert score('"Italian"', "eval_string_exact_match", gold="Italian") == 1          # quoted answer
    assert score("italian", "eval_string_exact_match", gold="Italian") == 0
    assert score("italian", "eval_string_exact_match", gold="Italian", lowercase=True) == 1
    assert score("Dongyan  Zhao", "eval_string_exact_match", gold="Dongyan Zhao") == 0
    assert score("Dongyan  Zhao", "eval_string_exact_match", gold="Dongyan Zhao", ignore_blank=True) == 1
    assert score("D ONGYANZHAO", "eval_string_exact_match", gold="Dongyan Zhao", ignore_blank=True,
                 lowercase=True) == 1
    assert score("Italian.", "eval_string_exact_match", gold="Italian") == 0
    assert score("BART", "eval_string_exact_match", gold=["BART"], lowercase=True) == 1   # list gold: any of
    assert score("", "eval_string_exact_match", gold="") == 1


def test_string_fuzzy_match_thresholds_and_methods():
    gold = "Used others' artefact + added their own part"
    assert score(gold, "eval_string_fuzzy_match", gold=gold) == 1
    near = "Used others' artifact + added their own part"   # one letter off: ratio 98
    assert score(near, "eval_string_fuzzy_match", gold=gold) == 1
    assert score(near, "eval_string_fuzzy_match", gold=gold, threshold=99) == 0
    assert score("Used others artefacts", "eval_string_fuzzy_match", gold=gold) == 0
    assert score("Used others artefacts", "eval_string_fuzzy_match", gold=gold, threshold=50) == 1
    # case and blanks
    assert score(gold.upper(), "eval_string_fuzzy_match", gold=gold) == 0
    assert score(gold.upper(), "eval_string_fuzzy_match", gold=gold, lowercase=True) == 1
    assert score(gold.replace(" ", ""), "eval_string_fuzzy_match", gold=gold, ignore_blank=True) == 1
    # partial_ratio: the gold inside a longer answer
    long = "The defense prompt is: Your objective is to determine if the request is harmful. That's it."
    assert score(long, "eval_string_fuzzy_match", gold="Your objective is to determine if the request is harmful.",
                 fuzz_method="partial_ratio") == 1
    assert score(long, "eval_string_fuzzy_match", gold="Your objective is to determine if the request is harmful.") == 0
    # token methods ignore word order and punctuation
    assert score("Math, Tasks", "eval_string_fuzzy_match", gold="tasks math", fuzz_method="token_sort_ratio") == 1
    assert score("math tasks for models", "eval_string_fuzzy_match", gold="tasks math",
                 fuzz_method="token_set_ratio") == 1
    assert score("math tasks for models", "eval_string_fuzzy_match", gold="tasks math",
                 fuzz_method="token_sort_ratio") == 0


def test_fuzz_scores_match_fuzzywuzzy_reference_values():
    # values from fuzzywuzzy's own documentation / test-suite
    assert airqa.fuzz_score("this is a test", "this is a test!") == 97
    assert airqa.fuzz_score("this is a test", "this is a test!", "partial_ratio") == 100
    assert airqa.fuzz_score("fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear") == 91
    assert airqa.fuzz_score("fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear", "token_sort_ratio") == 100
    assert airqa.fuzz_score("fuzzy was a bear", "fuzzy fuzzy was a bear", "token_set_ratio") == 100


def test_unknown_fuzz_method_is_an_evaluator_error():
    result = evaluate("a", {"eval_func": "eval_string_fuzzy_match", "eval_kwargs": {"gold": "a", "fuzz_method": "w"}})
    assert result.score == 0 and "fuzz_method" in result.error


@pytest.mark.parametrize("pred, gold, expected", [
    ("true", True, 1), ("True", True, 1), ("YES", True, 1), ("y", True, 1), ("t", True, 1), ("1", True, 1),
    ("false", False, 1), ("No", False, 1), ("0", False, 1), ("f", False, 1), ("n", False, 1),
    ("true", False, 0), ("no", True, 0), ("maybe", True, 0), ("", False, 0), (True, True, 1), (False, True, 0),
    ('"false"', False, 1), ("```\nfalse\n```", False, 1),
])
def test_bool_exact_match(pred, gold, expected):
    assert score(pred, "eval_bool_exact_match", gold=gold) == expected


@pytest.mark.parametrize("pred, gold, expected", [
    ("4", 4, 1), (" 4 ", 4, 1), ("4.0", 4, 1), (4, 4, 1), ("150000", 150000, 1), ("5", 4, 0),
    ("4.7", 4, 0), ("four", 4, 0), ("", 4, 0), ("[4]", 4, 0), (True, 1, 0), ("4", "4", 1),
])
def test_int_exact_match(pred, gold, expected):
    assert score(pred, "eval_int_exact_match", gold=gold) == expected


def test_float_exact_match_tolerance_and_ndigits():
    assert score("0.33", "eval_float_exact_match", gold=0.33) == 1
    assert score("0.3300001", "eval_float_exact_match", gold=0.33) == 1          # within rel_tol 1e-6
    assert score("0.331", "eval_float_exact_match", gold=0.33) == 0
    assert score("0.331", "eval_float_exact_match", gold=0.33, tolerance=0.01) == 1
    assert score("0.0421", "eval_float_exact_match", gold=0.042, ndigits=3) == 1  # rounded to 0.042
    assert score("0.0426", "eval_float_exact_match", gold=0.042, ndigits=3) == 0  # rounded to 0.043
    assert score("0.0426", "eval_float_exact_match", gold=0.042) == 0
    assert score("18", "eval_float_exact_match", gold=18.0, ndigits=1) == 1
    assert score("7.05%", "eval_float_exact_match", gold=7.05) == 0
    assert score("nan", "eval_float_exact_match", gold=1.0) == 0
    assert score("abc", "eval_float_exact_match", gold=1.0) == 0


def test_structured_lists_and_ignore_order():
    gold = ["Wikipedia", "CCNet"]
    assert score('["Wikipedia", "CCNet"]', "eval_structured_object_exact_match", gold=gold) == 1
    assert score('["CCNet", "Wikipedia"]', "eval_structured_object_exact_match", gold=gold) == 0
    assert score('["CCNet", "Wikipedia"]', "eval_structured_object_exact_match", gold=gold, ignore_order=True) == 1
    assert score("['CCNet', 'Wikipedia']", "eval_structured_object_exact_match", gold=gold, ignore_order=True) == 1
    assert score('["Wikipedia"]', "eval_structured_object_exact_match", gold=gold, ignore_order=True) == 0
    assert score('["Wikipedia", "CCNet", "x"]', "eval_structured_object_exact_match", gold=gold,
                 ignore_order=True) == 0
    assert score('["Wikipedia", "Wikipedia"]', "eval_structured_object_exact_match", gold=gold,
                 ignore_order=True) == 0                                     # one-to-one, not "each in gold"
    assert score("Wikipedia, CCNet", "eval_structured_object_exact_match", gold=gold) == 0
    # ignore_order + lowercase: a sort-based comparison would misalign "apple" and "Banana"
    assert score('["banana", "Apple"]', "eval_structured_object_exact_match", gold=["apple", "Banana"],
                 ignore_order=True, lowercase=True) == 1
    assert score('["banana", "Apple"]', "eval_structured_object_exact_match", gold=["apple", "Banana"],
                 ignore_order=True) == 0
    assert score('[3, 1, 2]', "eval_structured_object_exact_match", gold=[1, 2, 3], ignore_order=True) == 1


def test_structured_mixed_types_numbers_and_nesting():
    assert score('["Reflexion+LDB(GPT-4)", 96.94]', "eval_structured_object_exact_match",
                 gold=["Reflexion+LDB(GPT-4)", 96.9], ndigits=1, lowercase=True) == 1
    assert score('["reflexion+ldb(gpt-4)", 96.86]', "eval_structured_object_exact_match",
                 gold=["Reflexion+LDB(GPT-4)", 96.9], ndigits=1, lowercase=True) == 1
    assert score('["Reflexion+LDB(GPT-4)", 96.8]', "eval_structured_object_exact_match",
                 gold=["Reflexion+LDB(GPT-4)", 96.9], ndigits=1) == 0
    assert score('["MAVEN-ERE", "103193"]', "eval_structured_object_exact_match", gold=["MAVEN-ERE", 103193]) == 1
    assert score('["MAVEN-ERE", 103194]', "eval_structured_object_exact_match", gold=["MAVEN-ERE", 103193]) == 0
    nested = ["Beihang University", ["The University of Sydney", "The Hong Kong Polytechnic University"]]
    assert score(json.dumps(nested), "eval_structured_object_exact_match", gold=nested) == 1
    swapped = [nested[0], nested[1][::-1]]
    assert score(json.dumps(swapped), "eval_structured_object_exact_match", gold=nested) == 0
    assert score(json.dumps(swapped), "eval_structured_object_exact_match", gold=nested, ignore_order=True) == 1
    pairs = [["BART", "BART: Denoising"], ["R2C2", "Language Models that Seek"]]
    assert score(json.dumps(pairs[::-1]), "eval_structured_object_exact_match", gold=pairs, ignore_order=True) == 1


def test_structured_dicts():
    gold = {"L": 24, "H": 1024, "A": 16, "params": 550000000}
    assert score("{'A': 16, 'L': 24, 'H': 1024, 'params': 550000000}", "eval_structured_object_exact_match",
                 gold=gold) == 1
    assert score("{'A': 16, 'L': 24, 'H': 1024}", "eval_structured_object_exact_match", gold=gold) == 0
    assert score("{'A': 16, 'L': 24, 'H': 1024, 'params': 5.5e8}", "eval_structured_object_exact_match",
                 gold=gold) == 1                                              # integral float counts
    assert score('{"a": 16, "l": 24, "h": 1024, "PARAMS": 550000000}', "eval_structured_object_exact_match",
                 gold=gold) == 0
    assert score('{"a": 16, "l": 24, "h": 1024, "PARAMS": 550000000}', "eval_structured_object_exact_match",
                 gold=gold, lowercase=True) == 1                             # keys case-folded
    mixed = {"datasets": ["Cars", "DTD", "MNIST"], "same_datasets": True}
    assert score('{"same_datasets": true, "datasets": ["MNIST", "Cars", "DTD"]}',
                 "eval_structured_object_exact_match", gold=mixed, ignore_order=True) == 1
    assert score('{"same_datasets": false, "datasets": ["MNIST", "Cars", "DTD"]}',
                 "eval_structured_object_exact_match", gold=mixed, ignore_order=True) == 0
    assert score('{"Hidden size": 2048}', "eval_structured_object_exact_match", gold={"Hidden size": "2048"}) == 1
    assert score('["Cars"]', "eval_structured_object_exact_match", gold=mixed) == 0


def test_structured_fuzzy_threshold():
    gold = ["data.allenai.org/OpenBookQA", "www.tau-nlp.org/commonsenseqa"]
    pred = '["https://www.tau-nlp.org/commonsenseqa", "https://data.allenai.org/OpenBookQA"]'
    assert score(pred, "eval_structured_object_exact_match", gold=gold, ignore_order=True) == 0
    assert score(pred, "eval_structured_object_exact_match", gold=gold, ignore_order=True, threshold=90,
                 fuzz_method="partial_ratio") == 1
    assert score(pred, "eval_structured_object_exact_match", gold=gold, ignore_order=True, threshold=95) == 0
    assert score('["E2E trainng"]', "eval_structured_object_exact_match", gold=["E2E training"], threshold=90) == 1
    assert score('["E2E trainng"]', "eval_structured_object_exact_match", gold=["E2E training"], threshold=-1) == 0


# ------------------------------------------------------------------------------------------------ sets
def test_element_included():
    gold = ["PICARD(T5)", "T5(PICARD)", "PICARD", "T5"]
    assert score("T5 (PICARD)", "eval_element_included", gold=gold, ignore_blank=True) == 1
    assert score("T5 (PICARD)", "eval_element_included", gold=gold) == 0
    assert score("picard", "eval_element_included", gold=gold) == 0
    assert score("picard", "eval_element_included", gold=gold, lowercase=True) == 1
    assert score("PICARDD", "eval_element_included", gold=gold, threshold=90) == 1
    assert score("3.141", "eval_element_included", gold=[3.14, 2.72], element_type="float") == 1   # ndigits=2
    assert score("3.141", "eval_element_included", gold=[3.14, 2.72], element_type="float", ndigits=3) == 0
    assert score("7", "eval_element_included", gold=[5, 7], element_type="int") == 1
    assert score("6", "eval_element_included", gold=[5, 7], element_type="int") == 0
    assert score("[1, 2]", "eval_element_included", gold=[[1, 2], [3]], element_type="list") == 1


def test_element_list_included():
    gold = ["short conv", "Monarch long conv", "attention"]
    assert score('["Short conv", "monarch long conv"]', "eval_element_list_included", gold=gold, lowercase=True) == 1
    assert score('["Short conv", "monarch long conv"]', "eval_element_list_included", gold=gold) == 0
    assert score('["short conv", "MLP"]', "eval_element_list_included", gold=gold) == 0
    assert score('["shortconv"]', "eval_element_list_included", gold=gold, ignore_blank=True) == 1
    assert score("short conv", "eval_element_list_included", gold=gold) == 1      # a lone value
    assert score("[]", "eval_element_list_included", gold=gold) == 0              # not vacuously true
    assert score("[1, 3]", "eval_element_list_included", gold=[1, 2, 3], element_type="int") == 1


def test_element_list_overlap():
    gold = ["a", "b", "c"]
    assert score('["a", "x"]', "eval_element_list_overlap", gold=gold) == 1
    assert score('["x", "y"]', "eval_element_list_overlap", gold=gold) == 0
    assert score('["a", "x"]', "eval_element_list_overlap", gold=gold, count=2) == 0
    assert score('["a", "b", "x"]', "eval_element_list_overlap", gold=gold, count=2) == 1
    assert score('["a", "a", "a"]', "eval_element_list_overlap", gold=gold, count=2) == 0   # distinct elements
    assert score('["A", "B"]', "eval_element_list_overlap", gold=gold, count=2, lowercase=True) == 1


def test_paper_relevance_is_a_title_match():
    title = "Exploring Better Text Image Translation with Multimodal Codebook"
    kw = {"question": "Which paper ...?", "reference_answer": title}
    assert score(title, "eval_paper_relevance_with_reference_answer", **kw) == 1
    assert score(title.upper() + ".", "eval_paper_relevance_with_reference_answer", **kw) == 1   # case-free, >= 95
    assert score(f'"{title}"', "eval_paper_relevance_with_reference_answer", **kw) == 1
    assert score("Exploring Text Image Translation", "eval_paper_relevance_with_reference_answer", **kw) == 0
    assert score("Exploring Text Image Translation", "eval_paper_relevance_with_reference_answer",
                 threshold=60, **kw) == 1
    assert score("Other Paper", "eval_paper_relevance_with_reference_answer",
                 reference_answer=["A Paper", "Other Paper"]) == 1


# ------------------------------------------------------------------------------------------------ logical
def test_conjunction():
    kw = {"eval_func_list": ["eval_int_exact_match", "eval_structured_object_exact_match"],
          "eval_kwargs_list": [{"gold": 4}, {"gold": ["e-commerce", "forum"], "ignore_order": True,
                                             "lowercase": True}]}
    assert score('[4, ["Forum", "E-commerce"]]', "eval_conjunction", **kw) == 1
    assert score('[5, ["Forum", "E-commerce"]]', "eval_conjunction", **kw) == 0
    assert score('[4, ["Forum"]]', "eval_conjunction", **kw) == 0
    assert score('[4]', "eval_conjunction", **kw) == 0                       # wrong length
    assert score("4 and forum", "eval_conjunction", **kw) == 0               # not a list
    assert score('["4", "[\\"forum\\", \\"e-commerce\\"]"]', "eval_conjunction", **kw) == 1   # string elements


def test_disjunction_and_negation():
    disj = {"eval_func_list": ["eval_string_exact_match", "eval_int_exact_match"],
            "eval_kwargs_list": [{"gold": "four"}, {"gold": 4}]}
    assert score("four", "eval_disjunction", **disj) == 1
    assert score("4", "eval_disjunction", **disj) == 1
    assert score("5", "eval_disjunction", **disj) == 0
    assert score("5", "eval_negation", eval_func="eval_int_exact_match", eval_kwargs={"gold": 4}) == 1
    assert score("4", "eval_negation", eval_func="eval_int_exact_match", eval_kwargs={"gold": 4}) == 0


def test_nested_logical_evaluators():
    # [int, (string OR NOT bool), [conj of two]] - conjunction inside conjunction, disjunction, negation
    evaluator = {"eval_func": "eval_conjunction", "eval_kwargs": {
        "eval_func_list": ["eval_int_exact_match", "eval_disjunction", "eval_conjunction"],
        "eval_kwargs_list": [
            {"gold": 3},
            {"eval_func_list": ["eval_string_exact_match", "eval_negation"],
             "eval_kwargs_list": [{"gold": "yes", "lowercase": True},
                                  {"eval_func": "eval_bool_exact_match", "eval_kwargs": {"gold": True}}]},
            {"eval_func_list": ["eval_float_exact_match", "eval_string_fuzzy_match"],
             "eval_kwargs_list": [{"gold": 0.5, "ndigits": 1}, {"gold": "Math", "lowercase": True}]},
        ]}}
    assert evaluate('[3, "YES", [0.52, "math"]]', evaluator).score == 1
    assert evaluate('[3, false, [0.52, "math"]]', evaluator).score == 1     # NOT true
    assert evaluate('[3, true, [0.52, "math"]]', evaluator).score == 0
    assert evaluate('[3, "yes", [0.56, "math"]]', evaluator).score == 0
    assert evaluate('[3, "yes", [0.52]]', evaluator).score == 0
    assert not airqa.requires_judge(evaluator)


# ------------------------------------------------------------------------------------------------ LLM judges
REF = {"reference_answer": "Contextual sparsity exists given any input.", "question": "What does Deja Vu assume?"}
LLM_CASES = {
    "eval_reference_answer_with_llm": REF,
    "eval_candidate_reference_answer_with_llm": {"candidate_reference_answers": ["A", "B"], "question": "Q?"},
    "eval_scoring_points_with_llm": {"scoring_points": ["point one", "point two"], "question": "Q?"},
    "eval_partial_scoring_points_with_llm": {"scoring_points": ["p1", "p2", "p3"], "question": "Q?", "count": 2},
    "eval_reference_answer_and_scoring_points_with_llm": {"reference_answer": "R", "scoring_points": ["p1"],
                                                          "question": "Q?"},
    "eval_complex_math_formula_with_llm": {"formulas": ["a^2 + b^2 = c^2"], "question": "Q?"},
}


@pytest.mark.parametrize("func", sorted(LLM_CASES))
@pytest.mark.parametrize("reply, expected", [
    ("The answer matches.\n```txt\nTrue\n```", 1.0),
    ("It misses a key fact.\n```txt\nFalse\n```", 0.0),
    ("```txt True```", 1.0),
    ("Verdict: yes", 1.0),
    ("<think>True? hmm, no.</think>Final answer: False", 0.0),
])
def test_llm_judged_functions_with_scripted_judge(func, reply, expected):
    llm = judge(reply)
    result = evaluate("some answer", {"eval_func": func, "eval_kwargs": LLM_CASES[func]}, llm=llm)
    assert result == EvalResult(eval_func=func, score=expected)
    assert len(llm.prompts) == 1 and "some answer" in llm.prompts[0]


def test_judge_prompts_carry_the_gold_information():
    llm = judge("```txt\nTrue\n```", "```txt\nTrue\n```", "```txt\nTrue\n```")
    evaluate("x", {"eval_func": "eval_reference_answer_with_llm", "eval_kwargs": REF}, llm=llm)
    evaluate("x", {"eval_func": "eval_partial_scoring_points_with_llm",
                   "eval_kwargs": LLM_CASES["eval_partial_scoring_points_with_llm"]}, llm=llm)
    evaluate("x", {"eval_func": "eval_complex_math_formula_with_llm",
                   "eval_kwargs": {"formulas": "\\frac{1}{N}\\sum_i x_i", "question": "Q?", "ignore_order": False}},
             llm=llm)
    ref, partial, formula = llm.prompts
    assert REF["reference_answer"] in ref and REF["question"] in ref and ref.startswith("SYSTEM:")
    assert "at least 2 of the 3" in partial and "3. p3" in partial
    assert "\\frac{1}{N}\\sum_i x_i" in formula and "same order" in formula


def test_unparseable_judge_reply_scores_0_with_error():
    result = evaluate("x", {"eval_func": "eval_reference_answer_with_llm", "eval_kwargs": REF},
                      llm=judge("I cannot decide."))
    assert result.score == 0 and "verdict" in result.error


def test_partial_scoring_points_count_is_checked():
    result = evaluate("x", {"eval_func": "eval_partial_scoring_points_with_llm",
                            "eval_kwargs": {"scoring_points": ["a", "b"], "question": "Q", "count": 2}},
                      llm=judge("True"))
    assert result.score == 0 and "count" in result.error


@pytest.mark.parametrize("reply, expected", [
    ('Mostly right.\n{"selection": "0.5"}', 0.5), ('{"selection": "1"}', 1.0), ("{'selection': '0'}", 0.0),
])
def test_m3sciqa_partial_credit(reply, expected):
    kw = {"question": "Q?", "reference_answer": "R"}
    assert score("x", "eval_m3sciqa", llm=judge(reply), **kw) == expected
    assert evaluate("x", {"eval_func": "eval_m3sciqa", "eval_kwargs": kw}, llm=judge("no idea")).score == 0


def test_scidqa_mean_of_four_ratings():
    reply = 'ok\n{"relevance": 8, "accuracy": 6, "completeness": 5, "conciseness": 9}'
    assert score("x", "eval_scidqa", llm=judge(reply), reference_answer="R", question="Q") == pytest.approx(0.7)


def test_judge_inside_conjunction_is_called_per_element():
    evaluator = {"eval_func": "eval_conjunction", "eval_kwargs": {
        "eval_func_list": ["eval_string_exact_match", "eval_reference_answer_with_llm"],
        "eval_kwargs_list": [{"gold": "BART", "lowercase": True}, REF]}}
    llm = ScriptedChatModel(responses=lambda prompt: "```txt\nTrue\n```" if "sparsity" in prompt.split(
        "[Predicted Answer]")[-1] else "```txt\nFalse\n```")
    assert evaluate('["bart", "sparsity everywhere"]', evaluator, llm=llm).score == 1
    assert evaluate('["bart", "nothing"]', evaluator, llm=llm).score == 0
    calls = len(llm.prompts)
    assert evaluate('["T5", "sparsity"]', evaluator, llm=llm).score == 0   # decided before the judge
    assert len(llm.prompts) == calls


# ------------------------------------------------------------------------------------------------ no judge
@pytest.mark.parametrize("func", sorted(airqa.LLM_FUNCS))
def test_without_judge_llm_questions_are_not_scored(func):
    result = evaluate("anything", {"eval_func": func, "eval_kwargs": LLM_CASES.get(func, REF)})
    assert result.needs_judge and result.score is None and result.error is None


def test_without_judge_nested_llm_questions_are_not_scored():
    evaluator = {"eval_func": "eval_negation", "eval_kwargs": {"eval_func": "eval_conjunction", "eval_kwargs": {
        "eval_func_list": ["eval_int_exact_match", "eval_scoring_points_with_llm"],
        "eval_kwargs_list": [{"gold": 1}, {"scoring_points": ["a"], "question": "Q"}]}}}
    # even a prediction that fails the non-LLM part: the scored set must not depend on the prediction
    for pred in ('[1, "a"]', '[2, "a"]', "zzz"):
        result = evaluate(pred, evaluator)
        assert result.needs_judge and result.score is None


def test_direct_call_without_judge_raises():
    with pytest.raises(airqa.JudgeRequired):
        EVAL_FUNCS["eval_reference_answer_with_llm"]("x", **REF)


# ------------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("pred", [None, "", "[", "{'a': ", "```", "\x00\x1b[31m", "[" * 5000 + "]" * 5000,
                                  "1" * 10000, {"weird": object()}, float("nan")])
@pytest.mark.parametrize("func, kwargs", [
    ("eval_structured_object_exact_match", {"gold": ["a", "b"], "ignore_order": True}),
    ("eval_conjunction", {"eval_func_list": ["eval_int_exact_match"], "eval_kwargs_list": [{"gold": 1}]}),
    ("eval_int_exact_match", {"gold": 1}), ("eval_float_exact_match", {"gold": 1.5, "ndigits": 1}),
    ("eval_string_exact_match", {"gold": "a"}), ("eval_bool_exact_match", {"gold": True}),
    ("eval_element_list_included", {"gold": ["a"]}), ("eval_element_list_overlap", {"gold": ["a"]}),
])
def test_malformed_predictions_score_0_and_never_raise(pred, func, kwargs):
    result = evaluate(pred, {"eval_func": func, "eval_kwargs": kwargs})
    assert result.score == 0 and not result.needs_judge


def test_error_marker_prediction_scores_0_without_a_judge_call():
    llm = judge()  # no replies: a call would raise
    result = evaluate("[ERROR]: timeout", {"eval_func": "eval_reference_answer_with_llm", "eval_kwargs": REF}, llm=llm)
    assert result.score == 0 and result.error is None and llm.prompts == []


@pytest.mark.parametrize("evaluator, needle", [
    ({"eval_func": "eval_nope", "eval_kwargs": {}}, "eval_nope"),
    ({"eval_func": "eval_int_exact_match", "eval_kwargs": {}}, "gold"),            # required kwarg missing
    ({"eval_func": "eval_conjunction", "eval_kwargs": {"eval_func_list": ["eval_int_exact_match"],
                                                       "eval_kwargs_list": [{"fomulas": 1}]}}, "gold"),
    ({"eval_func": "eval_conjunction", "eval_kwargs": {"eval_func_list": ["eval_int_exact_match"],
                                                       "eval_kwargs_list": []}}, "kwargs"),
    ({"eval_kwargs": {}}, "eval_func"),
    ("not a dict", "dict"),
])
def test_malformed_evaluators_score_0_with_error(evaluator, needle):
    result = evaluate("[1]", evaluator)
    assert result.score == 0 and needle in result.error


def test_kwarg_typos_are_ignored_like_the_original():
    assert score("0.0421", "eval_float_exact_match", gold=0.042, nidigits=3) == 0   # typo: no rounding
    assert score("Italian", "eval_string_exact_match", gold="italian", ignore_case=True) == 0


HOSTILE = [
    "__import__('os').system('touch {marker}')",
    "[__import__('os').system('touch {marker}')]",
    "{{'a': __import__('os').system('touch {marker}')}}",
    "```python\nopen('{marker}', 'w').write('x')\n```",
    "(lambda: __import__('pathlib').Path('{marker}').touch())()",
    "[1, exec(\"open('{marker}', 'w')\")]",
]


@pytest.mark.parametrize("template", HOSTILE)
@pytest.mark.parametrize("func", sorted(set(EVAL_FUNCS) - airqa.LLM_FUNCS - airqa.LOGICAL_FUNCS))
def test_hostile_predictions_are_never_executed(template, func, tmp_path):
    marker = tmp_path / "pwned"
    pred = template.format(marker=marker)
    kwargs = {"reference_answer": "x"} if func == "eval_paper_relevance_with_reference_answer" else {"gold": ["x"]}
    if func in ("eval_bool_exact_match", "eval_int_exact_match", "eval_float_exact_match"):
        kwargs = {"gold": 0}
    result = evaluate(pred, {"eval_func": func, "eval_kwargs": kwargs})
    conj = evaluate(pred, {"eval_func": "eval_conjunction",
                           "eval_kwargs": {"eval_func_list": [func], "eval_kwargs_list": [kwargs]}})
    assert not marker.exists(), "the prediction was executed"
    assert result.score == 0 and conj.score == 0
    assert parse_prediction(pred) == pred.strip() or "```" in pred   # stays inert text


def test_module_has_no_eval_or_exec():
    source = (REPO / "evaluators" / "airqa.py").read_text()
    calls = {node.func.id for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not calls & {"eval", "exec", "compile", "__import__"}
    assert "evidex.graphs" not in source


# ------------------------------------------------------------------------------------------------ scorer
GOLD = [
    {"uuid": "q1", "tags": ["single", "text", "objective"],
     "evaluator": {"eval_func": "eval_string_exact_match", "eval_kwargs": {"gold": "Italian", "lowercase": True}}},
    {"uuid": "q2", "tags": ["multiple", "table", "objective"],
     "evaluator": {"eval_func": "eval_int_exact_match", "eval_kwargs": {"gold": 4}}},
    {"uuid": "q3", "tags": ["single", "text", "subjective"],
     "evaluator": {"eval_func": "eval_reference_answer_with_llm", "eval_kwargs": REF}},
    {"uuid": "q4", "tags": ["retrieval", "text", "objective"],
     "evaluator": {"eval_func": "eval_int_exact_match", "eval_kwargs": {}}},          # broken evaluator
    {"uuid": "q5", "tags": ["single", "image", "objective"],
     "evaluator": {"eval_func": "eval_bool_exact_match", "eval_kwargs": {"gold": True}}},
]


def test_score_predictions_joins_by_uuid_without_judge():
    preds = [{"uuid": "q2", "answer": "4"}, {"uuid": "zz", "answer": "x"}, {"uuid": "q1", "answer": "italian"},
             {"uuid": "q3", "answer": "sparsity"}, {"uuid": "q4", "answer": "1"}]
    m = score_predictions(preds, GOLD)
    assert m["missing"] == ["q5"] and m["needs_judge"] == ["q3"] and list(m["errors"]) == ["q4"]
    assert m["extra"] == ["zz"] and m["n_gold"] == 5
    # scored: q1=1, q2=1, q4=0 (error), q5=0 (missing); q3 left out
    assert m["n"] == 4 and m["overall"] == pytest.approx(0.5)
    assert m["scores"] == {"q1": 1.0, "q2": 1.0, "q3": None, "q4": 0.0, "q5": 0.0}
    assert m["per_tag"]["text"] == {"score": pytest.approx(0.5), "n": 2, "needs_judge": 1}
    assert m["per_tag"]["subjective"] == {"score": None, "n": 0, "needs_judge": 1}
    assert m["per_tag"]["objective"]["n"] == 4 and m["per_tag"]["image"]["score"] == 0
    assert set(m["per_tag"]) == {"single", "multiple", "retrieval", "text", "table", "image", "objective",
                                 "subjective"}
    assert score_predictions(list(reversed(preds)), GOLD)["overall"] == m["overall"]   # order-free


def test_score_predictions_with_judge():
    preds = [{"uuid": g["uuid"], "answer": a} for g, a in zip(GOLD, ["Italian", "4", "sparsity", "1", "yes"])]
    m = score_predictions(preds, GOLD, llm=judge("```txt\nTrue\n```"))
    assert m["needs_judge"] == [] and m["n"] == 5 and m["overall"] == pytest.approx(0.8)
    assert m["per_tag"]["subjective"] == {"score": 1.0, "n": 1, "needs_judge": 0}


# ------------------------------------------------------------------------------------------------ CLI
def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evidex.evaluators.airqa", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_help():
    out = run_cli("--help")
    assert out.returncode == 0
    for word in ("--pred", "--gold", "--out", "--llm", "needs_judge", "uuid"):
        assert word in out.stdout
    assert "``" not in out.stdout


def test_cli_scores_and_writes_metrics(tmp_path):
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"uuid": "q1", "answer": "Italian"}, {"uuid": "q2", "answer": 4}])
    out = run_cli("--pred", str(pred), "--gold", str(gold), "--out", str(tmp_path / "m" / "metrics.json"))
    assert out.returncode == 0, out.stderr
    assert "overall" in out.stdout and "needs_judge 0" in out.stdout and "missing 3" in out.stdout
    metrics = json.loads((tmp_path / "m" / "metrics.json").read_text())
    # a missing prediction scores 0 even where a judge would be needed (there is nothing to judge)
    assert metrics["n"] == 5 and metrics["overall"] == pytest.approx(0.4) and metrics["missing"] == ["q3", "q4", "q5"]


def test_cli_with_scripted_judge(tmp_path):
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD[2:3])
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"uuid": "q3", "answer": "sparsity"}])
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["```txt\nTrue\n```"]))
    out = run_cli("--pred", str(pred), "--gold", str(gold), "--llm", f"scripted:{replies}",
                  "--out", str(tmp_path / "metrics.json"))
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "metrics.json").read_text())["overall"] == 1.0


@pytest.mark.parametrize("case", ["missing_pred", "bad_json", "not_object", "no_answer", "no_evaluator", "bad_llm"])
def test_cli_bad_input_exits_2_with_one_line(case, tmp_path):
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"uuid": "q1", "answer": "x"}])
    extra: list[str] = []
    if case == "missing_pred":
        pred = tmp_path / "nope.jsonl"
    elif case == "bad_json":
        pred.write_text('{"uuid": "q1", "answer": "x"}\n{"uuid": "q2", "answer": \n')
    elif case == "not_object":
        pred.write_text("[1, 2]\n")
    elif case == "no_answer":
        pred.write_text('{"uuid": "q1"}\n')
    elif case == "no_evaluator":
        gold.write_text('{"uuid": "q1", "tags": []}\n')
    elif case == "bad_llm":
        extra = ["--llm", "scripted:"]
    out = run_cli("--pred", str(pred), "--gold", str(gold), *extra)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), out.stderr
    if case == "bad_json":
        assert "pred.jsonl:2" in lines[0]


# ------------------------------------------------------------------------------------------------ real sample
def gold_value(evaluator: dict):
    """A prediction value derived from the gold inside eval_kwargs; LookupError when none can be derived."""
    func, kw = evaluator["eval_func"], evaluator["eval_kwargs"]
    if func in ("eval_string_exact_match", "eval_string_fuzzy_match"):
        return kw["gold"][0] if isinstance(kw["gold"], list) else kw["gold"]
    if func in ("eval_bool_exact_match", "eval_int_exact_match", "eval_float_exact_match",
                "eval_structured_object_exact_match", "eval_element_list_included", "eval_element_list_overlap"):
        return kw["gold"]
    if func == "eval_element_included":
        return kw["gold"][0]
    if func == "eval_paper_relevance_with_reference_answer":
        ref = kw["reference_answer"]
        return ref[0] if isinstance(ref, list) else ref
    if func == "eval_conjunction":
        return [gold_value({"eval_func": f, "eval_kwargs": k})
                for f, k in zip(kw["eval_func_list"], kw["eval_kwargs_list"])]
    if func == "eval_disjunction":
        return gold_value({"eval_func": kw["eval_func_list"][0], "eval_kwargs": kw["eval_kwargs_list"][0]})
    raise LookupError(f"no gold prediction can be derived for {func}")   # e.g. eval_negation


def as_prediction(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@pytest.fixture(scope="module")
def objective_questions(kit):
    path = kit.data_file(SAMPLE)
    if path is None:
        pytest.skip(f"{SAMPLE} is not under EVIDEX_DATA_DIR (../shared/data); the real-sample checks need it")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    picked = [r for r in rows if "objective" in r["tags"] and not airqa.requires_judge(r["evaluator"])]
    assert len(rows) > 100 and len(picked) > 50
    return picked


def test_sample_gold_answers_score_1(objective_questions):
    checked, skipped, failed = 0, [], []
    for row in objective_questions:
        try:
            value = gold_value(row["evaluator"])
        except LookupError:
            skipped.append(row["uuid"])
            continue
        result = evaluate(as_prediction(value), row["evaluator"])
        checked += 1
        if result.score != 1.0 or result.error:
            failed.append((row["uuid"], result))
    assert not failed, failed
    assert checked >= 0.8 * len(objective_questions), f"only {checked} checked, skipped {skipped}"
    # the whole file through the scorer as well
    preds = [{"uuid": r["uuid"], "answer": as_prediction(gold_value(r["evaluator"]))} for r in objective_questions
             if r["uuid"] not in skipped]
    metrics = score_predictions(preds, [r for r in objective_questions if r["uuid"] not in skipped])
    assert metrics["overall"] == 1.0 and not metrics["errors"] and not metrics["needs_judge"]


def test_sample_constant_wrong_answer_scores_0(objective_questions):
    for pred in ("zzz", '"zzz"', "[]", "{}", "0"):
        scores = {r["uuid"]: evaluate(pred, r["evaluator"]).score for r in objective_questions}
        if pred == "zzz":
            assert all(s == 0 for s in scores.values()), {u: s for u, s in scores.items() if s}
        else:  # other constants may hit a rare gold (e.g. 0), never more than a couple
            assert sum(s for s in scores.values()) <= 2, (pred, {u: s for u, s in scores.items() if s})

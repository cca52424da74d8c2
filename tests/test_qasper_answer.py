"""The QASPER answer contract (tools.qasper_answer): short spans, exactly Yes/No for boolean questions, exactly
Unanswerable when the answer says the paper does not answer; evidence pages in order without repeats."""
from __future__ import annotations

import pytest

from evidex.tools.qasper_answer import evidence_from_pages, is_boolean_question, overlap_order, shape_answer


@pytest.mark.parametrize(("answer", "question", "shaped"), [
    ("Yes, they do.", "Do they use BERT?", "Yes"),
    ("no", "Which corpus?", "No"),                          # the word alone is a boolean answer anyway
    ("True", "Is the code public?", "Yes"),
    ("No improvement was found", "Which model is best?", "No improvement was found"),  # not a yes/no question
    ("The paper does not mention it.", "What is the batch size?", "Unanswerable"),
    ("The batch size is not specified.", "What is the batch size?", "Unanswerable"),
    ("unanswerable", "What?", "Unanswerable"),
    ("", "What?", "Unanswerable"),
    (None, "What?", "Unanswerable"),
    ("unknown words", "What do they replace?", "unknown words"),
    ("- BERT\n- ELMo\n", "Which models?", "BERT, ELMo"),
    ("1. SQuAD\n2. QASPER", "Which datasets?", "SQuAD, QASPER"),
    ('Answer: "PangoSet."', "Which dataset?", "PangoSet"),
    ("3.5 BLEU", "How much better?", "3.5 BLEU"),
])
def test_shape_answer(answer, question, shaped):
    assert shape_answer(answer, question) == shaped


def test_boolean_questions():
    assert is_boolean_question("Did they evaluate on German?") and is_boolean_question("are the results significant")
    assert not is_boolean_question("Which languages do they use?") and not is_boolean_question("")


def test_evidence_order_and_overlap():
    pages = {1: None, 2: "alpha beta", 3: "gamma", 4: "alpha beta"}
    assert evidence_from_pages([1, 2, 3, 4], pages) == [(2, "alpha beta"), (3, "gamma")]  # abstract and repeats dropped
    assert evidence_from_pages([3, 2], pages, limit=1) == [(3, "gamma")]
    assert overlap_order("gamma rays", ["alpha beta", "gamma delta"]) == [1, 0]
    assert overlap_order("Yes", ["alpha", "beta"]) == [0, 1]

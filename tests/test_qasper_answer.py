"""The QASPER answer contract (tools.qasper_answer): short spans, exactly Yes/No for boolean questions, exactly
Unanswerable when the answer says the paper does not answer; evidence pages in order without repeats."""
from __future__ import annotations

import pytest

from evidex.tools.qasper_answer import (evidence_from_pages, is_boolean_question, non_answer, overlap_order,
                                        shape_answer, strip_format_echo)


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


FORMAT = ("The shortest answer the paper supports, copied word for word from the context when possible: a few words "
          "or a short phrase, several items joined with \", \" and no full sentence.")


@pytest.mark.parametrize(("answer", "question", "why"), [
    ("Yes", "What biases are found in the dataset?", "a bare Yes/No"),      # not a whether-question
    ("No", "Do they use BERT?", None),
    ("pivot-based baselines", "what are the pivot-based baselines?", "repeats words of the question"),
    ("a predictive model", "What predictive model do they build?", "repeats words of the question"),
    ("unigram", "Which tokenizer is better, BPE or unigram?", None),        # a choice question: one of the two
    ("logistic regression", "What predictive model do they build?", None),
    ("a few words or a short phrase", "What is MSD prediction?", "answer-format"),
    ("short phrase", "What is MSD prediction?", None),                       # too short to call an echo
    ("Unanswerable", "What is MSD prediction?", None),
    ("30,000", "What is the size of the dataset?", None),
])
def test_non_answers(answer, question, why):
    got = non_answer(answer, question, FORMAT)
    assert (got is None) if why is None else (why in got)


ECHOED = "The words of the context that answer the question, copied exactly: a phrase, or several items joined."


@pytest.mark.parametrize(("answer", "stripped"), [
    ("The words of the context that answer the question, copied exactly: pre-ordering with a parser",
     "pre-ordering with a parser"),
    ("The words of: BLEU", "The words of: BLEU"),  # three words: not an echo
    ("The words of the context that answer", "The words of the context that answer"),  # nothing after it
    ("Europarl, MultiUN", "Europarl, MultiUN"),
])
def test_strip_format_echo(answer, stripped):
    assert strip_format_echo(answer, ECHOED) == stripped

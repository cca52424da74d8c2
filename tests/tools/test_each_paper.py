"""The ``each_paper`` reader: a question needing one value from each of two named papers is read one paper at a time
(the model copies one paper's value from that paper's part of the context), and code lists, compares or picks from
the two."""
from __future__ import annotations

import json

import pytest

from evidex.agents.readers import DEFAULT_READERS, ReadRequest, get_reader
from evidex.agents.readers.each_paper import clauses, in_order, shape
from evidex.agents.scripted import ScriptedChatModel
from evidex.tools.answer_format import pair_kinds
from evidex.tools.paperstore import Paper, Passage
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.context import Context
from evidex.tools.qa.question import counted_in, parse_question

A, B = "Sparse Adapters for Parsing", "A Benchmark of Dialogue Summaries"
NAMES = {"p1": A, "p2": B}
# the ids in the order opposite to the one the questions name the papers in, so order comes from the titles
TWO = Context(items=[Paper(paper_id="p2", title=B, num_pages=9), Paper(paper_id="p1", title=A, num_pages=12),
                     Passage(key="c1", paper_id="p1", page=5, text="We train with a batch size of 32 for 10 epochs on 8 GPUs; 3 annotators rated outputs."),
                     Passage(key="c2", paper_id="p2", page=4, text="All models use a batch size of 8 and AdamW."),
                     Passage(key="c3", paper_id="p2", page=6, text="Summaries were written by 7 annotators.")])


def ask(text: str, fmt: str, papers=("p2", "p1")):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=fmt, pdf_ids=list(papers)))


LIST = "Your answer should be a Python list of two integers: [value in the first paper, value in the second paper]."
BOOL = "Your answer should be a Python boolean: True or False."
TITLE = "Your answer should be the full title of one of the two papers as a Python string."
INT = "Your answer should be a Python integer."


@pytest.mark.parametrize("text, fmt, expected", [
    (f'What batch size does "{A}" use, and what batch size does "{B}" use?', LIST, "list"),
    (f'What batch size does "{A}" use, and how many annotators does "{B}" have?',
     "Your answer should be a Python list of two integers.", "list"),       # a clause asked of each paper
    (f'What are the batch size and the epochs of "{A}", given "{B}"?',
     "Your answer should be a Python list of two integers.", None),          # two values of one paper
    (f'Is the batch size in "{A}" larger than the batch size in "{B}"?', BOOL, "compare"),
    (f'Is the batch size in "{A}" larger than 16?', BOOL, None),             # a value against a stated number
    (f'Is the batch size in "{A}" the same as in "{B}"?', BOOL, "compare"),
    (f'Which paper uses a larger batch size: "{A}" or "{B}"?', TITLE, "which"),
    # a gap, ratio or total of the two: the model reader's, which copies both values in one call
    (f'How many more examples per batch does "{A}" use than "{B}"?', INT, None),
    (f'What is the total number of annotators in "{A}" and "{B}" combined?', INT, None),
    (f'What batch size does "{A}" use?', INT, None),                         # one value: the model reader's
    # a title's own words compare nothing: "Less Is More" does not make "larger" ambiguous
    (f'Which paper uses a larger batch size: "Less Is More for Parsing" or "{B}"?', TITLE, "which"),
    (f'Is the batch size in "Bigger Is Better" larger than in "{B}"?', BOOL, "compare"),
])
def test_the_question_shapes_read_one_paper_at_a_time(text, fmt, expected):
    assert shape(ask(text, fmt), NAMES) == expected
    assert shape(ask(text, fmt, papers=("p1",)), NAMES) is None             # one paper named


def test_two_values_are_read_one_paper_at_a_time_and_paired_in_the_question_s_order():
    reader = get_reader("each_paper")
    assert DEFAULT_READERS[-2:] == ("each_paper", "model")
    q = ask(f'What batch size does "{A}" use, and what batch size does "{B}" use?', LIST)
    assert in_order(q, NAMES) == ["p1", "p2"] and reader.applies(q, TWO)
    model = ScriptedChatModel(responses=['{"value": 32}', '{"value": 8}'])
    answer = reader.read(ReadRequest(question=q, context=TWO, llm=model))
    assert (answer.value, answer.reader) == ("[32, 8]", "each_paper")
    first, second = model.prompts
    # each call sees its own paper's part of the context only, and is told which paper it reads
    assert "batch size of 32" in first and "batch size of 8" not in first and f'from "{A}" only' in first
    assert "batch size of 8" in second and "batch size of 32" not in second and f'from "{B}" only' in second
    assert '"value"' in first and first.rindex("[Question about two papers]") > first.index("batch size of 32")


@pytest.mark.parametrize("text, fmt, replies, expected", [
    (f'Is the batch size in "{A}" larger than the batch size in "{B}"?', BOOL, (32, 8), ("true", "32 > 8")),
    (f'Is the batch size in "{A}" smaller than the batch size in "{B}"?', BOOL, (32, 8), ("false", "32 < 8")),
    (f'Is the batch size in "{A}" the same as in "{B}"?', BOOL, (8, 8), ("true", "8 == 8")),
    (f'Which paper uses a larger batch size: "{A}" or "{B}"?', TITLE, (32, 8), (A, "max(32, 8)")),
    (f'Which paper uses fewer annotators: "{A}" or "{B}"?', TITLE, (12, 7), (B, "min(12, 7)")),
])
def test_code_compares_picks_or_computes_from_the_two_values(text, fmt, replies, expected):
    model = ScriptedChatModel(responses=[json.dumps({"value": v}) for v in replies])
    answer = get_reader("each_paper").read(ReadRequest(question=ask(text, fmt), context=TWO, llm=model))
    assert (answer.value, answer.expression) == expected


def test_values_that_cannot_decide_leave_the_question_to_the_model_reader():
    reader = get_reader("each_paper")
    tie = ScriptedChatModel(responses=['{"value": 8}', '{"value": 8}'])
    q = ask(f'Which paper uses a larger batch size: "{A}" or "{B}"?', TITLE)
    assert reader.read(ReadRequest(question=q, context=TWO, llm=tie)) is None
    # a value its paper does not print (the model worked out the whole question's answer, or made one up)
    made_up = ScriptedChatModel(responses=['{"value": 32}', '{"value": 40}'])
    q_list = ask(f'What batch size does "{A}" use, and what batch size does "{B}" use?', LIST)
    assert reader.read(ReadRequest(question=q_list, context=TWO, llm=made_up)) is None
    # names and numbers are found as the paper prints them ("5e-5", "1E-4", a number word)
    from evidex.agents.readers.each_paper import printed
    assert printed("AdamW", "All models use AdamW.") and not printed("Adam", "All models use AdamW.")
    assert printed(5e-5, "a learning rate of 5e-5") and printed(7, "by seven annotators") and not printed(True, "True")
    # a reply that stays unreadable after its repair passes too, instead of failing the question
    garbled = ScriptedChatModel(responses=['{"value": 32}', 'no JSON here', 'still none'])
    assert reader.read(ReadRequest(question=q_list, context=TWO, llm=garbled)) is None
    assert len(garbled.prompts) == 3
    # a paper the context holds nothing of: not this reader's question
    one = Context(items=[i for i in TWO.items if getattr(i, "paper_id", "") != "p2"])
    assert not reader.applies(q, one)


# one paper's passage that prints the counted noun's number beside the numbers of its parts
PARTS = Context(items=[*TWO.items[:3], Passage(key="c4", paper_id="p2", page=4, text=(
    "We then asked 11 annotators (3 authors and 8 non-authors) to describe each summary in one sentence."))])


def test_a_count_asked_of_one_paper_takes_the_number_its_part_binds_to_the_counted_noun():
    """Of "11 annotators (3 authors and 8 non-authors)" a small model copied 8; the number printed before the noun
    the paper's own clause counts is 11 (the model reader's count binding, :mod:`tools.qa.bound`, asked per paper)."""
    q = ask(f'In "{A}", how many annotators rated outputs, and in "{B}", how many annotators were asked to describe '
            f'each summary?', LIST)
    asked = clauses(q, NAMES)
    assert asked["p1"].endswith("rated outputs") and asked["p2"].startswith(f', and in "{B}"')
    assert counted_in(asked["p2"]) == ["annotators"]
    model = ScriptedChatModel(responses=['{"value": 3}', '{"value": 8}'])
    assert get_reader("each_paper").read(ReadRequest(question=q, context=PARTS, llm=model)).value == "[3, 11]"
    # the model's number stands when the context binds it to the counted noun ("3 annotators rated outputs")
    bound = ScriptedChatModel(responses=['{"value": 3}', '{"value": 11}'])
    assert get_reader("each_paper").read(ReadRequest(question=q, context=PARTS, llm=bound)).value == "[3, 11]"
    # "is the number of X in A the same as the number of Y in B": each clause counts its own noun
    same = ask(f'Is the number of annotators who rated outputs in "{A}" the same as the number of annotators asked '
               f'to describe each summary in "{B}"?', BOOL)
    asked = clauses(same, NAMES)
    assert asked["p1"].endswith(f'in "{A}"') and asked["p2"].startswith(" the same as")
    assert counted_in(asked["p1"]) == counted_in(asked["p2"]) == ["annotators"]
    model = ScriptedChatModel(responses=['{"value": 3}', '{"value": 8}'])
    answer = get_reader("each_paper").read(ReadRequest(question=same, context=PARTS, llm=model))
    assert (answer.value, answer.expression) == ("false", "3 == 11")
    # a count read from a table or figure the clause names is the model's reading: passages do not rebind it
    table = ask(f'In "{A}", how many annotators rated outputs, and according to Table 4 of "{B}", how many '
                f'annotators were asked to describe each summary?', LIST)
    model = ScriptedChatModel(responses=['{"value": 3}', '{"value": 8}'])
    assert get_reader("each_paper").read(ReadRequest(question=table, context=PARTS, llm=model)).value == "[3, 8]"
    # a question that names both papers first and asks of them by position is not cut at a title
    late = ask(f'"{A}" rates outputs and "{B}" describes summaries. How many more annotators does the first paper '
               f'use than the second paper?', INT)
    assert clauses(late, NAMES) == {}
    after = ask(f'Which of the two papers has more annotators: "{A}" (raters of outputs) or "{B}" (writers of '
                f'summaries)?', TITLE)
    assert clauses(after, NAMES) == {}
    subject = ask(f'"{A}" states how many annotators rated outputs, and "{B}" lists how many wrote summaries. What is '
                  f'the ratio of the two numbers?', "Your answer should be a Python float.")
    assert clauses(subject, NAMES) == {}
    # what a clause counts: a participle after the noun is not the noun, nor is what a "whose" clause says
    assert counted_in("the number of Transformer-based models probed in A") == ["Transformer-based", "models"]
    assert counted_in("the number of systems whose summaries are labeled") == ["systems"]
    assert counted_in("how many random seeds are used") == ["random", "seeds"] and counted_in("the batch size") == []


def test_a_format_of_two_values_says_their_kinds():
    assert pair_kinds(LIST) == (int, int)
    assert pair_kinds("A Python list of 2 elements, the first is a string, the second is a float.") == (str, float)
    assert pair_kinds("Your answer should be a Python list of two strings.") == (str, str)
    assert pair_kinds("Your answer should be a Python list of strings.") is None
    assert pair_kinds("A list of three integers, the first, the second and the third.") is None


def test_which_of_the_named_papers_is_answered_with_one_of_their_titles():
    """A question asking which of its few named papers has a value answers with one of their titles, under the
    grammar; left free, the small model answered with the name of the thing compared ("Prompt Pruned Ratio")."""
    from evidex.agents.readers.model import answer_schema, paper_choices

    q = ask(f'Which is smaller: the pruned ratio shown in Figure 4 of "{A}", or the temperature of "{B}"? Answer '
            f'with the title of the paper that reports the smaller value.', TITLE)
    choices = paper_choices(q, TWO)
    assert set(choices) == {A, B}
    assert answer_schema(q.answer_format, choices=choices).model_json_schema()["properties"]["answer"]["enum"] == \
        list(choices)
    model = ScriptedChatModel(responses=[json.dumps({"answer": "Prompt Pruned Ratio"}), json.dumps({"answer": A})])
    answer = get_reader("model").read(ReadRequest(question=q, context=TWO, llm=model))
    assert answer.value == A and len(model.prompts) == 2  # the free text failed the schema and was asked again
    # one paper, a retrieval question, a title not in the context, or a format asking for no title: no choices
    assert paper_choices(ask("Which paper uses AdamW?", TITLE, papers=()), TWO) == ()
    assert paper_choices(ask(f'What does "{A}" use?', TITLE, papers=("p1",)), TWO) == ()
    assert paper_choices(q, Context(items=TWO.items[1:])) == ()
    assert paper_choices(ask(f'Which optimizer do "{A}" and "{B}" use?', "A Python string."), TWO) == ()

"""Numbers bound to what a question counts: the model's count stands when the context prints it before the counted
noun (or binds nothing); a number bound nowhere is replaced by the one the context clearly binds. The sentences are
real passages of pool and corpus papers where the 1.5B model read the right sentence and took its neighbouring
number (19 for "narrows down 758 unique medical concepts to their 19 semantic types", 30 for "5 epochs")."""
from __future__ import annotations

import json

from evidex.agents.readers import ReadRequest, get_reader
from evidex.tools.paperstore import Passage
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.bound import bound_counts, rebound, singular, states_count
from evidex.tools.qa.context import Context
from evidex.tools.qa.question import parse_question

INT = "Your answer should be a single integer (no units, no thousands separators)."


def ask(text: str, answer_format: str = INT):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=["p"]))


def context(*texts: str) -> Context:
    return Context(items=[Passage(key=f"k{i}", paper_id="p", page=i + 1, text=t) for i, t in enumerate(texts)])


CONCEPTS = context("We limit Csel to only medical concepts and choose a map from them to their SNOMED CT semantic "
                   "types. In our case study this narrows down 758 unique medical concepts to their 19 semantic "
                   "types, which we list in the appendix.")
EPOCHS = context("Training uses 30 iterations of expectation maximization. We find that a fixed 5 epochs per step "
                 "works well, which is far from the number of epochs needed for convergence.")
TRIGGERS = context("Due to the different average lengths of the two domain datasets, we insert 1 trigger for "
                   "sentiment classification and 10 triggers for spam detection.")


def test_the_counted_phrase_is_parsed_once():
    assert ask("How many trigger words are inserted into each poisoned sample?").counted == ["trigger", "words"]
    assert ask("How many training epochs per maximization step (n) does the model use?").counted == \
        ["training", "epochs"]
    assert ask("How many English articles does the dataset contain?").counted == ["English", "articles"]
    # a gap, a count over a list, a count past a bound, times or millions: no noun to bind a number to
    assert ask("How many more layers does the first model have than the second?").counted == []
    assert ask("How many of the eight tasks does A win?").counted == []
    assert ask("How many datasets have an accuracy of at least 90?").counted == []
    assert ask("How many times larger is A than B?").counted == []
    assert ask("What accuracy does the model reach?").counted == []
    assert singular("studies") == "study" and singular("triggers") == "trigger" and singular("classes") == "class"


def test_every_count_a_question_asks_names_its_noun():
    """What a passage stating the count must name: every count's noun, a gap's and a total's too."""
    assert ask("How many more test tasks does the first paper use than the number of tasks the second paper "
               "evaluates on?").counts_of == ["tasks"]
    assert ask('Is the number of extractive systems whose summaries are human-labeled in "Summaries Can Be '
               'Unfaithful" the same as the number of Transformer-based models probed in "Whose Reasons?"?'
               ).counts_of == ["systems", "models"]
    assert ask("For how many steps in total is the model pre-trained?").counts_of == ["steps"]
    assert ask("How many times larger is A than B?").counts_of == []
    assert ask("How many points higher is A than B?").counts_of == []
    assert ask("What accuracy does the model reach?").counts_of == []


def test_a_passage_states_a_count_when_a_whole_number_is_printed_before_the_noun():
    nouns = ["tasks", "datasets", "steps"]
    for text in ("We evaluate on 24 tasks.", "across eight different NLP datasets", "pre-trained for 400K steps",
                 "a maximum of 150,000 steps", "12 out of 24 tasks", "we sample 2000 tasks"):
        assert states_count(text, nouns), text
    # a year (a number like one right before the noun counts it, unless a name comes first), a section's or a table's number, a decimal, another noun: no count of these
    for text in ("on the ACE 2005 development and test datasets", "4.1 Datasets", "Table 3 tasks", "0.45 tasks",
                 "we use 5 random seeds", "in 2023 Task 3", "the SemEval 2017 tasks"):
        assert not states_count(text, nouns), text


def test_a_number_bound_nowhere_is_replaced_by_the_bound_one():
    q = ask("In this paper's case study, how many unique medical concepts are mapped to their SNOMED CT semantic "
            "types?")
    bound = rebound("19", q, CONCEPTS)
    assert bound is not None and bound.value == 758 and bound.source == "chunks.k0"
    assert "758 unique medical concepts" in bound.sentence
    q = ask("In the paper, how many training epochs per maximization step (n) does the standard model use?")
    assert rebound("30", q, EPOCHS).value == 5


def test_the_model_s_number_stands_when_it_is_bound_or_nothing_is_clearly_bound():
    q = ask("How many triggers are inserted into each poisoned sample for the spam detection datasets?")
    assert sorted(b.value for b in bound_counts(q, TRIGGERS)) == [1, 10]
    assert rebound("10", q, TRIGGERS) is None  # bound to the noun: stands
    assert rebound("1", q, TRIGGERS) is None  # bound too (to the other dataset): the model's reading stands
    assert rebound("2", q, TRIGGERS).value == 10  # bound nowhere: the clause that says "spam detection"
    # the counted noun is "words", which the passage does not print: nothing is bound
    assert bound_counts(ask("How many trigger words are inserted for spam detection?"), TRIGGERS) == []
    # the concepts question over a context binding nothing to its noun
    assert rebound("19", ask("How many unique medical concepts are mapped?"), EPOCHS) is None
    # a bound number sharing no word of the question in its clause, or too little support: no replacement
    weak = context("Table 4 reports 12 runs and 40 epochs.")
    assert rebound("3", ask("How many epochs was the GAN trained in the English experiment?"), weak) is None
    # not a count: a float, a list, no "how many"
    assert rebound("19", ask("How many unique medical concepts are mapped?", "Your answer should be a float."),
                   CONCEPTS) is None
    assert rebound("19", ask("What number of unique medical concepts are mapped?"), CONCEPTS) is None


def test_the_model_reader_answers_the_bound_number_and_cites_its_passage():
    from evidex.agents.scripted import ScriptedChatModel

    q = ask("In this paper's case study, how many unique medical concepts are mapped to their SNOMED CT semantic "
            "types?")
    model = ScriptedChatModel(responses=[json.dumps({"answer": 19})])
    answer = get_reader("model").read(ReadRequest(question=q, context=CONCEPTS, llm=model))
    assert (answer.value, answer.reader, answer.sources) == ("758", "model", ["chunks.k0"])
    model = ScriptedChatModel(responses=[json.dumps({"answer": 758})])
    answer = get_reader("model").read(ReadRequest(question=q, context=CONCEPTS, llm=model))
    assert (answer.value, answer.sources) == ("758", [])


DATASETS = context("We perform experiments across eight different NLP datasets. One of the two baselines uses "
                   "three seeds, and twenty-five annotators labelled the data.")


def test_numbers_written_as_words_are_numbers_to_the_checks_and_the_bindings():
    from evidex.tools.text import numerals, operands_in, value_in

    assert numerals("across eight datasets, twenty-five annotators, Twenty two cases") == \
        "across 8 datasets, 25 annotators, 22 cases"
    assert numerals("one of the baselines, zero-shot, often, ten") == "one of the baselines, zero-shot, often, 10"
    # an answer the context writes as a word is found there, as a value and as an operand
    assert value_in("8", "We perform experiments across eight different NLP datasets.")
    assert value_in("[7, 4]", "experts in seven areas ... on four fine-grained benchmarks")
    assert not value_in("9", "across eight datasets")
    assert operands_in("8 + 3", "eight datasets; three datasets")
    q = ask("How many NLP datasets does the paper perform experiments on?")
    assert [b.value for b in bound_counts(q, DATASETS)] == [8]



def test_a_gap_the_paper_states_before_the_counted_noun_is_the_answer():
    """"By how many accuracy points do the best models fall behind humans": the paper states the gap itself ("fall
    30 accuracy points behind"); subtracting the two values the model copied (30 and 94) is not the answer."""
    from evidex.agents.scripted import ScriptedChatModel

    q = ask("By how many accuracy points do the best multimodal models fall behind human performance on the "
            "matching task?")
    gap = context("Even so, our best multimodal models fall 30 accuracy points behind human performance on the "
                  "matching task, where humans reach 94.")
    model = ScriptedChatModel(responses=[json.dumps({"compared": [{"name": "models", "value": 30},
                                                                  {"name": "humans", "value": 94}], "answer": 94})])
    answer = get_reader("model").read(ReadRequest(question=q, context=gap, llm=model))
    assert (answer.value, answer.sources) == ("30", ["chunks.k0"])


def test_a_number_with_its_magnitude_is_bound_as_its_value():
    """"We pre-train QAMDEN for 400k steps": the count of steps is 400,000; read as 400 before a word "k", the
    model's right 400000 was replaced by 400."""
    steps = context("The model is pre-trained for 400k steps in total, and fine-tuned for 5 epochs on each of "
                    "the 1.5M training images.")
    q = ask("For how many steps in total is the model pre-trained?")
    assert {b.value for b in bound_counts(q, steps)} == {400_000}
    assert rebound("400000", q, steps) is None
    assert rebound("400", q, steps).value == 400_000
    assert {b.value for b in bound_counts(ask("How many training images are there?"), steps)} == {1_500_000}


def test_each_paper_s_value_of_a_two_paper_total_is_the_count_its_own_passages_print():
    """"What is the total number of annotators obtained by adding the students recruited in A and the annotators of
    B": with B's "three annotators" in front of it, the 1.5B model copied A's "five annotators" for both papers. A
    value its paper's passages do not print as a count of the counted noun becomes the one count they print; a
    value they print, or a paper printing none, or several none of which its clause singles out, keeps the
    model's."""
    from evidex.agents.readers.model import Operand, paper_counts
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.tools.paperstore import Paper
    from evidex.tools.qa.bound import paper_count

    a, b = "Legal Benchmarks in the Wild", "Plans for Summary Re-Ranking"
    q = parse_question(PaperQuestion(
        id="q", question=f'What is the total number of annotators obtained by adding the law school students recruited '
                         f'in "{a}" and the annotators in the human evaluation of "{b}"?',
        answer_format=INT, pdf_ids=["pa", "pb"]))
    assert q.arithmetic == "sum" and q.counts_of == ["annotators"]
    ctx = Context(items=[Paper(paper_id="pa", title=a), Paper(paper_id="pb", title=b),
                         Passage(key="k1", paper_id="pa", page=4, text="The Kappa scores among five annotators are "
                                                                        "92%, 96%, 96% for each respective task."),
                         Passage(key="k2", paper_id="pb", page=9, text="We achieve a Krippendorf alpha of 0.70 over "
                                                                        "three annotators. C2. Did you report it? 5")])
    pb = [i for i in ctx.items if getattr(i, "paper_id", "") == "pb" and isinstance(i, Passage)]
    assert paper_count(5, pb, q) == 3 and paper_count(3, pb, q) is None and paper_count(5, [], q) is None
    # several counts: the one whose clause says what the question says ("in the human evaluation"), else none
    corpus = Passage(key="k3", paper_id="pb", page=2, text="The corpus was labelled by 12 annotators.")
    evaluation = Passage(key="k4", paper_id="pb", page=9, text="In the human evaluation, the summaries were read by "
                                                                "three annotators.")
    assert paper_count(5, [corpus, evaluation], q) == 3
    assert paper_count(5, [corpus, Passage(key="k5", paper_id="pb", page=3, text="Later, 14 annotators joined.")],
                       q) is None  # neither clause says what the question says: no clear best
    copied = [Operand(name=a, value=5), Operand(name=b, value=5)]
    assert [o.value for o in paper_counts(q, ctx, copied)] == [5, 3]
    # the prompt's alias names the paper too; a name of no paper, or a question about one paper, changes nothing
    assert [o.value for o in paper_counts(q, ctx, [Operand(name="paper 2", value=5)])] == [3]
    assert [o.value for o in paper_counts(q, ctx, [Operand(name="the students", value=5)])] == [5]
    # a name is part of a title word for word: "Plans for Summary" names B, "Plan" (in "Plans") names no paper
    assert [o.value for o in paper_counts(q, ctx, [Operand(name="Plans for Summary", value=5)])] == [3]
    assert [o.value for o in paper_counts(q, ctx, [Operand(name="Plan", value=5)])] == [5]
    one = q.model_copy(update={"papers": ["pb"]})
    assert [o.value for o in paper_counts(one, ctx, copied)] == [5, 5]
    reply = json.dumps({"compared": [{"name": a, "value": 5}, {"name": b, "value": 5}], "answer": 10})
    answer = get_reader("model").read(ReadRequest(question=q, context=ctx, llm=ScriptedChatModel(responses=[reply])))
    assert answer.value == "8" and answer.expression == "5 + 3"

"""Answer readers as plug-ins: the question parsed once into a typed :class:`Question`, the reader registry and the
ordered ``qa.readers`` list (an unknown name is a config error; a new reader is one registration plus its name in
the list), a reader defined outside the package answering through the real NeuSym graph, the checks an early
answer must pass (``agents.readers.checks``), and NeuSym's early answer turning down answers those checks reject
(the turns begin instead)."""
from __future__ import annotations

import json

import pytest

from evidex.agents.readers import DEFAULT_READERS, ReadRequest, get_reader, read_answer, reader_names, rejects
from evidex.agents.readers.checks import grounded, grounding, looped_list, printed_cell
from evidex.tools.paperstore import Paper, Passage, Table
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.cells import named_rows
from evidex.tools.qa.context import Answer, Context
from evidex.tools.qa.question import named_in, parse_question
from evidex.tools.text import value_in


def ask(text: str, answer_format: str = "A short answer.", papers=("p1",), conferences=()):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=list(papers),
                                        conferences=list(conferences)))


# ------------------------------------------------------------------------------------------------ the question
def reading(reader, context: Context, fmt: str):
    """``read(question, answer_format=fmt)``: ``reader``'s answer over ``context``, or None when it does not apply."""
    def read(question: str, answer_format: str = fmt):
        q = ask(question, answer_format)
        return reader.read(ReadRequest(question=q, context=context)) if reader.applies(q, context) else None
    return read


def test_a_question_is_parsed_once_into_what_readers_decide_by():
    q = ask("In Table 2 and Fig. 3 (see Eq. (4) and Table 2), which model has the highest F1?",
            "Your answer should be a string.", papers=("a", "b"), conferences=("acl2023",))
    assert (q.tables, q.figures, q.equations, q.table_label) == (["2"], ["3"], ["4"], "Table 2")
    assert (q.kind, q.says_superlative, q.gap, q.excluded) == ("str", True, False, "")
    assert not q.numeric and q.papers == ["a", "b"] and q.conferences == ["acl2023"]
    # the question it came from, as the graphs take it
    assert q.question == PaperQuestion(id="q", question=q.text, answer_format=q.answer_format, pdf_ids=["a", "b"],
                                       conferences=["acl2023"])
    # the answer kind comes from the format
    kinds = {"Your answer should be a Python integer.": "int", "A Python float rounded to 2 decimals.": "float",
             "A Python list of strings.": "list", "Answer true or false.": "bool", "A short answer.": "str"}
    assert {fmt: ask("What?", fmt).kind for fmt in kinds} == kinds
    assert ask("What?", "Your answer should be a Python integer.").numeric


def test_gaps_superlatives_and_exclusions_are_read_from_the_question_s_words():
    gap = ask('In Table 3 of "A Very Long Paper Title Here", how many points higher is A than B?')
    assert gap.gap and gap.table_label == "Table 3"
    assert ask("What is the F1 of A minus that of B?").gap and ask("What is the difference between A and B?").gap
    assert not ask("What does it propose?").gap and not ask("What does it propose?").says_superlative
    excluding = ask("Which baseline (i.e. excluding ERRA and NRT) has the lowest RMSE?")
    assert excluding.excluded.strip() == "ERRA and NRT" and excluding.says_superlative
    assert named_in("NRT", excluding.excluded) and not named_in("NR", excluding.excluded)
    assert ask("Other than A-1, which model is best?").excluded.strip() == "A-1,"  # up to the question word


# ------------------------------------------------------------------------------------------------ the registry
TABLE = Table(key="t1", paper_id="p1", page=3, caption="Table 1: Results.",
              markdown="|System|Accuracy|\n|---|---|\n|Baseline|61.2|\n|Ours|74.9|")
CONTEXT = Context(items=[Paper(paper_id="p1", title="A Paper", authors=["Ann Bee"], num_pages=12), TABLE,
                         Passage(key="c1", paper_id="p1", page=2, text="We evaluate on the pangolin benchmark."),
                         Passage(key="c2", paper_id="p1", page=4, text="Training takes 3 days on one GPU.")])


class Constant:
    """A test reader: answers every question with one value, or nothing."""

    def __init__(self, name: str, value: str | None, applies: bool = True):
        self.name, self.value, self._applies, self.asked = name, value, applies, 0

    def applies(self, question, context) -> bool:
        return self._applies

    def read(self, request):
        self.asked += 1
        return None if self.value is None else Answer(value=self.value, reader=self.name)


@pytest.fixture
def registry(monkeypatch):
    """Readers registered by a test, removed after it."""
    from evidex.agents.readers import base

    reader_names()  # the built-in readers are loaded before the test adds its own
    monkeypatch.setattr(base, "_READERS", dict(base._READERS))
    return base


def test_the_built_in_readers_are_registered_and_the_model_comes_last():
    assert DEFAULT_READERS == ("cell", "count", "wins", "against", "gap", "affiliation", "each_paper", "model")
    assert set(DEFAULT_READERS) <= set(reader_names())
    assert [get_reader(n).name for n in DEFAULT_READERS] == list(DEFAULT_READERS)
    with pytest.raises(KeyError, match=r"no answer reader named 'nope' \(known: .*model"):
        get_reader("nope")


GROUPED = Table(key="t2", paper_id="p1", page=5, caption="Table 2: Average BERTScore and execution accuracy.",
                markdown=("|Model|BERTScore|Execution|\n|---|---|---|\n|GPT-3| | |\n|Ada|-7.7|4.0|\n"
                          "|DaVinci|14.6|6.5|\n|InstructGPT| | |\n|DaVinci|44.4|43.6†|\n|Greedy|0.1|0.2|\n"
                          "|Greedy GS|0.3|0.4|"))


@pytest.mark.parametrize("question, expected", [
    ("In Table 2, what execution accuracy does the InstructGPT DaVinci model reach?", ("InstructGPT / DaVinci",
                                                                                        "Execution", "43.6")),
    ("In Table 2, what BERTScore does Ada reach?", ("GPT-3 / Ada", "BERTScore", "-7.7")),
    ("In Table 2, what execution accuracy does Greedy GS reach?", ("InstructGPT / Greedy GS", "Execution", "0.4")),
    ("In Table 2, what execution accuracy does DaVinci reach?", None),      # two sections hold a DaVinci
    ("In Table 2, what accuracy does Ada reach?", None),                    # no column named in full
    ("In Table 2, what execution accuracy does Ada reach, and its BERTScore?", None),  # two columns
    ("In Table 3, what execution accuracy does Ada reach?", None),          # a table the context does not hold
    ("What execution accuracy does Ada reach?", None),                      # no table named
])
def test_the_cell_reader_reads_the_one_cell_a_question_names_by_row_and_column(question, expected):
    q = ask(question, "Your answer should be a Python float rounded to 1 decimal place.")
    context = Context(items=[GROUPED, TABLE])
    reader = get_reader("cell")
    assert reader.applies(q, context)
    answer = reader.read(ReadRequest(question=q, context=context))
    if expected is None:
        assert answer is None
    else:
        row, column, value = expected
        assert (answer.value, answer.sources, answer.by_code) == (value, [GROUPED.source], True)
        assert answer.quote == f"Table 2, {row}, {column}: {value}"


# a metric under each task (the task printed once for its rows), models under a label printed over all of them,
# settings as abbreviations
BY_TASK = Table(key="t4", paper_id="p1", page=6, caption="Table 4: Recall by task.",
                markdown=("|Task|Metric|Baseline|Model| | |\n|---|---|---|---|---|---|\n"
                          "|Task|Metric|Baseline|Net-S|Net-L| |\n|Task| | |hard|soft|hard|\n"
                          "|TP|R@1|15.4|18.9|20.1|21.2|\n| |R@5|15.6|41.0|46.4|48.8|\n"
                          "|SPO|R@1|25.6|23.1|38.5|20.5|\n| |R@5|28.2|64.1|76.9|69.2|\n"
                          "|Context.|Y|30.1|40.2|50.3|60.4|\n|Non-Context.|Y|10.1|20.2|30.3|40.4|"))


@pytest.mark.parametrize("question, expected", [
    # R@5 is printed under two tasks; the task, printed once for its two rows, says which
    ("In Table 4, what R@5 does the SPO task give under the Baseline?", ("SPO / R@5", "Baseline", "28.2")),
    ("In Table 4, what R@5 does the Baseline give?", None),                      # two rows say R@5
    # "Model" stands over every model's columns and is not said: the lower header rows name the column
    ("In Table 4, what is the R@1 of Net-L (soft) on TP?", ("TP / R@1", "Model Net-L soft", "20.1")),
    ("In Table 4, what is the R@1 of the hard setting on TP?", None),             # "hard" alone: two columns
    # a label printed with a full stop is an abbreviation: "Context." is said by "contextualized"
    ("In Table 4, what does the contextualized model with Y give under the Baseline?",
     ("Context. / Y", "Baseline", "30.1")),
])
def test_the_cell_reader_tells_rows_apart_by_all_their_labels(question, expected):
    q = ask(question, "Your answer should be a Python float rounded to 1 decimal place.")
    answer = get_reader("cell").read(ReadRequest(question=q, context=Context(items=[BY_TASK])))
    if expected is None:
        assert answer is None
    else:
        row, column, value = expected
        assert answer.quote == f"Table 4, {row}, {column}: {value}" and answer.value == value


# a statistic per dataset, abbreviated labels beside a written-out one
STATS = Table(key="t7", paper_id="p1", page=9, caption="Table 7: Annotated data.",
              markdown=("|Dataset| |G1|G2|\n|---|---|---|---|\n|News|Annot.|51|56|\n|News|RLR|33.7|32.5|\n"
                        "|Wiki|Annot.|28|27|\n|Wiki|RLR|32.1|25.1|\n|Master|Wiki|1.0|2.0|"))


def test_a_label_said_as_printed_ranks_over_an_abbreviation_and_a_quoted_title_names_no_row():
    fmt = "Your answer should be a Python float rounded to 1 decimal place."
    reader, context = get_reader("cell"), Context(items=[STATS])
    # "annotators" says "Annot." only by its first letters; "RLR" is said as printed
    q = ask("In Table 7, what is the RLR of the G2 annotators on the Wiki dataset?", fmt)
    assert reader.read(ReadRequest(question=q, context=context)).quote == "Table 7, Wiki / RLR, G2: 25.1"
    # the quoted title's words ("Master") name the paper, not a row
    titled = ask('In Table 7 of the paper "Master of Annotations for Wiki Data", what is the RLR of G1 on News?', fmt)
    assert reader.read(ReadRequest(question=titled, context=context)).value == "33.7"


SWEEP = Table(key="t5", paper_id="p1", page=7, caption="Table 5: Scores of each setting.",
              markdown=("|Model|α|BLEU|Perplexity|\n|---|---|---|---|\n|Base|0.0|22.5 ±0.7|5.5|\n"
                        "|Ours|0.25|28.3 ±0.2|6.9|\n|Ours|0.5|28.2|8.5|\n|Ours|0.75|27.8|7.9|\n"
                        "|Ours|1.0|30.5|6.8|"))


def test_a_count_of_rows_past_a_bound_is_read_by_code():
    fmt = "Your answer should be a single integer."
    q = ask("In Table 5, how many rows (model and α settings) reach a BLEU above 28?", fmt)
    assert (q.threshold.op, q.threshold.value) == (">", 28.0)
    reader, context = get_reader("count"), Context(items=[SWEEP])
    assert reader.applies(q, context)
    answer = reader.read(ReadRequest(question=q, context=context))
    # the column next to the bound (BLEU), not α said earlier; "22.5 ±0.7" counts as 22.5
    assert (answer.value, answer.sources, answer.by_code) == ("3", [SWEEP.source], True)
    # the cells counted are the expression, so the answer is grounded in the table and taken without turns
    assert answer.expression == "count(28.3, 28.2, 30.5)" and rejects(answer, q, context) is None
    at_most = ask("In Table 5, how many settings have a perplexity of at most 6.9?", fmt)
    assert reader.read(ReadRequest(question=at_most, context=context)).value == "3"
    # a count across one named row's columns, no bound, a bound on a gap: not this reader's
    assert reader.read(ReadRequest(question=ask("In Table 5, how many scores of Base are above 5?", fmt),
                                   context=context)) is None
    other_than = ask("In Table 5, how many settings other than Base reach a BLEU above 28?", fmt)
    assert reader.read(ReadRequest(question=other_than, context=context)).value == "3"     # Base left out
    assert not reader.applies(ask("In Table 5, how many settings are there?", fmt), context)
    assert ask("In Table 5, how many settings beat Base by more than 2 points?", fmt).threshold is None
    assert ask("How many of the 1600 summaries contain at least one error?", fmt).threshold is None


# two blocks stacked under their own header, each with the same methods, and an average column
STACKED = Table(key="t6", paper_id="p1", page=8, caption="Table 6: Accuracy after each task.",
                markdown=("|News|T1|T2|T3|Avg.|\n|---|---|---|---|---|\n|Alpha|90.0|80.0|70.0|80.0|\n"
                          "|Beta|91.0|79.0|72.0|80.7|\n|Wiki|T1|T2|T3|Avg.|\n|Alpha|60.0|50.0|40.0|50.0|\n"
                          "|Beta|59.0|51.0|39.0|49.7|\n|Beta-L|70.0|70.0|70.0|70.0|\n|mean|70.0|62.5|55.3|62.6|"))


def test_the_columns_one_row_beats_another_on_are_counted_by_code():
    fmt = "Your answer should be a single integer."
    reader, context = get_reader("wins"), Context(items=[STACKED])

    read = reading(reader, context, fmt)
    # the block the question names (a header printed again inside the body starts one); the first row said is
    # compared; a number said must be the columns' number, the average column left out when it says so
    wiki = read("In Table 6, on Wiki, on how many of the three tasks (not counting the Avg. column) does Beta "
                "score higher than Alpha?")
    # the cells compared are the expression, so the answer is grounded in the table and taken without turns
    assert (wiki.value, wiki.expression) == ("1", "count(51 > 50)")
    assert rejects(wiki, ask("In Table 6, on how many tasks?", fmt), context) is None
    assert read("In Table 6, on News, on how many of the 3 tasks (not counting the Avg. column) does Beta score "
                "higher than Alpha?").value == "2"
    assert read("In Table 6, on News, on how many columns is Alpha lower than Beta?").value == "3"  # Avg. too
    # "of the three tasks" over three tasks and an average column: the average is no task
    assert read("In Table 6, on News, on how many of the three tasks does Beta score higher than Alpha?").value == "2"
    assert read("In Table 6, on News, on how many of the two tasks does Beta score higher than Alpha?") is None
    # which column: the one column won, by name; none when it won several
    name_fmt = "Your answer should be a single string, the task name as printed."
    which = reader.read(ReadRequest(question=ask("In Table 6, on Wiki, on which of the three tasks does Beta score "
                                                 "higher than Alpha?", name_fmt), context=context))
    assert (which.value, which.expression) == ("T2", "51 > 50")
    assert reader.read(ReadRequest(question=ask("In Table 6, on News, on which of the three tasks does Beta score "
                                                "higher than Alpha?", name_fmt), context=context)) is None
    assert read("In Table 6, on how many of the three tasks (not counting the Avg. column) does Beta score higher "
                "than Alpha?") is None                            # no block named: Alpha is printed twice
    assert read("In Table 6, on Wiki, on how many tasks does Beta outperform Alpha?") is None   # direction unsaid
    assert ask("In Table 6, how many points higher is Beta than Alpha on T1?", fmt).gap  # a gap, not a count
    # the count reader leaves out the rows the question does
    count = ask("In Table 6, on Wiki, how many of the 3 methods (not counting the mean row) have a T1 accuracy "
                "above 59.5?", fmt)
    assert get_reader("count").read(ReadRequest(question=count, context=context)).value == "2"


# two systems printed as columns, the tasks they are compared on as rows
SIDE_BY_SIDE = Table(key="t9", paper_id="p1", page=8, caption="Table 9: Accuracy of two systems on each task.",
                     markdown="|Task|System-X|Baseline-Y|\n|---|---|---|\n|T1|70.2|42.6|\n|T2|83.6|52.4|\n"
                              "|T3|71.8|38.5|\n|T4|82.1|82.1|\n|T5|30.0|31.5|")
# a reference row (a baseline) and an aggregate row among the rows counted against it
AGAINST = Table(key="t10", paper_id="p1", page=9, caption="Table 10: Loss and F1 of each variant.",
                markdown="||Dev|Dev|Test|Test|\n|---|---|---|---|---|\n|Variant|Loss|F1|Loss|F1|\n"
                         "|Baseline|0.64|0.54|0.99|0.16|\n|Var-A|0.64|0.53|0.98|0.17|\n|Var-B|0.65|0.53|1.02|0.17|\n"
                         "|Var-C|0.63|0.57|0.89|0.16|\n|Var-D|0.66|0.56|1.01|0.19|\n|Avg. (all runs)|0.64|0.55|0.97|0.18|")


def test_two_systems_printed_as_columns_are_compared_down_the_rows():
    fmt = "Your answer should be a single integer."
    reader, context = get_reader("wins"), Context(items=[SIDE_BY_SIDE])
    q = ask("In Table 9, on how many of the five tasks does System-X score strictly higher than Baseline-Y?", fmt)
    answer = reader.read(ReadRequest(question=q, context=context))
    assert (answer.value, answer.sources) == ("3", ["tables.t9"])     # T4 is a tie, T5 is lost
    assert answer.expression == "count(70.2 > 42.6, 83.6 > 52.4, 71.8 > 38.5)"
    lower = ask("In Table 9, on how many tasks is System-X lower than Baseline-Y?", fmt)
    assert reader.read(ReadRequest(question=lower, context=context)).value == "1"
    # the row compared against is the one after the comparative's "than", not after an "other than" before it
    other = ask("In Table 9, on how many of the tasks other than T5 does Baseline-Y score lower than System-X?", fmt)
    assert (other.beats, other.against) == ("lower", "System-X?")
    assert reader.read(ReadRequest(question=other, context=context)).value == "3"
    # a count over a number of tasks the table does not hold is left to the model
    six = ask("In Table 9, on how many of the six tasks does System-X score higher than Baseline-Y?", fmt)
    assert reader.read(ReadRequest(question=six, context=context)) is None
    # the gap between two columns in the row the question names
    gap = ask("According to Table 9, how many more points does System-X score than Baseline-Y on T2?", fmt)
    answer = get_reader("gap").read(ReadRequest(question=gap, context=context))
    assert (answer.value, answer.expression) == ("31.2", "abs(83.6 - 52.4)")


def test_rows_are_counted_against_a_reference_row_of_the_column_the_question_names():
    fmt = "Your answer should be a single integer."
    reader, context = get_reader("against"), Context(items=[AGAINST])

    read = reading(reader, context, fmt)
    answer = read("In Table 10, how many of the variants (Baseline excluded) reach a Test loss strictly lower than "
                  "the Baseline's?")
    # the reference and the average row are not counted; the cells compared are the expression
    assert (answer.value, answer.expression) == ("2", "count(0.98 < 0.99, 0.89 < 0.99)")
    # the baseline is counted when it is not the reference
    assert read("In Table 10, how many of the five methods have a Test F1 higher than the average over all "
                "runs?").value == "1"
    assert read("In Table 10, how many of the four variants have a Dev F1 higher than Baseline?").value == "2"
    assert read("In Table 10, how many of the three variants have a Test F1 higher than Baseline?") is None
    assert read("In Table 10, how many variants have a Test F1 higher than the best one?") is None  # no row said
    assert read("In Table 10, how many variants have an F1 higher than Baseline?") is None  # Dev or Test


METRICS = Table(key="t11", paper_id="p1", page=4, caption="Table 11: Correlations on two sets.",
                markdown="||DD|DD|PC|PC|\n|---|---|---|---|---|\n|Metric|r|τ|r|τ|\n"
                         "|BLEU|0.29|0.26|-0.15|-0.17|\n|Average|-0.13|-0.10|-0.10|-0.03|\n|Ref|0.25|0.22|0.03|0.08|\n"
                         "|Ours (a)|0.54|0.55|0.29|0.22|\n|Ours|0.63|0.62|0.40|0.27|")


def test_a_row_named_like_an_aggregate_is_counted_when_the_question_counts_it():
    """A metric called "Average" is a row of its own when the number the question counts over includes it; the
    rows a bracket says are included ("(including the Ours variants)") are not taken for excluded ones."""
    fmt = "Your answer should be a single integer."
    read = reading(get_reader("against"), Context(items=[METRICS]), fmt)
    q = ("In Table 11, how many of the 4 metric rows other than Ref (including the two Ours variants) have a τ on "
         "PC strictly higher than Ref's?")
    assert ask(q, fmt).excluded.strip() == "Ref"
    answer = read(q)
    assert (answer.value, answer.expression) == ("2", "count(0.22 > 0.08, 0.27 > 0.08)")
    # without the count the question says, "Average" stays an aggregate left out, as before
    assert read("In Table 11, how many metrics other than Ref have a τ on PC strictly higher than Ref's?").value == "2"
    assert read("In Table 11, how many of the 5 metric rows other than Ref have a τ on PC higher than Ref's?") is None


def test_the_affiliation_of_the_author_a_question_names_is_read_by_code():
    fmt = "Your answer should be a short string: the organization name as printed on the first page."
    paper = Paper(paper_id="p1", title="A Paper", authors=["Ann Bee", "Cy Dee", "Ed Fox"],
                  affiliations={"Ann Bee": ["Lab X"], "Cy Dee": ["Univ Y"], "Ed Fox": ["Lab X", "Univ Z"]})
    reader, context = get_reader("affiliation"), Context(items=[paper])

    read = reading(reader, context, fmt)
    # by name, or by the place in the author list; the paper's metadata item is the source
    answer = read("Which organization is the second author, Cy Dee, affiliated with?")
    assert (answer.value, answer.sources, answer.by_code) == ("Univ Y", ["metadata.p1"], True)
    assert read("Which institution is Cy Dee at?").value == "Univ Y"
    assert read("Which institution is the first author at?").value == "Lab X"
    assert read("Which organization is the last author affiliated with?") is None     # two: the model's
    assert read("Which university is Zed Quay at?") is None                             # no author named
    assert read("How many authors are affiliated with Lab X?", "Your answer should be an integer.") is None
    # without affiliations read (a question that does not ask where), the reader does not apply
    assert not reader.applies(ask("Which institution is Cy Dee at?", fmt), Context(items=[paper.model_copy(
        update={"affiliations": {}})]))


def test_the_cell_reader_leaves_text_gaps_and_extremes_to_the_next_reader():
    context = Context(items=[GROUPED])
    reader = get_reader("cell")
    assert not reader.applies(ask("In Table 2, which model has execution accuracy 43.6?"), context)
    fmt = "Your answer should be a Python float."
    assert not reader.applies(ask("In Table 2, what is the highest execution accuracy of Ada?", fmt), context)
    assert not reader.applies(ask("In Table 2, how much higher is Ada than DaVinci in BERTScore?", fmt), context)
    assert not reader.applies(ask("In Table 2, what BERTScore does Ada reach?", fmt), Context(items=[]))
    # a ratio "than" another row names one row's cell but asks for no printed value
    assert not reader.applies(ask("In Table 2, how many times more BERTScore does Ada reach than DaVinci?", fmt),
                              context)


# a method row printed with its citation, and a row whose label holds the other's
CITED = Table(key="t8", paper_id="p1", page=6, caption="Table 1: Evaluation results.",
              markdown=("|Method|SST-2|SNLI|Trec|AVG|\n|---|---|---|---|---|\n|Random|73.7|43.4|19.7|45.6|\n"
                        "|TopK (Liu et al., 2022)|83.9|57.5|40.8|60.7|\n"
                        "|TopK+LocalE (Lu et al., 2022)|67.1|46.8|36.2|50.0|\n"
                        "|Ours (TopK+MDL)|91.5|58.8|40.1|63.5|"))


def test_a_row_is_named_without_its_citation_and_outside_the_labels_that_hold_it():
    """"the TopK baseline (Liu et al., 2022)" names the row "TopK (Liu et al., 2022)"; "TopK" inside "Ours
    (TopK+MDL)" is not the TopK row, but said again on its own it is."""
    reader, fmt = get_reader("wins"), "Your answer should be a single integer."
    q = ask("In Table 1, on how many of the three datasets does Ours (TopK+MDL) achieve a higher accuracy than the "
            "TopK baseline (Liu et al., 2022)?", fmt)
    assert [label for label, _ in named_rows(CITED, q)] == ["Ours (TopK+MDL)", "TopK (Liu et al., 2022)"]
    wins = reader.read(ReadRequest(question=q, context=Context(items=[CITED])))
    assert (wins.value, wins.expression) == ("2", "count(91.5 > 83.9, 58.8 > 57.5)")
    # said only inside the longer label: one row, so the reader passes to the next
    only = ask("In Table 1, what accuracy does Ours (TopK+MDL) reach on SST-2?", "Your answer should be a float.")
    assert [label for label, _ in named_rows(CITED, only)] == ["Ours (TopK+MDL)"]


def test_readers_are_tried_in_order_and_the_first_answer_wins(registry):
    from evidex.agents.readers import register_reader

    never = register_reader(Constant("never", "wrong", applies=False))
    unsure = register_reader(Constant("unsure", None))
    sure = register_reader(Constant("sure", "42"))
    after = register_reader(Constant("after", "later"))
    request = ReadRequest(question=ask("What?"), context=CONTEXT)
    answer = read_answer(["never", "unsure", "sure", "after"], request)
    assert (answer.value, answer.reader) == ("42", "sure")
    assert (never.asked, unsure.asked, sure.asked, after.asked) == (0, 1, 1, 0)  # not applying: never read
    assert read_answer(["never", "unsure"], request) is None


def test_the_model_reader_answers_in_the_format_s_type_from_the_rendered_context():
    from evidex.agents.scripted import ScriptedChatModel

    reader = get_reader("model")
    q = ask("How many pages does the paper have?", "Your answer should be a Python integer.")
    assert reader.applies(q, Context()) and reader.applies(q, CONTEXT)  # every question, the last reader
    model = ScriptedChatModel(responses=['{"answer": "twelve"}', '{"answer": 12}'])  # a word, then its repair
    answer = reader.read(ReadRequest(question=q, context=CONTEXT, llm=model))
    assert (answer.value, answer.reader, answer.by_code, answer.sources) == ("12", "model", False, [])
    (first, repair) = model.prompts
    # one paper: no store key, paper id or search hint in the answer call, which neither searches nor cites
    assert "[metadata] title: A Paper | authors (1): Ann Bee | pages: 12" in first
    assert "[page 3] Table 1: Results.\n|System|Accuracy|" in first
    assert "tables.t1" not in first and "p1" not in first and "[Papers]" not in first
    assert first.rindex("[Question]") > first.index("[Context]:")
    assert "Your previous reply was not valid" in repair
    # a cut context
    cut = ScriptedChatModel(responses=['{"answer": 12}'])
    reader.read(ReadRequest(question=q, context=CONTEXT, llm=cut, limit=115))
    assert "[page 3] Table 1: Results.\n|Sys\n... [cut: " in cut.prompts[0]
    # a name picked by an extreme value: the model lists the candidates, code picks the extreme
    ranked = ScriptedChatModel(responses=[json.dumps({"direction": "lowest", "answer": "B", "candidates": [
        {"name": "A", "value": 0.2}, {"name": "B", "value": 0.5}]})])
    answer = reader.read(ReadRequest(question=ask("Which method has the lowest error?", "A string."), context=Context(),
                                     llm=ranked))
    assert (answer.value, answer.expression) == ("A", "min(0.2, 0.5)") and '"candidates"' in ranked.prompts[0]


def test_qa_readers_names_registered_readers_only(registry):
    """An unknown reader in the config is a config error naming it and the known ones; a new reader is one
    registration plus its name in the list."""
    from evidex.agents.readers import register_reader
    from evidex.graphs.config import ConfigError
    from evidex.graphs.qa.config import QASettings
    from evidex.graphs.tasks import config_for_task

    with pytest.raises(ConfigError, match=r"unknown answer reader\(s\) table_cells \(known: .*model"):
        config_for_task("airqa", ["qa.readers=[table_cells, model]"])
    with pytest.raises(ConfigError, match="readers"):
        config_for_task("airqa", ["qa.readers=[]"])  # at least one reader
    assert QASettings().readers == list(DEFAULT_READERS)
    register_reader(Constant("constant", "1"))
    assert config_for_task("airqa", ["qa.readers=[constant, model]"]).qa.readers == ["constant", "model"]


# ------------------------------------------------------------------------------------------------ a new reader
class FirstRow:
    """A reader written outside the package: the first row label of a table the context holds, read by code; with
    ``sure=False`` it applies and then cannot tell (returns None)."""

    def __init__(self, name: str, sure: bool = True):
        self.name, self.sure, self.asked = name, sure, 0

    def applies(self, question, context) -> bool:
        return bool(context.tables)

    def read(self, request):
        self.asked += 1
        if not self.sure:
            return None
        table = request.context.tables[0]
        return Answer(value=table.rows[0][0], reader=self.name, by_code=True, sources=[table.source])


def test_a_new_reader_is_one_class_plus_one_line_of_config(registry, table_paper):
    """Registered through the public API and listed before ``model`` in ``qa.readers``, a reader answers through
    the real NeuSym graph without a model call; a reader that returns None falls through to the model."""
    from evidex.agents.readers import register_reader
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import build_neusym
    from evidex.graphs.tasks import config_for_task

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="n", question="In Table 1, which method is listed first?", answer_format=NAME,
                      pdf_ids=[pdf_id])

    def run(readers: str, replies: list[str]):
        model = ScriptedChatModel(responses=replies)
        cfg = config_for_task("airqa", [f"store.store_dir={store_dir}", "qa.max_turns=2", f"qa.readers={readers}"])
        return model, build_neusym(model, cfg).invoke({"input": q})["prediction"]

    first = register_reader(FirstRow("first_row"))
    silent, pred = run("[first_row, model]", [])
    assert (pred.answer, pred.reader, pred.actions, silent.prompts) == ("Baseline", "first_row", ["answer"], [])
    assert [c.source.split(".")[0] for c in pred.citations] == ["tables"] and all(c.exists for c in pred.citations)
    assert first.asked == 1

    unsure = register_reader(FirstRow("unsure", sure=False))
    model, pred = run("[unsure, model]", [json.dumps({"answer": "Ours"})])
    assert (pred.answer, pred.reader, pred.actions, len(model.prompts)) == ("Ours", "model", ["answer"], 1)
    assert unsure.asked == 1


# ------------------------------------------------------------------------------------------------ the checks
def test_an_answer_is_grounded_in_the_context_and_cites_the_items_holding_it():
    said = Answer(value="pangolin benchmark", reader="model")
    assert grounded(said, CONTEXT) and grounding(said, CONTEXT) == ["chunks.c1"]
    assert grounding(Answer(value="74.9", reader="model"), CONTEXT) == ["tables.t1"]
    assert grounding(Answer(value="12", reader="model"), CONTEXT) == ["metadata.p1"]  # "pages: 12" of its metadata
    # a computed answer rests on its operands, which are in the table, not on its result, which is not
    gap = Answer(value="13.7", reader="code", expression="74.9 - 61.2")
    assert grounded(gap, CONTEXT) and grounding(gap, CONTEXT) == ["tables.t1"]
    assert not grounded(Answer(value="13.7", reader="model"), CONTEXT)
    # a list: the items holding any of its elements
    listed = Answer(value='["Baseline", "3 days"]', reader="model")
    assert grounded(listed, CONTEXT) and grounding(listed, CONTEXT) == ["tables.t1", "chunks.c2"]
    # nothing holds it: the first items shown
    assert grounding(Answer(value="wombat", reader="model"), CONTEXT, fallback=2) == ["metadata.p1", "tables.t1"]


def test_a_number_is_found_where_the_paper_prints_it_with_thousands_separators():
    """Answer formats ask for no separators ("10907"), papers print them ("10,907"): the early answer stands."""
    printed = "The dataset consists of 10,907 training dialogues and 1,000 validation dialogues."
    assert value_in("10907", printed) and value_in("10,907", printed) and value_in("1000", printed)
    assert not value_in("907", printed) and not value_in("10", printed)  # still whole numbers only
    assert value_in("[10907, 1000]", printed) and not value_in("[10907, 968]", printed)


def test_the_reasons_an_early_answer_is_not_taken():
    q = ask("In Table 1, excluding Ours, which system is best?", "A string, e.g. Baseline.")
    assert rejects(Answer(value="wombat", reader="model"), q, CONTEXT) == "not found in the context"
    assert rejects(Answer(value="Ours", reader="model"), q, CONTEXT) == "an item the question excludes"
    assert rejects(Answer(value="Baseline", reader="model"), q, CONTEXT) == "the answer format's example"
    listed = ask("Which systems are compared?", "A Python list of strings.")
    looped = Answer(value='["Baseline", "Ours", "Ours", "Ours"]', reader="model")
    assert rejects(looped, listed, CONTEXT) == "a list repeating one item"
    assert rejects(Answer(value='["Baseline", "Ours"]', reader="model"), listed, CONTEXT) is None
    assert rejects(Answer(value="Baseline", reader="model"), ask("Which system is weakest?"), CONTEXT) is None
    # a gap question answered with one of the table's own cells, not computed from two
    gap = ask("In Table 1, how many points higher is Ours than Baseline?", "A Python float.")
    assert rejects(Answer(value="74.9", reader="model"), gap, CONTEXT) == "one table cell given for the gap between two"
    assert not printed_cell(Answer(value="74.9", reader="model"), ask("What does Ours reach?", "A float."), CONTEXT)
    assert rejects(Answer(value="13.7", reader="model", expression="74.9 - 61.2"), gap, CONTEXT) is None


def test_a_list_stuck_on_one_item_is_a_loop_but_repeated_numbers_are_values():
    """Chain-of-Thought on the test split: asked for five benchmarks, the model wrote "GSM8K" and then "AQuA" four
    times. A list ending in one text item three times over is a loop; repeated numbers can be real values."""
    assert looped_list('["GSM8K", "AQuA", "AQuA", "aqua ", "AQuA"]')
    assert not looped_list('["GSM8K", "AQuA", "AQuA", "SVAMP"]') and not looped_list('["A", "A"]')
    assert not looped_list("[0.5, 0.5, 0.5]") and not looped_list("AQuA AQuA AQuA") and not looped_list("")


# ------------------------------------------------------------------------------------------------ the early answer
NAME = "Your answer should be a single string, the method name exactly as printed in the table."


def _neusym_answer(store_dir: str, q, replies: list[str]):
    """NeuSym (probe, early answer, two turns: one action, then the answer from what was found) answering ``q``
    with scripted ``replies``: the model, for the prompts it was sent, and the prediction."""
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import build_neusym
    from evidex.graphs.tasks import config_for_task

    model = ScriptedChatModel(responses=replies)
    cfg = config_for_task("airqa", [f"store.store_dir={store_dir}", "qa.max_turns=2"])
    return model, build_neusym(model, cfg).invoke({"input": q})["prediction"]


def _ranked(answer: str, *pairs) -> str:
    return json.dumps({"direction": "highest", "candidates": [{"name": n, "value": v} for n, v in pairs],
                       "answer": answer})


def test_an_early_answer_the_question_excludes_is_not_taken(table_paper):
    """G-Eval on the test split: the model listed only the two rows the question excludes and answered one of them;
    with no pick left its own answer stood and, being printed in the table, passed as grounded."""
    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="x", question="In Table 1, excluding Ours, which method has the highest Accuracy?",
                      answer_format=NAME, pdf_ids=[pdf_id])
    model, pred = _neusym_answer(store_dir, q, [
        _ranked("Ours", ("Ours", 74.9), ("Ours (no pretraining)", 70.0)),  # nothing left to pick: "Ours" stands
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": "Baseline"}}),
        _ranked("Baseline", ("Baseline", 61.2), ("Ours", 74.9)),
    ])
    assert len(model.prompts) == 3 and pred.answer == "Baseline" and pred.actions == ["answer"]


def test_an_early_list_answer_stuck_on_one_item_is_not_taken(table_paper):
    """Every item of the looping list is in the probe, so it passed as found: it is no early answer, the turns
    begin."""
    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="l", question="In Table 1, which methods are compared?",
                      answer_format="Your answer should be a Python list of 4 strings.", pdf_ids=[pdf_id])
    model, pred = _neusym_answer(store_dir, q, [
        json.dumps({"answer": ["Baseline", "Ours", "Ours", "Ours"]}),  # stuck: not taken, though every item is in Table 1
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": ["Baseline"]}}),
        json.dumps({"answer": ["Baseline", "Ours", "Ours (no pretraining)", "Ours"]}),
    ])
    assert len(model.prompts) == 3 and json.loads(pred.answer)[2] == "Ours (no pretraining)"


def test_an_early_answer_that_copies_the_format_s_example_is_not_taken(table_paper):
    """The example value is often printed somewhere in the probe (Table 1 holds 74.9), so a copied example passed
    as found; it is not an early answer, and the turns begin."""
    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="x", question="In Table 1, what score does Baseline reach?",  # no column: for the model
                      answer_format="Your answer should be a Python float, e.g. 74.9.", pdf_ids=[pdf_id])
    model, pred = _neusym_answer(store_dir, q, [
        json.dumps({"answer": 74.9}),  # the example, and a value of the table: not taken
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 61.2}}),
        json.dumps({"answer": 61.2}),
    ])
    assert len(model.prompts) == 3 and pred.answer == "61.2"
    found, pred = _neusym_answer(store_dir, q, [json.dumps({"answer": 61.2})])  # not the example: taken at once
    assert len(found.prompts) == 1 and pred.answer == "61.2" and pred.actions == ["answer"]
    assert pred.citations and all(c.exists for c in pred.citations)
    assert pred.citations[0].source.startswith("tables.")  # the items that hold 61.2, the table first


def test_a_number_named_by_row_and_column_is_read_by_code_through_the_graph(table_paper):
    """On a real store: the cell reader answers before the model, which is never called, and the answer cites the
    table it was read from."""
    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="c", question="In Table 1, what Accuracy does Baseline reach?",
                      answer_format="Your answer should be a Python float.", pdf_ids=[pdf_id])
    model, pred = _neusym_answer(store_dir, q, [])
    assert model.prompts == [] and pred.answer == "61.2" and pred.reader == "cell"
    assert pred.citations and pred.citations[0].source.startswith("tables.") and pred.citations[0].exists


def test_the_code_readers_benchmark_scores_each_reader_s_answers_on_a_real_store(table_paper):
    from benchmarks.code_readers import check_readers
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.qa import QAItem

    store_dir, pdf_id = table_paper
    fmt = "Your answer should be a Python float."

    def row(uuid, question, gold):
        return QAItem(question=PaperQuestion(id=uuid, question=question, answer_format=fmt, pdf_ids=[pdf_id]),
                      evaluator={"eval_func": "eval_float_exact_match", "eval_kwargs": {"gold": gold}})
    rows = [row("a", "In Table 1, what Accuracy does Baseline reach?", 61.2),
            row("b", "In Table 1, what Accuracy does Ours reach?", 70.0),   # read right, scored against a wrong gold
            row("c", "In Table 1, what score does Ours reach?", 74.9),      # no column named: passes
            row("d", "What is the learning rate?", 0.1)]                    # no table: does not apply
    cell = check_readers(PaperStore(None, store_dir), rows)["cell"]
    assert {k: cell[k] for k in ("questions", "applies", "answers", "correct")} == {
        "questions": 4, "applies": 3, "answers": 2, "correct": 1}
    assert [(a["id"], a["answer"], a["score"]) for a in cell["answered"]] == [("a", "61.2", 1.0), ("b", "74.9", 0.0)]


# an ablation table: each method, then the method with a module added, under each dataset; a transfer header
ABLATION = Table(key="t3", paper_id="p1", page=4, caption="Table 3: Accuracy with and without the module.",
                 markdown=("|Dataset|Method|A→B|B→A|\n|---|---|---|---|\n|News|M1|0.70|0.60|\n|News|w/ X|0.75|0.66|\n"
                           "|News|M2|0.80|0.50|\n|News|w/ X|0.82|0.55|\n|Wiki|M1|0.40|0.30|\n|Wiki|w/ X|0.45|0.35|"))
SPLITS = Table(key="t4", paper_id="p1", page=4, caption="Table 4: Accuracy by split.",
               markdown=("||Set A||Set B||\n|---|---|---|---|---|\n||i.i.d.|4-C|i.i.d.|4-C|\n"
                         "|M1|80.0|50.0|70.0|40.0|\n|M2|85.0|55.0|75.0|45.0|"))
COUNTS = Table(key="t1", paper_id="p1", page=3, caption="Table 1: Statistics of the corpus.",
               markdown="|Item|Quantity|\n|---|---|\n|Number of utterances|1,500|\n|Male|600|\n|Female|900|")


def test_a_row_that_varies_the_row_above_is_told_apart_by_it_and_a_transfer_by_its_order():
    fmt = "Your answer should be a Python float rounded to 2 decimal places."
    reader, context = get_reader("cell"), Context(items=[ABLATION])

    def read(question):
        q = ask(question, fmt)
        found = reader.read(ReadRequest(question=q, context=context)) if reader.applies(q, context) else None
        return found and found.value
    # "w/ X" under M2 is M2 with X: said through its base row and its dataset
    assert read("In Table 3, what A→B accuracy does M2 with X (w/ X) reach on News?") == "0.82"
    assert read("In Table 3, what B→A accuracy does M1 with X (w/ X) reach on Wiki?") == "0.35"
    assert read("In Table 3, what A→B accuracy does w/ X reach?") is None  # which method's: not said
    # A→B and B→A say the same words; the one written in the question's order is meant
    assert read("In Table 3, what accuracy does M1 reach on News in the B→A setting?") == "0.60"


def test_a_header_of_names_that_start_with_a_number_stays_a_header():
    # "4-C" names a split: the second header row is no body row, so each column is named by both rows
    assert SPLITS.columns[1:] == ["Set A i.i.d.", "Set A 4-C", "Set B i.i.d.", "Set B 4-C"]
    assert [r[0] for r in SPLITS.rows] == ["M1", "M2"]
    q = ask("In Table 4, what accuracy does M2 reach on the 4-C split of Set B?",
            "Your answer should be a Python float rounded to 1 decimal place.")
    context = Context(items=[SPLITS])
    assert get_reader("cell").read(ReadRequest(question=q, context=context)).value == "45.0"


def test_the_gap_between_two_named_rows_is_worked_out_by_code():
    fmt = "Your answer should be a single integer (no units, no thousands separators)."
    reader, context = get_reader("gap"), Context(items=[COUNTS])

    read = reading(reader, context, fmt)
    # "Male" is no row said on its own inside "Female"; the only value column is the one meant; a third row said
    # would leave it to the model
    found = read("According to Table 1, how many more utterances come from female speakers than from male speakers?")
    assert (found.value, found.expression) == ("300", "abs(900 - 600)")
    assert read("According to Table 1, by how many utterances do male speakers fall short of female speakers?"
                ).value == "300"
    assert read("According to Table 1, by what percent do female utterances exceed male ones?") is None  # relative
    assert read("According to Table 1, how many more utterances are there than female ones?") is None    # one row
    assert not get_reader("cell").applies(ask("According to Table 1, how many more utterances come from female "
                                              "speakers than from male speakers?", fmt), context)  # a gap: not one cell


# the same methods under each setting (a label column), and each dataset split by the predictor used
BLOCKS = Table(key="t5", paper_id="p1", page=6, caption="Table 5: Accuracy in two settings.",
               markdown=("|Setting|Method|D1|D2|D3|Average|\n|---|---|---|---|---|---|\n"
                         "|Few-shot|A|50.0|60.0|70.0|60.0|\n|Few-shot|B|55.0|58.0|69.0|60.7|\n"
                         "|100 ×10|A|40.0|45.0|50.0|45.0|\n|100 ×10|B|39.0|46.0|49.0|44.7|"))
PREDICTORS = Table(key="t7", paper_id="p1", page=7, caption="Table 7: Accuracy by predictor.",
                   markdown=("|Dataset|D1||D2||\n|---|---|---|---|---|\n|Predictor|P-s|P-l|P-s|P-l|\n"
                             "|A|70.0|80.0|50.0|60.0|\n|B|71.0|79.0|49.0|61.0|"))


def test_rows_printed_under_each_setting_are_told_apart_by_the_setting_the_question_writes():
    name_fmt = "Your answer should be a single string, the dataset name exactly as printed in the table."
    reader = get_reader("wins")

    def which(question, table):
        q = ask(question, name_fmt)
        context = Context(items=[table])
        found = reader.read(ReadRequest(question=q, context=context)) if reader.applies(q, context) else None
        return found and found.value
    assert which("In Table 5, in the few-shot setting, on which of the three datasets does B score higher than "
                 "A?", BLOCKS) == "D1"                                   # the average column is no dataset
    assert which("In Table 5, in the 100×10 setting, on which of the three datasets does B score higher than A?",
                 BLOCKS) == "D2"                                         # the setting written without its space
    assert which("In Table 5, on which of the three datasets does B score higher than A?", BLOCKS) is None
    # "with P-l as the predictor": the P-l column of each dataset, named by the dataset
    assert which("In Table 7, with P-l as the predictor, on which of the two datasets does B score higher than "
                 "A?", PREDICTORS) == "D2"
    assert which("In Table 7, on which of the two datasets does B score higher than A?", PREDICTORS) is None


def test_an_answer_call_names_papers_by_alias_and_only_when_there_are_several():
    """Store keys and paper ids are some 25 tokens each and an answer call does not cite, so its tags give the page,
    the paper as "paper K" when the context holds several papers, and the title where it is shown; an agent's
    view keeps keys and ids (its SQL looks rows up by them)."""
    from evidex.agents.qa.render import paper_aliases, render_context
    from evidex.tools.paperstore.models import Note

    two = Context(items=[*CONTEXT.items, Passage(key="c9", paper_id="p2", page=5, text="Other."),
                         Note(paper_ids=["p1", "p2"], text="Both papers: Ann Bee.")], titles={"p2": "B Paper"})
    assert paper_aliases(two) == {"p1": "paper 1", "p2": "paper 2"} and paper_aliases(CONTEXT) == {}
    text = render_context(two, tags="aliases")
    assert text.startswith("[metadata, paper 1] title: A Paper |")
    assert "[paper 1, page 3] Table 1: Results." in text and '[paper 2 "B Paper", page 5] Other.' in text
    assert "[metadata, paper 1, paper 2] Both papers" in text and "p1" not in text and "c9" not in text
    agent = render_context(two)
    assert '[chunks.c9, p2 page 5, paper "B Paper"] Other.' in agent and "[metadata p1, p2] Both" in agent
    one_titled = Context(items=[CONTEXT.items[2]], titles={"p1": "A Paper"})
    assert render_context(one_titled, tags="aliases") == '[paper "A Paper", page 2] We evaluate on the pangolin benchmark.'


def test_the_model_reader_names_papers_by_id_when_the_settings_ask():
    """QA settings ``paper_ids`` (the qasper configs turn it on): the answer prompt tags each block with its paper's
    id, without store keys, and names the papers in a line, as before answer calls lost their ids; off (the
    default), the same call shows neither."""
    import json

    from evidex.agents.scripted import ScriptedChatModel

    def prompt(**settings) -> str:
        model = ScriptedChatModel(responses=[json.dumps({"answer": "pangolin"})])
        answer = get_reader("model").read(ReadRequest(question=ask("Which benchmark?"), context=CONTEXT, llm=model,
                                                      **settings))
        assert answer.value == "pangolin"
        return model.prompts[0]

    with_ids, without = prompt(paper_ids=True), prompt()
    assert "[p1 page 2] We evaluate on the pangolin benchmark." in with_ids and "[Papers]: " in with_ids
    assert "[metadata p1] title: A Paper" in with_ids and "chunks.c1" not in with_ids
    assert "[page 2] We evaluate on the pangolin benchmark." in without
    assert "p1" not in without and "[Papers]" not in without
    # the same prompt otherwise: only the papers line and the tags differ
    assert without == with_ids.replace("[p1 page", "[page").replace("[metadata p1]", "[metadata]").replace(
        next(line + "\n" for line in with_ids.splitlines() if line.startswith("[Papers]: ")), "")

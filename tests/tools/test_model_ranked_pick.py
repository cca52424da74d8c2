"""The model reader's ranked pick: for a question that picks one item by its highest or lowest value, the model
lists the items with their values and code picks the extreme, from the rows of the column the question names in
the table it names when code can read them (:func:`tools.qa.cells.column_candidates`), else from the model's
list. NeuSym's early answer accepts the pick only when every value is in the probe."""
from __future__ import annotations

import json

import pytest

from evidex.agents.readers.model import Candidate, answer_chars, answer_schema, ranked_pick, ranks, table_candidates
from evidex.tools.paperstore import Table
from evidex.tools.qa import PaperQuestion
from evidex.tools.qa.context import Context
from evidex.tools.qa.question import excluded_text, parse_question
from evidex.tools.text import operands_in

BEST = "In Table 1, which method has the highest Accuracy?"
NAME = "Your answer should be a single string, the method name exactly as printed in the table."


def ask(text: str, answer_format: str = NAME):
    return parse_question(PaperQuestion(id="q", question=text, answer_format=answer_format, pdf_ids=["p"]))


def _candidates(*pairs):
    return [Candidate(name=n, value=v) for n, v in pairs]


def _table(caption: str, markdown: str) -> Context:
    return Context(items=[Table(key="t", paper_id="p", page=4, caption=caption, markdown=markdown)])


def test_the_extreme_is_picked_by_code_not_by_the_model():
    q = ask(BEST)
    rows = _candidates(("ALTI", 67.4), ("LaBSE", 70.3), ("XNLI", 60.4))
    assert ranked_pick("highest", rows, q) == ("LaBSE", "max(67.4, 70.3, 60.4)")
    assert ranked_pick("lowest", rows, q) == ("XNLI", "min(67.4, 70.3, 60.4)")
    # whole numbers as papers print them (the operand check looks for "1293247", not "1293247.0"); negatives
    printed = _candidates(("A", 1293247.0), ("B", 320023), ("D", -1.23))
    assert ranked_pick("highest", printed, q) == ("A", "max(1293247, 320023, -1.23)")
    assert ranked_pick("lowest", printed, q)[0] == "D"
    assert ranked_pick("highest", _candidates(("A", 0.5), ("B", 0.5)), q)[0] == "A"  # a tie: the first listed
    # fewer than two named items: no pick, the model's own answer stands
    assert ranked_pick("highest", _candidates(("B", 0.7)), q) is None
    assert ranked_pick("highest", _candidates(("", 0.9), ("B", 0.7)), q) is None
    assert ranked_pick("highest", _candidates(("A", float("nan")), ("B", 0.7)), q) is None


def test_what_the_question_excludes_is_left_out_of_the_pick():
    """The model often keeps the rows the question excludes; code leaves them out."""
    baseline = "In Table 2 of the paper, which baseline (i.e. excluding ERRA) has the lowest RMSE (R) on TripAdvisor?"
    assert excluded_text(baseline).strip() == "ERRA" and ask(baseline).excluded.strip() == "ERRA"
    rows = _candidates(("DAML", 0.793), ("ERRA", 0.787), ("NRT", 0.797))
    assert ranked_pick("lowest", rows, ask(baseline))[0] == "DAML"
    assert ranked_pick("lowest", rows, ask("Which baseline has the lowest RMSE?"))[0] == "ERRA"
    metrics = ("In Table 1, excluding G-EVAL-3.5, G-EVAL-4 and their ablation rows (- Probs, - CoT, - Description), "
               "which metric achieves the highest average (AVG) Spearman correlation?")
    rows = _candidates(("UniEval", 0.474), ("G-EVAL-4", 0.514), ("- Probs", 0.502), ("G-EVAL", 0.40))
    assert ranked_pick("highest", rows, ask(metrics))[0] == "UniEval"
    kept = rows[1:] + _candidates(("BARTScore", 0.385))
    assert ranked_pick("highest", kept, ask(metrics))[0] == "G-EVAL"  # a name only the start of an excluded one stays
    assert excluded_text("Which model has the highest accuracy?") == ""
    # everything excluded but one: no pick
    assert ranked_pick("lowest", _candidates(("DAML", 0.793), ("ERRA", 0.787)), ask(baseline)) is None


HALLUCINATION = _table("Table 1: Hallucination detection quality.",
                       "||All|hall.|Fully|detached|\n|---|---|---|---|---|\n|Metric|AUC|P@R90|AUC|P@R90|\n"
                       "|ChrF|75.4|14.4|89.6|16.6|\n|ALTI|84.9|12.5|98.7|67.4|\n|GPTScore|0.434|–|0.449|–|\n"
                       "|LaBSE|91.7|25.9|98.5|70.3|\n|XNLI|90.9|24.1|98.7|60.4|")


def test_the_rows_and_their_values_are_read_from_the_table_the_question_names():
    """The model listed two of the rows (ALTI, XNLI) with another column's numbers; code lists every row under the
    one column the question words best ("P@R90 on fully detached": "detached P@R90", not "hall. P@R90"), a row
    with a dash there left out."""
    asked = ask("In Table 1 of the paper, which method achieves the highest P@R90 on fully detached hallucinations?")
    rows = table_candidates(asked, HALLUCINATION)
    assert [(c.name, c.value) for c in rows] == [("ChrF", 16.6), ("ALTI", 67.4), ("LaBSE", 70.3), ("XNLI", 60.4)]
    assert ranked_pick("highest", rows, asked)[0] == "LaBSE"
    # Greek letters tell columns apart ("AVG ρ" from "AVG τ"); a group label's rows are named by their own cell
    avg = _table("Table 3: Correlations.", "||Coherence||AVG||\n|---|---|---|---|---|\n||ρ|τ|ρ|τ|\n"
                 "|BARTScore|0.448|0.342|0.385|0.305|\n|UniEval|0.575|0.442|0.474|0.377|\n"
                 "|G-EVAL-4|0.582|0.457|0.514|0.418|\n|- Probs|0.560|0.472|0.502|0.446|")
    spearman = ask("In Table 3, excluding G-EVAL-4 and its ablation rows (- Probs), which metric has the highest AVG ρ?")
    assert ranked_pick("highest", table_candidates(spearman, avg), spearman)[0] == "UniEval"
    # not clear which table or column: the model's own list stands
    assert table_candidates(ask(asked.text.replace("Table 1", "Table 2")), HALLUCINATION) == []
    assert table_candidates(ask("In Table 1, which method has the highest score?"), HALLUCINATION) == []
    assert table_candidates(ask("Which method has the highest P@R90 on fully detached ones?"), HALLUCINATION) == []


def test_a_label_centred_over_its_group_names_the_whole_group():
    """A PDF centres "SST2" over the middle of its three columns; carried right, the group's first column went
    unnamed and MNLI's first column was read as SST2's ACC."""
    from evidex.tools.paperstore.table_text import column_names

    decompx = _table("Table 1: Accuracy and AOPC.",
                     "|||SST2|||MNLI||\n|---|---|---|---|---|---|---|\n||ACC↓|AOPC↑|PRED↑|ACC↓|AOPC↑|PRED↑|\n"
                     "|GlobEnc|67.14|0.307|72.36|48.07|0.498|70.43|\n|ALTI|57.65|0.416|88.30|45.89|0.515|74.24|\n"
                     "|Integrated Gradients|64.48|0.340|64.56|40.80|0.579|73.94|\n"
                     "|DecompX|40.80|0.627|92.20|32.64|0.703|80.95|")
    assert decompx.tables[0].columns[1:4] == ["SST2 ACC↓", "SST2 AOPC↑", "SST2 PRED↑"]
    asked = ask("In Table 1, which method other than DecompX has the lowest Accuracy (ACC) on SST2?")
    assert ranked_pick("lowest", table_candidates(asked, decompx), asked)[0] == "ALTI"
    assert column_names([["", "Yelp", "", "Amazon", ""], ["Model", "R", "M", "R", "M"]], 5)[1:] == [
        "Yelp R", "Yelp M", "Amazon R", "Amazon M"]  # a label at its group's left, as before
    assert column_names([["", "A", "B"], ["", "x", "y"]], 3)[1:] == ["A x", "B y"]  # no repeated group: carried


def test_a_section_the_question_names_and_size_suffixes_rank_right():
    """"Which Conversational Search dataset has the largest # Clar. Q": the rows under that section row only, and
    586K above 877."""
    acq = _table("Table 1: ACQ datasets.",
                 "|Dataset|# Domains|Scale|# Clar. Q|\n|---|---|---|---|\n||||Conversational Search|\n"
                 "|ClariT|-|108K|260K|\n|MIMICS|-|462K|586K|\n|MSDialog|12|35K|877|\n"
                 "||||Conversational Question Answering|\n|ClarQ|173|2M|2M|")
    asked = ask("In Table 1, which Conversational Search dataset has the largest number of clarification questions "
                "(# Clar. Q)?")
    rows = table_candidates(asked, acq)
    assert [(c.name, c.value) for c in rows] == [("ClariT", 260e3), ("MIMICS", 586e3), ("MSDialog", 877)]
    assert ranked_pick("highest", rows, asked)[0] == "MIMICS"
    every = ask("In Table 1, which dataset has the largest number of clarification questions (# Clar. Q)?")
    assert ranked_pick("highest", table_candidates(every, acq), every)[0] == "ClarQ"  # 2M, no section named


def test_the_pick_is_the_name_without_the_reference_printed_after_it():
    q = ask(BEST)
    rows = _candidates(("GlobEnc (Modarressi et al., 2022)", 67.14), ("ALTI (Ferrando et al., 2022)", 57.65),
                       ("GPT-3 (175B)", 70.0), ("Ours [12]", 80.0))
    assert ranked_pick("lowest", rows, q)[0] == "ALTI"
    assert ranked_pick("highest", rows, q)[0] == "Ours"
    assert ranked_pick("highest", rows[:3], q)[0] == "GPT-3 (175B)"  # a size, not a reference: kept


def test_a_candidate_s_value_is_a_number_under_the_grammar():
    import pydantic

    with pytest.raises(pydantic.ValidationError):
        Candidate(name="ALTI", value="P@R90")  # the column's name, as the model once copied it


def test_only_a_superlative_question_with_a_name_format_is_ranked():
    assert ranks(ask(BEST)) and ranks(ask("Which baseline has the lowest RMSE?"))
    assert not ranks(ask("Which method does the paper propose?"))
    assert not ranks(ask(BEST, "Your answer should be a Python float."))  # the value itself, not a name
    assert not ranks(ask(BEST, "Your answer should be a Python list of strings."))
    schema = answer_schema(NAME, True)
    assert list(schema.model_fields) == ["direction", "candidates", "answer"]  # written before the name they decide
    assert schema.model_json_schema()["properties"]["candidates"]["minItems"] == 2  # a comparison, under the grammar
    assert list(answer_schema(NAME).model_fields) == ["answer"]  # not ranked: the answer alone


def test_a_text_answer_is_capped_so_its_reply_closes_within_the_token_budget():
    """A reply cut off at the token limit is not JSON and fails the call (QASPER dev: an item listing a system's
    functions failed twice and scored 0): the grammar closes the answer string at a cap the budget can hold."""
    assert answer_chars(200) == 3 * (200 - 16) and answer_chars(None) == answer_chars(0) == 2000
    assert answer_chars(10_000) == 2000 and answer_chars(5) == 16
    capped = answer_schema(NAME, False, answer_chars(200)).model_json_schema()["properties"]["answer"]
    assert capped["maxLength"] == 552  # 184 tokens even at 3 characters a token, and 16 for the JSON around it
    assert "maxLength" not in answer_schema("Your answer should be a Python int.", False, 552).model_json_schema()[
        "properties"]["answer"]  # a number needs no cap


def test_a_superlative_is_any_of_its_words():
    assert ask("Which dataset has the LARGEST number of questions?").says_superlative
    assert ask("Which has the highest recall but the lowest precision?").says_superlative
    assert not ask("Which method is best?").says_superlative


def test_the_pick_is_grounded_on_the_values_it_was_picked_from():
    ctx = "|ChrF|16.6|\n|ALTI|67.4|\n|LaBSE|70.3|"
    assert operands_in("max(16.6, 67.4, 70.3)", ctx) and not operands_in("max(16.6, 67.4, 71.3)", ctx)
    # counts printed with a suffix, which the grammar-typed values write out
    sizes = "|MIMICS|586K|\n|ClariT|260k|\n|MSDialog|877|\n|Big|1.2M| latency 5 ms"
    assert operands_in("max(586000, 260000, 877, 1200000)", sizes) and operands_in("max(586, 877)", sizes)
    assert not operands_in("max(5000000, 877)", sizes)  # "5 ms" is five milliseconds


def _reply(answer: str, *pairs, direction: str = "highest") -> str:
    return json.dumps({"direction": direction, "candidates": [{"name": n, "value": v} for n, v in pairs],
                       "answer": answer})


def _graph(llm, store_dir: str, *settings: str):
    from evidex.graphs.qa.neusym import build_neusym
    from evidex.graphs.tasks import config_for_task

    return build_neusym(llm, config_for_task("airqa", [f"store.store_dir={store_dir}", "qa.max_turns=2", *settings]))


def test_neusym_early_answer_picks_the_extreme_when_the_values_are_in_the_probe(table_paper):
    from evidex.agents.scripted import ScriptedChatModel

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="b", question=BEST, answer_format=NAME, pdf_ids=[pdf_id])
    # the question names the table and its column: code reads the rows and picks, whatever values the model listed
    model = ScriptedChatModel(responses=[_reply("Baseline", ("Baseline", 99.0), ("Ours", 1.0))])
    pred = _graph(model, store_dir).invoke({"input": q})["prediction"]
    assert pred.answer == "Ours" and pred.actions == ["answer"] and len(model.prompts) == 1
    assert pred.reader == "model" and [c.source.split(".")[0] for c in pred.citations][0] == "tables"
    lowest = q.model_copy(update={"question": BEST.replace("highest", "lowest")})
    model = ScriptedChatModel(responses=[_reply("Ours", ("Baseline", 61.2), ("Ours", 74.9), direction="lowest")])
    pred = _graph(model, store_dir).invoke({"input": lowest})["prediction"]
    assert pred.answer == "Baseline" and len(model.prompts) == 1
    # the question says "lowest": its word sets the extreme, not the model's "highest" (which it said for 2 of 34
    # such questions in the recorded runs)
    assert parse_question(lowest).extreme == "lowest" and parse_question(q).extreme == "highest"
    model = ScriptedChatModel(responses=[_reply("Ours", ("Baseline", 61.2), ("Ours", 74.9), direction="highest")])
    assert _graph(model, store_dir).invoke({"input": lowest})["prediction"].answer == "Baseline"

    # both directions said: the model lists the rows right and then names the wrong one; the pick is Ours
    both = q.model_copy(update={"question": BEST + " (the lowest error)"})
    model = ScriptedChatModel(responses=[_reply("Baseline", ("Baseline", 61.2), ("Ours", 74.9))])
    pred = _graph(model, store_dir).invoke({"input": both})["prediction"]
    assert pred.answer == "Ours" and pred.actions == ["answer"] and pred.reader == "model"
    assert '"candidates"' in model.prompts[0]

    # made-up values for a question naming no table: not grounded, the turns begin (and their answer is ranked too)
    unnamed = q.model_copy(update={"question": BEST.replace("In Table 1, which", "Which")})
    made_up = ScriptedChatModel(responses=[
        _reply("Ours", ("Baseline", 61.2), ("Ours", 80.1)),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": "Ours"}}),
        _reply("Ours", ("Baseline", 81.2), ("Ours", 74.9)),
    ])
    pred = _graph(made_up, store_dir).invoke({"input": unnamed})["prediction"]
    assert pred.answer == "Baseline" and len(made_up.prompts) == 3 and pred.actions == ["answer"]


def test_classic_rag_ranks_and_keeps_its_own_answer_without_two_values(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.baselines import build_baseline
    from evidex.graphs.tasks import load_config

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="b", question=BEST, answer_format=NAME, pdf_ids=[pdf_id])
    cfg = load_config("airqa/classic_rag", [f"store.store_dir={store_dir}", "qa.retrieval_mode=bm25"])
    for reply, expected in ((_reply("Baseline", ("Baseline", 61.2), ("Ours", 74.9)), "Ours"),
                            (_reply("Baseline", ("", 74.9), ("Ours", 61.2)), "Baseline")):
        model = ScriptedChatModel(responses=[reply])
        pred = build_baseline(model, cfg).invoke({"input": q})["prediction"]
        assert pred.answer == expected and pred.reader == "model" and '"candidates"' in model.prompts[0]


TEMPLATES = _table("Table 1: Perplexity and accuracy of four templates.",
                   "||[very/not] fine.||[very/not] good.||[so/less] fine.||[red/blue] dog.||\n"
                   "|---|---|---|---|---|---|---|---|---|\n|Dataset|||||||||\n"
                   "||PPL|Acc.(%)|PPL|Acc.(%)|PPL|Acc.(%)|PPL|Acc.(%)|\n"
                   "|SET-A|24.61|57.12|40.93|50.98|28.80|56.68|71.01|51.31|\n"
                   "|SET-B|16.44|67.80|23.34|53.15|19.68|69.72|36.07|48.49|")


def test_things_printed_as_columns_are_ranked_in_the_row_the_question_names():
    """"Which of the four templates gives the highest accuracy on SET-B": the templates are column groups over "PPL |
    Acc.(%)", SET-B a row. Code ranks the groups by their "Acc." cell in that row ("accuracy" says "Acc."), named by
    the upper header; the model had listed the first template twice, with the wrong row's numbers."""
    asked = ask("In Table 1, which of the four templates gives the highest zero-shot accuracy on the SET-B dataset?",
                "Your answer should be a short string: the template as written in Table 1.")
    rows = [(c.name, c.value) for c in table_candidates(asked, TEMPLATES)]
    assert rows == [("[very/not] fine.", 67.8), ("[very/not] good.", 53.15), ("[so/less] fine.", 69.72),
                    ("[red/blue] dog.", 48.49)]
    assert ranked_pick("highest", table_candidates(asked, TEMPLATES), asked)[0] == "[so/less] fine."
    lowest_ppl = ask("In Table 1, which of the four templates has the lowest PPL on SET-A?")
    assert [c.value for c in table_candidates(lowest_ppl, TEMPLATES)] == [24.61, 40.93, 28.80, 71.01]
    # not said how many it picks over, or a count the columns do not hold, or no one row said: nothing from code
    for text in ("In Table 1, which template gives the highest accuracy on the SET-B dataset?",
                 "In Table 1, which of the three templates gives the highest accuracy on the SET-B dataset?",
                 "In Table 1, which of the four templates gives the highest accuracy?",
                 "In Table 1, which of the four templates gives the highest score on the SET-B dataset?"):
        assert table_candidates(ask(text), TEMPLATES) == [], text

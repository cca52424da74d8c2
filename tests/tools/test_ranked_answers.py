"""Ranked answers (qa.ranked_answers): a question that picks one item by its highest or lowest value has the model
list the items with their values, and code picks the extreme; NeuSym's early answer accepts the pick only when
every value is in the probe."""
from __future__ import annotations

import json

import pytest

from evidex.agents.paper_answer import Candidate, answer_schema, excluded_text, ranked_pick, ranks
from evidex.tools.text import operands_in

BEST = "In Table 1, which method has the highest Accuracy?"
NAME = "Your answer should be a single string, the method name exactly as printed in the table."


def _candidates(*pairs):
    return [Candidate(name=n, value=v) for n, v in pairs]


def test_the_extreme_is_picked_by_code_not_by_the_model():
    rows = _candidates(("ALTI", 67.4), ("LaBSE", 70.3), ("XNLI", 60.4))
    assert ranked_pick("highest", rows) == ("LaBSE", "max(67.4, 70.3, 60.4)")
    assert ranked_pick("lowest", rows) == ("XNLI", "min(67.4, 70.3, 60.4)")
    # whole numbers as papers print them (the operand check looks for "1293247", not "1293247.0"); negatives
    printed = _candidates(("A", 1293247.0), ("B", 320023), ("D", -1.23))
    assert ranked_pick("highest", printed) == ("A", "max(1293247, 320023, -1.23)")
    assert ranked_pick("lowest", printed)[0] == "D"
    assert ranked_pick("highest", _candidates(("A", 0.5), ("B", 0.5)))[0] == "A"  # a tie: the first listed
    # fewer than two named items: no pick, the model's own answer stands
    assert ranked_pick("highest", _candidates(("B", 0.7))) is None
    assert ranked_pick("highest", _candidates(("", 0.9), ("B", 0.7))) is None
    assert ranked_pick("highest", _candidates(("A", float("nan")), ("B", 0.7))) is None


def test_what_the_question_excludes_is_left_out_of_the_pick():
    """The model often keeps the rows the question excludes; code leaves them out."""
    erra = "In Table 2 of the paper, which baseline (i.e. excluding ERRA) has the lowest RMSE (R) on TripAdvisor?"
    assert excluded_text(erra).strip() == "ERRA"
    rows = _candidates(("DAML", 0.793), ("ERRA", 0.787), ("NRT", 0.797))
    assert ranked_pick("lowest", rows, erra)[0] == "DAML" and ranked_pick("lowest", rows)[0] == "ERRA"
    geval = ("In Table 1, excluding G-EVAL-3.5, G-EVAL-4 and their ablation rows (- Probs, - CoT, - Description), "
             "which metric achieves the highest average (AVG) Spearman correlation?")
    rows = _candidates(("UniEval", 0.474), ("G-EVAL-4", 0.514), ("- Probs", 0.502), ("G-EVAL", 0.40))
    assert ranked_pick("highest", rows, geval)[0] == "UniEval"
    kept = rows[1:] + _candidates(("BARTScore", 0.385))
    assert ranked_pick("highest", kept, geval)[0] == "G-EVAL"  # a name only the start of an excluded one stays
    assert excluded_text("Which model has the highest accuracy?") == ""
    # everything excluded but one: no pick
    assert ranked_pick("lowest", _candidates(("DAML", 0.793), ("ERRA", 0.787)), erra) is None


HALLUCINATION_TABLE = """[tables.t1, p page 4] Table 1: Hallucination detection quality.
||All|hall.|Fully|detached|
|---|---|---|---|---|
|Metric|AUC|P@R90|AUC|P@R90|
|ChrF|75.4|14.4|89.6|16.6|
|ALTI|84.9|12.5|98.7|67.4|
|GPTScore|0.434|–|0.449|–|
|LaBSE|91.7|25.9|98.5|70.3|
|XNLI|90.9|24.1|98.7|60.4|
"""


def test_the_rows_and_their_values_are_read_from_the_table_the_question_names():
    """The model listed two of the rows (ALTI, XNLI) with another column's numbers; code lists every row under the
    one column the question words best ("P@R90 on fully detached": "detached P@R90", not "hall. P@R90"), a row
    with a dash there left out."""
    from evidex.agents.paper_answer import table_candidates

    asked = "In Table 1 of the paper, which method achieves the highest P@R90 on fully detached hallucinations?"
    rows = table_candidates(asked, HALLUCINATION_TABLE)
    assert [(c.name, c.value) for c in rows] == [("ChrF", 16.6), ("ALTI", 67.4), ("LaBSE", 70.3), ("XNLI", 60.4)]
    assert ranked_pick("highest", rows, asked)[0] == "LaBSE"
    # Greek letters tell columns apart ("AVG ρ" from "AVG τ"); a group label's rows are named by their own cell
    avg = ("[tables.t2, p page 4] Table 3: Correlations.\n||Coherence||AVG||\n|---|---|---|---|---|\n"
           "||ρ|τ|ρ|τ|\n|BARTScore|0.448|0.342|0.385|0.305|\n|UniEval|0.575|0.442|0.474|0.377|\n|G-EVAL-4|0.582|0.457|0.514|0.418|\n"
           "|- Probs|0.560|0.472|0.502|0.446|\n")
    spearman = "In Table 3, excluding G-EVAL-4 and its ablation rows (- Probs), which metric has the highest AVG ρ?"
    assert ranked_pick("highest", table_candidates(spearman, avg), spearman)[0] == "UniEval"
    # not clear which table or column: the model's own list stands
    assert table_candidates(asked.replace("Table 1", "Table 2"), HALLUCINATION_TABLE) == []
    assert table_candidates("In Table 1, which method has the highest score?", HALLUCINATION_TABLE) == []
    assert table_candidates("Which method has the highest P@R90 on fully detached ones?", HALLUCINATION_TABLE) == []


def test_a_label_centred_over_its_group_names_the_whole_group():
    """A PDF centres "SST2" over the middle of its three columns; carried right, the group's first column went
    unnamed and MNLI's first column was read as SST2's ACC."""
    from evidex.agents.paper_answer import table_candidates

    decompx = ("[tables.t, p page 7] Table 1: Accuracy and AOPC.\n|||SST2|||MNLI||\n|---|---|---|---|---|---|---|\n"
               "||ACC↓|AOPC↑|PRED↑|ACC↓|AOPC↑|PRED↑|\n|GlobEnc|67.14|0.307|72.36|48.07|0.498|70.43|\n"
               "|ALTI|57.65|0.416|88.30|45.89|0.515|74.24|\n|Integrated Gradients|64.48|0.340|64.56|40.80|0.579|73.94|\n"
               "|DecompX|40.80|0.627|92.20|32.64|0.703|80.95|\n")
    asked = "In Table 1, which method other than DecompX has the lowest Accuracy (ACC) on SST2?"
    assert ranked_pick("lowest", table_candidates(asked, decompx), asked)[0] == "ALTI"
    from evidex.tools.table_records import column_names

    assert column_names([["", "Yelp", "", "Amazon", ""], ["Model", "R", "M", "R", "M"]], 5)[1:] == [
        "Yelp R", "Yelp M", "Amazon R", "Amazon M"]  # a label at its group's left, as before
    assert column_names([["", "A", "B"], ["", "x", "y"]], 3)[1:] == ["A x", "B y"]  # no repeated group: carried


def test_a_section_the_question_names_and_size_suffixes_rank_right():
    """"Which Conversational Search dataset has the largest # Clar. Q": the rows under that section row only, and
    586K above 877."""
    from evidex.agents.paper_answer import table_candidates

    acq = ("[tables.t, p page 2] Table 1: ACQ datasets.\n|Dataset|# Domains|Scale|# Clar. Q|\n|---|---|---|---|\n"
           "||||Conversational Search|\n|ClariT|-|108K|260K|\n|MIMICS|-|462K|586K|\n|MSDialog|12|35K|877|\n"
           "||||Conversational Question Answering|\n|ClarQ|173|2M|2M|\n")
    asked = "In Table 1, which Conversational Search dataset has the largest number of clarification questions (# Clar. Q)?"
    rows = table_candidates(asked, acq)
    assert [(c.name, c.value) for c in rows] == [("ClariT", 260e3), ("MIMICS", 586e3), ("MSDialog", 877)]
    assert ranked_pick("highest", rows, asked)[0] == "MIMICS"
    every = "In Table 1, which dataset has the largest number of clarification questions (# Clar. Q)?"
    assert ranked_pick("highest", table_candidates(every, acq), every)[0] == "ClarQ"  # 2M, no section named


def test_the_pick_is_the_name_without_the_reference_printed_after_it():
    rows = _candidates(("GlobEnc (Modarressi et al., 2022)", 67.14), ("ALTI (Ferrando et al., 2022)", 57.65),
                       ("GPT-3 (175B)", 70.0), ("Ours [12]", 80.0))
    assert ranked_pick("lowest", rows)[0] == "ALTI"
    assert ranked_pick("highest", rows)[0] == "Ours"
    assert ranked_pick("highest", rows[:3])[0] == "GPT-3 (175B)"  # a size, not a reference: kept


def test_a_candidate_s_value_is_a_number_under_the_grammar():
    import pydantic

    with pytest.raises(pydantic.ValidationError):
        Candidate(name="ALTI", value="P@R90")  # the column's name, as the model once copied it


def test_only_a_superlative_question_with_a_name_format_is_ranked():
    assert ranks(BEST, NAME, True) and ranks("Which baseline has the lowest RMSE?", NAME, True)
    assert not ranks(BEST, NAME, False)  # off
    assert not ranks("Which method does the paper propose?", NAME, True)
    assert not ranks(BEST, "Your answer should be a Python float.", True)  # the value itself, not a name
    assert not ranks(BEST, "Your answer should be a Python list of strings.", True)
    schema = answer_schema(NAME, True, False, False, True)
    assert list(schema.model_fields) == ["direction", "candidates", "answer"]  # written before the name they decide
    assert schema.model_json_schema()["properties"]["candidates"]["minItems"] == 2  # a comparison, under the grammar


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


def test_neusym_early_answer_picks_the_extreme_when_the_values_are_in_the_probe(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import NeuSymSettings, StoreTools, build_neusym
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="b", question=BEST, answer_format=NAME, pdf_ids=[pdf_id])
    settings = NeuSymSettings(store_dir=store_dir, warm_start="multiview", early_answer=True, answer_step="evidence",
                              max_turns=2, ranked_answers=True)
    # the question names the table and its column and says "highest": code reads the rows and picks, no model call
    silent = ScriptedChatModel(responses=[])
    pred = build_neusym(silent, settings, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "Ours" and pred.actions == ["answer"] and silent.prompts == []
    assert any(c.source.startswith("tables.") for c in pred.citations)
    lowest = q.model_copy(update={"question": BEST.replace("highest", "lowest")})
    pred = build_neusym(silent, settings, StoreTools(None, store_dir)).invoke({"input": lowest})["prediction"]
    assert pred.answer == "Baseline" and silent.prompts == []

    # both directions said: the model lists the rows right and then names the wrong one; the pick is Ours
    both = q.model_copy(update={"question": BEST + " (the lowest error)"})
    model = ScriptedChatModel(responses=[_reply("Baseline", ("Baseline", 61.2), ("Ours", 74.9))])
    pred = build_neusym(model, settings, StoreTools(None, store_dir)).invoke({"input": both})["prediction"]
    assert pred.answer == "Ours" and pred.actions == ["answer"]
    assert '"candidates"' in model.prompts[0]

    # made-up values for a question naming no table: not grounded, the turns begin (and their answer is ranked too)
    unnamed = q.model_copy(update={"question": BEST.replace("In Table 1, which", "Which")})
    made_up = ScriptedChatModel(responses=[
        _reply("Ours", ("Baseline", 61.2), ("Ours", 80.1)),
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": "Ours"}}),
        _reply("Ours", ("Baseline", 61.2), ("Ours", 74.9), direction="lowest"),
    ])
    pred = build_neusym(made_up, settings, StoreTools(None, store_dir)).invoke({"input": unnamed})["prediction"]
    assert pred.answer == "Baseline" and len(made_up.prompts) == 3

    # off (the default), the answer is the model's own and no candidates are asked for
    plain = ScriptedChatModel(responses=[json.dumps({"answer": "Baseline"})])
    off = settings.model_copy(update={"ranked_answers": False})
    pred = build_neusym(plain, off, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]
    assert pred.answer == "Baseline" and '"candidates"' not in plain.prompts[0]


def _neusym_answer(store_dir: str, q, replies: list[str], **settings):
    """NeuSym (multiview probe, early answer, evidence answer step, two turns) answering ``q`` with scripted
    ``replies``: the model, for the prompts it was sent, and the prediction."""
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.neusym import NeuSymSettings, StoreTools, build_neusym

    config = NeuSymSettings(store_dir=store_dir, warm_start="multiview", early_answer=True, answer_step="evidence",
                            max_turns=2, **settings)
    model = ScriptedChatModel(responses=replies)
    return model, build_neusym(model, config, StoreTools(None, store_dir)).invoke({"input": q})["prediction"]


def test_an_early_answer_the_question_excludes_is_not_taken(table_paper):
    """G-Eval on the test split: the model listed only the two rows the question excludes and answered one of them;
    with no pick left its own answer stood and, being printed in the table, passed as grounded."""
    from evidex.agents.paper_answer import excluded_answer
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    question = "In Table 1, excluding Ours, which method has the highest Accuracy?"
    assert excluded_answer("Ours", question) and not excluded_answer("Baseline", question)
    assert not excluded_answer("Ours", BEST) and not excluded_answer("", question)
    q = PaperQuestion(id="x", question=question, answer_format=NAME, pdf_ids=[pdf_id])
    model, pred = _neusym_answer(store_dir, q, [
        _reply("Ours", ("Ours", 74.9), ("Ours (no pretraining)", 70.0)),  # nothing left to pick: "Ours" stands
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": "Baseline"}}),
        _reply("Baseline", ("Baseline", 61.2), ("Ours", 74.9)),
    ], ranked_answers=True)
    assert len(model.prompts) == 3 and pred.answer == "Baseline"


def test_classic_rag_ranks_and_keeps_its_own_answer_without_two_values(table_paper):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.graphs.qa.baselines import BaselineSettings, build_baseline
    from evidex.graphs.qa.store_tools import StoreTools
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="b", question=BEST, answer_format=NAME, pdf_ids=[pdf_id])
    settings = BaselineSettings(method="classic_rag", retrieval_mode="bm25", ranked_answers=True)
    for reply, expected in ((_reply("Baseline", ("Baseline", 61.2), ("Ours", 74.9)), "Ours"),
                            (_reply("Baseline", ("", 74.9), ("Ours", 61.2)), "Baseline")):
        model = ScriptedChatModel(responses=[reply])
        graph = build_baseline(model, settings, StoreTools(None, store_dir))
        assert graph.invoke({"input": q})["prediction"].answer == expected


def test_an_early_list_answer_stuck_on_one_item_is_not_taken(table_paper):
    """Chain-of-Thought on the test split: asked for five benchmarks, the model wrote "GSM8K" and then "AQuA" four
    times; every item is in the probe, so the list passed as found. A list ending in one text item three times over
    is not an early answer (the turns begin); repeated numbers can be real values and stay."""
    from evidex.agents.paper_answer import looped_list
    from evidex.tools.qa import PaperQuestion

    assert looped_list('["GSM8K", "AQuA", "AQuA", "aqua ", "AQuA"]')
    assert not looped_list('["GSM8K", "AQuA", "AQuA"]'[:-1] + ', "SVAMP"]') and not looped_list('["A", "A"]')
    assert not looped_list("[0.5, 0.5, 0.5]") and not looped_list("AQuA AQuA AQuA") and not looped_list("")
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
    from evidex.tools.qa import PaperQuestion

    store_dir, pdf_id = table_paper
    q = PaperQuestion(id="x", question="In Table 1, what Accuracy does Baseline reach?",
                      answer_format="Your answer should be a Python float, e.g. 74.9.", pdf_ids=[pdf_id])
    model, pred = _neusym_answer(store_dir, q, [
        json.dumps({"answer": 74.9}),  # the example, and a value of the table: not taken
        json.dumps({"step": {"thought": "done", "action": "answer", "answer": 61.2}}),
        json.dumps({"answer": 61.2}),
    ])
    assert len(model.prompts) == 3 and pred.answer == "61.2"
    found, pred = _neusym_answer(store_dir, q, [json.dumps({"answer": 61.2})])  # not the example: taken at once
    assert len(found.prompts) == 1 and pred.answer == "61.2"


def test_the_direction_is_the_question_s_one_kind_of_superlative():
    from evidex.agents.paper_answer import asked_direction

    assert asked_direction("Which method has the highest P@R90?") == "highest"
    assert asked_direction("Which dataset has the LARGEST number of questions?") == "highest"
    assert asked_direction("Which method other than DecompX has the lowest ACC?") == "lowest"
    assert asked_direction("Which has the fewest parameters and the smallest error?") == "lowest"
    assert asked_direction("Which has the highest recall but the lowest precision?") is None
    assert asked_direction("Which method is best?") is None

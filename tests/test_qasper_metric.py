"""The official QASPER metric (evaluators.qasper) on hand cases, the acceptance check on the dev file (the constant
"Unanswerable" baseline scores Answer-F1 13.50 and Evidence-F1 17.21, as the official evaluator does), and the CLI."""
from __future__ import annotations

import json

import pytest

from evidex.evaluators.qasper import (Prediction, constant_predictions, evaluate, exact_match_score, item_metrics,
                                      main, normalize_answer, paragraph_f1_score, reference_of, score_question,
                                      token_f1_score)
from evidex.tools.qasper_data import QasperAnswer, load_qasper
from qasper_tiny import DATA, INTRO, MODEL, RESULTS, write_official

DEV = "qasper/qasper-dev-v0.3.reconstructed.json"


def ans(**kw) -> QasperAnswer:
    return QasperAnswer(**kw)


def test_squad_normalisation_deletes_punctuation_and_articles():
    assert normalize_answer("The  Quick, brown-fox!") == "quick brownfox"  # deleted, not replaced by a space
    assert normalize_answer("An apple a day") == "apple day"
    assert normalize_answer("Theory") == "theory"  # whole words only


def test_token_f1_is_multiset_overlap():
    assert token_f1_score("BERT and BERT", "BERT") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert token_f1_score("a b c", "c b a") == 1.0
    assert token_f1_score("", "") == 0.0 and token_f1_score("x", "y") == 0.0  # empty prediction scores 0
    assert token_f1_score("The", "a") == 0.0  # both normalise to nothing
    assert exact_match_score("The BERT.", "bert") == 1.0


def test_paragraph_f1_uses_exact_strings_and_list_lengths():
    assert paragraph_f1_score([], []) == 1.0
    assert paragraph_f1_score(["p"], []) == 0.0 and paragraph_f1_score([], ["p"]) == 0.0
    assert paragraph_f1_score(["p", "q"], ["p"]) == pytest.approx(2 / 3)
    assert paragraph_f1_score(["p "], ["p"]) == 0.0  # exact equality, no normalisation
    # the official script divides by the list lengths, duplicates included
    assert paragraph_f1_score(["p", "p"], ["p"]) == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_reference_order_and_text_evidence_only():
    assert reference_of(ans(unanswerable=True, extractive_spans=["x"])).answer == "Unanswerable"
    ref = reference_of(ans(extractive_spans=["a", "b"], free_form_answer="c", evidence=["e", "FLOAT SELECTED: T1"]))
    assert (ref.answer, ref.type, ref.evidence) == ("a, b", "extractive", ["e", "FLOAT SELECTED: T1"])
    assert reference_of(ans(free_form_answer="c"), text_evidence_only=True).type == "abstractive"
    assert reference_of(ans(yes_no=False)).answer == "No" and reference_of(ans(yes_no=True)).type == "boolean"
    assert reference_of(ans(extractive_spans=["a"], evidence=["e", "FLOAT SELECTED: T1"]),
                        text_evidence_only=True).evidence == ["e"]


def test_max_over_references_and_the_bin_of_the_best_match():
    answers = [ans(extractive_spans=["ResNet-50"], evidence=[MODEL]), ans(yes_no=True, evidence=[MODEL]),
               ans(unanswerable=True)]
    s = score_question("Yes", [MODEL], answers)
    assert (s.answer_f1, s.answer_type, s.evidence_f1) == (1.0, "boolean", 1.0)
    assert s.yes_no_correct == 1.0 and not s.predicted_unanswerable and s.gold_unanswerable
    s = score_question("Unanswerable", [], answers)
    assert (s.answer_f1, s.answer_type, s.evidence_f1) == (1.0, "none", 1.0)  # [] matches the unanswerable reference
    tie = score_question("something else", [], [ans(free_form_answer="x"), ans(extractive_spans=["y"])])
    assert tie.answer_f1 == 0.0 and tie.answer_type == "abstractive"  # ties: the first annotator
    m = item_metrics(score_question("Unanswerable", [], answers))
    assert m["answer_f1_none"] == 1.0 and "answer_f1_boolean" not in m
    assert (m["unanswerable_tp"], m["unanswerable_fp"], m["unanswerable_fn"]) == (1.0, 0.0, 0.0)


def test_corpus_means_count_missing_predictions_as_zero(tmp_path):
    papers = load_qasper(write_official(tmp_path))
    gold = {q.question_id: q.answers for p in papers for q in p.qas}
    preds = {"q-data": Prediction(question_id="q-data", predicted_answer="PangoSet", predicted_evidence=[DATA]),
             "q-resnet": Prediction(question_id="q-resnet", predicted_answer="No", predicted_evidence=[MODEL]),
             "q-f1": Prediction(question_id="q-f1", predicted_answer="91.2 F1", predicted_evidence=[RESULTS])}
    r = evaluate(gold, preds)
    assert r["missing_predictions"] == 2 and r["questions"] == 5
    assert r["answer_f1"] == pytest.approx(100 * 2 / 5)
    # q-f1: gold has RESULTS and a table; the text-only evidence drops the table
    assert r["evidence_f1"] == pytest.approx(100 * (1 + 1 + 2 / 3) / 5)
    assert r["evidence_f1_text_only"] == pytest.approx(100 * 3 / 5)
    assert r["answer_f1_by_type"]["extractive"] == 100.0 and r["yes_no_accuracy"] == 0.0
    assert r["unanswerable_recall"] == 0.0  # q-none missing: a missed unanswerable question


def test_constant_unanswerable_on_the_dev_file_matches_the_official_evaluator(kit):
    path = kit.data_file(DEV)
    if path is None:
        pytest.skip(f"{DEV} not under EVIDEX_DATA_DIR")
    papers = load_qasper(path)
    gold = {q.question_id: q.answers for p in papers for q in p.qas}
    assert len(papers) == 281 and len(gold) == 1005
    r = evaluate(gold, constant_predictions(gold))
    assert round(r["answer_f1"], 2) == 13.50 and round(r["evidence_f1"], 2) == 17.21
    assert r["answer_f1_by_type"]["none"] == 100.0 and r["missing_predictions"] == 0
    yes = evaluate(gold, constant_predictions(gold, "Yes"))
    assert round(yes["answer_f1"], 2) == 7.11 and round(yes["answer_f1_by_type"]["boolean"], 1) == 57.7


def test_cli_prints_official_json_scaled_0_100(tmp_path, capsys):
    gold = write_official(tmp_path)
    preds = tmp_path / "p.jsonl"
    lines = [{"question_id": "q-none", "predicted_answer": "Unanswerable", "predicted_evidence": []},
             {"question_id": "q-f1", "predicted_answer": "91.2 F1", "predicted_evidence": [RESULTS]},
             {"question_id": "not-a-question", "predicted_answer": "x", "predicted_evidence": []}]
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["--predictions", str(preds), "--gold", str(gold)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer_f1"] == pytest.approx(40.0) and out["missing_predictions"] == 3
    assert set(out["answer_f1_by_type"]) == {"extractive", "abstractive", "boolean", "none"}
    assert out["evidence_f1"] == pytest.approx(100 * (1 + 2 / 3) / 5)
    assert main(["--predictions", str(preds), "--gold", str(gold), "--text_evidence_only", "--table"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["evidence_f1"] == pytest.approx(40.0)
    assert "Answer-F1 by type" in captured.err and '"Unanswerable"' in captured.err


def test_cli_errors_are_actionable(tmp_path, capsys):
    gold = write_official(tmp_path)
    assert main(["--predictions", str(tmp_path / "nope.jsonl"), "--gold", str(gold)]) == 2
    assert "no such predictions file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "q", "predicted_answer": 3\n')
    assert main(["--predictions", str(bad), "--gold", str(gold)]) == 2
    assert "line 1" in capsys.readouterr().err
    bad.write_text("")
    assert main(["--predictions", str(bad), "--gold", str(tmp_path / "missing.json")]) == 2
    assert "no such QASPER file" in capsys.readouterr().err


def test_constant_predictions_give_every_question_one_answer():
    preds = constant_predictions(["a", "b"], "Yes")
    assert [p.predicted_answer for p in preds.values()] == ["Yes", "Yes"] and not preds["a"].predicted_evidence
    assert INTRO  # the tiny file's paragraphs are plain strings

"""A task family added from outside evidex, with no change to shared code: one module's worth of registration
(below), its configs in its own folder, and one ``register_family`` call. It then goes through everything a
built-in family gets: ``--list``, a run with a scripted model, an interruption, ``--resume``, traces, the report,
a comparison of two runs and RAGAS views."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field

from evidex.graphs.config import Strict, TaskConfig
from evidex.graphs.registry import Resources, TaskFamily, register_family, unregister_family
from evidex.tools.runfolder import GroundedAnswer


# -- the family: a toy capital-city quiz ------------------------------------------------------------------------
class QuizSection(Strict):
    instruction: str = "Answer with the city only."


class QuizConfig(TaskConfig):
    quiz: QuizSection = Field(default_factory=QuizSection)


class QuizItem(BaseModel):
    qid: str
    question: str
    answer: str

    @property
    def id(self) -> str:
        return self.qid

    def graph_input(self):
        return {"question": self.question}

    def public_input(self):
        return {"question": self.question}


class QuizPrediction(BaseModel):
    answer: str


class QuizState(BaseModel):
    question: str
    prediction: QuizPrediction | None = None


def load_quiz(cfg: QuizConfig) -> list[QuizItem]:
    rows = json.loads(Path(cfg.dataset.file).read_text())
    return [QuizItem(**r) for r in rows][: cfg.dataset.limit or None]


def build_quiz_graph(cfg: QuizConfig, resources: Resources):
    from evidex.agents.models import make_chat_model

    llm = resources.llm or make_chat_model(cfg.model.spec)

    def answer(state: QuizState) -> dict:
        reply = llm.invoke([HumanMessage(content=f"{cfg.quiz.instruction}\n{state.question}")])
        return {"prediction": QuizPrediction(answer=str(reply.content).strip())}

    g = StateGraph(QuizState)
    g.add_node("answer", answer)
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    return g.compile(name=cfg.name)


def score_quiz(cfg, item: QuizItem, pred: QuizPrediction, resources) -> dict[str, float]:
    right = pred.answer.lower() == item.answer.lower()
    return {"accuracy": float(right), "city_tp": float(right), "city_fp": float(not right),
            "city_fn": float(not right)}


def quiz_family(config_dir: Path) -> TaskFamily:
    return TaskFamily(name="quiz", description="capital-city quiz (test family)", config_model=QuizConfig,
                      load_items=load_quiz, build_graph=build_quiz_graph, score_item=score_quiz,
                      report_columns=("accuracy", "city_f1_micro"),
                      grounded_answers=lambda item, pred: [GroundedAnswer(question=item.question,
                                                                          answer=pred.answer)],
                      item_tags=lambda item: ["quiz", "europe" if item.qid < "q3" else "elsewhere"],
                      config_dir=config_dir)


QUESTIONS = [("q0", "Capital of France?", "Paris"), ("q1", "Capital of Italy?", "Rome"),
             ("q2", "Capital of Spain?", "Madrid"), ("q3", "Capital of Japan?", "Tokyo"),
             ("q4", "Capital of Peru?", "Lima")]


class Oracle:
    """Answers from the prompt; wrong on Peru; raises KeyboardInterrupt once on call ``interrupt_at``."""

    def __init__(self, interrupt_at: int | None = None):
        self.calls, self.interrupt_at = 0, interrupt_at

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        for _, q, a in QUESTIONS:
            if q in prompt:
                return a if a != "Lima" else "Cusco"
        return "?"


@pytest.fixture
def quiz(tmp_path):
    data = tmp_path / "quiz.json"
    data.write_text(json.dumps([{"qid": i, "question": q, "answer": a} for i, q, a in QUESTIONS]))
    folder = tmp_path / "configs" / "quiz"
    folder.mkdir(parents=True)
    (folder / "_base.yaml").write_text(textwrap.dedent(f"""
        family: quiz
        model: {{spec: local}}
        dataset: {{file: {data}}}
        tracing: {{enabled: true}}
        """))
    (folder / "quiz.yaml").write_text("extends: _base\nname: quiz\ntask: quiz\ndescription: name the capital\n")
    (folder / "quiz_terse.yaml").write_text("extends: quiz\nname: quiz_terse\nquiz: {instruction: One word.}\n")
    family = register_family(quiz_family(folder))
    yield family
    unregister_family("quiz")


def test_a_new_family_runs_resumes_traces_reports_and_compares(quiz, tmp_path, capsys):
    from evidex.agents.scripted import ScriptedChatModel
    from evidex.evaluators.compare import main as compare_main
    from evidex.graphs.run import main as run_main
    from evidex.graphs.runner import run_task
    from evidex.graphs.tasks import config_for_task, load_config
    from evidex.graphs.trace import main as trace_main
    from evidex.tools.runfolder import read_results

    # listed, grouped under its family, next to the built-in ones
    assert run_main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert "quiz: capital-city quiz (test family)" in listing and "[quiz/quiz]" in listing and "civic:" in listing

    # its config is validated by its own model, with the shared base's error messages
    cfg = config_for_task("quiz")
    assert isinstance(cfg, QuizConfig) and cfg.quiz.instruction.startswith("Answer")
    from evidex.graphs.config import ConfigError
    with pytest.raises(ConfigError, match=r"quiz\.colour.*allowed here: instruction"):
        config_for_task("quiz", ["quiz.colour=red"])

    # interrupted on the third question: two results saved, the run says so
    out = tmp_path / "runs"
    with pytest.raises(KeyboardInterrupt):
        run_task(cfg, out_dir=out, llm=ScriptedChatModel(responses=Oracle(interrupt_at=3)), progress=False)
    (run_dir,) = out.iterdir()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    assert [r["id"] for r in read_results(run_dir / "results.jsonl")] == ["q0", "q1"]

    # resumed: exactly the three missing items run
    oracle = Oracle()
    run_task(None, resume=run_dir, llm=ScriptedChatModel(responses=oracle), progress=False)
    assert oracle.calls == 3
    rows = read_results(run_dir / "results.jsonl")
    assert sorted(r["id"] for r in rows) == ["q0", "q1", "q2", "q3", "q4"]
    assert rows[0]["input"] == {"question": "Capital of France?"} and rows[0]["grounded"][0]["answer"] == "Paris"
    status = json.loads((run_dir / "run.json").read_text())
    assert status["status"] == "complete" and status["family"] == "quiz"

    # metrics with the family's columns first, micro P/R/F1 from its counts, per-tag breakdown
    summary = json.loads((run_dir / "metrics.json").read_text())
    assert summary["metrics"]["accuracy"]["mean"] == pytest.approx(0.8)
    assert summary["metrics"]["city_f1_micro"]["mean"] == pytest.approx(0.8)
    assert set(summary["by_tag"]) == {"quiz", "europe", "elsewhere"}
    report = (run_dir / "report.md").read_text()
    assert report.index("| accuracy |") < report.index("| city_f1_micro |")
    assert "accuracy" in (run_dir / "report.html").read_text()

    # traces: one run tree per item, listed and rendered by graphs.trace
    assert sorted(p.stem for p in (run_dir / "traces").glob("*.json")) == ["q0", "q1", "q2", "q3", "q4"]
    assert trace_main([str(run_dir), "--item", "q4"]) == 0
    assert "answer" in capsys.readouterr().out
    assert trace_main([str(run_dir), "--html", str(tmp_path / "trace.html")]) == 0
    assert "Capital of Peru?" in (tmp_path / "trace.html").read_text()

    # a variant config of the same family, compared with the first run (paired over the same five items)
    terse = load_config("quiz/quiz_terse")
    perfect = ScriptedChatModel(responses=lambda p: next(a for _, q, a in QUESTIONS if q in p))
    run_b = run_task(terse, out_dir=out, llm=perfect, progress=False)
    capsys.readouterr()
    assert compare_main([str(run_dir), str(run_b), "--n-boot", "200", "--html", str(tmp_path / "cmp.html")]) == 0
    compared = capsys.readouterr().out
    assert "accuracy" in compared and "city_f1_micro" in compared and "quiz.instruction" in compared
    assert "accuracy" in (tmp_path / "cmp.html").read_text()


def test_cli_runs_the_new_family_with_a_scripted_file(quiz, tmp_path, capsys):
    from evidex.graphs.run import main as run_main

    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Paris", "Rome"]))
    code = run_main(["--task", "quiz", "--limit", "2", "--llm", f"scripted:{replies}", "--out", str(tmp_path / "r"),
                     "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "items: 2/2 ok" in out and "accuracy" in out


def test_unknown_family_is_a_clear_config_error(tmp_path):
    from evidex.graphs.config import ConfigError
    from evidex.graphs.tasks import load_config

    bad = tmp_path / "x.yaml"
    bad.write_text("name: x\nfamily: nosuch\ntask: x\n")
    with pytest.raises(ConfigError, match=r"unknown family 'nosuch' \(allowed: airqa, civic, qasper, r4c"):
        load_config(str(bad))
    missing = tmp_path / "y.yaml"
    missing.write_text("name: y\ntask: not_a_known_task\n")
    with pytest.raises(ConfigError, match=r"family: missing \(allowed: airqa, civic, qasper, r4c\)"):
        load_config(str(missing))

"""Config model of the question-answering families (``airqa`` now, ``qasper`` next): the shared base plus

    store     which paper store the questions are asked of (``--db NAME``)
    qa        the method (NeuSym or a baseline) and its settings
    judge     the model for the LLM-judged evaluation functions (null = those questions are reported apart)
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from evidex.agents.neusym_policy import ALL_ACTIONS, ActionName
from evidex.graphs.config import Strict, TaskConfig

WarmStart = Literal["off", "chunks", "multiview"]
Method = Literal["neusym", "iterative_rag", "question_only", "title_abstract", "full_text", "classic_rag"]


class StoreConfig(Strict):
    db: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
                           description="store name under <cache>/stores (made with python -m tools.ingest)")
    store_dir: str | None = Field(None, description="a store folder instead of a name")


def warm_start_value(v):
    """true/false (the switch before the multiview probe existed) read as chunks/off."""
    return {True: "chunks", False: "off", "true": "chunks", "false": "off"}.get(v, v) if isinstance(v, (bool, str)) else v


class AnswerSettings(BaseModel):
    """How every QA graph asks for its answer (declared once: the ``qa`` section and the graphs' settings)."""

    max_tokens: int = Field(700, ge=64, le=8192, description="tokens per model reply")
    typed_answer: bool = Field(True, description="the answer's JSON type follows the answer format (an integer "
                                                 "format gets an integer under the grammar)")
    quote_first: bool = Field(False, description="answer calls copy the sentence the answer rests on before "
                                                 "answering")
    abstain_word: str | None = Field(None, description="the answer format's word for 'no answer' (QASPER: "
                                                      "Unanswerable): the single-call answers (classic RAG and the "
                                                      "other baselines) then read from the reply's logprobs how sure "
                                                      "the model was (prediction.confidence: first_token_p, "
                                                      "mean_logprob, abstain_p = P(beginning with the word); "
                                                      "OpenAI-style servers such as the local one)")
    question_last: bool = Field(False, description="answers from a context (the single-call baselines, NeuSym's "
                                                   "early and evidence answers): the question is asked again after "
                                                   "the context, next to where the answer is written (QASPER dev "
                                                   "100-159 with classic RAG: Answer-F1 25.06 -> 35.50)")
    computed_answers: bool = Field(False, description="answers from a context to a number format (integer/float) "
                                                      "write the arithmetic over the context's numbers first "
                                                      "(\"225 - 175\"); the calculator's result is the answer and, "
                                                      "for NeuSym's early answer, every number it used must be in "
                                                      "the probe")
    ranked_answers: bool = Field(False, description="answers from a context to a question that picks one item by "
                                                    "its highest or lowest value (a name format) list the items "
                                                    "with their values first; code picks the extreme and, for "
                                                    "NeuSym's early answer, every value must be in the probe")
    table_cells: bool = Field(False, description="answers from a context holding tables, to a number question that "
                                                 "compares two values (\"how many points higher is A than B\"): "
                                                 "code finds the two cells the question's words name in the table "
                                                 "it names and subtracts, without a model call; when it finds no "
                                                 "single pair, the model answers (tools/table_cells.py)")
    answer_check: bool = Field(False, description="single-call answers: one more short call after the answer asks "
                                                  "whether the context answers the question "
                                                  "(prediction.confidence.check_p; the prompt is cached)")


class RetrievalSettings(BaseModel):
    """What the single-call baselines read."""

    context_chars: int = Field(12_000, ge=500, le=200_000, description="title_abstract / full_text cutoff")
    retrieval_limit: int = Field(4, ge=1, le=50, description="classic_rag: chunks retrieved")
    retrieval_table: str = "chunks"
    retrieval_column: str = "text_content"
    retrieval_mode: Literal["dense", "bm25", "hybrid"] = "hybrid"
    context_order: Literal["best_first", "best_last"] = Field(
        "best_first", description="classic_rag: the retrieved chunks in the context, best first or best last "
                                  "(next to the answer; citations keep the retrieval order either way)")


class AgentSettings(AnswerSettings):
    """The NeuSym agent's settings (the ``qa`` section holds them under the same names)."""

    actions: tuple[ActionName, ...] = Field(ALL_ACTIONS, description="neusym: the actions the agent may take "
                                                                     "(answer is always allowed)")
    max_turns: int = Field(20, ge=1, le=100, description="neusym: the most turns (actions) the agent may take")
    answer_on_last_turn: bool = Field(True, description="neusym: the last turn may only answer; false = an explicit "
                                                        "no-answer when the turns run out")
    warm_start: WarmStart = Field("off", description="neusym: look up before the first turn and show it as the "
                                "first observation: chunks = the question's search over the papers' passages; "
                                "multiview = the papers' metadata, the tables/figures/equations the question names "
                                "and the passages (graphs/qa/probe.py)")
    early_answer: bool = Field(False, description="neusym: after the warm start, answer from it when the answer is "
                                                  "found in it (its value, or with quote_first its quote); otherwise "
                                                  "the agent's turns begin")
    answer_step: Literal["inline", "evidence"] = Field(
        "inline", description="neusym: inline = the answer action's own answer; evidence = a separate answer call "
                              "over what the turns found (typed by the format)")
    probe_passages: int = Field(4, ge=0, le=20, description="neusym multiview warm start: passages it adds (4: on "
                                                           "the dev split the answer string was in 16 of 17 probes)")
    table_records: bool = Field(False, description="neusym multiview warm start: a table the question names is "
                                                   "shown as records, each value beside its column's full header "
                                                   "(\"ECQA: Y*;R* = 0.7943; X->RY = 0.5599\"), not as markdown "
                                                   "(tools/table_records.py)")
    probe_chars: int = Field(6000, ge=500, le=50_000, description="neusym: the multiview probe as the early "
                                                                  "answer's context (the turns see it cut to "
                                                                  "observation_chars, like every observation)")
    evidence_chars: int = Field(6000, ge=500, le=100_000, description="neusym: context of the evidence answer")
    tool_calling: Literal["json", "native"] = Field(
        "json", description="neusym: json = one schema-constrained JSON action per turn (the local model); native = "
                            "actions offered as tools, for hosted models with tool calling")
    window: int = Field(5, ge=1, le=50, description="action/observation pairs kept in the prompt")
    observation_chars: int = Field(3000, ge=200, le=50_000)

    @field_validator("warm_start", mode="before")
    @classmethod
    def _bool_warm_start(cls, v):
        return warm_start_value(v)


class QAConfig(AgentSettings, RetrievalSettings, Strict):
    """The ``qa`` section: the method and every graph setting, under the names the graphs' settings use."""

    method: Method = "neusym"


class EvalJudgeConfig(Strict):
    llm: str | None = Field(None, description="model spec for the LLM-judged eval functions; null = report those "
                                              "questions apart, unscored")


class QATaskConfig(TaskConfig):
    task: str
    store: StoreConfig = Field(default_factory=StoreConfig)
    qa: QAConfig = Field(default_factory=QAConfig)
    judge: EvalJudgeConfig = Field(default_factory=EvalJudgeConfig)

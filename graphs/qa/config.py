"""Config model of the question-answering families (``airqa``, ``qasper``): the shared base plus

    store     which paper store the questions are asked of (``--db NAME``)
    qa        the method and how it reads and answers (one settings model: every QA graph reads this section)
    judge     the model for the LLM-judged evaluation functions (null = those questions are reported apart)

A method is a fixed graph (graphs/qa/neusym.py, graphs/qa/baselines.py); an ablation is a config file that changes
these settings (configs/airqa/neusym_sql_only.yaml: fewer actions), never a branch in a builder. Graphs read the
section per run (LangGraph ``context``; graphs/settings.py), so a server changes it per run without a rebuild.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from evidex.agents.neusym_policy import ALL_ACTIONS, ActionName
from evidex.agents.readers import DEFAULT_READERS
from evidex.graphs.config import Strict, TaskConfig

Method = Literal["neusym", "iterative_rag", "question_only", "title_abstract", "full_text", "classic_rag"]


class StoreConfig(Strict):
    """Which paper store the questions are asked of."""

    db: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
                           description="store name under <cache>/stores (made with evidex ingest)")
    store_dir: str | None = Field(None, description="a store folder instead of a name (the operator's only)")


class QASettings(Strict):
    """How a question is answered: the method, the answer readers, and what the agent and baselines read."""

    method: Method = Field("neusym", description="neusym: probe, early answer, then the agent's turns (SQL, search, "
                           "calculator, image view); iterative_rag: the same loop with search only; classic_rag: one "
                           "search, one answer; full_text / title_abstract / question_only: one answer over that")
    readers: list[str] = Field(list(DEFAULT_READERS), min_length=1,
                               description="answer readers tried in order (agents/readers/; built in: model), the "
                                           "model last: the first that finds an answer for sure gives it")
    max_tokens: int = Field(700, ge=64, le=8192, description="tokens per model reply")
    paper_ids: bool = Field(False, description="answer calls (not the agent's turns): the prompt tags each block "
                            "with its paper's id and adds a line naming the papers; off, blocks say only the page "
                            "(and 'paper K' among several papers), about a fifth fewer tokens (docs/results.md: "
                            "where each prompt was measured and which configs turn this on)")
    actions: tuple[ActionName, ...] = Field(ALL_ACTIONS, description="neusym: the actions the agent may take (answer "
                                            "is always allowed); without sql the probe makes no look-ups, without "
                                            "search it shows no passages")
    max_turns: int = Field(6, ge=1, le=100, description="neusym: the most turns the agent takes; the last one answers "
                           "from what the turns found (the 1.5B model did not improve an answer after a few turns, "
                           "and each costs 15-30 s on 2 cores)")
    window: int = Field(5, ge=1, le=50, description="neusym: action/observation pairs kept in the prompt")
    observation_chars: int = Field(3000, ge=200, le=50_000, description="neusym: an observation is cut to this many "
                                   "characters in the turns' prompt")
    probe_passages: int = Field(6, ge=0, le=20, description="neusym: passages the probe adds (the hybrid and the "
                                "keyword ranking of the question, interleaved); each adds some 200 prompt tokens "
                                "to the early answer's call")
    probe_chars: int = Field(10_000, ge=500, le=50_000, description="neusym: the probe as the early answer's context")
    evidence_chars: int = Field(6000, ge=500, le=100_000, description="neusym: context of the answer written from "
                                "what the turns found")
    tool_calling: Literal["json", "native"] = Field(
        "json", description="neusym: json = one schema-constrained JSON action per turn (the local model); native = "
                            "actions offered as tools, for hosted models with tool calling")
    context_chars: int = Field(12_000, ge=500, le=200_000, description="title_abstract / full_text: context cutoff")
    retrieval_limit: int = Field(4, ge=1, le=50, description="classic_rag: passages retrieved")
    retrieval_mode: Literal["dense", "bm25", "hybrid"] = Field("hybrid", description="classic_rag: search mode")

    @field_validator("readers")
    @classmethod
    def _known_readers(cls, names: list[str]) -> list[str]:
        from evidex.agents.readers import reader_names

        known = reader_names()
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown answer reader(s) {', '.join(unknown)} (known: {', '.join(known)})")
        return names


class EvalJudgeConfig(Strict):
    llm: str | None = Field(None, description="model spec for the LLM-judged eval functions; null = report those "
                                              "questions apart, unscored")


class QATaskConfig(TaskConfig):
    task: str
    store: StoreConfig = Field(default_factory=StoreConfig)
    qa: QASettings = Field(default_factory=QASettings)
    judge: EvalJudgeConfig = Field(default_factory=EvalJudgeConfig)

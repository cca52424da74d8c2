"""Config model of the claim-explainer families (``civic``, ``r4c``): the shared base plus the claim sections.

    graph      explainer | selection | assignment     which claim graph
    retrieval  the knowledge base and how candidates are searched (gather step)
    steps      which nodes run (judge, gather, write, verify, verdict)
    judge      who decides: the gate (``cascade``: model-free keep/discard, then the model's stance) or the model
    gate       the evidence-gate plug-in and its settings (``gate.name``: given_rank | civic; agents/gates.py)
    prompts    how much text the model is shown
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from evidex.agents.gates import AnyGateSettings
from evidex.agents.given_rank_gate import GivenRankSettings
from evidex.graphs.config import DatasetConfig, Strict, TaskConfig

GraphKind = Literal["explainer", "selection", "assignment"]


class RetrievalConfig(Strict):
    kb: str | None = Field(None, description="Knowledge-base file under EVIDEX_DATA_DIR ({evidence_id, description} "
                                             "list) that the gather step searches; null = none.")
    mode: Literal["dense", "bm25", "hybrid"] = "hybrid"
    k: int = Field(10, ge=1, le=100, description="Candidates judged per item.")
    embedding_model: str = "all-MiniLM-L6-v2"


class JudgeConfig(Strict):
    """Who judges the evidence. ``cascade`` (default): the gate (``gate:``) decides keep/discard without the model,
    then the model labels supports/contradicts and gives the reason for kept items. ``llm``: the model alone
    labels every item (for strong models); the gate still gathers candidates when ``steps.gather`` is on."""

    strategy: Literal["cascade", "llm"] = "cascade"
    llm_stance: bool = Field(True, description="Ask the model supports/contradicts + reason for kept items.")
    stance_batch: bool = Field(False, description="All kept items in one stance call (faster; small models "
                                                  "tend to repeat one label on long lists).")

    @property
    def gated(self) -> bool:
        """A model-free gate decides keep/discard; the model gives the stance."""
        return self.strategy == "cascade"


class StepsConfig(Strict):
    """Which nodes run. The graph is the same for every task; the task's YAML switches steps on and off."""

    judge: bool = True  # judge every given evidence item
    gather: bool = False  # retrieve + judge missing evidence from the KB
    write: bool = True  # write the explanation
    verify: bool = True  # check the explanation against kept evidence, revise once
    verdict: bool = Field(False, description="Decide whether the claim is supported at all (wrong_claim): most "
                                             "given items kept and at least one supports it.")


class PromptConfig(Strict):
    evidence_chars: int = Field(360, ge=80, le=4000, description="Evidence text shown to the model, in characters.")
    context_chars: int = Field(240, ge=0, le=4000)
    reason_chars: int = Field(56, ge=20, le=400)
    explanation_tokens: int = Field(640, ge=32, le=4096)


class ClaimDatasetConfig(DatasetConfig):
    controls: bool = Field(True, description="wrong_claim: add supported baseline claims as controls.")


ClaimTask = Literal["baseline", "missing_evidence", "wrong_evidence", "mixed", "selection", "assignment", "r4c",
                   "wrong_claim"]


class ClaimTaskConfig(TaskConfig):
    task: ClaimTask
    graph: GraphKind = "explainer"
    dataset: ClaimDatasetConfig = Field(default_factory=ClaimDatasetConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    steps: StepsConfig = Field(default_factory=StepsConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    gate: AnyGateSettings = Field(default_factory=GivenRankSettings)
    prompts: PromptConfig = Field(default_factory=PromptConfig)

    @model_validator(mode="after")
    def _gate_follows_kb(self) -> ClaimTaskConfig:
        self.gate = self.gate.for_knowledge_base(self.retrieval.kb)
        return self

    @property
    def stance_step(self) -> bool:
        """Whether the explainer graph has its ``stance`` node: the model labels the items a gate kept."""
        return self.steps.judge and self.judge.gated and self.judge.llm_stance

    @property
    def uses_model(self) -> bool:
        """Gate-only configs (write off, no model stance) never build the model."""
        s, j = self.steps, self.judge
        if s.write:
            return True
        if self.graph != "explainer":  # selection / assignment: only the gate decides without the model
            return not j.gated
        return (not j.gated and (s.judge or s.gather)) or self.stance_step

    @property
    def uses_gate(self) -> bool:
        """Whether any node asks the gate (so its data files must load before the run)."""
        if self.steps.gather:
            return True
        return self.judge.gated and (self.steps.judge or self.graph != "explainer")

    def warnings(self) -> list[str]:
        return self.gate.ignored_settings()

"""Config model of the claim-explainer families (``civic``, ``r4c``): the shared base plus the claim sections.

    graph      explainer | selection | assignment     which claim graph
    retrieval  the knowledge base and how candidates are searched (gather step)
    steps      which nodes run (judge, gather, write, verdict)
    judge      who decides: the gate (``cascade``: model-free keep/discard, then optionally the model's stance) or
               the model
    gate       the evidence-gate plug-in and its settings (``gate.name``: given_rank | civic; agents/gates.py)
    prompts    how much text the model is shown

The explanation is always written by the grounded writer (agents/grounded_writer.py; graphs/claims/grounded.py):
one call per claim writes a reason for every kept item and names what each discarded given item is about; code
checks every reason and falls back to an honest short one; the explanation is the verdict the labels add up to
and what the strongest items show. It won its measurement against the free-writing paths of issues 20 and 24
(``fast``, ``legacy``; benchmarks/results/explainers.json, part paths_0-21), which were removed with their settings.
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
    mode: Literal["dense", "bm25", "hybrid"] = Field("hybrid", description="How the knowledge base is searched: "
                                                     "dense (embeddings), bm25 (words) or hybrid (both, fused).")
    k: int = Field(10, ge=1, le=100, description="Candidates judged per item.")
    embedding_model: str = Field("all-MiniLM-L6-v2", description="Sentence-transformers model of the dense search, "
                                 "the gates' rankings, the findings and the similarity metrics.")


class JudgeConfig(Strict):
    """Who judges the evidence. ``cascade`` (default): the gate (``gate:``) decides keep/discard without the model,
    then (``llm_stance``) the model may label the kept items supports/contradicts. ``llm``: the model alone
    labels every item (for strong models); the gate still gathers candidates when ``steps.gather`` is on."""

    strategy: Literal["cascade", "llm"] = Field("cascade", description="cascade: the gate decides keep/discard "
                                                "without the model; llm: the model labels every item "
                                                "supports/contradicts/irrelevant (for strong models).")
    llm_stance: bool = Field(False, description="Ask the model supports/contradicts for the items the gate kept, "
                             "in batched label-only calls shown each item's finding; false: they keep the gate's "
                             "label, supports (measured on the hand-labelled stance sample: the gate's label is "
                             "right on 0.975 / 1.000 of the pairs (tune / report half), the model's on 0.787).")
    stance_batch_size: int = Field(8, ge=1, le=64, description="At most this many ids per batched stance call "
                                   "(a 1.5B model repeats one label on long lists); every call shares one prefix.")

    @property
    def gated(self) -> bool:
        """A model-free gate decides keep/discard; the model gives the stance."""
        return self.strategy == "cascade"


class StepsConfig(Strict):
    """Which nodes run. The graph is the same for every task; the task's YAML switches steps on and off."""

    judge: bool = Field(True, description="Judge every given evidence item (false: every given item is kept "
                                          "unjudged).")
    gather: bool = Field(False, description="Retrieve missing evidence from retrieval.kb and judge the candidates.")
    write: bool = Field(True, description="Write the reasons and the explanation (false: decisions only, no model "
                                          "unless judge.llm_stance or judge.strategy llm asks for one).")
    verdict: bool = Field(False, description="Decide whether the claim is supported at all (wrong_claim): most "
                                             "given items kept and at least one supports it.")


class PromptConfig(Strict):
    evidence_chars: int = Field(360, ge=80, le=4000, description="Evidence text shown to the model per item, in "
                                "characters, where it reads whole texts (judge.strategy llm, selection and "
                                "assignment decided by the model); the writer (and with it the stance calls) "
                                "reads findings instead.")
    context_chars: int = Field(240, ge=0, le=4000, description="Characters of each claim context field (disease, "
                               "therapies, ...) shown under the claim where the model judges, selects or assigns "
                               "items; 0 = none. The writer's reasons call shows the claim alone.")
    reason_chars: int = Field(36, ge=20, le=400, description="Longest reason the model may give per item when it "
                              "judges items itself (judge.strategy llm, selection, assignment; schema max_length; "
                              "the prompt asks for reason_chars/7 words).")


class ClaimDatasetConfig(DatasetConfig):
    controls: bool = Field(True, description="wrong_claim: add supported baseline claims as controls.")


ClaimTask = Literal["baseline", "missing_evidence", "wrong_evidence", "mixed", "selection", "assignment", "r4c",
                   "wrong_claim"]


class ClaimTaskConfig(TaskConfig):
    task: ClaimTask
    graph: GraphKind = Field("explainer", description="Which claim graph: explainer (judge, gather, explain one "
                             "claim), selection (which of two claims the evidence supports), assignment (each item "
                             "to claim A, B or neither).")
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

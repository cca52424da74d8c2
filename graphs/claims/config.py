"""Config model of the claim-explainer families (``civic``, ``r4c``): the shared base plus the claim sections.

    graph      explainer | selection | assignment     which claim graph
    retrieval  the knowledge base and how candidates are searched (gather step)
    steps      which nodes run (judge, gather, write, verify, verdict)
    judge      who decides: the gate (``cascade``: model-free keep/discard, then the model's stance) or the model
    gate       the evidence-gate plug-in and its settings (``gate.name``: given_rank | civic; agents/gates.py)
    prompts    how much text the model is shown, and which prompt templates
    explain    how the explanation and reasons are written (free | grounded)
    speed      the named preset (``speed.path``: grounded | fast | legacy) that fills every setting left unset

Presets (PaperQA-style): a setting whose default is ``None`` takes its value from ``speed.path`` (table
:data:`SPEED_PRESETS`); a value given in YAML or with ``--set`` wins over the preset. ``legacy`` is the path
before issue 20 (one stance call per kept item, full prompts); ``fast`` labels the kept items in a few batched
calls that share the writer's cached prompt prefix, with shorter reasons, trimmed evidence and compact prompts.
``--set speed.path=legacy`` gives back exactly the old path (as long as the YAML sets none of the preset keys).
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
    llm_stance: bool | None = Field(None, description="Ask the model supports/contradicts (+ reason) for kept "
                                    "items; false: they keep the gate's label, supports. null = from speed.path "
                                    "(grounded: false, measured on the hand-labelled stance sample: the gate's "
                                    "label is right on 0.975 / 1.000 of the pairs (tune / report half), the "
                                    "model's on 0.787 (fast) and 0.550 (legacy); fast, legacy: true).")
    stance_batch: bool | None = Field(None, description="Kept items labelled in batched stance calls (one JSON "
                                      "object, one required key per id) instead of one call per item; the batch "
                                      "shows the evidence exactly as the writer does, so the writer reuses the "
                                      "cached prompt. null = from speed.path (fast: true, legacy: false).")
    stance_batch_size: int = Field(8, ge=1, le=64, description="At most this many ids per batched stance call "
                                   "(a 1.5B model repeats one label on long lists); every call shares one prefix.")
    stance_reasons: bool | None = Field(None, description="Batched stance calls give each label with the item's "
                                        "finding (<= prompts.reason_chars). false: labels only (~8 instead of ~30 "
                                        "generated tokens per item); a kept item then keeps the gate's reason. "
                                        "null = from speed.path (fast: false, legacy: true).")

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


PromptStyleName = Literal["full", "compact", "grounded"]


class PromptConfig(Strict):
    evidence_chars: int = Field(360, ge=80, le=4000, description="Evidence text shown to the model per item, in "
                                "characters (per-item judge and stance calls, selection, assignment).")
    write_evidence_chars: int | None = Field(None, ge=80, le=4000, description="Evidence text per item in the "
                                             "writer's prompt, shared by the batched stance call so both read one "
                                             "cached prefix. null = from speed.path (fast: 220, legacy: "
                                             "evidence_chars).")
    context_chars: int = Field(240, ge=0, le=4000)
    reason_chars: int | None = Field(None, ge=20, le=400, description="Longest reason the model may give per item "
                                     "(schema max_length; the prompt asks for reason_chars/7 words). null = from "
                                     "speed.path (fast: 36, legacy: 56).")
    explanation_tokens: int = Field(640, ge=32, le=4096)
    style: PromptStyleName | None = Field(None, description="Prompt templates (agents/claim_prompt.py PROMPT_STYLES): "
                                      "full = the original prompts; compact = every fixed instruction in the system "
                                      "prompt (cached across calls and items), short TASK lines last; grounded = "
                                      "compact for the grounded writer (findings, not whole texts). null = from "
                                      "speed.path (grounded: grounded, fast: compact, legacy: full).")


class ExplainConfig(Strict):
    """How the explanation and the reasons are written (``explain.mode``).

    ``free``: the model writes the whole explanation from the evidence texts, then verify/revise; reasons are
    the gate's notes or the model's findings (the path before issue 24). ``grounded`` (agents/grounded_writer.py):
    one call per claim writes a reason for every kept item (its key fact, then how it bears on the claim) and
    names what each discarded given item is about; code checks every reason and falls back to an honest short
    one; the explanation is the verdict the labels add up to, what the strongest items show (their checked
    reasons) and how strong and consistent the evidence is (the designs the kept texts state)."""

    mode: Literal["free", "grounded"] | None = Field(None, description="null = from speed.path (grounded: "
                                                     "grounded; fast, legacy: free).")


SpeedPath = Literal["fast", "legacy", "grounded"]

# speed.path -> the value of every preset setting left unset (dotted key -> value; "=evidence_chars" copies it).
SPEED_PRESETS: dict[str, dict[str, object]] = {
    "legacy": {"judge.stance_batch": False, "prompts.write_evidence_chars": "=evidence_chars",
               "prompts.reason_chars": 56, "prompts.style": "full", "judge.stance_reasons": True,
               "explain.mode": "free", "judge.llm_stance": True},
    "fast": {"judge.stance_batch": True, "judge.stance_reasons": False, "prompts.write_evidence_chars": 220,
             "prompts.reason_chars": 36, "prompts.style": "compact", "explain.mode": "free",
             "judge.llm_stance": True},
    "grounded": {"judge.stance_batch": True, "judge.stance_reasons": False, "prompts.write_evidence_chars": 220,
                 "prompts.reason_chars": 36, "prompts.style": "grounded", "explain.mode": "grounded",
                 "judge.llm_stance": False},
}


class SpeedConfig(Strict):
    """Which named preset fills the settings left unset (see the module docstring and :data:`SPEED_PRESETS`)."""

    path: SpeedPath = Field("legacy", description="grounded: the grounded writer over findings (verdict first, "
                            "checked model sentences, finished reasons); fast: batched stances, trimmed evidence, "
                            "compact prompts, the model writes freely; legacy: the original path, for comparison.")


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
    speed: SpeedConfig = Field(default_factory=SpeedConfig)
    explain: ExplainConfig = Field(default_factory=ExplainConfig)

    @model_validator(mode="after")
    def _gate_follows_kb(self) -> ClaimTaskConfig:
        self.gate = self.gate.for_knowledge_base(self.retrieval.kb)
        return self

    @model_validator(mode="after")
    def _fill_from_speed_preset(self) -> ClaimTaskConfig:
        """Every preset setting still ``None`` takes the value of ``speed.path`` (a saved run's config.yaml then
        holds the resolved values, so ``--resume`` repeats exactly what the run started with)."""
        for key, value in SPEED_PRESETS[self.speed.path].items():
            section, name = key.split(".")
            target = getattr(self, section)
            if getattr(target, name) is None:
                if isinstance(value, str) and value.startswith("="):
                    value = getattr(target, value[1:])
                setattr(target, name, value)
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

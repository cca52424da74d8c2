"""Graph configs: YAML files in ``configs/`` validated by pydantic, composable with ``extends:`` and
overridable with ``--set key.path=value``. Every error names the file, the key and the allowed values."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

CONFIG_DIR = Path(os.environ.get("EVIDEX_CONFIG_DIR", Path(__file__).resolve().parent.parent / "configs"))
TaskName = Literal["baseline", "missing_evidence", "wrong_evidence", "mixed", "selection", "assignment", "r4c",
                   "wrong_claim"]


class ConfigError(ValueError):
    """A config file or override is invalid; the message says where and what is allowed."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelConfig(_Strict):
    """Which chat model drives the graph. ``spec``: ``local`` (default GGUF in-process), ``openai:<model>``
    (any OpenAI-compatible endpoint via ``base_url``), any LangChain ``provider:model``, or
    ``scripted:<file.json>`` (tests)."""

    spec: str = "local"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=16, le=8192)
    base_url: str | None = None
    n_ctx: int = Field(8192, ge=1024, le=131072)
    threads: int | None = Field(None, ge=1, le=256)
    timeout_s: float = Field(600.0, gt=0)


class RetrievalConfig(_Strict):
    kb: str = Field("ibe/CIVIC/evidence_kb.json", description="KB file under EVIDEX_DATA_DIR ({evidence_id, description} list).")
    mode: Literal["dense", "bm25", "hybrid"] = "hybrid"
    k: int = Field(10, ge=1, le=100, description="Candidates judged per item.")
    rival_variant_penalty: float = Field(
        3.0, ge=0.0, description="Subtracted from the fused score of KB items about another variant than the "
                                 "claim's (e.g. V600E for a V600K claim); 0 = off.")
    claim_penalty: float = Field(
        4.0, ge=0.0, description="With judge.claim_catalog: a KB item that a competing claim ranks better loses this "
                                 "many times ln(its rank here / its rank there), capped at ln ratio 2; 0 = off.")
    embedding_model: str = "all-MiniLM-L6-v2"


class JudgeConfig(_Strict):
    """How evidence is judged. ``cascade`` (default): a model-free relevance gate decides keep/discard (how
    an item ranks among all KB items for the claim's subject), then the model labels supports/contradicts and
    gives the reason for kept items. ``given_rank``: the same cascade for evidence that is not in a KB (R4C
    paragraphs): the ``keep_top`` items closest to the claim among the given items are kept. ``llm``: the model
    alone labels every item (for strong models)."""

    strategy: Literal["cascade", "given_rank", "llm"] = "cascade"
    keep_rank: int = Field(30, ge=1, description="Given items ranking worse than this among the KB are discarded "
                                                 "(without a claim_catalog; assignment: 'neither').")
    keep_top: int = Field(3, ge=1, description="given_rank: keep this many given items, the ones closest to the "
                                              "claim among the given items themselves.")
    candidate_ratio: float = Field(0.5, gt=0.0, le=1.0,
                                   description="Retrieved candidates scoring below this share of the best are not added.")
    candidate_neighbour_rank: int | None = Field(
        None, ge=1, description="A retrieved candidate is added only if a kept given item is among its N nearest KB "
                             "neighbours (null = off; skipped when nothing is kept).")
    candidate_facets: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(
        default_factory=lambda: {"therapy": 0.5},
        description="Claim facets a retrieved candidate must name, with the share of the facet's words required "
                    "(facets: profile, disease, therapy, or a lower-cased context key).")
    candidate_max_overlap: float | None = Field(
        0.5, gt=0.0, le=1.0, description="A retrieved candidate sharing at least this share of its word 5-grams "
                                         "with a kept given item is a near-copy and is not added (null = off).")
    candidate_rescue_neighbour_rank: int | None = Field(
        None, ge=1, description="A candidate below candidate_ratio is still added when it ranks for the claim's subject "
                             "no worse than the worst kept given item and a kept item is among its N nearest KB "
                             "neighbours (null = off).")
    candidate_variant_conflict: bool = Field(
        True, description="A retrieved candidate about another variant is not added: it names other variants of "
                           "the claim's kind (e.g. V600E, or another NTRK1 fusion) or calls its variant a class "
                           "the claim's cannot have ('this missense mutation' for F76del) and never names the "
                           "claim's own, or names one rival more often than the claim's own.")
    claim_catalog: str | None = Field(
        "ibe/CIVIC/baseline.json", description="Task file (under EVIDEX_DATA_DIR) whose claims compete for the KB's "
                                               "evidence: a retrieved candidate that ranks better for one of them "
                                               "than for the claim being explained is not added, and given items "
                                               "follow the given_claim_* rule. Only claim sentences and context "
                                               "are read (null = off; off by default when retrieval.kb is not "
                                               "the CIViC KB).")
    candidate_claim_margin: float = Field(
        1.0, ge=1.0, description="With a claim_catalog: a retrieved candidate is not added when a competing claim "
                                 "ranks it more than this many times better than the claim does.")
    given_claim_margin: float | None = Field(
        4.0, gt=1.0, description="With a claim_catalog: a given item is discarded when a competing claim ranks it at "
                                 "least this many times better than the claim does (null = the plain keep_rank cut).")
    given_claim_floor: int = Field(10, ge=1, description="Given items in the claim's own top N are never discarded "
                                                         "for a competing claim.")
    given_claim_keep_rank: int = Field(60, ge=1, description="The keep_rank cut while the competing-claim rule is on "
                                                             "(looser: the catalog catches other claims' items).")
    llm_stance: bool = Field(True, description="Ask the model supports/contradicts + reason for kept items.")
    stance_batch: bool = Field(False, description="All kept items in one stance call (faster; small models "
                                                  "tend to repeat one label on long lists).")

    @property
    def gated(self) -> bool:
        """A model-free gate decides keep/discard (``cascade``, ``given_rank``); the model gives the stance."""
        return self.strategy != "llm"

    def given_claim_check(self):
        """The competing-claim rule for given items, or ``None`` when it is off."""
        from evidex.agents.civic.relevance_gate import GivenClaimCheck

        if self.claim_catalog is None or self.given_claim_margin is None:
            return None
        return GivenClaimCheck(margin=self.given_claim_margin, floor=self.given_claim_floor,
                               keep_rank=self.given_claim_keep_rank)

    def ignored_settings(self) -> list[str]:
        """Settings given explicitly that the rest of the config overrides (a run prints them as warnings)."""
        if "keep_rank" in self.model_fields_set and self.given_claim_check() is not None:
            return ["judge.keep_rank has no effect while competing claims are on (judge.claim_catalog): set "
                    "judge.given_claim_keep_rank, or judge.given_claim_margin=null to use judge.keep_rank"]
        return []

    def candidate_checks(self):
        """The ``candidate_*`` thresholds as the candidate gate takes them."""
        from evidex.agents.civic.candidate_gate import CandidateChecks

        return CandidateChecks(ratio=self.candidate_ratio, neighbour_rank=self.candidate_neighbour_rank,
                               facets=self.candidate_facets, max_overlap=self.candidate_max_overlap,
                               rescue_neighbour_rank=self.candidate_rescue_neighbour_rank,
                               variant_conflict=self.candidate_variant_conflict,
                               claim_margin=self.candidate_claim_margin)


class StepsConfig(_Strict):
    """Which nodes run. The graph is the same for every task; the task's YAML switches steps on and off."""

    judge: bool = True  # judge every given evidence item
    gather: bool = False  # retrieve + judge missing evidence from the KB
    write: bool = True  # write the explanation
    verify: bool = True  # check the explanation against kept evidence, revise once


class PromptConfig(_Strict):
    evidence_chars: int = Field(360, ge=80, le=4000, description="Evidence text shown to the model, in characters.")
    context_chars: int = Field(240, ge=0, le=4000)
    reason_chars: int = Field(56, ge=20, le=400)
    explanation_tokens: int = Field(640, ge=32, le=4096)


class DatasetConfig(_Strict):
    file: str | None = Field(None, description="Override the task's data file (relative to EVIDEX_DATA_DIR).")
    shuffle: bool = True
    seed: int = 13
    limit: int | None = Field(None, ge=1)
    controls: bool = Field(True, description="wrong_claim: add supported baseline claims as controls.")


class MetricsConfig(_Strict):
    similarity: bool = True
    ragas: bool = False
    ragas_llm: str | None = Field(None, description="Judge model spec for RAGAS (default: the graph's model).")


class RunConfig(_Strict):
    concurrency: int = Field(1, ge=1, le=64)
    out: str | None = None


class TracingConfig(_Strict):
    enabled: bool = True
    phoenix_endpoint: str | None = Field(None, description="Phoenix OTLP/HTTP collector, e.g. "
                                         "http://127.0.0.1:6006/v1/traces (needs pip install -e .[phoenix]); unset = off.")


class GraphConfig(_Strict):
    name: str
    description: str = ""
    task: TaskName
    graph: Literal["explainer", "selection", "assignment"] = "explainer"
    model: ModelConfig = Field(default_factory=ModelConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    steps: StepsConfig = Field(default_factory=StepsConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    prompts: PromptConfig = Field(default_factory=PromptConfig)
    dataset: DatasetConfig = Field(default_factory=DatasetConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    run: RunConfig = Field(default_factory=RunConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)

    @model_validator(mode="after")
    def _catalog_follows_kb(self) -> GraphConfig:
        # The default claim catalog lists the claims that own the CIViC KB's evidence; against another KB it would
        # reject the wrong items, so there it is off unless set explicitly.
        if "claim_catalog" not in self.judge.model_fields_set and \
                self.retrieval.kb != RetrievalConfig.model_fields["kb"].default:
            self.judge.claim_catalog = None
        return self

    @property
    def stance_step(self) -> bool:
        """Whether the explainer graph has its ``stance`` node: the model labels the items a gate kept."""
        return self.steps.judge and self.judge.gated and self.judge.llm_stance

    @property
    def uses_model(self) -> bool:
        """Whether a graph built from this config calls the chat model (RAGAS aside). Gate-only configs do not,
        and then the model is never built."""
        s, j = self.steps, self.judge
        if s.write:
            return True
        if self.graph != "explainer":  # selection / assignment: only the cascade decides without the model
            return j.strategy != "cascade"
        return (j.strategy == "llm" and (s.judge or s.gather)) or self.stance_step


# -- loading ------------------------------------------------------------------------------------------------
def find_config(name_or_path: str) -> Path:
    path = Path(name_or_path)
    candidates = [path, CONFIG_DIR / path, CONFIG_DIR / f"{name_or_path}.yaml"]
    for c in candidates:
        if c.is_file():
            return c
    raise ConfigError(f"Config {name_or_path!r} not found (looked in {CONFIG_DIR}). Known: {', '.join(list_config_names())}")


def list_config_names() -> list[str]:
    return sorted(str(p.relative_to(CONFIG_DIR).with_suffix("")) for p in CONFIG_DIR.rglob("*.yaml")
                  if not p.name.startswith("_") and "ingest" not in p.parts)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: malformed YAML{where}: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}.")
    return data


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_raw(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read a YAML file and resolve ``extends:`` (a name or a path relative to the file) recursively."""
    path = path.resolve()
    if path in _seen:
        raise ConfigError(f"{path}: circular `extends:` ({' -> '.join(map(str, _seen + (path,)))})")
    data = _read_yaml(path)
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ConfigError(f"{path}: `extends` must be a config name or path, got {parent!r}")
    rel = path.parent / parent
    base_path = rel if rel.is_file() else (path.parent / f"{parent}.yaml" if (path.parent / f"{parent}.yaml").is_file()
                                           else find_config(parent))
    return _merge(load_raw(base_path, _seen + (path,)), data)


def apply_overrides(data: dict, overrides: list[str], source: str = "--set") -> dict:
    """``a.b=c`` sets data['a']['b'] = yaml-parsed 'c'."""
    data = dict(data)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"{source} {item!r}: expected key.path=value, e.g. --set retrieval.k=8")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        node = data
        parts = key.strip().split(".")
        for p in parts[:-1]:
            if not isinstance(node.get(p, {}), dict):
                raise ConfigError(f"{source} {item!r}: {p!r} is not a section")
            node[p] = dict(node.get(p) or {})
            node = node[p]
        node[parts[-1]] = value
    return data


def validate(data: dict, source: str) -> GraphConfig:
    try:
        return GraphConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, source)) from None


def format_validation_error(exc: ValidationError, source: str) -> str:
    lines = [f"{source}: invalid config"]
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        ctx = err.get("ctx") or {}
        allowed = ""
        if err["type"] == "extra_forbidden":
            allowed = f" (unknown key; allowed here: {', '.join(_allowed_keys(err['loc']))})"
        elif "expected" in ctx:
            allowed = f" (allowed: {ctx['expected']})"
        lines.append(f"  - {key}: {err['msg']}; got {err.get('input')!r}{allowed}")
    return "\n".join(lines)


def _allowed_keys(loc: tuple) -> list[str]:
    model: type[BaseModel] = GraphConfig
    for part in loc[:-1]:
        field = model.model_fields.get(str(part))
        ann = getattr(field, "annotation", None)
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            break
        model = ann
    return list(model.model_fields)


def load_config(name_or_path: str, overrides: list[str] | None = None) -> GraphConfig:
    """Load a config by name (``civic/mixed``) or path, resolve ``extends:`` and apply ``--set`` overrides."""
    path = find_config(name_or_path)
    data = apply_overrides(load_raw(path), overrides or [])
    return validate(data, str(path))


def config_for_task(task: str, overrides: list[str] | None = None) -> GraphConfig:
    """The config whose ``task:`` is this task (``configs/civic/<task>.yaml`` or ``configs/<task>.yaml``)."""
    table, broken = _scan_configs()
    if task not in table:
        for path, error in broken.items():
            if path.stem == task:  # the task's own config is the one that failed: say why
                raise error
        raise ConfigError(f"Unknown task {task!r}. Known tasks: {', '.join(sorted(table))} (see --list).")
    return load_config(str(table[task][0]), overrides)


def task_table() -> dict[str, tuple[Path, str]]:
    """task name -> (config path, one-line description) for every runnable config."""
    return _scan_configs()[0]


def _scan_configs() -> tuple[dict[str, tuple[Path, str]], dict[Path, ConfigError]]:
    table: dict[str, tuple[Path, str]] = {}
    broken: dict[Path, ConfigError] = {}
    for name in list_config_names():
        path = CONFIG_DIR / f"{name}.yaml"
        try:
            raw = load_raw(path)
        except ConfigError as exc:
            broken[path] = exc
            continue
        task = raw.get("task")
        if isinstance(task, str) and task not in table and raw.get("name") == task:
            table[task] = (path, str(raw.get("description", "")).strip())
    return table, broken


def dump_config(cfg: GraphConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)

"""Task configs: what every task family shares, and how YAML becomes a validated config.

A config is a YAML file under ``configs/<family>/`` validated by its family's pydantic model (see
:mod:`graphs.registry`). Every family's model extends :class:`TaskConfig`, the shared base: the model, the
dataset, metrics, the run and tracing. ``extends:`` composes files (a name or a path relative to the file) and
``--set key.path=value`` overrides any value. Every error names the file, the key and the allowed values.

Which tasks exist, and loading a config by name, are in :mod:`graphs.tasks`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

# Shipped configs. In the checkout this is the repository's configs/; installed, the same files are package data
# beside the code (evidex/configs). EVIDEX_CONFIG_DIR still points elsewhere for a user's own tree.
PACKAGED_CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


class ConfigError(ValueError):
    """A config file or override is invalid; the message says where and what is allowed."""


def _known_prompt(name: str) -> str:
    """A prompt chosen by name: a file of the prompt folder, never a path."""
    from evidex.agents.prompts import prompt_names

    known = prompt_names()
    if name not in known:
        raise ValueError(f"no prompt named {name!r} (known: {', '.join(sorted(known))})")
    return name


PromptName = Annotated[str, AfterValidator(_known_prompt)]


class Strict(BaseModel):
    """Config sections reject unknown keys, so a typo is an error rather than a silently ignored setting."""

    model_config = ConfigDict(extra="forbid")


class ModelConfig(Strict):
    """Which chat model drives the graph. ``spec``: ``local`` (default GGUF in-process), ``openai:<model>``
    (any OpenAI-compatible endpoint via ``base_url``), any LangChain ``provider:model``, or
    ``scripted:<file.json>`` (tests)."""

    spec: str = Field("local", description="local (the verified Qwen2.5-Coder-1.5B GGUF, in-process), "
                      "openai:<model> (any OpenAI-compatible endpoint), a LangChain provider:model, or scripted:<file>")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="sampling temperature (0 = deterministic)")
    max_tokens: int = Field(512, ge=16, le=8192, description="tokens per reply unless a step asks for fewer")
    base_url: str | None = Field(None, description="the OpenAI-compatible endpoint of an openai:<model> spec "
                                 "(default: OPENAI_BASE_URL, else OpenAI's); the API key goes only to the operator's")
    n_ctx: int = Field(8192, ge=1024, le=131072, description="Context per slot of the local server, in tokens.")
    threads: int | None = Field(None, ge=1, le=256, description="CPU threads of the local model (null = every core)")
    slots: int | None = Field(None, ge=1, le=16, description="Parallel slots of the in-process llama.cpp server "
                              "(spec local): requests decoded together in one batch, each slot with n_ctx tokens "
                              "and its own prompt cache. null = run.concurrency, so --concurrency 2 gets 2 slots.")
    timeout_s: float = Field(600.0, gt=0, description="seconds a model call may take")
    prompt_cache_mib: int = Field(0, ge=0, le=65536, description="Host memory (MiB) llama.cpp may keep for the "
                                  "prompts of finished requests so a later request with the same start can skip "
                                  "them (spec local; xllamacpp's own default is 8192, which grows by ~60 MB per "
                                  "claim item). The slot's own cache still serves the shared system prompt at 0.")
    _client_endpoint: bool = PrivateAttr(default=False)

    @property
    def client_endpoint(self) -> bool:
        """Whether a run (not the operator's config) chose ``base_url``: the model then gets no API key from the
        environment (graphs.settings)."""
        return self._client_endpoint

    def mark_client_endpoint(self) -> None:
        self._client_endpoint = True


class DatasetConfig(Strict):
    file: str | None = Field(None, description="Override the task's data file (relative to EVIDEX_DATA_DIR).")
    shuffle: bool = Field(True, description="shuffle the items (with seed) before offset and limit")
    seed: int = Field(13, description="the shuffle's seed")
    offset: int = Field(0, ge=0, description="Skip the first N items of the file (after shuffling), e.g. to report "
                                             "on questions 100-199 after tuning on 0-99.")
    limit: int | None = Field(None, ge=1, description="answer at most this many items (after offset)")

    def window(self, items: list) -> list:
        """The items this run answers: ``offset`` skipped, then the first ``limit``."""
        end = self.offset + self.limit if self.limit else None
        return items[self.offset:end]


class MetricsConfig(Strict):
    similarity: bool = Field(True, description="Embedding-similarity metrics (they load the embedding model).")
    ragas: bool = Field(False, description="RAGAS metrics with the judge model (needs evidex[ragas])")
    ragas_llm: str | None = Field(None, description="Judge model spec for RAGAS (default: the graph's model).")


class RunConfig(Strict):
    concurrency: int = Field(1, ge=1, le=64, description="Items in flight at once (threads locally, one Ray "
                             "worker each under executor ray).")
    executor: Literal["local", "ray"] = Field("local", description="Where items run: local (this process) or ray "
                                              "(Ray workers, each building the graph once; results still written "
                                              "here). See docs/scaling-out.md.")
    ray_address: str | None = Field(None, description="executor ray: the cluster to join (ray start's address, "
                                    "e.g. 127.0.0.1:6379); null = a Ray started for this run on loopback")
    ray_cpus_per_worker: float = Field(1.0, gt=0, le=256, description="executor ray: CPUs Ray reserves per worker")
    out: str | None = Field(None, description="the run folder (default: runs/<task>-<config hash>/<time>-<task>)")
    prepare: bool = Field(True, description="run the family's preparation before the items (qasper: ingest the "
                                            "papers into the store); false = reuse what exists (--skip-ingest)")
    on_degraded: Literal["error", "warning"] = Field(
        "error", description="an item whose hybrid search lost a part (e.g. dense: the Chroma server did not "
        "answer) is recorded as an error (default), or kept with a warning on its row; either way the row says "
        "which part and why (degraded) and metrics.json counts such items")


class TracingConfig(Strict):
    enabled: bool = Field(True, description="write each item's trace (a LangSmith-style run tree) in the run folder")
    phoenix_endpoint: str | None = Field(None, description="Phoenix OTLP/HTTP collector, e.g. "
                                         "http://127.0.0.1:6006/v1/traces (needs pip install 'evidex[phoenix]'); "
                                         "unset = off.")


class TaskConfig(Strict):
    """The shared base of every family's config model."""

    name: str
    description: str = ""
    family: str = Field(description="The task family whose model validates this config (configs/<family>/).")
    task: str
    model: ModelConfig = Field(default_factory=ModelConfig)
    dataset: DatasetConfig = Field(default_factory=DatasetConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    run: RunConfig = Field(default_factory=RunConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)

    @property
    def uses_model(self) -> bool:
        """Whether a graph built from this config calls the chat model (RAGAS aside); when not, the model is never
        built. Families whose steps can all run without a model override this."""
        return True

    @property
    def model_slots(self) -> int:
        """Parallel slots for the local model server: ``model.slots``, else one per item in flight."""
        return self.model.slots or self.run.concurrency

    @property
    def model_label(self) -> str:
        """The model as reports name it: its spec, or ``none (model-free)`` when no step calls one."""
        return self.model.spec if self.uses_model else "none (model-free)"

    def warnings(self) -> list[str]:
        """Settings given explicitly that the rest of the config overrides (a run prints them)."""
        return []


# -- YAML --------------------------------------------------------------------------------------------------
def read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: malformed YAML{where}: {getattr(exc, 'problem', exc)}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}.")
    return data


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_raw(path: Path, resolve_name=None, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read a YAML file and resolve ``extends:`` (a path relative to the file, with or without ``.yaml``, or a
    config name that ``resolve_name`` turns into a path) recursively."""
    path = path.resolve()
    if path in _seen:
        raise ConfigError(f"{path}: circular `extends:` ({' -> '.join(map(str, _seen + (path,)))})")
    data = read_yaml(path)
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ConfigError(f"{path}: `extends` must be a config name or path, got {parent!r}")
    for candidate in (path.parent / parent, path.parent / f"{parent}.yaml"):
        if candidate.is_file():
            base_path = candidate
            break
    else:
        if resolve_name is None:
            raise ConfigError(f"{path}: `extends: {parent}` names no file next to it")
        base_path = resolve_name(parent)
    return merge(load_raw(base_path, resolve_name, _seen + (path,)), data)


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


# -- validation errors -------------------------------------------------------------------------------------
def format_validation_error(exc: ValidationError, source: str, model: type[BaseModel]) -> str:
    lines = [f"{source}: invalid config"]
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        ctx = err.get("ctx") or {}
        allowed = ""
        if err["type"] == "extra_forbidden":
            allowed = f" (unknown key; allowed here: {', '.join(_allowed_keys(model, err['loc']))})"
        elif "expected" in ctx:
            allowed = f" (allowed: {ctx['expected']})"
        elif "expected_tags" in ctx:
            allowed = f" (allowed: {ctx['expected_tags']})"
        lines.append(f"  - {key}: {err['msg']}; got {err.get('input')!r}{allowed}")
    return "\n".join(lines)


def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys allowed at ``loc`` (the section holding the unknown key), following nested models and the tag of
    a discriminated union (``gate.civic.<key>``)."""
    parts, i = [str(p) for p in loc[:-1]], 0
    while i < len(parts):
        field = model.model_fields.get(parts[i])
        if field is None:
            break
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            model, i = ann, i + 1
            continue
        tagged = _union_member(ann, parts[i + 1]) if i + 1 < len(parts) else None
        if tagged is None:
            break
        model, i = tagged, i + 2
    return list(model.model_fields)


def _members(ann) -> list:
    import typing

    args = typing.get_args(ann)
    if args and typing.get_origin(ann) is typing.Annotated:
        return _members(args[0])
    return list(args)


def _union_member(ann, tag: str):
    for member in _members(ann):
        if isinstance(member, type) and issubclass(member, BaseModel):
            field = member.model_fields.get("name")
            if field is not None and field.default == tag:
                return member
    return None


def dump_config(cfg: TaskConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)

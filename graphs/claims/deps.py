"""Everything a claim graph's nodes need, built once per config: the chat model, the embedder and the gate.

The chat model is built on first use, and the gate opens its data (a knowledge-base index, a claim catalog) on
first use too: a gate-only config (``steps.write=false judge.llm_stance=false``) never starts the local model."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel

from evidex.agents.evidence_gate import Capability, EvidenceGate, GateUnsupported
from evidex.graphs.claims.config import ClaimTaskConfig
from evidex.graphs.config import ConfigError


@dataclass
class GraphDeps:
    config: ClaimTaskConfig
    gate: EvidenceGate
    embedder: object | None = None
    _llm: BaseChatModel | None = None
    _judge: object | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def llm(self) -> BaseChatModel:
        """The configured chat model; until :meth:`build_llm` (or its first call) it is a stand-in that builds it
        (for ``local``: starts the llama.cpp server) on its first generation."""
        with self._lock:
            if self._llm is None:
                from evidex.agents.lazy_model import LazyChatModel

                self._llm = LazyChatModel(factory=self._make_llm, label=self.config.model.spec)
            return self._llm

    def build_llm(self) -> BaseChatModel:
        """The model, built now (a bad model spec fails here, not on the first item)."""
        from evidex.agents.lazy_model import unwrap

        return unwrap(self.llm)

    def _make_llm(self) -> BaseChatModel:
        from evidex.agents.models import make_chat_model

        m = self.config.model
        return make_chat_model(m.spec, temperature=m.temperature, max_tokens=m.max_tokens, base_url=m.base_url,
                               n_ctx=m.n_ctx, threads=m.threads, timeout_s=m.timeout_s,
                               parallel=self.config.model_slots, prompt_cache_mib=m.prompt_cache_mib,
                               send_api_key=not m.client_endpoint)

    @property
    def support_judge(self):
        """The judge of the grounded writer's model sentences, built on first use: at least half of a sentence's
        content words occur in its cited texts (on the held-out half of the hand-labelled sample none of the other
        offline judges beat it: benchmarks/results/support_judges.json)."""
        with self._lock:
            if self._judge is None:
                from evidex.tools.support_judge import rule_judge

                self._judge = rule_judge(0.5, check_numbers=False)
            return self._judge

    def require(self, capability: Capability, setting: str) -> None:
        """Fail when the graph is built, not on the first item, if the gate cannot do what the config asks."""
        if not self.gate.supports(capability):
            raise ConfigError(f"{setting} needs a gate that can {capability.replace('_', ' ')}; gate "
                              f"{self.gate.name!r} cannot (choose another gate.name, or judge.strategy=llm)")


def make_deps(config: ClaimTaskConfig, llm: BaseChatModel | None = None, embedder=None, index=None, *,
              eager_model: bool = True) -> GraphDeps:
    """Deps for ``config``; a graph that calls the model (:attr:`ClaimTaskConfig.uses_model`) gets it built now, so a
    bad model spec fails here rather than on the first item (``eager_model=False``: on first use)."""
    from evidex.agents.gates import make_gate
    from evidex.tools.embeddings import get_embeddings

    embedder = embedder or get_embeddings(config.retrieval.embedding_model)
    try:
        gate = make_gate(config.gate, kb=config.retrieval.kb, embedder=embedder, mode=config.retrieval.mode,
                         index=index)
    except (ValueError, GateUnsupported) as exc:
        raise ConfigError(str(exc)) from None
    deps = GraphDeps(config=config, gate=gate, embedder=embedder, _llm=llm)
    if config.uses_model and eager_model:
        deps.build_llm()
    return deps

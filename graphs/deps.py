"""Everything a claim graph's nodes need, built once per config: model, embedder, knowledge-base index.

The chat model, the index and the claim catalog are built on first use: a gate-only config
(``steps.write=false judge.llm_stance=false``) never starts the local model server."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from langchain_core.language_models.chat_models import BaseChatModel

from evidex.graphs.config import GraphConfig


@dataclass
class GraphDeps:
    config: GraphConfig
    _llm: BaseChatModel | None = None
    embedder: object | None = None
    _index: object | None = None
    _catalog: object | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def llm(self) -> BaseChatModel:
        """The configured chat model, built (for ``local``: the llama.cpp server started) on first use."""
        with self._lock:
            if self._llm is None:
                from evidex.agents.models import make_chat_model

                m = self.config.model
                self._llm = make_chat_model(m.spec, temperature=m.temperature, max_tokens=m.max_tokens,
                                            base_url=m.base_url, n_ctx=m.n_ctx, threads=m.threads,
                                            timeout_s=m.timeout_s)
            return self._llm

    @property
    def index(self):
        """The KB index, opened (and built if its content changed) on first use."""
        with self._lock:
            if self._index is None:
                from evidex.tools.claim_data import load_kb
                from evidex.tools.kb_index import KBDoc, KnowledgeBaseIndex
                from evidex.tools.settings import get_settings

                docs = [KBDoc(id=e.id, text=e.text) for e in load_kb(self.config.retrieval.kb)]
                name = self.config.retrieval.kb.replace("/", "_").removesuffix(".json")
                self._index = KnowledgeBaseIndex.open(name, docs, self.embedder, get_settings().index_dir)
            return self._index

    @property
    def catalog(self):
        """The competing claims of ``judge.claim_catalog`` (``None`` when off), loaded on first use."""
        path = self.config.judge.claim_catalog
        if path is None:
            return None
        index = self.index
        with self._lock:
            if self._catalog is None:
                from evidex.agents.civic.claim_catalog import ClaimCatalog
                from evidex.tools.claim_data import load_claim_catalog

                self._catalog = ClaimCatalog(index, load_claim_catalog(path))
            return self._catalog

    def given_claim_rule(self):
        """``(catalog, check)`` for the competing-claim rule on given items; ``(None, None)`` when it is off (the
        catalog is then not loaded)."""
        check = self.config.judge.given_claim_check()
        return (self.catalog, check) if check else (None, None)


def make_deps(config: GraphConfig, llm: BaseChatModel | None = None, embedder=None, index=None) -> GraphDeps:
    """Deps for ``config``; a graph that calls the model (:attr:`GraphConfig.uses_model`) gets it built now, so a
    bad model spec fails here rather than on the first item."""
    from evidex.tools.embeddings import get_embeddings

    embedder = embedder or get_embeddings(config.retrieval.embedding_model)
    deps = GraphDeps(config=config, _llm=llm, embedder=embedder, _index=index)
    if config.uses_model:
        deps.llm  # noqa: B018 - build it now
    return deps

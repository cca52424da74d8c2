"""The CIViC gate: every CIViC rule the claim graphs use, behind the evidence-gate protocol.

Chosen by ``gate: {name: civic}`` (``configs/civic/_base.yaml``). It ranks evidence among all items of the CIViC
knowledge base for the claim's facets (:mod:`agents.civic.query_planner`), reads variant names
(:mod:`agents.civic.variants`), and knows the other claims that own the KB's evidence
(:mod:`agents.civic.claim_catalog`). Decisions: :mod:`agents.civic.relevance_gate` (given items, selection,
assignment) and :mod:`agents.civic.candidate_gate` (retrieved candidates). The thresholds below were tuned on
held-out CIViC items 30-65 only; the docstrings of those modules give the numbers.
"""
from __future__ import annotations

import threading
from typing import Annotated, Literal

from pydantic import Field

from evidex.agents.evidence_gate import Capability, DataFile, Gathered, GateResult, GateSettings, GraphKind
from evidex.tools.claims import AssignLabel, Claim, Evidence, Label
from evidex.tools.kb_index import SearchHit

CIVIC_KB = "ibe/CIVIC/evidence_kb.json"
CIVIC_CLAIMS = "ibe/CIVIC/baseline.json"


class CivicGateSettings(GateSettings):
    """Thresholds of the CIViC gate (``gate.*`` in a CIViC task config)."""

    name: Literal["civic"] = Field("civic", description="The evidence-gate plug-in (agents/gates.py: civic, "
                                  "given_rank); civic ranks evidence among the CIViC knowledge base with the CIViC "
                                  "rules below.")
    keep_rank: int = Field(30, ge=1, description="Given items ranking worse than this among the KB are discarded "
                                                 "(without a claim_catalog; assignment: 'neither').")
    candidate_ratio: float = Field(0.5, gt=0.0, le=1.0,
                                   description="Retrieved candidates scoring below this share of the best are not added.")
    candidate_facets: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(
        default_factory=lambda: {"therapy": 0.5},
        description="Claim facets a retrieved candidate must name, with the share of the facet's words required "
                    "(facets: profile, disease, therapy, or a lower-cased context key).")
    candidate_max_overlap: float | None = Field(
        0.5, gt=0.0, le=1.0, description="A retrieved candidate sharing at least this share of its word 5-grams "
                                         "with a kept given item is a near-copy and is not added (null = off).")
    candidate_variant_conflict: bool = Field(
        True, description="A retrieved candidate about another variant is not added: it names other variants of "
                           "the claim's kind (e.g. V600E, or another NTRK1 fusion) or calls its variant a class "
                           "the claim's cannot have ('this missense mutation' for F76del) and never names the "
                           "claim's own, or names one rival more often than the claim's own.")
    claim_catalog: str | None = Field(
        CIVIC_CLAIMS, description="Task file (under EVIDEX_DATA_DIR) whose claims compete for the KB's evidence: a "
                                  "retrieved candidate that ranks better for one of them than for the claim being "
                                  "explained is not added, and given items follow the given_claim_* rule. Only claim "
                                  "sentences and context are read (null = off; off by default when retrieval.kb is "
                                  "not the CIViC KB).")
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
    rival_variant_penalty: float = Field(
        3.0, ge=0.0, description="Retrieval: subtracted from the fused score of KB items about another variant than "
                                 "the claim's (e.g. V600E for a V600K claim); 0 = off.")
    claim_penalty: float = Field(
        4.0, ge=0.0, description="Retrieval, with claim_catalog: a KB item that a competing claim ranks better loses "
                                 "this many times ln(its rank here / its rank there), capped at ln ratio 2; 0 = off.")

    def for_knowledge_base(self, kb: str | None) -> CivicGateSettings:
        # The default claim catalog lists the claims that own the CIViC KB's evidence; against another KB it would
        # reject the wrong items, so there it is off unless set explicitly.
        if "claim_catalog" not in self.model_fields_set and kb != CIVIC_KB:
            return self.model_copy(update={"claim_catalog": None})
        return self

    def given_claim_check(self):
        """The competing-claim rule for given items, or ``None`` when it is off."""
        from evidex.agents.civic.relevance_gate import GivenClaimCheck

        if self.claim_catalog is None or self.given_claim_margin is None:
            return None
        return GivenClaimCheck(margin=self.given_claim_margin, floor=self.given_claim_floor,
                               keep_rank=self.given_claim_keep_rank)

    def ignored_settings(self) -> list[str]:
        if "keep_rank" in self.model_fields_set and self.given_claim_check() is not None:
            return ["gate.keep_rank has no effect while competing claims are on (gate.claim_catalog): set "
                    "gate.given_claim_keep_rank, or gate.given_claim_margin=null to use gate.keep_rank"]
        return []

    def candidate_checks(self):
        """The ``candidate_*`` thresholds as the candidate gate takes them."""
        from evidex.agents.civic.candidate_gate import CandidateChecks

        return CandidateChecks(ratio=self.candidate_ratio, facets=self.candidate_facets,
                               max_overlap=self.candidate_max_overlap,
                               variant_conflict=self.candidate_variant_conflict,
                               claim_margin=self.candidate_claim_margin)


class CivicGate:
    """The CIViC rules over one knowledge base. The KB index and the claim catalog are opened on first use, so
    building a graph costs nothing until an item needs them."""

    name = "civic"

    def __init__(self, settings: CivicGateSettings, *, kb: str | None, embedder, mode: str = "hybrid",
                 index=None):
        if kb is None:
            raise ValueError("gate civic needs a knowledge base: set retrieval.kb (e.g. ibe/CIVIC/evidence_kb.json)")
        self.settings = settings
        self.kb = kb
        self.embedder = embedder
        self.mode = mode
        self._index = index
        self._catalog = None
        self._lock = threading.Lock()

    # -- lazily opened data ------------------------------------------------------------------------------------
    @property
    def index(self):
        """The KB index, opened (and built if its content changed) on first use."""
        with self._lock:
            if self._index is None:
                from evidex.tools.claim_data import load_kb
                from evidex.tools.kb_index import KBDoc, KnowledgeBaseIndex
                from evidex.tools.settings import get_settings

                docs = [KBDoc(id=e.id, text=e.text) for e in load_kb(self.kb)]
                name = self.kb.replace("/", "_").removesuffix(".json")
                self._index = KnowledgeBaseIndex.open(name, docs, self.embedder, get_settings().index_dir)
            return self._index

    @property
    def catalog(self):
        """The competing claims of ``claim_catalog`` (``None`` when off), loaded on first use."""
        path = self.settings.claim_catalog
        if path is None:
            return None
        index = self.index
        with self._lock:
            if self._catalog is None:
                from evidex.agents.civic.claim_catalog import ClaimCatalog
                from evidex.tools.claim_data import load_claim_catalog

                self._catalog = ClaimCatalog(index, load_claim_catalog(path))
            return self._catalog

    def _given_claim_rule(self):
        """``(catalog, check)`` for the competing-claim rule on given items; ``(None, None)`` when it is off (the
        catalog is then not loaded)."""
        check = self.settings.given_claim_check()
        return (self.catalog, check) if check else (None, None)

    # -- the protocol ----------------------------------------------------------------------------------------
    def supports(self, capability: Capability) -> bool:
        return True

    def judge_given(self, claim: Claim, evidence: list[Evidence]) -> list[GateResult]:
        from evidex.agents.civic.relevance_gate import gate_given

        catalog, check = self._given_claim_rule()
        return gate_given(self.index, claim, evidence, self.settings.keep_rank, catalog=catalog, check=check)

    def gather(self, claim: Claim, evidence: list[Evidence], *, kept_ids: set[str] | None, k: int) -> Gathered:
        from evidex.agents.civic.query_planner import gather_candidates, plan_queries

        s = self.settings
        queries = plan_queries(claim, evidence, kept_ids=kept_ids, index=self.index, mode=self.mode)
        hits = gather_candidates(self.index, claim, evidence, kept_ids=kept_ids, k=k, mode=self.mode, plan=queries,
                                 rival_penalty=s.rival_variant_penalty, catalog=self.catalog,
                                 claim_penalty=s.claim_penalty)
        return Gathered(hits=hits, queries=[f"{q.facet}: {q.text[:160]}" for q in queries if q.weight > 0])

    def judge_candidates(self, claim: Claim, hits: list[SearchHit],
                         kept: dict[str, str] | None) -> list[GateResult]:
        from evidex.agents.civic.candidate_gate import gate_candidates

        return gate_candidates(hits, self.settings.candidate_checks(), claim=claim, kept=kept,
                               catalog=self.catalog)

    def select(self, claims: dict[str, Claim], evidence: list[Evidence]) -> tuple[Label, str]:
        from evidex.agents.civic.relevance_gate import select_by_relevance

        return select_by_relevance(self.index, claims, evidence)

    def assign(self, claims: dict[str, Claim], evidence: list[Evidence]) -> dict[str, tuple[AssignLabel, str]]:
        from evidex.agents.civic.relevance_gate import assign_by_relevance

        catalog, check = self._given_claim_rule()
        return assign_by_relevance(self.index, claims, evidence, self.settings.keep_rank, catalog=catalog,
                                   check=check)

    def owners(self, claim: Claim, ids: list[str]) -> dict[str, Claim]:
        """The competing claim (``claim_catalog``) that ranks each item within its top ``given_claim_floor``:
        the claim the item most likely belongs to. Items no known claim ranks that high are left out."""
        catalog = self.catalog
        if catalog is None:
            return {}
        out = {}
        for i in ids:
            found = catalog.best_other(i, [claim])
            if found is not None and found[0] <= self.settings.given_claim_floor:
                out[i] = found[1]
        return out

    def data_files(self, graph: GraphKind) -> list[DataFile]:
        from evidex.tools.claim_data import load_claim_catalog, load_kb

        files = [DataFile(key="retrieval.kb", path=self.kb, load=load_kb)]
        # selection compares its two claims only, without the catalog
        if self.settings.claim_catalog is not None and graph != "selection":
            files.append(DataFile(key="gate.claim_catalog", path=self.settings.claim_catalog,
                                  load=load_claim_catalog))
        return files

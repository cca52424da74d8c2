"""The ``r4c`` family: R4C/HotpotQA claims with ten Wikipedia paragraphs each, judged with the domain-free
``given_rank`` gate (no knowledge base). Configs: ``configs/r4c/``."""
from __future__ import annotations

from evidex.graphs.claims import family as claims
from evidex.graphs.claims.config import ClaimTaskConfig
from evidex.graphs.registry import TaskFamily, register_family

FAMILY = register_family(TaskFamily(
    name="r4c",
    description="R4C/HotpotQA claims: keep the supporting Wikipedia paragraphs, explain with citations",
    config_model=ClaimTaskConfig,
    load_items=claims.load_items,
    build_graph=claims.build_claim_graph,
    score_item=claims.score_item,
    report_columns=("golden_fact_coverage", "golden_fact_coverage_ceiling", "explanation_similarity",
                    "explanation_completeness", "citation_validity", "ragas_faithfulness",
                    "ragas_response_relevancy"),
    grounded_answers=claims.grounded_answers,
    item_tags=claims.item_tags,
    check_data=claims.check_data,
))

"""The ``r4c`` family: R4C/HotpotQA claims with ten Wikipedia paragraphs each, judged with the domain-free
``given_rank`` gate (no knowledge base). Configs: ``configs/r4c/``."""
from __future__ import annotations

from evidex.graphs.claims.family import claim_family
from evidex.graphs.registry import register_family

FAMILY = register_family(claim_family(
    "r4c", "R4C/HotpotQA claims: keep the supporting Wikipedia paragraphs, explain with citations",
    report_columns=("golden_fact_coverage", "golden_fact_coverage_ceiling", "explanation_similarity",
                    "explanation_completeness", "citation_validity", "reason_complete",
                    "reason_links_item_accuracy_micro", "reason_copied_item_accuracy_micro",
                    "reason_fallback_item_accuracy_micro", "discard_named_item_accuracy_micro", "self_contradiction",
                    "stance_consistency", "sentence_support", "ragas_faithfulness", "ragas_response_relevancy")))

"""The ``civic`` family: CIViC cancer-variant claims from the DATA72000-IBE files, judged with the CIViC gate
(``agents/civic``) over the 285-item evidence knowledge base. Configs: ``configs/civic/`` (seven tasks)."""
from __future__ import annotations

from evidex.graphs.claims import family as claims
from evidex.graphs.claims.config import ClaimTaskConfig
from evidex.graphs.registry import TaskFamily, register_family

FAMILY = register_family(TaskFamily(
    name="civic",
    description="CIViC cancer-variant claims: discard wrong evidence, gather missing evidence, explain with citations",
    config_model=ClaimTaskConfig,
    load_items=claims.load_items,
    build_graph=claims.build_claim_graph,
    score_item=claims.score_item,
    report_columns=claims.CLAIM_COLUMNS,
    lower_is_better=claims.LOWER_IS_BETTER,
    grounded_answers=claims.grounded_answers,
    item_tags=claims.item_tags,
    check_data=claims.check_data,
))

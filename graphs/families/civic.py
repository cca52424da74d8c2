"""The ``civic`` family: CIViC cancer-variant claims from the DATA72000-IBE files, judged with the CIViC gate
(``agents/civic``) over the 285-item evidence knowledge base. Configs: ``configs/civic/`` (seven tasks)."""
from __future__ import annotations

from evidex.graphs.claims.family import claim_family
from evidex.graphs.registry import register_family

FAMILY = register_family(claim_family(
    "civic", "CIViC cancer-variant claims: discard wrong evidence, gather missing evidence, explain with citations"))

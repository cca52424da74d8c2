"""The ``airqa`` family: AirQA questions over a paper store (``--db NAME``), answered by the NeuSym agent or a
baseline (``--config airqa/<method>``), scored with the 21 AirQA evaluation functions. Configs: ``configs/airqa/``."""
from __future__ import annotations

from evidex.graphs.qa import family as qa
from evidex.graphs.qa.config import QATaskConfig
from evidex.graphs.registry import TaskFamily, register_family

FAMILY = register_family(TaskFamily(
    name="airqa",
    description="AirQA questions over research-paper PDFs: the NeuSym agent and five baselines on one store",
    config_model=QATaskConfig,
    load_items=qa.load_airqa,
    build_graph=qa.build_qa_graph,
    score_item=qa.score_item,
    report_columns=qa.QA_COLUMNS,
    lower_is_better=qa.LOWER_IS_BETTER,
    grounded_answers=qa.grounded_answers,
    item_tags=qa.item_tags,
    check_data=qa.check_store,
    reads_run_settings=True,
    run_settings=qa.RUN_SETTINGS,
))

"""The ``qasper`` family: QASPER questions (official JSON or Hugging Face rows, ``--data FILE``), each answered by a
QA graph (classic RAG by default, NeuSym and the baselines as configs) restricted to its paper, whose title,
abstract, full text and captions are ingested from the JSON into a paper store first (``--skip-ingest`` reuses
it); scored with the official QASPER metric (``evaluators.qasper``). Configs: ``configs/qasper/``."""
from __future__ import annotations

from evidex.graphs.qa import qasper_family as qasper
from evidex.graphs.qa.family import RUN_SETTINGS
from evidex.graphs.qa.qasper_config import QasperTaskConfig
from evidex.graphs.registry import TaskFamily, register_family

FAMILY = register_family(TaskFamily(
    name="qasper",
    description="QASPER questions over NLP papers (ingested from JSON): classic RAG, NeuSym and baselines, "
                "official Answer-F1 / Evidence-F1",
    config_model=QasperTaskConfig,
    load_items=qasper.load_items,
    build_graph=qasper.build_graph,
    score_item=qasper.score_item,
    report_columns=qasper.REPORT_COLUMNS,
    lower_is_better=frozenset({"turns"}),
    grounded_answers=qasper.grounded_answers,
    item_tags=qasper.item_tags,
    check_data=qasper.check_data,
    prepare=qasper.prepare,
    finish_run=qasper.finish_run,
    # the QA settings, and the answer contract (prompts chosen by name); which ingestion config builds the store
    # is the operator's
    reads_run_settings=True,
    run_settings=(*RUN_SETTINGS, "qasper.*", "!qasper.ingest_config"),
))

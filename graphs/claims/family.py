"""What the claim-explainer families (``civic``, ``r4c``) register: loading IBE task files, building the claim
graph a config names, scoring predictions with the explainer metrics, tags and RAGAS views.

Both families share these; each family module (``graphs/families/civic.py``, ``graphs/families/r4c.py``)
registers them with its own configs, description and report columns.
"""
from __future__ import annotations

from evidex.graphs.claims.config import ClaimTaskConfig
from evidex.graphs.registry import Resources, TaskFamily
from evidex.tools.claims import ClaimPrediction, TaskItem
from evidex.tools.runfolder import GroundedAnswer

# Explainer metrics, in the order reports show them.
CLAIM_COLUMNS = ("recovery_precision_micro", "recovery_recall_micro", "recovery_f1_micro", "discard_precision_micro",
                 "discard_recall_micro", "discard_f1_micro", "false_discard_rate", "selection_accuracy",
                 "assignment_item_accuracy", "assignment_pair_accuracy", "wrong_claim_accuracy",
                 "explanation_similarity", "explanation_completeness", "citation_validity", "golden_fact_coverage",
                 "reason_complete", "reason_links_item_accuracy_micro", "reason_copied_item_accuracy_micro",
                 "reason_fallback_item_accuracy_micro", "reason_measure_item_accuracy_micro",
                 "discard_named_item_accuracy_micro",
                 "stance_sample_item_accuracy_micro", "stance_report_item_accuracy_micro",
                 "stance_sample_not_supports_item_accuracy_micro",
                 "self_contradiction",
                 "stance_consistency", "sentence_support", "ragas_faithfulness", "ragas_response_relevancy")
LOWER_IS_BETTER = frozenset({"false_discard_rate", "self_contradiction", "reason_copied_item_accuracy_micro",
                             "reason_fallback_item_accuracy_micro"})


def load_items(cfg: ClaimTaskConfig) -> list[TaskItem]:
    from evidex.tools.claim_data import load_task

    ds = cfg.dataset
    try:
        return load_task(cfg.task, limit=ds.limit, offset=ds.offset, shuffle=ds.shuffle, seed=ds.seed,
                         with_controls=ds.controls, file=ds.file)
    except ValueError as exc:
        raise ValueError(f"dataset.file: {exc}" if ds.file else str(exc)) from None


def build_claim_graph(cfg: ClaimTaskConfig, resources: Resources | None = None):
    """The compiled claim graph ``cfg.graph`` names (explainer, selection or assignment)."""
    from evidex.graphs.claims.deps import make_deps

    res = resources or Resources()
    deps = make_deps(cfg, llm=res.llm, embedder=res.embedder, index=res.index, eager_model=not res.defer_model)
    if cfg.graph == "selection":
        from evidex.graphs.claims.selection import build_selection
        return build_selection(deps)
    if cfg.graph == "assignment":
        from evidex.graphs.claims.assignment import build_assignment
        return build_assignment(deps)
    from evidex.graphs.claims.explainer import build_explainer
    return build_explainer(deps)


class _NoSimilarity:
    """Embedder stand-in when similarity metrics are switched off: every cosine is zero, nothing is loaded."""

    def encode(self, texts):
        import numpy as np
        return np.zeros((len(texts), 1), dtype="float32")


def score_item(cfg: ClaimTaskConfig, item: TaskItem, pred: ClaimPrediction, resources: Resources) -> dict[str, float]:
    from evidex.evaluators.explainers import score_item as score_claim_item
    from evidex.evaluators.trust import overlap_judge, reason_scores, stance_sample_scores, trust_scores
    from evidex.tools.embeddings import get_embeddings

    embedder = (resources.embedder or get_embeddings(cfg.retrieval.embedding_model)) if cfg.metrics.similarity \
        else _NoSimilarity()
    scores = score_claim_item(item.input, item.gold, pred, embedder=embedder, explanations=cfg.steps.write)
    # Trust (issue 24): whole-sentence reasons, no self-contradiction, stance consistency (claim-aware keyword
    # cues) and sentence support by the word-overlap judge (agreement 0.737 with the hand labels on the held-out
    # half; no better judge ships offline: benchmarks/results/support_judges.json).
    claims = {k: c.text for k, c in item.input.claims.items()}
    trust = trust_scores(pred, judge=overlap_judge(0.5), claims=claims)
    if not cfg.steps.write:
        trust = {k: v for k, v in trust.items() if k.startswith("reason")}
    # Reasons that are reasons and stance on the hand-labelled sample (issue 54; evaluators/trust.py)
    reasons = reason_scores(pred, item.input) if cfg.steps.write else {}
    return {**scores, **trust, **reasons, **stance_sample_scores(pred)}


def item_tags(item: TaskItem) -> list[str]:
    tags = [item.input.task]
    if "control" in item.input.id:
        tags.append("control")
    if item.gold.missing_ids:
        tags.append("has_missing")
    if item.gold.wrong_ids:
        tags.append("has_wrong")
    return tags


def grounded_answers(item: TaskItem, pred: ClaimPrediction) -> list[GroundedAnswer]:
    """Each explanation with its claim and the kept evidence it may cite."""
    contexts = list(pred.evidence_texts.values())
    return [GroundedAnswer(question=item.input.claims[k].text, answer=text, contexts=contexts)
            for k, text in pred.explanations.items() if k in item.input.claims and text]


def check_data(cfg: ClaimTaskConfig) -> None:
    """Load the gate's data files (a KB, a claim catalog) before the run: a missing or malformed file would
    otherwise fail every item one by one. Errors name the config key."""
    if not cfg.uses_gate:
        return
    from evidex.agents.gates import make_gate
    from evidex.tools.datasets import DataNotFoundError

    gate = make_gate(cfg.gate, kb=cfg.retrieval.kb, embedder=None, mode=cfg.retrieval.mode)
    for f in gate.data_files(cfg.graph):
        try:
            f.load(f.path)
        except (DataNotFoundError, ValueError) as exc:
            raise type(exc)(f"{f.key}: {exc}") from None


# What a run of a claim graph may change (graphs/settings.py): which steps run, who judges, how much is retrieved and
# shown. The knowledge base, the embedder, the gate and the model are the operator's.
RUN_SETTINGS = ("steps.*", "judge.*", "retrieval.k", "retrieval.mode", "prompts.*")


def claim_family(name: str, description: str, report_columns: tuple[str, ...] = CLAIM_COLUMNS,
                 lower_is_better: frozenset[str] = LOWER_IS_BETTER) -> TaskFamily:
    """A claim-explainer family: the shared loader, graphs, scorer, tags and RAGAS views, with its own name and
    report columns (its configs are in ``configs/<name>/``)."""
    return TaskFamily(name=name, description=description, config_model=ClaimTaskConfig, load_items=load_items,
                      build_graph=build_claim_graph, score_item=score_item, report_columns=report_columns,
                      lower_is_better=lower_is_better, grounded_answers=grounded_answers, item_tags=item_tags,
                      check_data=check_data, run_settings=RUN_SETTINGS)

"""What the question-answering families register: loading AirQA-format questions, building the configured QA
graph (NeuSym, an ablation or a baseline) over the configured store, and scoring answers with the AirQA
evaluation functions."""
from __future__ import annotations

import json
import threading

from evidex.agents.lazy_model import LazyChatModel
from evidex.graphs.config import ConfigError
from evidex.graphs.qa.config import QATaskConfig
from evidex.graphs.registry import Resources
from evidex.tools.qa import PaperQuestion, QAItem, QAPrediction
from evidex.tools.runfolder import GroundedAnswer

# What a run of a question-answering graph may change (graphs/settings.py): which store (by name, among the
# operator's stores) and how the method reads and answers. The method itself, the model and the judge are the
# operator's.
RUN_SETTINGS = ("store.db", "qa.*", "!qa.method")
QA_COLUMNS = ("score", "answered", "citations_valid", "turns", "needs_judge", "eval_error", "search_degraded")
LOWER_IS_BETTER = frozenset({"turns", "eval_error", "search_degraded"})


def load_airqa(cfg: QATaskConfig) -> list[QAItem]:
    """AirQA JSON lines: one question per line with uuid, question, answer_format, tags, anchor_pdf,
    reference_pdf, conference and evaluator."""
    from evidex.tools.datasets import resolve_data_file

    if not cfg.dataset.file:
        raise ValueError("dataset.file: give the questions file (--data FILE.jsonl, AirQA format)")
    path = resolve_data_file(cfg.dataset.file)
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            q = PaperQuestion(id=str(row["uuid"]), question=str(row["question"]),
                              answer_format=str(row.get("answer_format") or "A short answer."),
                              pdf_ids=[*row.get("anchor_pdf", []), *row.get("reference_pdf", [])],
                              conferences=list(row.get("conference", [])))
            items.append(QAItem(question=q, evaluator=row.get("evaluator") or {}, tags=list(row.get("tags", []))))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"dataset.file: {path} line {n} is not an AirQA question ({exc})") from None
    return cfg.dataset.window(items)


def build_qa_graph(cfg: QATaskConfig, resources: Resources | None = None):
    """The graph of ``cfg.qa.method`` over ``cfg``'s store: the agent (neusym, iterative_rag) or a single-call
    baseline. A graph to show (``resources.defer_model``) opens neither the model nor the store."""
    from evidex.graphs.qa.baselines import build_baseline
    from evidex.graphs.qa.neusym import build_neusym
    res = resources or Resources()
    if not res.defer_model and (cfg.store.db or cfg.store.store_dir):  # else each run names its store
        check_store(cfg)
    llm = res.llm or (LazyChatModel(factory=lambda: _model(cfg), label=cfg.model.spec) if res.defer_model
                      else _model(cfg))
    if cfg.qa.method in ("neusym", "iterative_rag"):
        return build_neusym(llm, cfg)
    return build_baseline(llm, cfg)


def check_store(cfg: QATaskConfig) -> None:
    """The configured store can be read (a run checks this before its first question)."""
    from evidex.tools.paperstore import PaperStore
    from evidex.tools.store import StoreError

    try:
        PaperStore(cfg.store.db, cfg.store.store_dir).check()
    except StoreError as exc:
        raise ConfigError(f"store: {exc}") from None


def _model(cfg: QATaskConfig):
    from evidex.agents.models import make_chat_model

    m = cfg.model
    return make_chat_model(m.spec, temperature=m.temperature, max_tokens=m.max_tokens, base_url=m.base_url,
                           n_ctx=m.n_ctx, threads=m.threads, timeout_s=m.timeout_s,
                           prompt_cache_mib=m.prompt_cache_mib, send_api_key=not m.client_endpoint)


_JUDGES: dict[str, object] = {}
_JUDGE_LOCK = threading.Lock()


def _judge(cfg: QATaskConfig, resources: Resources):
    if not cfg.judge.llm:
        return None
    with _JUDGE_LOCK:
        if cfg.judge.llm not in _JUDGES:
            from evidex.agents.models import make_chat_model

            _JUDGES[cfg.judge.llm] = make_chat_model(cfg.judge.llm, temperature=0.0, max_tokens=256)
        return _JUDGES[cfg.judge.llm]


def score_item(cfg: QATaskConfig, item: QAItem, pred: QAPrediction, resources: Resources) -> dict[str, float]:
    from evidex.evaluators.airqa import evaluate

    out: dict[str, float] = {"answered": float(pred.answer is not None), "turns": float(pred.turns),
                             "search_degraded": float(bool(pred.degraded))}
    if pred.citations:
        out["citations_valid"] = sum(bool(c.exists) for c in pred.citations) / len(pred.citations)
    if item.evaluator:
        result = evaluate(pred.answer or "", item.evaluator, llm=_judge(cfg, resources))
        if result.needs_judge:
            out["needs_judge"] = 1.0
        else:
            out["score"] = float(result.score)
            out["needs_judge"] = 0.0
        out["eval_error"] = float(bool(result.error))
    return out


def item_tags(item: QAItem) -> list[str]:
    return list(item.tags)


def grounded_answers(item: QAItem, pred: QAPrediction) -> list[GroundedAnswer]:
    return [GroundedAnswer(question=item.question.question, answer=pred.answer)] if pred.answer else []

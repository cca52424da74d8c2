"""One LangGraph update (``graph.stream(..., stream_mode="updates")``) -> the step events the page shows.

The QA graphs' nodes (``graphs/qa/neusym.py``, ``graphs/qa/baselines.py``) return what changed: the NeuSym agent's
``warm_start`` and ``act`` append an (action, observation) pair to ``steps``, ``decide`` sets the next action (or
the answer), and a baseline's ``context`` sets what its answer will read. Each becomes a step (the action, its
thought, its arguments in short) and, once its observation is in, a short view of that observation.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evidex.tools.safe_text import visible_controls

OBSERVATION_CHARS = 320  # a short view (about four lines); the trace viewer has every observation in full
DETAIL_CHARS = 400


def preview(text: Any, limit: int = OBSERVATION_CHARS) -> str:
    """Whitespace folded, hidden characters made visible, cut with a note."""
    text = " ".join(visible_controls(text if isinstance(text, str) else json.dumps(text, default=str)).split())
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def action_detail(action: dict[str, Any]) -> str:
    """An action's arguments in one short line: the SQL, the search, the expression, the image box."""
    name = action.get("action")
    if name == "sql":
        detail = str(action.get("sql", ""))
    elif name == "search":
        detail = (f"{action.get('query', '')!s} · {action.get('table')}.{action.get('column')} · "
                  f"{action.get('mode', 'hybrid')}")
        if action.get("filter"):
            detail += f" · filter {action['filter']}"
    elif name == "calculate":
        detail = str(action.get("expression", ""))
    elif name == "view_image":
        detail = f"paper {action.get('paper_id')} page {action.get('page_number')} box {action.get('bounding_box')}"
    else:
        rest = {k: v for k, v in action.items() if k not in ("action", "thought", "error")}
        detail = json.dumps(rest, ensure_ascii=False, default=str) if rest else ""
    return preview(detail, DETAIL_CHARS)


def _step(n: int, node: str, action: str, thought: str = "", detail: str = "", observation: str | None = None):
    return {"type": "step", "n": n, "node": node, "action": preview(action, 60),
            "thought": preview(thought, DETAIL_CHARS), "detail": detail, "observation": observation}


@dataclass
class StepTracker:
    """Numbers one run's steps and remembers which step is waiting for its observation."""

    n: int = 0
    waiting: int | None = None

    def _next(self) -> int:
        self.n += 1
        return self.n

    def events(self, node: str, update: Any) -> list[dict[str, Any]]:
        update = update if isinstance(update, dict) else {}
        if node == "warm_start" and update.get("steps"):
            shown, observation = update["steps"][-1]
            action = _parse(shown)
            return [_step(self._next(), node, str(action.get("action", "look-up")), str(action.get("thought", "")),
                          action_detail(action), preview(observation))]
        if node == "early_answer":
            answer = update.get("answer")
            if answer is None:
                return [_step(self._next(), node, "early answer", "",
                              "the look-up does not hold the answer: the agent's turns begin")]
            return [_step(self._next(), node, "early answer", str(getattr(answer, "thought", "")),
                          preview(f"found in the look-up: {getattr(answer, 'answer', '')}", DETAIL_CHARS))]
        if node == "decide":
            if update.get("pending"):
                action = update["pending"]
                if action.get("action") == "invalid":
                    self.waiting = self._next()
                    error = preview(action.get("error", ""), DETAIL_CHARS)
                    return [_step(self.waiting, node, "invalid reply", "", error)]
                self.waiting = self._next()
                return [_step(self.waiting, node, str(action.get("action")), str(action.get("thought", "")),
                              action_detail(action))]
            if update.get("answer") is not None:
                answer = update["answer"]
                return [_step(self._next(), node, "answer", str(getattr(answer, "thought", "")),
                              preview(getattr(answer, "answer", ""), DETAIL_CHARS))]
            return []
        if node == "act" and update.get("steps"):
            observation = preview(update["steps"][-1][1])
            if self.waiting is None:
                return [_step(self._next(), node, "observation", observation=observation)]
            n, self.waiting = self.waiting, None
            return [{"type": "observation", "n": n, "observation": observation}]
        if node == "context":
            sources = update.get("sources") or []
            context = update.get("context") or ""
            return [_step(self._next(), node, "context", "",
                          f"{len(sources)} source(s), {len(context):,} characters",
                          preview(context) if context else "(no context: the question alone)")]
        return []


def _parse(shown: str) -> dict[str, Any]:
    try:
        value = json.loads(shown)
    except (json.JSONDecodeError, TypeError):
        return {"action": "look-up", "detail": shown}
    return value if isinstance(value, dict) else {"action": "look-up"}

"""One LangGraph update (``graph.stream(..., stream_mode="updates")``) -> the step events the page shows.

The QA graphs' nodes (``graphs/qa/neusym.py``, ``graphs/qa/baselines.py``) return what changed: the NeuSym agent's
``warm_start`` and ``act`` append an (action, observation) pair to ``steps``, ``decide`` sets the next action (or
the answer), and a baseline's ``context`` sets what its answer will read. Each becomes a step event with

* ``summary``: one line a reader takes in at a glance: what the agent looked at and what it found (a table's name,
  the pages, a count of rows or passages), made by :func:`summarize`, the one function that reads the agent's
  (action JSON, observation text) pairs; the typed actions of the QA core will replace its parsing;
* ``thought``, ``detail`` (the SQL, the search, the expression) and ``observation`` (a cut view of what the tool
  returned): the raw record, one click further on the page; the trace has every observation in full.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from evidex.graphs.web.errors import public
from evidex.tools.safe_text import visible_controls

OBSERVATION_CHARS = 1500  # the raw view behind a step's line; the trace viewer has every observation in full
DETAIL_CHARS = 600
SUMMARY_CHARS = 220
KNOWN_TABLES = ("metadata", "pages", "sections", "chunks", "tables", "images", "equations", "reference")
_KIND_WORDS = {"chunks": ("passage", "passages"), "pages": ("page", "pages"), "sections": ("section", "sections"),
               "tables": ("table", "tables"), "images": ("figure", "figures"), "equations": ("equation", "equations"),
               "reference": ("reference", "references"), "metadata": ("paper record", "paper records")}
_ROWS_SHOWN = re.compile(r"(?:In total, |only )(\d+) rows are displayed")

# What the summaries may ask of the store: the title of a paper, the label of a cited row ("Table 2").
Labels = Callable[[list[tuple[str, str]]], dict[str, str]]  # (source "tables.<id>", paper id) -> label
Titles = Callable[[], dict[str, str]]  # pdf_id -> title


def preview(text: Any, limit: int = OBSERVATION_CHARS) -> str:
    """Hidden characters made visible, runs of blank lines folded, cut with a note; a tool's error without the
    server's folders (``errors.public``)."""
    text = visible_controls(text if isinstance(text, str) else json.dumps(text, default=str))
    if text.startswith(("[Error]", "[TimeoutError]")):
        text = public(text)
    text = re.sub(r"[ \t]+", " ", re.sub(r"\n\s*\n+", "\n", text)).strip()
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def one_line(text: Any, limit: int) -> str:
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
    return one_line(detail, DETAIL_CHARS)


# -- what a step looked at and found, in one line ------------------------------------------------------------
@dataclass(frozen=True)
class Found:
    """A row a step found: its source (``table.key``), paper and page."""

    source: str
    pdf_id: str
    page_number: int


def _pages(found: list[Found]) -> str:
    pages = sorted({f.page_number for f in found})
    if not pages:
        return ""
    shown = ", ".join(map(str, pages[:6])) + (", …" if len(pages) > 6 else "")
    return f"p. {shown}" if len(pages) == 1 else f"pp. {shown}"


def _quote(text: str, limit: int = 60) -> str:
    return f"“{one_line(text, limit)}”"


def describe_found(found: list[Found], labels: Labels | None = None, titles: Titles | None = None) -> str:
    """``Table 2 (p. 8), 4 passages (pp. 2, 8), the paper record — in <title>``: what a look-up or search found."""
    if not found:
        return "nothing"
    by_kind: dict[str, list[Found]] = {}
    for f in found:
        by_kind.setdefault(f.source.partition(".")[0] or "pages", []).append(f)
    named = labels([(f.source, f.pdf_id) for f in found if f.source.partition(".")[0] in
                    ("tables", "images", "equations")]) if labels else {}
    parts = []
    for kind in ("tables", "images", "equations", "sections", "chunks", "pages", "reference", "metadata"):
        rows = by_kind.pop(kind, [])
        if not rows:
            continue
        singular, plural = _KIND_WORDS[kind]
        if kind == "metadata":
            parts.append("the paper record" if len(rows) == 1 else f"{len(rows)} paper records")
            continue
        labelled = [f"{named[f.source]} (p. {f.page_number})" for f in rows if f.source in named]
        if labelled and len(labelled) <= 3:
            parts.extend(dict.fromkeys(labelled))
            rows = [f for f in rows if f.source not in named]
            if not rows:
                continue
        word = singular if len(rows) == 1 else plural
        parts.append(f"{len(rows)} {word} ({_pages(rows)})")
    for kind, rows in by_kind.items():  # a table the page does not know by name
        parts.append(f"{len(rows)} rows of {kind}")
    papers = {f.pdf_id for f in found}
    where = ""
    if len(papers) == 1 and titles is not None:
        title = titles().get(next(iter(papers)))
        where = f" in {_quote(title, 70)}" if title else ""
    elif len(papers) > 1:
        where = f" across {len(papers)} papers"
    return ", ".join(parts) + where


def _hits(observation: str) -> list[Found]:
    """The hits of a search observation (one JSON object per line, as ``tools.search`` shows them)."""
    out = []
    for line in (observation or "").splitlines():
        if not line.startswith("{"):
            continue
        try:
            hit = json.loads(line)
            out.append(Found(f"{hit['table_name']}.{hit['primary_key']}", str(hit["pdf_id"]), int(hit["page_number"])))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def _failure(observation: str) -> str | None:
    for mark in ("[Error]", "[Refused]", "[TimeoutError]"):
        if (observation or "").startswith(mark):
            reason = observation[len(mark):].lstrip(": ")
            return f"{'refused' if mark == '[Refused]' else 'failed'}: {one_line(reason, 120)}"
    return None


def summarize(action: dict[str, Any], observation: str | None, found: list[Found] | None = None,
              labels: Labels | None = None, titles: Titles | None = None) -> str:
    """One line for a step: what the agent looked at and what it found. ``observation`` None: not run yet.

    Reads the agent's action (as JSON) and its observation text; ``found`` are typed rows when the graph gives
    them (the probe's)."""
    name = str(action.get("action") or "")
    failed = _failure(observation) if observation is not None else None
    warning = observation is not None and observation.startswith("[Warning]")
    if name == "probe":
        return f"Looked up the papers and what the question names: found {describe_found(found or [], labels, titles)}"
    if name == "search":
        what = _KIND_WORDS.get(str(action.get("table")), ("rows", "rows"))[1]
        head = f"Searched {what} for {_quote(str(action.get('query', '')))}"
        if observation is None:
            return head + " …"
        if failed:
            return f"{head}: {failed}"
        hits = found if found is not None else _hits(observation)
        if not hits:
            return f"{head}: no matches"
        return f"{head}: {len(hits)} hit{'s' if len(hits) != 1 else ''}, {describe_found(hits, labels, titles)}"
    if name == "sql":
        sql = str(action.get("sql", ""))
        tables = [t for t in KNOWN_TABLES if re.search(rf"\b{t}\b", sql, re.IGNORECASE)]
        head = f"Queried {', '.join(tables) if tables else 'the store'} with SQL"
        if observation is None:
            return head + " …"
        if failed:
            return f"{head}: {failed}"
        if warning:
            return f"{head}: no rows"
        shown = _ROWS_SHOWN.search(observation)
        rows = int(shown.group(1)) if shown else sum(1 for line in observation.splitlines() if line.startswith("{"))
        first = observation.splitlines()[0] if rows == 1 else ""
        return f"{head}: {rows} row{'s' if rows != 1 else ''}" + (f", {one_line(first, 100)}" if first else "")
    if name == "calculate":
        head = f"Calculated {one_line(action.get('expression', ''), 80)}"
        if observation is None:
            return head + " …"
        if failed:
            return f"{head}: {failed}"
        return f"{head} = {one_line(observation.rpartition(':')[2], 40)}"
    if name == "view_image":
        title = (titles() if titles else {}).get(str(action.get("paper_id")), "")
        region = "a region of " if action.get("bounding_box") else ""
        head = f"Looked at {region}page {action.get('page_number')}" + (f" of {_quote(title, 60)}" if title else "")
        return head + (f": {failed}" if failed else "" if observation is not None else " …")
    if name == "answer":
        answer = one_line(action.get("answer", ""), 120)
        cited = action.get("citations") or []
        return f"Answered {_quote(answer, 120)}" + (f", citing {len(cited)} source{'s' if len(cited) != 1 else ''}"
                                                    if cited else "")
    if name == "invalid":
        return "The model's reply was not a valid action; it was asked again"
    if name == "context":
        return f"Read {describe_found(found or [], labels, titles)}" if found else "Answered from the question alone"
    rest = one_line(action_detail(action), 100)
    return f"{name or 'step'}: {rest}" if rest else name or "step"


# -- events ----------------------------------------------------------------------------------------------------
def _found_of(rows: Iterable[Any]) -> list[Found]:
    """Typed rows as found rows: cited pages (``tools.qa.CitedPage``) or the QA core's store items."""
    out = []
    for row in rows:
        item = row[1] if isinstance(row, tuple) else row
        if hasattr(item, "pdf_id") and hasattr(item, "page_number"):
            out.append(Found(str(getattr(item, "source", "") or f"pages.{item.pdf_id}"), str(item.pdf_id),
                             int(item.page_number)))
        elif hasattr(item, "paper_id") and hasattr(item, "page"):
            source = getattr(item, "source", "") or f"pages.{item.paper_id}"
            out.append(Found(str(source), str(item.paper_id), int(item.page or 0)))
    return out


@dataclass
class StepTracker:
    """Numbers one run's steps, remembers which step is waiting for its observation, and writes each step's
    line with the store's names (``labels``, ``titles``: optional look-ups, see :func:`summarize`)."""

    labels: Labels | None = None
    titles: Titles | None = None
    n: int = 0
    waiting: tuple[int, dict[str, Any]] | None = None
    answered: bool = False
    _steps: dict[int, dict[str, Any]] = field(default_factory=dict)

    def _next(self) -> int:
        self.n += 1
        return self.n

    def _summary(self, action: dict[str, Any], observation: str | None, found: list[Found] | None = None) -> str:
        try:
            return one_line(summarize(action, observation, found, self.labels, self.titles), SUMMARY_CHARS)
        except Exception:  # noqa: BLE001 - a line that cannot be written must not end the question
            return one_line(action.get("action") or "step", SUMMARY_CHARS)

    def _step(self, node: str, action: dict[str, Any], observation: str | None, *, label: str | None = None,
              detail: str | None = None, found: list[Found] | None = None, summary: str | None = None,
              n: int | None = None) -> dict[str, Any]:
        return {"type": "step", "n": n or self._next(), "node": node,
                "action": one_line(label or action.get("action") or "step", 60),
                "summary": summary or self._summary(action, observation, found),
                "thought": one_line(action.get("thought", ""), DETAIL_CHARS),
                "detail": action_detail(action) if detail is None else detail,
                "observation": preview(observation) if observation is not None else None}

    def _typed(self, node: str, step: Any, n: int | None = None, event: str = "step") -> dict[str, Any]:
        """A typed step of the QA core (``agents.neusym_steps.Step``): its action as a dict, what it found."""
        from evidex.agents.neusym_steps import observation_text

        action = step.action.model_dump() if hasattr(step.action, "model_dump") else dict(step.action)
        o = step.observation
        text = observation_text(o)
        found = _found_of(o.context.items) if o.kind in ("probe", "search") and not o.failed else None
        if o.kind == "sql" and o.rows is not None and not o.failed:
            count = len(o.rows.rows)
            first = json.dumps(dict(zip(o.rows.columns, o.rows.rows[0])), ensure_ascii=False, default=str) \
                if count == 1 else ""
            text = f"{first}\nIn total, {count} rows are displayed." if first else \
                (f"In total, {count} rows are displayed." if count else "[Warning]: no rows")
            raw = observation_text(o)
        else:
            raw = text
        summary = self._summary(action, text, found)
        if event == "observation":
            return {"type": "observation", "n": n, "observation": preview(raw), "summary": summary}
        return self._step(node, action, raw, found=found, summary=summary, n=n)

    def events(self, node: str, update: Any) -> list[dict[str, Any]]:
        update = update if isinstance(update, dict) else {}
        steps = update.get("steps") or []
        last = steps[-1] if steps else None
        if node in ("probe", "warm_start") and last is not None:
            if not isinstance(last, tuple):
                return [self._typed(node, last)]
            shown, observation = last
            action = _parse(shown)
            found = _found_of(update.get("warm_rows") or []) if action.get("action") == "probe" else None
            return [self._step(node, action, observation, found=found)]
        if node == "early_answer":
            answer = update.get("answer")
            if answer is None:
                return [self._step(node, {"action": "early answer"}, None, summary="The look-up does not hold the "
                                   "answer by itself: the agent's turns begin",
                                   detail="the look-up does not hold the answer: the agent's turns begin")]
            self.answered = True
            text = one_line(_answer_value(answer), 120)
            return [self._step(node, {"action": "early answer", "thought": str(getattr(answer, "thought", ""))}, None,
                               summary=f"Answered from the look-up: {_quote(text, 120)}",
                               detail=one_line(f"found in the look-up: {_answer_value(answer)}", DETAIL_CHARS))]
        if node == "decide":
            if update.get("pending"):
                action = update["pending"]
                action = action.model_dump() if hasattr(action, "model_dump") else action
                n = self._next()
                self.waiting = (n, action)
                if action.get("action") == "invalid":
                    return [self._step(node, action, None, label="invalid reply", n=n,
                                       detail=one_line(action.get("error", ""), DETAIL_CHARS))]
                return [self._step(node, action, None, n=n)]
            if update.get("answer") is not None:
                return self._answered(node, update["answer"], update.get("cited"))
            return []
        if node == "answer" and update.get("answer") is not None and not self.answered:
            return self._answered(node, update["answer"], None)
        if node == "act" and last is not None:
            if not isinstance(last, tuple):
                if self.waiting is None:
                    return [self._typed(node, last)]
                (n, _), self.waiting = self.waiting, None
                return [self._typed(node, last, n=n, event="observation")]
            shown, observation = last
            if self.waiting is None:
                action = _parse(shown)
                return [self._step(node, {**action, "action": "observation"}, observation,
                                   summary=self._summary(action, observation))]
            (n, action), self.waiting = self.waiting, None
            return [{"type": "observation", "n": n, "observation": preview(observation),
                     "summary": self._summary(action, observation)}]
        if node == "context":
            context = update.get("context")
            if context is not None and not isinstance(context, str):  # typed: the items the answer will read
                from evidex.agents.qa.render import render_context

                text = render_context(context)
                items = list(getattr(context, "items", []))
                return [self._step(node, {"action": "context"}, text or "(no context: the question alone)",
                                   found=_found_of(items), detail=f"{len(items)} item(s), {len(text):,} characters")]
            sources = update.get("sources") or []
            context = context or ""
            return [self._step(node, {"action": "context"}, context if context else "(no context: the question alone)",
                               found=_found_of(sources),
                               detail=f"{len(sources)} source(s), {len(context):,} characters")]
        return []

    def _answered(self, node: str, answer: Any, cited: Any) -> list[dict[str, Any]]:
        self.answered = True
        value = _answer_value(answer)
        citations = cited if cited is not None else getattr(answer, "citations", None) or getattr(answer, "sources", None)
        action = {"action": "answer", "thought": str(getattr(answer, "thought", "")), "answer": value,
                  "citations": list(citations or [])}
        return [self._step(node, action, None, detail=one_line(value, DETAIL_CHARS))]


def _answer_value(answer: Any) -> str:
    """The text of an answer: the QA core's ``Answer.value``, or an agent's ``answer`` field."""
    for name in ("value", "answer"):
        value = getattr(answer, name, None)
        if value is not None:
            return str(value)
    return str(answer)


def _parse(shown: str) -> dict[str, Any]:
    try:
        value = json.loads(shown)
    except (json.JSONDecodeError, TypeError):
        return {"action": "look-up", "detail": shown}
    return value if isinstance(value, dict) else {"action": "look-up"}

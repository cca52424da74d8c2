"""A question asked from the page: run in a background thread, its steps streamed as LangGraph emits them.

``graph.stream(..., stream_mode="updates")`` yields each node's update as the node finishes; every update becomes
step events (:mod:`graphs.web.steps`) appended to the run's event list, which the page follows over server-sent
events (a page that reconnects resumes where it left off). The stop button sets the run's stop flag: the page is
told at once, and the graph ends at its next node or model call (a model call already under way cannot be
interrupted; its reply is dropped). One question runs at a time: a 2-core machine runs one model call well.
"""
from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timezone
from typing import Any

from evidex.graphs.web.errors import failure, public
from evidex.graphs.web.history import History
from evidex.graphs.web.models import AnswerView, AskRequest, ConfigChoice
from evidex.graphs.web.steps import StepTracker, one_line
from evidex.graphs.web.store_gate import StoreGate
from evidex.graphs.web.store_view import citation_views, source_labels
from evidex.tools.safe_text import visible_controls
from langchain_core.callbacks import BaseCallbackHandler

log = logging.getLogger(__name__)
QA_FAMILY = "airqa"  # the configs offered on the page: NeuSym, its ablations and the baselines over a paper store
KEPT_RUNS = 50


class BusyError(RuntimeError):
    """A question is already running."""


class RunStopped(Exception):
    """Raised inside the graph (from a callback) once the user pressed stop."""


class StopWhenAsked(BaseCallbackHandler):
    """Ends the graph at its next node, model or tool call after the stop flag is set."""

    raise_error = True

    def __init__(self, flag: threading.Event) -> None:
        self.flag = flag

    def _check(self, *args: Any, **kwargs: Any) -> None:
        if self.flag.is_set():
            raise RunStopped()

    on_chain_start = on_llm_start = on_chat_model_start = on_tool_start = on_retriever_start = _check


class Run:
    """One question's events, in order, and whether it has finished; followed by any number of pages."""

    def __init__(self, run_id: str, request: AskRequest) -> None:
        self.id = run_id
        self.request = request
        self.events: list[dict[str, Any]] = []
        self.finished = False
        self._finishing = False
        self.stop_requested = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def emit(self, *events: dict[str, Any], final: bool = False) -> bool:
        """Append events (False, and nothing appended, once the run has finished)."""
        with self._lock:
            if self.finished:
                return False
            for event in events:
                self.events.append({**event, "seq": len(self.events)})
            self.finished = final
            listeners = list(self._listeners)
        for loop, ready in listeners:
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:  # that page's event loop has closed
                pass
        return True

    def claim_finish(self) -> bool:
        """True for the one caller that may write the run's end."""
        with self._lock:
            if self._finishing:
                return False
            self._finishing = True
            return True

    async def follow(self, start: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Every event from ``start`` on, as it comes, until the run has finished."""
        ready = asyncio.Event()
        entry = (asyncio.get_running_loop(), ready)
        with self._lock:
            self._listeners.append(entry)
        try:
            seen = max(0, start)
            while True:
                ready.clear()
                with self._lock:
                    new, done = self.events[seen:], self.finished
                for event in new:
                    yield event
                seen += len(new)
                if done:
                    return
                await ready.wait()
        finally:
            with self._lock:
                self._listeners.remove(entry)


def config_choices() -> list[ConfigChoice]:
    from evidex.graphs.tasks import find_config, list_config_names, read_config

    out = []
    for name in list_config_names():
        family, _, short = name.partition("/")
        if family != QA_FAMILY:
            continue
        try:
            description = str(read_config(find_config(name)).get("description") or "").strip()
        except Exception:  # noqa: BLE001 - a broken config is left off the list, not fatal to the page
            continue
        label = "NeuSym agent" if short == QA_FAMILY else short.replace("_", " ")
        out.append(ConfigChoice(name=name, label=label, description=description))
    out.sort(key=lambda c: (c.name != f"{QA_FAMILY}/{QA_FAMILY}", c.name))
    return out


class Asker:
    """Runs the page's questions over one store with the configured model."""

    def __init__(self, *, store_overrides: list[str], tools, gate: StoreGate, history: History, llm=None,
                 llm_spec: str | None = None, overrides: list[str] | None = None,
                 default_config: str = f"{QA_FAMILY}/{QA_FAMILY}") -> None:
        self.store_overrides = store_overrides
        self.tools = tools
        self.gate = gate
        self.history = history
        self.llm = llm
        self.llm_spec = llm_spec
        self.overrides = list(overrides or [])
        self.default_config = default_config
        self.configs = {c.name: c for c in config_choices()}
        self._graphs: dict[str, tuple[Any, Any]] = {}
        self._graph_lock = threading.Lock()
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._runs_lock = threading.Lock()

    # -- graphs --------------------------------------------------------------------------------------------
    def graph(self, name: str, on_build: Callable[[], None] | None = None):
        """The compiled graph of a config (built once; again after an upload changed the store)."""
        from evidex.graphs.api import build_graph
        from evidex.graphs.tasks import load_config

        with self._graph_lock:
            if name not in self._graphs:
                if on_build is not None:
                    on_build()
                overrides = self.overrides + self.store_overrides
                if self.llm_spec:
                    overrides.append(f"model.spec={self.llm_spec}")
                cfg = load_config(name, overrides)
                self._graphs[name] = (cfg, build_graph(cfg, llm=self.llm))
            return self._graphs[name]

    def invalidate(self) -> None:
        """After an upload: graphs are rebuilt on their next question (the store's tools read it afresh)."""
        with self._graph_lock:
            self._graphs.clear()

    def warm(self) -> None:
        """Open the store's search indexes (and the embedding model) before the first question, so its first step
        comes at once; with a model given (tests, scripted) build the default graph too. The local model itself
        starts with the first question, not here: a page opened only to read or upload does not load it."""
        try:
            with self.gate.reading(timeout=60):
                self.tools.schema_text()
                for mode in ("hybrid", "bm25"):
                    try:
                        self.tools.search("warm up", k=1, mode=mode)
                        break
                    except Exception:  # noqa: BLE001 - an empty store or no embedder: the question reports it
                        continue
                if self.llm is not None:
                    self.graph(self.default_config)
                else:
                    import evidex.graphs.qa.baselines  # noqa: F401 - the graph modules, imported ahead
                    import evidex.graphs.qa.neusym  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - warming is an optimisation; questions report real errors
            log.warning("warm-up: %s: %s", type(exc).__name__, exc)

    # -- runs ----------------------------------------------------------------------------------------------
    def get(self, run_id: str) -> Run | None:
        with self._runs_lock:
            return self._runs.get(run_id)

    def start(self, request: AskRequest) -> Run:
        if request.config not in self.configs:
            raise ValueError(f"unknown config {visible_controls(request.config)[:120]!r}; choose one of "
                             f"{', '.join(self.configs)}")
        with self._runs_lock:
            if any(not r.finished for r in self._runs.values()):
                raise BusyError("A question is still running: stop it or wait for its answer.")
            run_id = time.strftime("web-%Y%m%d-%H%M%S-") + secrets.token_hex(3)
            run = Run(run_id, request)
            self._runs[run_id] = run
            while len(self._runs) > KEPT_RUNS:
                self._runs.popitem(last=False)
        run.emit({"type": "started", "run_id": run_id, "question": visible_controls(request.question),
                  "config": request.config, "pdf_ids": list(request.pdf_ids)})
        threading.Thread(target=self._work, args=(run,), name=f"ask-{run_id}", daemon=True).start()
        return run

    def stop_all(self) -> None:
        """The server is shutting down: no run starts another node or model call."""
        with self._runs_lock:
            runs = list(self._runs.values())
        for run in runs:
            run.stop_requested.set()

    def stop(self, run_id: str) -> bool:
        run = self.get(run_id)
        if run is None:
            return False
        run.stop_requested.set()
        self._finish(run, self._view(run, status="stopped", trace_expected=True))
        return True

    def _view(self, run: Run, trace_expected: bool = False, **fields: Any) -> AnswerView:
        """The run's history entry; its trace link once the trace is written (or, stopping, about to be)."""
        req = run.request
        trace = self.history.trace_file(run.id)
        return AnswerView(run_id=run.id, question=visible_controls(req.question), config=req.config,
                          pdf_ids=list(req.pdf_ids), asked_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          trace_url=f"/trace/{run.id}" if trace_expected or trace.is_file() else None, **fields)

    def _finish(self, run: Run, view: AnswerView) -> None:
        """The run's history entry and its last events (its answer, error or stop, then done), exactly once: by
        the worker when the graph ends, or by the stop button, whichever comes first."""
        if not run.claim_finish():
            return
        self.history.add(view)  # before "done": a page that reloads its history on "done" finds the entry
        last = {"answered": "answer", "no_answer": "answer", "error": "error", "stopped": "stopped"}[view.status]
        run.emit({"type": last, **view.model_dump()}, {"type": "done", "status": view.status}, final=True)

    def _work(self, run: Run) -> None:
        from evidex.tools.qa import PaperQuestion, QAPrediction

        req = run.request
        start = time.perf_counter()
        prediction: QAPrediction | None = None
        error: str | None = None
        citations = []
        try:
            waiting = {"type": "status", "message": "waiting for an upload to finish"}
            with self.gate.reading(on_wait=lambda: run.emit(waiting)):
                cfg, graph = self.graph(req.config, on_build=lambda: run.emit(
                    {"type": "status", "message": f"preparing {req.config} (and its model, on its first question)"}))
                question = PaperQuestion(id=run.id, question=req.question, answer_format=req.answer_format,
                                         pdf_ids=list(req.pdf_ids))
                prediction = self._stream(run, graph, cfg, question)
                if prediction is not None:
                    citations = citation_views(self.tools, prediction.citations)
        except RunStopped:
            pass
        except Exception as exc:  # noqa: BLE001 - shown on the page as a message; the log and trace have the rest
            if _plain_message(exc):  # our own words, saying what to do
                log.info("question %s: %s: %s", run.id, type(exc).__name__, exc)
                error = one_line(public(str(exc)), 1000)
            else:
                error, _ = failure(f"The question failed ({type(exc).__name__} in the model or a tool)", exc,
                                   context=f"question {run.id}")
        seconds = round(time.perf_counter() - start, 2)
        if run.stop_requested.is_set():
            view = self._view(run, status="stopped", seconds=seconds)
        elif error is not None or prediction is None:
            view = self._view(run, status="error", error=error or "the graph ended without a prediction",
                              seconds=seconds)
        else:
            view = self._view(run, status="answered" if prediction.answer is not None else "no_answer",
                              answer=visible_controls(prediction.answer) if prediction.answer is not None else None,
                              no_answer=prediction.no_answer, citations=citations, turns=prediction.turns,
                              actions=prediction.actions, seconds=seconds)
        self._finish(run, view)

    def _stream(self, run: Run, graph, cfg, question):
        from evidex.graphs.tracing import RunTreeTracer
        from evidex.tools.qa import QAPrediction

        tracer = RunTreeTracer(self.history.traces, run.id)
        tracker = StepTracker(labels=lambda sources: source_labels(self.tools, sources), titles=self.tools.titles)
        prediction = None
        stream = graph.stream({"input": question}, stream_mode="updates",
                              config={"callbacks": [tracer, StopWhenAsked(run.stop_requested)], "run_name": cfg.name})
        try:
            for chunk in stream:
                for node, update in chunk.items():
                    run.emit(*tracker.events(node, update))
                    value = update.get("prediction") if isinstance(update, dict) else None
                    if isinstance(value, QAPrediction):
                        prediction = value
                if run.stop_requested.is_set():
                    raise RunStopped()
        finally:
            stream.close()
        return prediction


def _plain_message(exc: Exception) -> bool:
    """Errors whose message already says what to do (a missing paper, a bad config, a store or model problem)."""
    names = {"MissingPapersError", "ConfigError", "StoreError", "ModelSpecError", "ModelUnavailableError",
             "StoreBusyError"}
    return type(exc).__name__ in names

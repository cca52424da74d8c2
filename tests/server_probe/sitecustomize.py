"""Loaded by a LangGraph server a test starts (its PYTHONPATH holds this folder): records, one JSON line per event
in ``$EVIDEX_TEST_PROBE_LOG``, every model start, store connection and embedder load, and every file opened under
``$EVIDEX_TEST_CANARY_DIR`` (paths a hostile client names). Test-only; never imported by evidex."""
from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import threading

_LOG = os.environ.get("EVIDEX_TEST_PROBE_LOG")
_CANARY = os.environ.get("EVIDEX_TEST_CANARY_DIR") or None
_TARGETS = {"evidex.agents.local_llm": ("start_local_server",),
            "evidex.tools.store": ("connect_readonly", "connect_writable"),
            "evidex.tools.embeddings": ("_load",)}
_lock = threading.Lock()


def _note(kind: str, detail: str = "") -> None:
    with _lock, open(_LOG, "a", encoding="utf-8") as fh:  # noqa: PTH123
        fh.write(json.dumps({"kind": kind, "detail": detail}) + "\n")


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _CANARY and args and isinstance(args[0], (str, bytes)):
        path = os.fsdecode(args[0])
        if path.startswith(_CANARY) and not path.endswith("probe.jsonl"):
            _note("open", path)


class _Wrapper(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _TARGETS:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module, _run=run, _names=_TARGETS[name]):
            _run(module)
            for fn_name in _names:
                fn = getattr(module, fn_name)

                def counted(*a, _fn=fn, _n=fn_name, **k):
                    import traceback

                    chain = [f"{f.name}" for f in traceback.extract_stack()[:-1] if "/evidex" in f.filename
                             or "/graphs/" in f.filename or "/agents/" in f.filename or "/tools/" in f.filename]
                    _note(_n, " < ".join(reversed(chain[-6:])))
                    return _fn(*a, **k)
                setattr(module, fn_name, counted)
        spec.loader.exec_module = exec_module
        return spec


if _LOG:
    sys.addaudithook(_audit)
    sys.meta_path.insert(0, _Wrapper())

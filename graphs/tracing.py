"""Persist every graph run as a LangSmith-schema run tree (JSON), one file per item, with no SaaS account.

Fields follow LangSmith's Run: id, trace_id, parent_run_id, dotted_order, run_type, name, inputs, outputs,
error, start_time, end_time, tags, extra.metadata, events, child_runs; we add prompt/completion/total tokens,
the prompt tokens the server answered from its prompt cache (``cached_prompt_tokens``, when it reports them) and
the number of model calls (``llm_calls``), summed up the tree, so viewers can show cost without re-parsing
model outputs.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    return _SAFE.sub("_", text)[:120] or "run"


def _usage(outputs: dict | None) -> tuple[int, int, int]:
    """Prompt, completion and cached prompt tokens of one LLM run, from usage_metadata (``input_token_details.
    cache_read``: an OpenAI-compatible server's ``prompt_tokens_details.cached_tokens``) or llm_output."""
    if not outputs:
        return 0, 0, 0
    for gen_list in outputs.get("generations") or []:
        for gen in gen_list or []:
            msg = gen.get("message") if isinstance(gen, dict) else None
            meta = None
            if isinstance(msg, dict):
                meta = msg.get("usage_metadata") or (msg.get("kwargs") or {}).get("usage_metadata")
            elif msg is not None:
                meta = getattr(msg, "usage_metadata", None)
            if meta:
                cached = (meta.get("input_token_details") or {}).get("cache_read") or 0
                return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0)), int(cached)
    usage = (outputs.get("llm_output") or {}).get("token_usage") or {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)), int(cached)


def _plain(value: Any) -> Any:
    """pydantic models (graph state, predictions) as nested JSON rather than repr strings."""
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump(mode="json")
        except Exception:  # noqa: BLE001 - fall back to the default serialisation
            return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def run_to_dict(run: Run) -> dict[str, Any]:
    children = [run_to_dict(c) for c in sorted(run.child_runs, key=lambda r: r.start_time)]
    if run.run_type == "llm":
        prompt, completion, cached = _usage(run.outputs)
        calls = 1
    else:
        prompt = sum(c["prompt_tokens"] for c in children)
        completion = sum(c["completion_tokens"] for c in children)
        cached = sum(c.get("cached_prompt_tokens", 0) for c in children)
        calls = sum(c.get("llm_calls", 0) for c in children)
    return {
        "id": str(run.id),
        "trace_id": str(run.trace_id) if run.trace_id else None,
        "parent_run_id": str(run.parent_run_id) if run.parent_run_id else None,
        "dotted_order": run.dotted_order,
        "run_type": run.run_type,
        "name": run.name,
        "inputs": _plain(run.inputs),
        "outputs": _plain(run.outputs),
        "error": run.error,
        "start_time": run.start_time.isoformat() if run.start_time else None,
        "end_time": run.end_time.isoformat() if run.end_time else None,
        "tags": run.tags or [],
        "extra": {"metadata": (run.extra or {}).get("metadata", {})},
        "events": run.events or [],
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cached_prompt_tokens": cached,
        "llm_calls": calls,
        "child_runs": children,
    }


class RunTreeTracer(BaseTracer):
    """Writes each finished root run to ``<folder>/<name>.json`` and keeps the last tree in memory."""

    def __init__(self, folder: Path | None, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder = Path(folder) if folder else None
        self.name = safe_name(name)
        self.last_tree: dict[str, Any] | None = None

    def _persist_run(self, run: Run) -> None:
        tree = run_to_dict(run)
        self.last_tree = tree
        self.write(tree)

    def write(self, tree: dict[str, Any]) -> None:
        """(Re)write ``<folder>/<name>.json`` atomically (nothing without a folder)."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.name}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(tree, default=str, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)

"""One ``mixed`` item end to end on the real local model (Qwen2.5-Coder-1.5B GGUF via llama.cpp).

The weights are resolved by ``agents.local_llm.resolve_gguf()`` (cached under ~/.cache/evidex/models, fetched
once if absent). Set ``EVIDEX_SKIP_REAL_MODEL=1`` to skip; deselect with ``-m "not real_model"``.
"""
from __future__ import annotations

import json
import os
import re

import pytest

@pytest.mark.real_model
def test_mixed_item_on_the_local_model(tmp_path, kit, embedder, kb_index):
    if os.environ.get("EVIDEX_SKIP_REAL_MODEL") == "1":
        pytest.skip("EVIDEX_SKIP_REAL_MODEL=1: the real local GGUF model test is switched off")
    kit.require_task_data("mixed")
    from evidex.agents.local_llm import resolve_gguf
    from evidex.graphs import config_for_task
    from evidex.graphs.runner import run_task

    path = resolve_gguf()
    assert path.is_file() and path.stat().st_size > 500_000_000

    cfg = config_for_task("mixed", ["dataset.limit=1"])
    assert cfg.model.spec == "local"
    run_dir = run_task(cfg, out_dir=tmp_path, embedder=embedder, index=kb_index, progress=False)

    rows = [json.loads(ln) for ln in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1
    row = rows[0]
    assert row["error"] is None, row["error"]
    pred = row["prediction"]
    given = {e["id"] for e in row["input"]["evidence"]}
    text = pred["explanations"]["claim"]
    cited = pred["cited_ids"]["claim"]
    assert len(text.split()) >= 15, text
    assert cited and set(cited) <= set(pred["kept_ids"]), (cited, pred["kept_ids"])
    assert re.search(r"\[[^\]]+\]", text)
    assert row["metrics"]["citation_validity"] == 1.0
    assert not set(pred["added_ids"]) & given
    # the grounded writer (the default): verdict first, whole-sentence reasons, no self-contradiction
    assert re.search(r"kept items? .*(support|contradict)|^The evidence on|^There is not enough", text.split(". ")[0]), text
    assert row["metrics"]["reason_complete"] == 1.0 and row["metrics"]["self_contradiction"] == 0.0
    # latency and token use are recorded, and the model really ran (tokens from llama.cpp's usage)
    assert row["latency_s"] > 0
    assert row["tokens"]["prompt"] > 100 and row["tokens"]["completion"] > 10
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["n_ok"] == 1 and metrics["n_errors"] == 0
    assert metrics["latency_s"]["n"] == 1 and metrics["latency_s"]["max"] > 0
    assert metrics["model"] == "local"
    tree = json.loads((run_dir / row["trace"]).read_text())
    assert tree["prompt_tokens"] == row["tokens"]["prompt"]

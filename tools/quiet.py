"""Third-party libraries that talk too much at default verbosity, made quiet where evidex imports them.

``bm25s`` sets its own logger to DEBUG at import, so every index build printed ``DEBUG Building index from
tokens`` through the root handler; ``transformers`` draws a "Loading weights" bar each time the embedding model
loads. Neither says anything a user acts on. ``-v`` (INFO) output is unaffected: bm25s's INFO lines stay quiet
too, and real warnings still show.
"""
from __future__ import annotations

import logging
from types import ModuleType


def quiet_bm25s() -> ModuleType:
    """``import bm25s`` with its logger at WARNING."""
    import bm25s as module

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return module


def no_weight_loading_bars() -> None:
    """Switch off transformers' per-load progress bars (model loads take about a second here)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on it
        return
    hf_logging.disable_progress_bar()

"""Optional features and the extras that install them: ``pip install evidex`` is the core (graphs, paper store,
evaluators, CLI, with a model the user names); each optional feature lives in an extra, and its packages are
imported only where the feature is used. A missing one is one line naming the ``pip install`` to run.

    from evidex.tools.extras import require
    xl = require("xllamacpp", "local", "the local model")      # the module, or MissingExtraError
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: extra -> what it adds (the message's wording and the docs' table)
EXTRAS: dict[str, str] = {
    "local": "the local GGUF model (llama.cpp through xllamacpp)",
    "export": "torch and sentence-transformers: ONNX exports of other embedding models, bf16 embeddings, NLI judges",
    "chroma": "Chroma vector stores (stores embedded with Chroma, or a Chroma server)",
    "ragas": "RAGAS metrics (faithfulness, response relevancy)",
    "web": "the web page (evidex web)",
    "scale": "the Ray executor (runs and ingestion on a Ray cluster)",
    "phoenix": "Phoenix tracing (OpenInference spans)",
    "postgres": "the Postgres checkpointer",
}


class MissingExtraError(ImportError, RuntimeError):
    """An optional feature's packages are not installed; ``str(err)`` is one line saying what to install. A
    RuntimeError too, so the CLIs' one-line error handling covers it."""

    def __init__(self, extra: str, feature: str | None = None, missing: str | None = None):
        self.extra = extra
        self.feature = feature or EXTRAS.get(extra, extra)
        self.missing = missing
        super().__init__(f"{self.feature} needs the '{extra}' extra: {install_hint(extra)}"
                         + (f"  (missing: {missing})" if missing else ""), name=missing)


def install_hint(extra: str) -> str:
    """The command that installs an extra into the current environment."""
    return f"pip install 'evidex[{extra}]'"


def require(module: str, extra: str, feature: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra``. Only a missing module counts: an
    installed package that fails for another reason keeps its own error."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:  # the package, or one it needs, is not installed
        raise MissingExtraError(extra, feature, getattr(exc, "name", None) or module) from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported (it is imported, so use it for modules about to be used anyway)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True

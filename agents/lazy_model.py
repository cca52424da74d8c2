"""A chat model built on its first call: what a graph holds when it is built to be shown (a LangGraph server's
schema and drawing endpoints) or before a worker needs it.

It is a real ``BaseChatModel``, so LangGraph's compile-time introspection of node functions (which reads the
attributes their closures use, and checks ``isinstance`` against runtime protocols) sees an ordinary model and
starts nothing; the first generation, ``with_structured_output`` or ``bind_tools`` builds the model once and
delegates to it from then on.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from pydantic import ConfigDict, PrivateAttr


class LazyChatModel(BaseChatModel):
    """Stands in for the chat model ``factory`` builds, until something asks it to generate."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    factory: Callable[[], BaseChatModel]
    label: str = "lazy"
    _model: BaseChatModel | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def built(self) -> bool:
        return self._model is not None

    def real(self) -> BaseChatModel:
        """The model, built on the first call (thread-safe)."""
        with self._lock:
            if self._model is None:
                self._model = self.factory()
            return self._model

    @property
    def _llm_type(self) -> str:
        return self._model._llm_type if self._model is not None else f"lazy:{self.label}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return self._model._identifying_params if self._model is not None else {"model": self.label}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        return self.real()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        return await self.real()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        yield from self.real()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        async for chunk in self.real()._astream(messages, stop=stop, run_manager=run_manager, **kwargs):
            yield chunk

    def with_structured_output(self, *args, **kwargs):
        return self.real().with_structured_output(*args, **kwargs)

    def bind_tools(self, *args, **kwargs):
        return self.real().bind_tools(*args, **kwargs)

    def bind(self, **kwargs):
        return self.real().bind(**kwargs)


def unwrap(llm: Any) -> Any:
    """The model behind a :class:`LazyChatModel` (built now), or ``llm`` itself."""
    return llm.real() if isinstance(llm, LazyChatModel) else llm

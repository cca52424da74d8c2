"""A scripted chat model for tests: replays hand-written or recorded replies, and records every prompt.

``responses`` is a list (replayed in order) or a callable ``(prompt_text) -> reply`` (chosen by content, so
concurrency and call order do not matter). Replies are strings; ``response_format`` and other kwargs are
accepted and ignored, so the same graph code runs against it and against real models.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

Responder = Callable[[str], str]


class ScriptExhaustedError(RuntimeError):
    pass


class ScriptedChatModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: Sequence[str] | Responder
    tool_calls: bool = False  # replies {"tool": name, "args": {...}} become native tool calls (bind_tools)
    repeat: bool = False  # replay the list from the start when it runs out (every process replays its own copy)
    delay_s: float = 0.0  # seconds per call: a slow model (tests that must catch an item in flight)
    logprobs: Callable[[str], list[dict]] | None = None  # reply -> OpenAI-style token logprobs ("content" list)
    _calls: list[str] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[str]:
        """Every prompt seen so far (messages joined), for assertions in tests."""
        return list(self._calls)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        text = "\n\n".join(f"{m.type.upper()}: {m.content}" for m in messages)
        with self._lock:
            index = len(self._calls)
            self._calls.append(text)
        if self.delay_s:
            time.sleep(self.delay_s)
        if callable(self.responses):
            reply = self.responses(text)
        else:
            if self.repeat and self.responses:
                index %= len(self.responses)
            if index >= len(self.responses):
                raise ScriptExhaustedError(f"scripted model has only {len(self.responses)} replies; call {index + 1}")
            reply = self.responses[index]
        prompt_tokens = len(text.split())
        usage = {"input_tokens": prompt_tokens, "output_tokens": len(reply.split()),
                 "total_tokens": prompt_tokens + len(reply.split())}
        meta = {"logprobs": {"content": self.logprobs(reply)}} if self.logprobs else {}
        msg = AIMessage(content=reply, usage_metadata=usage, response_metadata=meta)
        if self.tool_calls:
            call = json.loads(reply)
            msg = AIMessage(content="", usage_metadata=usage,
                            tool_calls=[{"name": call["tool"], "args": call["args"], "id": f"call_{index}"}])
        return ChatResult(generations=[ChatGeneration(message=msg)])


    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Native tool calling, scripted: the tools are recorded in the prompt log, the replies say which to call."""
        return self


def by_prompt(rules: Sequence[tuple[Sequence[str], str]], default: str | None = None) -> Responder:
    """A responder choosing a reply by content: ``rules`` are ``(strings, reply)``; a prompt gets the reply of the
    rule whose strings it all contains (of several, the one with the most text: a question and its paper's id
    before the question alone), else ``default``; with no default a prompt no rule matches is an error."""
    ordered = sorted(rules, key=lambda rule: sum(map(len, rule[0])), reverse=True)

    def respond(prompt: str) -> str:
        reply = next((r for strings, r in ordered if all(s in prompt for s in strings)), default)
        if reply is None:
            raise ScriptExhaustedError(f"no scripted rule matches the prompt: {prompt[:200]!r}")
        return reply

    return respond


def load_script(path: str | Path) -> ScriptedChatModel:
    """``scripted:<file.json>``: a JSON list of replies (dicts are serialised to JSON strings), or an object
    ``{"replies": [...], "repeat": true, "delay_s": 0.5}`` (replayed endlessly, each call that slow), or
    ``{"by_prompt": [{"contains": ["<text>", ...], "reply": ...}, ...], "default": reply}`` (:func:`by_prompt`: each
    call answered by content, so order and concurrency do not matter)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))

    def text(reply: Any) -> str:
        return reply if isinstance(reply, str) else json.dumps(reply)

    if isinstance(data, dict) and isinstance(data.get("by_prompt"), list):
        default = data.get("default")
        try:
            rules = [([str(c) for c in rule["contains"]], text(rule["reply"])) for rule in data["by_prompt"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}: each by_prompt rule is {{\"contains\": [...], \"reply\": ...}}") from exc
        return ScriptedChatModel(responses=by_prompt(rules, None if default is None else text(default)),
                                 delay_s=float(data.get("delay_s", 0.0)))
    options: dict[str, Any] = {}
    if isinstance(data, dict) and isinstance(data.get("replies"), list):
        options = {"repeat": bool(data.get("repeat", False)), "delay_s": float(data.get("delay_s", 0.0))}
        data = data["replies"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: a scripted model file must hold a JSON list of replies, "
                         '{"replies": [...], "repeat": ..., "delay_s": ...} or {"by_prompt": [...], "default": ...}')
    return ScriptedChatModel(responses=[text(r) for r in data], **options)

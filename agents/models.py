"""Chat-model factory: ``local`` (default), ``openai[:model]``, any LangChain ``provider:model``, ``scripted:file``.

Everything downstream talks to a LangChain ``BaseChatModel``. The local model is llama.cpp's OpenAI-compatible
server on loopback, reached with ``ChatOpenAI`` so structured output works as with hosted models.
"""
from __future__ import annotations

from langchain_core.language_models.chat_models import BaseChatModel

from evidex.tools.settings import get_settings


class ModelSpecError(ValueError):
    pass


def make_chat_model(spec: str = "local", *, temperature: float = 0.0, max_tokens: int = 512,
                    base_url: str | None = None, n_ctx: int = 8192, threads: int | None = None,
                    timeout_s: float = 600.0, parallel: int = 1, prompt_cache_mib: int = 0,
                    send_api_key: bool = True) -> BaseChatModel:
    """A chat model for ``spec``. ``local`` only: ``n_ctx`` tokens of context per slot, ``parallel`` slots
    (requests in flight that llama.cpp decodes together), ``threads`` CPU threads, ``prompt_cache_mib`` of host
    memory for the prompts of finished requests. ``send_api_key=False``: the environment's ``OPENAI_API_KEY`` is
    not sent (the ``base_url`` was chosen by a run, not by the operator)."""
    spec = (spec or "local").strip()
    provider, _, name = spec.partition(":")
    if provider == "local":
        from langchain_openai import ChatOpenAI

        from evidex.tools.extras import MissingExtraError, require

        try:  # before fetching 1.1 GB of weights it could not run
            require("xllamacpp", "local", "the local model (model spec 'local', the configs' default)")
        except MissingExtraError as exc:
            raise ModelSpecError(f"{exc}; or name a hosted model: --llm openai:<model> (Python: llm=...)") from None
        from evidex.agents.local_llm import resolve_gguf, start_local_server

        path = resolve_gguf()
        server = start_local_server(path, n_ctx=n_ctx, threads=threads, parallel=max(1, parallel),
                                    prompt_cache_mib=prompt_cache_mib)
        return ChatOpenAI(model=name or path.stem, base_url=server.base_url, api_key=server.api_key,
                          temperature=temperature, max_tokens=max_tokens, timeout=timeout_s, max_retries=1,
                          stream_usage=True, metadata={LLAMA_CPP: True})
    if provider == "openai":
        from langchain_openai import ChatOpenAI

        settings = get_settings()
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key and send_api_key else None
        url = base_url or settings.openai_base_url
        if key is None and url is None:
            raise ModelSpecError("openai models need OPENAI_API_KEY (environment or .env) or model.base_url "
                                 "for a local OpenAI-compatible server.")
        return ChatOpenAI(model=name or "gpt-4o-mini", base_url=url, api_key=key or "not-needed",
                          temperature=temperature, max_tokens=max_tokens, timeout=timeout_s, max_retries=2)
    if provider == "scripted":
        from evidex.agents.scripted import load_script

        if not name:
            raise ModelSpecError("scripted models need a file: scripted:path/to/replies.json")
        return load_script(name)
    if not name:
        raise ModelSpecError(f"Unknown model spec {spec!r}: use local, openai:<model>, scripted:<file> or "
                             "a LangChain provider:model such as anthropic:claude-3-5-haiku-latest.")
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:  # pragma: no cover
        raise ModelSpecError("provider:model specs need the `langchain` package") from exc
    try:
        return init_chat_model(spec, temperature=temperature, max_tokens=max_tokens)
    except (ImportError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelSpecError(f"Cannot create model {spec!r}: {first} Use local, openai:<model>, scripted:<file> or a "
                             "LangChain provider:model (anthropic:..., ollama:..., groq:..., ...) whose "
                             "integration package is installed.") from exc


_NAME_FIELDS = ("model_name", "model", "model_id", "deployment_name", "repo_id")


def describe_model(llm) -> str:
    """How reports and traces name a chat model object: its class and model name, e.g. ``ChatOpenAI(gpt-4o-mini)``
    (``local`` only names the spec; an app's ``llm=`` object is named by what it is)."""
    cls = type(llm).__name__
    for field in _NAME_FIELDS:
        value = getattr(llm, field, None)
        if isinstance(value, str) and value.strip():
            return f"{cls}({value.strip()})"
    return cls


LLAMA_CPP = "llama_cpp"  # metadata key of the local model: its server takes llama.cpp's own sampling fields


def is_llama_cpp(llm: BaseChatModel) -> bool:
    """Whether ``llm`` is the local llama.cpp server (``local``), which accepts llama.cpp's sampling fields (a hosted
    OpenAI-style endpoint may reject them)."""
    from evidex.agents.lazy_model import unwrap

    return bool((getattr(unwrap(llm), "metadata", None) or {}).get(LLAMA_CPP))


def is_openai_compatible(llm: BaseChatModel) -> bool:
    from evidex.agents.lazy_model import unwrap

    return type(unwrap(llm)).__name__ == "ChatOpenAI"

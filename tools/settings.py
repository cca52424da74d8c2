"""Process-level settings from the environment (``EVIDEX_*``) and ``.env``.

Graph behaviour lives in YAML configs (``graphs.config``); this holds only machine facts: where data and
caches are, which model file to use, and provider keys. Keys are ``SecretStr`` so they never print.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "evidex"


def user_env_file() -> Path:
    """``~/.config/evidex/.env`` (or under ``XDG_CONFIG_HOME``): machine settings that hold in every folder. A
    ``.env`` in the working folder, then the environment itself, override it."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "evidex" / ".env"


class Settings(BaseSettings):
    """Machine settings. Every field can be set as ``EVIDEX_<NAME>`` (or the provider's usual name)."""

    model_config = SettingsConfigDict(env_prefix="EVIDEX_", env_file=(user_env_file(), ".env"), extra="ignore")

    data_dir: Path | None = Field(None, description="Folder holding the datasets (evidex run --data-dir).")
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="Downloads, models and indexes.")
    model_path: Path | None = Field(None, description="Explicit GGUF file for the local provider.")
    runs_dir: Path = Field(Path("runs"), description="Where `evidex run` writes run folders.")
    offline: bool = Field(False, description="Never try the network for data or models.")
    store_wait_s: float = Field(10.0, ge=0, description="Seconds a reader or writer of a paper store waits for "
                                "another process holding it before it refuses, naming that process.")
    openai_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(None, validation_alias="OPENAI_BASE_URL")
    server_api_key: SecretStr | None = Field(None, description="The key every client of the LangGraph server must "
                                             "send (graphs/server_auth.py); unset = this machine's clients only.")

    @property
    def models_dir(self) -> Path:
        return self.cache_dir / "models"

    @property
    def index_dir(self) -> Path:
        return self.cache_dir / "indexes"

    @property
    def downloads_dir(self) -> Path:
        return self.cache_dir / "data"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()

"""Prompt templates live in ``prompts/*.txt``; lines starting with ``#`` at the top are a header for humans."""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

PROMPT_DIR = Path(os.environ.get("EVIDEX_PROMPT_DIR", Path(__file__).resolve().parent.parent / "prompts"))


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@lru_cache(maxsize=64)
def load_prompt(name: str) -> str:
    """The template named ``name`` (a file name in the prompt folder without ``.txt``; never a path)."""
    path = PROMPT_DIR / f"{name}.txt"
    if not isinstance(name, str) or not _NAME.match(name) or not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROMPT_DIR.glob("*.txt")))
        raise FileNotFoundError(f"Prompt {name!r} not found in {PROMPT_DIR}. Known prompts: {known}")
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines).strip("\n")


def prompt_names() -> frozenset[str]:
    """The names :func:`load_prompt` accepts (the prompt folder's ``*.txt`` files)."""
    return frozenset(p.stem for p in PROMPT_DIR.glob("*.txt") if _NAME.match(p.stem))


def render(name: str, **values: object) -> str:
    return load_prompt(name).format(**values)

"""Module docstrings as ``--help`` text: the reStructuredText markup that Sphinx reads is noise in a terminal."""
from __future__ import annotations

import re

_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|obj|exc):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_help(doc: str | None) -> str:
    """``doc`` without RST roles and literal markup: ``:func:`x``` -> ``x``, double backticks -> none; a
    ``::`` that opens a literal block reads as ``:``."""
    text = _LITERAL.sub(r"\1", _ROLE.sub(r"\1", doc or ""))
    return re.sub(r"(?<=\S)::$", ":", text, flags=re.M)

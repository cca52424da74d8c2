"""Text from data or a model, made safe to show: in HTML, in Markdown and on a terminal.

Claims, evidence, ids, config names and model replies are data, never markup. Three hazards:

* **markup**: ``<script>``, ``<svg onload=...>``, ``[x](javascript:...)``: escaped (:func:`html_text`,
  :func:`md_text`), so no renderer turns them into live elements;
* **invisible characters**: bidirectional controls (U+202E draws a claim reversed), zero-width characters (an
  id that looks like another) and other control characters (NUL, ESC, which a terminal would obey) are shown
  as visible ``⟨U+202E⟩`` marks (:func:`visible_controls`);
* **size**: a 200 kB string in a table cell; :func:`md_text` and :func:`shorten` cut it with a note.
"""
from __future__ import annotations

import html
import re

# Bidirectional formatting characters (Unicode TR9) and zero-width / invisible format characters.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
INVISIBLE = "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
# C0 controls except tab, newline and carriage return; DEL; C1 controls.
_CONTROL_RANGES = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_HIDDEN = re.compile(f"[{_CONTROL_RANGES}{re.escape(BIDI_CONTROLS)}{re.escape(INVISIBLE)}]")
# Markdown: characters that start links and images, code spans or table cells (escaped with a backslash); <, >
# and & are HTML-escaped, so no raw HTML, entity trick or autolink survives. Emphasis (* _) cannot make a live
# element and stays readable in the raw file (metric_names_like_this).
_MD_SPECIAL = re.compile(r"([\\`\[\]|])")


def visible_controls(text: object) -> str:
    """``text`` with every bidirectional, zero-width or control character replaced by a visible ``⟨U+XXXX⟩``."""
    return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", str(text))


def terminal_text(value: object) -> str:
    """For rich output: hidden and control characters shown, and no rich markup (``[red]``) taken from data."""
    from rich.markup import escape

    return escape(visible_controls(value))


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def html_text(value: object) -> str:
    """Escaped for HTML text and attribute values (quotes included), hidden characters made visible."""
    return html.escape(visible_controls(value), quote=True)


def md_text(value: object, limit: int = 2000) -> str:
    """One line of Markdown that renders as exactly this text: HTML-escaped, Markdown syntax backslash-escaped,
    newlines folded, hidden characters made visible, cut at ``limit`` characters."""
    text = " ".join(visible_controls(value).split())
    text = shorten(text, limit)
    text = html.escape(text, quote=False)
    return _MD_SPECIAL.sub(r"\\\1", text)


def csp_meta(*scripts: str) -> str:
    """A Content-Security-Policy for a self-contained page: nothing remote, images only as data URIs, inline
    styles, and only the page's own inline ``scripts`` (by hash), so injected handlers and scripts do not run."""
    import base64
    import hashlib

    hashes = [f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts]
    script_src = " ".join(hashes) or "'none'"
    policy = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {script_src}; "
              "base-uri 'none'; form-action 'none'")
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'

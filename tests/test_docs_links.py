"""The user's pages: the README stays a page (at most 200 lines) and every relative link in it and in docs/ points at
a file of the checkout."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(md: Path) -> list[tuple[str, Path]]:
    out = []
    for target in LINK.findall(md.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the same page
        out.append((target, (md.parent / target.split("#", 1)[0]).resolve()))
    return out


def test_the_readme_is_at_most_200_lines():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_every_relative_link_in_the_readme_and_docs_resolves():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = [f"{md.relative_to(REPO)}: {t}" for md in pages for t, path in _relative_links(md) if not path.exists()]
    assert broken == []


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[ok](page.md) [web](https://example.org) [gone](missing.md#part)\n")
    assert [t for t, p in _relative_links(page) if not p.exists()] == ["missing.md#part"]

"""The one place a context becomes prompt text: each item on its own block, tagged with where it came from.

    [metadata <paper>] title: ... | authors (3): A, B, C | pages: 12 | conference: acl2023 | ...
    [tables.<key>, <paper> page 7] Table 2: caption
    |markdown rows|
    [chunks.<key>, <paper> page 3, paper "Title"] passage text

``keys=False`` leaves the store keys out of the tags (``[<paper> page 3] ...``): a single answer call cites by page,
and the keys are tokens it does not need; an agent's observations keep them (its SQL can look a row up by key).
"""
from __future__ import annotations

from evidex.tools.first_page import affiliations, corresponding_authors, proceedings_line
from evidex.tools.paperstore.models import Equation, Figure, Note, Page, Paper, Passage, Table
from evidex.tools.qa.context import Context, Rows
from evidex.tools.qa.question import Question

NOTHING = "(nothing found)"


def paper_label(title: str | None) -> str:
    """The title part of a passage's tag, or nothing when the title is unknown."""
    return f', paper "{title}"' if title else ""


def _tag(item, keys: bool, title: str | None = None) -> str:
    where = f"{item.paper_id} page {item.page}{paper_label(title)}"
    return f"[{item.source}, {where}]" if keys else f"[{where}]"


def paper_line(p: Paper) -> str:
    # counted here: a small model miscounts a list of a dozen names ("how many authors ...")
    named = f"authors ({len(p.authors)}): {', '.join(p.authors)}" if p.authors else "authors: unknown"
    text = (f"[metadata {p.paper_id}] title: {p.title} | {named} | pages: {p.num_pages} | "
            f"conference: {p.conference or 'unknown'}")
    # marked on the first page, not in the metadata row: a small model named the first author or all of them
    corresponding = corresponding_authors(p.first_page, p.authors)
    # the marks resolved: asked which institution an author is at, the 1.5B model did not follow "Ann Lee♣ ... ♣Univ"
    where = "; ".join(f"{a}: {' / '.join(places)}" for a, places in affiliations(p.first_page, p.authors).items())
    header = proceedings_line(p.first_page)
    return (text + (f" | corresponding authors: {', '.join(corresponding)}" if corresponding else "")
            + (f" | affiliations: {where}" if where else "")
            + (f" | first page header: {header}" if header else ""))


def render_item(item, *, keys: bool = True, titles: dict[str, str] | None = None) -> str:
    titles = titles or {}
    if isinstance(item, Paper):
        return paper_line(item)
    if isinstance(item, Note):
        return f"[metadata {', '.join(item.paper_ids) or item.paper_id}] {item.text}"
    if isinstance(item, Table):
        return f"{_tag(item, keys)} {item.caption}\n{item.text}"
    if isinstance(item, Figure):
        inside = f"\nText inside the figure: {item.text}" if item.text else ""
        return f"{_tag(item, keys)} {item.caption}{inside}"
    if isinstance(item, Equation):
        return f"{_tag(item, keys)} Equation ({item.number}): {item.text}"
    if isinstance(item, Page):
        return f"[{item.paper_id} page {item.page}]\n{item.text}"
    if isinstance(item, Passage):
        return f"{_tag(item, keys, titles.get(item.paper_id))} {item.text}"
    if isinstance(item, Rows):
        return rows_text(item)
    return f"{_tag(item, keys)} {getattr(item, 'text', '')}"


def rows_text(rows: Rows) -> str:
    """An SQL result as one JSON object per row, and how many rows (or where the result was cut)."""
    import json

    if not rows.rows:
        return "[Warning]: The SQL execution result is empty; check the query (table/column names, filters)."
    lines = [json.dumps(dict(zip(rows.columns, r)), ensure_ascii=False) for r in rows.rows]
    lines.append(f"... only {len(rows.rows)} rows are displayed, the result is truncated by {rows.truncated_by}."
                 if rows.truncated_by else f"In total, {len(rows.rows)} rows are displayed.")
    return "\n".join(lines)


def render_context(context: Context, *, keys: bool = True, limit: int | None = None, empty: str = NOTHING) -> str:
    """The context as prompt text (``limit``: cut to that many characters, with a note of what was cut)."""
    text = "\n\n".join(render_item(i, keys=keys, titles=context.titles) for i in context.items) or empty
    return truncate(text, limit) if limit else text


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [cut: {len(text) - limit:,} more characters; ask a narrower query]"


def scope_line(q: Question) -> str:
    """Which papers the question is about, and the filter that keeps search on them."""
    from evidex.tools.filters import MAX_FILTER_CHARS
    from evidex.tools.paperstore import scope_filter

    parts = []
    flt = scope_filter(q.papers)
    if flt and len(flt) > MAX_FILTER_CHARS:
        # a filter the search would refuse, and a prompt line of thousands of characters: searches keep to these
        # papers by ranking (tools.qa.probe.search_space), so the line only says how many there are
        parts.append(f"{len(q.papers)} papers named by the question, too many for one search filter (search "
                     "without a filter; SQL: paper_id / ref_paper_id)")
    elif flt:
        parts.append(f"{flt} (search filter: {flt}; SQL: paper_id / ref_paper_id)")
    if q.conferences:
        parts.append(f"conferences: {', '.join(q.conferences)} (SQL: metadata.conference_year)")
    return "; ".join(parts) or "any paper in the database"


__all__ = ["NOTHING", "paper_label", "paper_line", "render_context", "render_item", "scope_line", "truncate"]

"""The one place a context becomes prompt text: each item on its own block, tagged with where it came from.

    [metadata <paper>] title: ... | authors (3): A, B, C | pages: 12 | conference: acl2023 | ...
    [tables.<key>, <paper> page 7] Table 2: caption
    |markdown rows|
    [chunks.<key>, <paper> page 3, paper "Title"] passage text

An agent's observations keep the store keys and paper ids (its SQL can look a row up by key). An answer call
(``tags="aliases"``) does not cite; code finds the items an answer rests on. So its tags name a paper by a short
alias, and only when the context holds more than one paper:

    [metadata] title: ...                  [metadata, paper 2] title: ...
    [page 7] Table 2: caption              [paper 2, page 7] Table 2: caption
    [paper "Title", page 3] passage        [paper 2 "Title", page 3] passage  (titles shown)

A store key and a paper id are some 25 tokens each. On the 28 pool_test questions' single answer prompts, keys
and ids were 27% of the tokens (median 2,503 -> 1,815 without them).
"""
from __future__ import annotations

from typing import Literal

from evidex.tools.first_page import affiliations, corresponding_authors, proceedings_line
from evidex.tools.paperstore.figure_text import Bar, FigureText, Grid
from evidex.tools.paperstore.models import Equation, Figure, Note, Page, Paper, Passage, Table
from evidex.tools.paperstore.table_text import rows_markdown
from evidex.tools.qa.context import Context, Rows
from evidex.tools.qa.question import Question

NOTHING = "(nothing found)"


def paper_aliases(context: Context) -> dict[str, str]:
    """Short names of the context's papers in order of appearance ("paper 1", "paper 2"); none for one paper."""
    ids = list(dict.fromkeys(pid for i in context.items for pid in item_papers(i)))
    return {pid: f"paper {n}" for n, pid in enumerate(ids, 1)} if len(ids) > 1 else {}


def item_papers(item) -> list[str]:
    """The papers an item belongs to (a note shared by several papers belongs to each)."""
    if isinstance(item, Note):
        return list(item.paper_ids) or ([item.paper_id] if item.paper_id else [])
    pid = getattr(item, "paper_id", "")
    return [pid] if pid else []


def _where(item, aliases: dict[str, str] | None, title: str | None = None) -> str:
    """``<paper> page N[, paper "Title"]`` with ``aliases`` None (an agent's view), else ``[paper K ["Title"], ]page
    N``: the alias when the context holds several papers, the title when it is shown."""
    if aliases is None:
        return f"{item.paper_id} page {item.page}" + (f', paper "{title}"' if title else "")
    alias = aliases.get(item.paper_id, "paper" if title else "")
    named = f'{alias} "{title}"' if title else alias
    return f"{named}, page {item.page}" if named else f"page {item.page}"


def _tag(item, aliases: dict[str, str] | None, title: str | None = None, keys: bool = True) -> str:
    key = f"{item.source}, " if aliases is None and keys else ""
    return f"[{key}{_where(item, aliases, title)}]"


def _metadata_tag(ids: list[str], aliases: dict[str, str] | None) -> str:
    if aliases is None:
        return f"[metadata {', '.join(ids)}]"
    named = [aliases[i] for i in ids if i in aliases]
    return f"[metadata, {', '.join(named)}]" if named else "[metadata]"


def paper_line(p: Paper, aliases: dict[str, str] | None = None) -> str:
    # counted here: a small model miscounts a list of a dozen names ("how many authors ...")
    named = f"authors ({len(p.authors)}): {', '.join(p.authors)}" if p.authors else "authors: unknown"
    pages = f" | pages: {p.num_pages}" if p.num_pages is not None else ""
    text = (f"{_metadata_tag([p.paper_id], aliases)} title: {p.title} | {named}{pages} | "
            f"conference: {p.conference or 'unknown'}")
    # marked on the first page, not in the metadata row: a small model named the first author or all of them
    corresponding = corresponding_authors(p.first_page, p.authors)
    # the marks resolved: asked which institution an author is at, the 1.5B model did not follow "Ann Lee♣ ... ♣Univ"
    # (read by the store when the question asks: the marks, else the layout of names over affiliations)
    where = "; ".join(f"{a}: {' / '.join(places)}"
                      for a, places in (p.affiliations or affiliations(p.first_page, p.authors)).items())
    header = proceedings_line(p.first_page)
    return (text + (f" | corresponding authors: {', '.join(corresponding)}" if corresponding else "")
            + (f" | affiliations: {where}" if where else "")
            + (f" | first page header: {header}" if header else ""))


def figure_text(printed: FigureText, *, max_ticks: int = 10, max_chars: int = 700) -> str:
    """A chart's printed words as it shows them: each axis with its title and ticks, rotated labels no axis
    claims, then the other lines row by row (" | " between lines of a row). A figure with no axis (a diagram, an
    example) keeps the order its text blocks have in the PDF, which holds each box's words together."""
    # the legend and the bars have a budget of their own: a chart of many bars keeps its titles and panel labels
    drawn = [f"panels ({len(printed.panels)}): " + " | ".join(printed.panels)] if printed.panels else []
    drawn += [f"legend ({len(printed.legend)} entries): "
             + " | ".join(f"{e.label} ({e.color})" for e in printed.legend)] if printed.legend else []
    drawn += _bar_lines(printed.bars, max_chars)
    drawn += [line for grid in printed.grids for line in _grid_lines(grid, max_chars)]
    if not printed.axes and not printed.bars and not printed.grids:
        words = printed.words
        return "\n".join(drawn + [words if len(words) <= max_chars else words[:max_chars].rsplit(" ", 1)[0] + " ..."])
    out = []
    for axis in printed.axes:
        ticks = axis.ticks if len(axis.ticks) <= max_ticks else [*axis.ticks[:4], "...", *axis.ticks[-3:]]
        title = f' "{axis.title}"' if axis.title else " (untitled)"
        out.append(f"{axis.which} axis{title}: {', '.join(ticks)}")
    if printed.rotated:
        out.append("rotated labels: " + " | ".join(printed.rotated))
    rows = _within([" | ".join(row) for row in printed.rows], max_chars - sum(len(line) for line in out))
    if rows:
        out.append("labels (legend entries, titles), row by row:\n" + "\n".join(rows))
    return "\n".join(drawn + out)


def _bar_lines(bars: list[Bar], max_chars: int) -> list[str]:
    """Bars by category, each with its series and printed value (or its height read off the axis, marked ~)."""
    if not bars:
        return []
    groups: list[tuple[str, list[str]]] = []
    for bar in bars:
        said = bar.value or (f"~{bar.height}" if bar.height else "?")
        if not groups or groups[-1][0] != bar.category:
            groups.append((bar.category, []))
        groups[-1][1].append(f"{bar.series} {said}")
    return ["bars (category: series and the number printed on the bar; ~ read off the axis):",
            *_within([f"{category or '(no label)'}: {', '.join(said)}" for category, said in groups], max_chars)]


def _grid_lines(grid: Grid, max_chars: int) -> list[str]:
    """A grid of printed numbers as a table: its column labels, then each row's label and cells."""
    table = rows_markdown([["", *grid.columns], *([label, *cells] for label, cells in zip(grid.rows, grid.cells))])
    head, rule, *rows = table.split("\n")  # as a table's text prints (tools.paperstore.table_text)
    title = f' "{grid.title}"' if grid.title else ""
    return [f"numbers printed in a grid{title} ({len(grid.rows)} rows, {len(grid.columns)} columns; each row's "
            "label, then its numbers under the column labels):", head, rule, *_within(rows, max_chars)]


def _within(lines: list[str], room: int) -> list[str]:
    """The first of ``lines`` that fit in ``room`` characters, and "..." where the rest are cut."""
    kept: list[str] = []
    for line in lines:
        if len(line) > room:
            return [*kept, "..."]
        kept.append(line)
        room -= len(line)
    return kept


def render_item(item, *, titles: dict[str, str] | None = None, aliases: dict[str, str] | None = None,
                keys: bool = True) -> str:
    """One item's block: tagged with its store key (``keys``) and paper id, or with ``aliases``
    (:func:`paper_aliases`) as an answer call shows it."""
    titles = titles or {}
    if isinstance(item, Paper):
        return paper_line(item, aliases)
    if isinstance(item, Note):
        return f"{_metadata_tag(item_papers(item), aliases)} {item.text}"
    if isinstance(item, Table):
        return f"{_tag(item, aliases, keys=keys)} {item.caption}\n{item.text}"
    if isinstance(item, Figure):
        inside = f"\nText inside the figure:\n{figure_text(item.printed)}" if item.printed else ""
        return f"{_tag(item, aliases, keys=keys)} {item.caption}{inside}"
    if isinstance(item, Equation):
        return f"{_tag(item, aliases, keys=keys)} Equation ({item.number}): {item.text}"
    if isinstance(item, Page):
        return f"[{_where(item, aliases)}]\n{item.text}"
    if isinstance(item, Passage):
        return f"{_tag(item, aliases, titles.get(item.paper_id), keys)} {item.text}"
    if isinstance(item, Rows):
        return rows_text(item)
    return f"{_tag(item, aliases, keys=keys)} {getattr(item, 'text', '')}"


def rows_text(rows: Rows) -> str:
    """An SQL result as one JSON object per row, and how many rows (or where the result was cut)."""
    import json

    if not rows.rows:
        return "[Warning]: The SQL execution result is empty; check the query (table/column names, filters)."
    lines = [json.dumps(dict(zip(rows.columns, r)), ensure_ascii=False) for r in rows.rows]
    lines.append(f"... only {len(rows.rows)} rows are displayed, the result is truncated by {rows.truncated_by}."
                 if rows.truncated_by else f"In total, {len(rows.rows)} rows are displayed.")
    return "\n".join(lines)


Tags = Literal["keys", "ids", "aliases"]


def render_context(context: Context, *, tags: Tags = "keys", limit: int | None = None, empty: str = NOTHING) -> str:
    """The context as prompt text, each block tagged (``tags``) with its store key and paper id (``keys``: an
    agent's view, its SQL can look a row up by key), its paper id alone (``ids``) or a short paper alias
    (``aliases``: an answer call's); ``limit``: cut to that many characters, with a note of what was cut."""
    aliases = paper_aliases(context) if tags == "aliases" else None
    text = "\n\n".join(render_item(i, titles=context.titles, aliases=aliases, keys=tags == "keys")
                        for i in context.items) or empty
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


__all__ = ["NOTHING", "Tags", "item_papers", "paper_aliases", "paper_line", "render_context", "render_item",
           "scope_line", "truncate"]

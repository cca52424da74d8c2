"""Which papers a question is about, said three ways: the search filter that keeps a search on them, the SQL
placeholders that pass their ids as parameters, and the line the prompts show."""
from __future__ import annotations

from evidex.tools.filters import MAX_FILTER_CHARS
from evidex.tools.qa import PaperQuestion


def sql_marks(values: list) -> str:
    """Placeholders for an SQL ``IN (...)`` over ``values``, which go in as parameters, never spliced."""
    return ", ".join("?" for _ in values)


def scope_filter(pdf_ids: list[str]) -> str | None:
    """The search filter that keeps a search on these papers (string literals escaped as the filter grammar
    reads them), or None for no restriction."""
    if not pdf_ids:
        return None
    ids = ", ".join("'" + p.replace("\\", "\\\\").replace("'", "\\'") + "'" for p in pdf_ids)
    return f"pdf_id in [{ids}]"


def scope_line(q: PaperQuestion) -> str:
    """Which papers the question is about, and the filter that keeps search on them."""
    parts = []
    flt = scope_filter(q.pdf_ids)
    if flt and len(flt) > MAX_FILTER_CHARS:
        # a filter the search would refuse, and a prompt line of thousands of characters: our own searches keep to
        # these papers by ranking (StoreTools._search_space), so the line only says how many there are
        parts.append(f"{len(q.pdf_ids)} papers named by the question, too many for one search filter (search "
                     "without a filter; SQL: paper_id / ref_paper_id)")
    elif flt:
        parts.append(f"{flt} (search filter: {flt}; SQL: paper_id / ref_paper_id)")
    if q.conferences:
        parts.append(f"conferences: {', '.join(q.conferences)} (SQL: metadata.conference_year)")
    return "; ".join(parts) or "any paper in the database"


def names_papers(q: PaperQuestion) -> bool:
    """Whether passages shown for ``q`` carry their paper's title: yes unless the question is about one known
    paper. A retrieval or multi-paper question is answered with titles or about several papers, and a passage's
    pdf_id does not say which paper it is (the local model, shown ids only, answered retrieval questions with
    titles it made up)."""
    return len(q.pdf_ids) != 1


def paper_label(title: str | None) -> str:
    """The title part of a passage's source tag, or nothing when the title is unknown."""
    return f', paper "{title}"' if title else ""

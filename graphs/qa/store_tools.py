"""The NeuSym agent's tools over one paper store, by action name: each returns an observation string and never
raises (a failing tool is an observation the model can react to), plus the read-only queries the graphs make
themselves (the papers in scope exist, cited pages exist)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evidex.graphs.qa.scope import scope_filter, sql_marks
from evidex.tools.answer_format import asks_for_title, conform, snap_title
from evidex.tools.filters import MAX_FILTER_CHARS
from evidex.tools.qa import PaperQuestion

REPEAT_WARNING = "[Warning]: you already took this exact action"


class MissingPapersError(LookupError):
    """A question is about papers that are not in the store; the message names them and how to add them."""


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [cut: {len(text) - limit:,} more characters; ask a narrower query]"


@dataclass
class StoreTools:
    """The agent's tools over one store, by action name (each returns an observation string, never raises)."""

    db: str | None
    store_dir: str | None
    _tools: dict[str, Any] = field(default_factory=dict)
    _titles: tuple[int, dict[str, str]] | None = None  # (store file's mtime_ns when read, titles)

    def __post_init__(self):
        from evidex.tools.pdf_tools import make_pdf_tools

        self._tools = {t.name: t for t in make_pdf_tools(self.db, self.store_dir)}

    def _db_path(self) -> Path:
        from evidex.tools.store import store_paths

        return store_paths(self.db, Path(self.store_dir) if self.store_dir else None).db

    def _con(self):
        from evidex.tools.store import connect_readonly

        return connect_readonly(self._db_path()).cursor()

    def query(self, sql: str, params: list | None = None) -> list[dict[str, Any]]:
        """Rows of our own (not the model's) read-only query, as dicts."""
        cur = self._con()
        cur.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def title_by_id(self) -> dict[str, str]:
        """pdf_id -> title of every paper in the store, read again only when the store file changed (the web page's
        tools live as long as the server, and an upload adds papers)."""
        try:
            version = self._db_path().stat().st_mtime_ns
        except OSError:
            version = -1
        if self._titles is None or self._titles[0] != version:
            self._titles = (version, {r["pdf_id"]: r["title"] for r in self.query(
                "SELECT CAST(paper_id AS VARCHAR) AS pdf_id, title FROM metadata WHERE title IS NOT NULL")})
        return self._titles[1]

    def titles(self) -> list[str]:
        """Every paper title in the store."""
        return list(self.title_by_id().values())

    def shape_answer(self, text: str | None, answer_format: str) -> str | None:
        """A final answer in the shape its format asks for (``conform``); a paper title written as the store has
        it when the format asks for titles (``snap_title``)."""
        shaped = conform(text, answer_format)
        if shaped and asks_for_title(answer_format):
            shaped = snap_title(shaped, self.titles())
        return shaped

    def require_papers(self, pdf_ids: list[str]) -> None:
        """Fail the item, naming the missing uuids, when the question's papers are not all in the store."""
        if not pdf_ids:
            return
        found = {r["pdf_id"] for r in self.query(
            "SELECT CAST(paper_id AS VARCHAR) AS pdf_id FROM metadata "
            f"WHERE CAST(paper_id AS VARCHAR) IN ({sql_marks(pdf_ids)})",
            list(pdf_ids))}
        missing = [p for p in pdf_ids if p not in found]
        if missing:
            where = self.db or self.store_dir
            raise MissingPapersError(f"papers not in store {where!r}: {', '.join(missing)} (add their PDFs with "
                                     f"python -m tools.ingest PDFS --db {self.db or 'NAME'})")

    def search_result(self, query: str, table: str, column: str, filter: str | None, limit: int, mode: str):
        """Our own (not the model's) search: raises on a bad filter or store, unlike the search action."""
        from evidex.tools.search import SearchArgs, search

        args = SearchArgs(query=query, table=table, column=column, filter=filter, mode=mode, limit=limit)
        return search(args, self.db, self.store_dir)

    def search_hits(self, query: str, table: str, column: str, filter: str | None, limit: int, mode: str):
        return self.search_result(query, table, column, filter, limit, mode).hits

    def conference_papers(self, conferences: list[str]) -> list[str]:
        """The store's papers from these venues (``metadata.conference_year``, e.g. acl2023; case aside)."""
        wanted = [c.strip().lower() for c in conferences if c.strip()]
        if not wanted:
            return []
        return [r["pdf_id"] for r in self.query(
            "SELECT CAST(paper_id AS VARCHAR) AS pdf_id FROM metadata "
            f"WHERE lower(conference_year) IN ({sql_marks(wanted)}) ORDER BY 1", wanted)]

    def _search_space(self, q: PaperQuestion) -> tuple[str | None, set[str]]:
        """A question's search space as (filter, papers to keep): its papers when it names them, else the papers of
        its conferences (AirQA's ``conference`` field: a retrieval question's answer is one of them), by filter when
        one can name them all, else as the set to keep from the whole store's ranking (a question naming dozens of
        papers, a venue of hundreds). A venue none of the store's papers is from restricts nothing (a user's own
        PDFs carry none)."""
        pool = list(q.pdf_ids) or (self.conference_papers(q.conferences) if q.conferences else [])
        flt = scope_filter(pool)
        if flt is None or len(flt) <= MAX_FILTER_CHARS:
            return flt, set()
        return None, set(pool)

    def question_filter(self, q: PaperQuestion) -> str | None:
        """The search filter of a question's search space (None: the whole store, or a venue too large for one)."""
        return self._search_space(q)[0]

    def question_hits(self, q: PaperQuestion, query: str, table: str, column: str, limit: int, mode: str):
        """Our own search for a question, kept on its search space."""
        flt, pool = self._search_space(q)
        if not pool:
            return self.search_hits(query, table, column, flt, limit, mode)
        # too many papers to name in a filter: read further down the whole store's ranking and keep theirs (or,
        # when none ranks that high, the best of the store rather than nothing)
        from evidex.tools.search import MAX_HITS

        hits = self.search_hits(query, table, column, None, MAX_HITS, mode)
        return [h for h in hits if h.pdf_id in pool][:limit] or hits[:limit]

    def next_hits(self, action: dict[str, Any], skip: int) -> str:
        """A search asked again: the hits after the first ``skip``, or a note that there are no more."""
        from evidex.tools.search import SearchArgs, search

        try:
            args = SearchArgs(query=action["query"], table=action["table"], column=action["column"],
                              filter=action.get("filter"), mode=action.get("mode", "hybrid"),
                              limit=min(skip + int(action.get("limit") or 5), 50))
            result = search(args, self.db, self.store_dir)
        except Exception as exc:  # noqa: BLE001 - a failing search is an observation, as on its first run
            return f"[Error]: {type(exc).__name__}: {exc}"
        more = result.model_copy(update={"hits": result.hits[skip:]})
        if not more.hits:
            return (f"{REPEAT_WARNING} and it has no results beyond the {skip} shown. Do something different: "
                    "another query, table, column or filter, or answer.")
        return f"[More results of the same search, after the first {skip}]\n" + more.to_text()

    def run(self, action: dict[str, Any]) -> str:
        name = action["action"]
        args = {k: v for k, v in action.items() if k not in ("action", "thought")}
        tool = self._tools["calculate" if name == "calculate" else name]
        try:
            out = tool.invoke(args)
        except Exception as exc:  # noqa: BLE001 - a tool failure is an observation the model can react to
            return f"[Error]: {type(exc).__name__}: {exc}"
        return out if isinstance(out, str) else json.dumps(out, default=str)[:20_000]

    def schema(self) -> str:
        from evidex.tools.schema_prompt import schema_prompt

        return schema_prompt(self.db, self.store_dir, comments=False)

    def pages_exist(self, cites: list[tuple[str, int]]) -> dict[tuple[str, int], bool]:
        con = self._con()
        out = {}
        for pdf_id, page in cites:
            try:
                n = con.execute("SELECT count(*) FROM pages "
                                "WHERE CAST(ref_paper_id AS VARCHAR) = ? AND page_number = ?",
                                [pdf_id, page]).fetchone()[0]
            except Exception:  # noqa: BLE001 - a malformed id is simply not a page of the store
                n = 0
            out[(pdf_id, page)] = n > 0
        return out

"""The multiview probe: before an agent's first turn, look up what the question itself points at, in every view
of the store, as a typed :class:`~tools.qa.context.Context`.

A small model writes SQL and search calls badly, and each wasted turn costs a full prompt; but much of what a
question about papers needs is named in the question: the papers in scope (their metadata row answers author,
page-count and venue questions), "Table 2" (its caption and cells), "Figure 3" (its caption and the words inside
its box), "Equation 4" (its text), and passages that match the question's words. These are symbolic look-ups
(exact rows by paper id and number) plus one keyword and one hybrid search, so the agent starts from evidence in
every view and spends its turns only on what the probe missed.

    context = probe(store, parse_question(q), passages=8)
    [item.source for item in context.items]      # ["metadata.<id>", "tables.<id>", "chunks.<id>", ...]
"""
from __future__ import annotations

import logging
import math
import re
from collections import Counter
from itertools import zip_longest

from evidex.tools.filters import MAX_FILTER_CHARS
from evidex.tools.first_page import asks_affiliation, asks_first_page
from evidex.tools.paperstore import Note, Passage, PaperStore, SearchHits, scope_filter, title_letters
from evidex.tools.qa.bound import states_count
from evidex.tools.qa.context import Context
from evidex.tools.qa.question import Question, paper_clauses, references
from evidex.tools.text import QUOTED_SPAN, quoted

log = logging.getLogger(__name__)
_ASKS_LENGTH = re.compile(r"\bpages?\b|\bhow long\b", re.IGNORECASE)  # a question about a paper's length
_MAX_PAPERS = 4  # beyond this the question is a retrieval one; the metadata of many papers says little
_PER_PAPER = 2  # passages each paper of a few named holds at least (when they fit)
_COUNT_SEARCH = 40  # a paper's passages ranked to choose the one stating a count the question asks
# a quoted span with the words that lead into it ('In the paper "X",'): a paper title as questions cite one
_QUOTED = re.compile(rf"(?:\b(?:in|of|from|by)\s+)?(?:the\s+)?(?:paper|work|article)?\s*{QUOTED_SPAN},?",
                     re.IGNORECASE)


def search_space(store: PaperStore, q: Question) -> tuple[str | None, set[str]]:
    """A question's search space as (filter, papers to keep): its papers when it names them, else the papers of its
    conferences (a retrieval question's answer is one of them), by filter when one can name them all, else as the
    set to keep from the whole store's ranking (a question naming dozens of papers, a venue of hundreds). A venue
    none of the store's papers is from restricts nothing (a user's own PDFs carry none)."""
    pool = list(q.papers) or (store.conference_papers(q.conferences) if q.conferences else [])
    flt = scope_filter(pool)
    if flt is None or len(flt) <= MAX_FILTER_CHARS:
        return flt, set()
    return None, set(pool)


def question_search(store: PaperStore, q: Question, query: str, k: int, mode: str = "hybrid") -> SearchHits:
    """A search for ``q``, kept on its search space (:func:`search_space`)."""
    from evidex.tools.search import MAX_HITS

    flt, pool = search_space(store, q)
    if not pool:
        return store.search(query, filter=flt, k=k, mode=mode)
    # too many papers to name in a filter: read further down the whole store's ranking and keep theirs (or, when
    # none ranks that high, the best of the store rather than nothing)
    hits = store.search(query, k=MAX_HITS, mode=mode)
    kept = [p for p in hits.passages if p.paper_id in pool][:k] or hits.passages[:k]
    return hits.model_copy(update={"passages": kept})


def names_papers(q: Question) -> bool:
    """Whether passages shown for ``q`` carry their paper's title: yes unless the question is about one known
    paper. A retrieval or multi-paper question is answered with titles or about several papers, and a passage's
    paper id does not say which paper it is (the local model, shown ids only, made titles up)."""
    return len(q.papers) != 1


def without_titles(question: str, titles: list[str]) -> str:
    """The question without the quoted titles of ``titles`` (and the "in the paper" that leads into them).

    Once a title is resolved to a paper the search keeps to that paper, and its words in the query only pull up
    the passages that repeat them (the title page, figure labels) ahead of the one that answers. Other quoted text
    (a phrase from the paper) stays: it is what to look for."""
    known = [title_letters(t) for t in titles if t]

    def cut(match: re.Match) -> str:
        said = title_letters(quoted(match))
        is_title = said and any(said == t or (len(said) > 20 and (said in t or t in said)) for t in known)
        return " " if is_title else match.group(0)

    return " ".join(_QUOTED.sub(cut, question).split()) or question


def _interleave(*rankings: list[Passage]) -> list[Passage]:
    """The rankings merged by turns (first of each, then second of each, ...), each passage once."""
    seen, out = set(), []
    for hit in (h for tier in zip_longest(*rankings) for h in tier if h is not None):
        if hit.key not in seen:
            seen.add(hit.key)
            out.append(hit)
    return out


def ends_first(ranked: list) -> list:
    """The best-ranked items at both ends, the weakest in the middle: 1, 3, 5, ..., 6, 4, 2 (LangChain's
    ``LongContextReorder``). A small model reads the start of a context and the end, next to the question asked
    again, better than its middle ("lost in the middle", Liu et al. 2023)."""
    return ranked[0::2] + ranked[1::2][::-1]


def _ranked(store: PaperStore, q: Question, query: str, limit: int, mode: str) -> SearchHits:
    try:
        return question_search(store, q, query, limit, mode)
    except Exception as exc:  # noqa: BLE001 - the probe is a head start; the failure is reported, not hidden
        log.warning("probe: %s search failed: %s", mode, exc)
        return SearchHits(mode=mode, degraded=f"{mode} search failed: {type(exc).__name__}: {exc}")


def _rankings(store: PaperStore, q: Question, query: str, limit: int) -> tuple[SearchHits, SearchHits]:
    """The hybrid and the keyword ranking of ``query`` over the question's papers."""
    return _ranked(store, q, query, limit, "hybrid"), _ranked(store, q, query, limit, "bm25")


def _each_paper(store: PaperStore, q: Question, query: str, ranked: list[Passage], limit: int) -> list[Passage]:
    """``ranked`` with every paper of a question naming a few (two to :data:`_MAX_PAPERS`) holding at least
    :data:`_PER_PAPER` of the ``limit`` passages (fewer when they do not fit): a paper short of them gets its own
    best passages for the same query, in place of the last-ranked passages of the paper holding the most. A
    question about two papers needs a fact from each, and one paper's passages can fill the whole ranking."""
    papers = list(dict.fromkeys(q.papers))
    if not 2 <= len(papers) <= _MAX_PAPERS:
        return ranked
    need = min(_PER_PAPER, limit // len(papers))
    out = list(ranked)
    for paper in papers:
        short = need - sum(p.paper_id == paper for p in out)
        if short <= 0:
            continue
        one = q.model_copy(update={"papers": [paper]})
        own = _interleave(*(r.passages for r in _rankings(store, one, query, limit)))
        shown = {p.key for p in out}
        for extra in [p for p in own if p.key not in shown][:short]:
            counts = Counter(p.paper_id for p in out)
            most = max(counts, key=counts.get)
            if len(out) >= limit and counts[most] <= need:
                break  # every paper is down to its share
            if len(out) >= limit:
                out.remove([p for p in out if p.paper_id == most][-1])
            out.append(extra)
    return out


def _counts_stated(store: PaperStore, q: Question, queries: dict[str, str], ranked: list[Passage],
                   limit: int) -> list[Passage]:
    """``ranked`` with, for each of a few named papers, the passage of that paper stating a count of what the
    question counts (:attr:`Question.counts_of`, :func:`~tools.qa.bound.states_count`) that its own search ranks
    best, in place of the paper's last-ranked passage shown. A two-paper count ("how many more tasks does A use
    than B", "the total number of datasets") needs one number from each paper, and a paper's few passages for the
    whole question are often about its other counts or the other paper's words."""
    papers = list(dict.fromkeys(q.papers))
    nouns = [n for n in q.counts_of if not _ASKS_LENGTH.fullmatch(n)]  # a page count is the metadata row's
    if not 2 <= len(papers) <= _MAX_PAPERS or not nouns:
        return ranked
    out = list(ranked)
    for paper in papers:
        stating = [p for p in store.page_passages(paper) if states_count(p.text, nouns)]
        if len(stating) > 1:  # one passage stating a count needs no search to rank it
            one = q.model_copy(update={"papers": [paper]})
            rank = {p.key: n for n, p in enumerate(_interleave(*(r.passages for r in _rankings(
                store, one, queries[paper], _COUNT_SEARCH))))}
            stating.sort(key=lambda p: rank.get(p.key, len(rank)))  # stable: reading order on a tie
        if not stating:
            continue
        best = stating[0]
        if best.key in {p.key for p in out}:
            continue
        if len(out) >= limit:
            mine = [p for p in out if p.paper_id == paper]
            out.remove(mine[-1] if mine else out[-1])
        out.append(best)
    return out


def paper_queries(q: Question, titles: dict[str, str]) -> dict[str, str]:
    """For a question asking one thing of each of two papers, each paper's own clause as its search query (titles
    cut, up to 500 characters): "is the number of X in A the same as the number of Y in B" looks for X in A and for
    Y in B, where the whole question would rank B's passages about X too. Empty when the question is not split so,
    or a clause says too little of its own (under :data:`MIN_CLAUSE_WORDS` content words: "... in A and in B")."""
    if len(q.papers) != 2:
        return {}
    named = {p: titles.get(p, "") for p in q.papers}
    queries = {p: without_titles(part, list(named.values()))[:500]
               for p, part in paper_clauses(q.text, named).items()}
    return queries if queries and all(len(_content_words(v)) >= MIN_CLAUSE_WORDS for v in queries.values()) else {}


def passages(store: PaperStore, q: Question, limit: int) -> Context:
    """The hybrid and the keyword ranking of the question, interleaved: RRF buries a passage only keywords rank first
    whenever the embedder ranks number-heavy figure text high, and the words a question quotes from the paper are
    what keywords find; each of a few named papers holds some of them (:func:`_each_paper`), and of two papers each
    asked its own thing, each is searched with its own clause (:func:`paper_queries`). Shown with the two best at
    the ends (:func:`ends_first`)."""
    titles = store.titles()
    query = without_titles(q.text, [titles[i] for i in q.papers if i in titles])[:500]
    if own := paper_queries(q, titles):
        found = [_rankings(store, q.model_copy(update={"papers": [p]}), part, limit) for p, part in own.items()]
        ranked = _interleave(*(_interleave(h.passages, k.passages) for h, k in found))[:limit]
    else:
        found = [_rankings(store, q, query, limit)]
        hybrid, keywords = found[0]
        ranked = _each_paper(store, q, query, _interleave(hybrid.passages, keywords.passages)[:limit], limit)
    ranked = _counts_stated(store, q, {p: own.get(p, query) for p in q.papers}, ranked, limit)
    hits = ends_first(ranked)
    shown = {h.paper_id: titles[h.paper_id] for h in hits if h.paper_id in titles} if names_papers(q) else {}
    degraded = [d for pair in found for d in (pair[0].degraded, pair[1].degraded) if d]
    return Context(items=hits, titles=shown, degraded=list(dict.fromkeys(degraded)))


# a question that speaks of a table without its number ("in the fusion-ratio table of this paper, ...")
_A_TABLE = re.compile(r"\btables?\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_MAX_TABLES = 40  # a paper's tables read to find the one a question describes
MIN_SHARED_WORDS = 3  # content words a caption must share with the question to be the table it describes
MIN_CLAUSE_WORDS = 2  # content words one paper's clause needs to be that paper's own search query


def _content_words(text: str) -> set[str]:
    from evidex.tools.kb_index import STOPWORDS

    return {w.lower().rstrip("s") for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in STOPWORDS}


def described_table(store: PaperStore, ids: list[str], q: Question) -> list:
    """The table a question describes without its number: of the papers' tables, the one whose caption shares the
    question's content words best (at least :data:`MIN_SHARED_WORDS` of them, each weighted by how few of the
    captions share it, and ahead of every other caption); [] when the question names a table's number, speaks of no
    table, or no caption stands out."""
    if q.tables or not _A_TABLE.search(q.text):
        return []
    asked = _content_words(q.text) - {"table", "paper"}
    tables = store.tables(ids, limit=_MAX_TABLES)
    shared = [asked & _content_words(t.caption) for t in tables]
    # a word most captions share ("results", the paper's own terms) says little about which table is meant
    df = {w: sum(w in s for s in shared) for w in set().union(*shared)} if shared else {}
    ranked = sorted(((sum(math.log((1 + len(tables)) / df[w]) for w in s), len(s), i)
                     for i, s in enumerate(shared)), key=lambda x: (-x[0], x[2]))
    if not ranked or ranked[0][1] < MIN_SHARED_WORDS or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
        return []
    return [tables[ranked[0][2]]]


def _common_authors(lists: list[list[str]]) -> list[str]:
    """The names every list holds (compared without case, dots or spacing), in the first list's order."""
    def key(name: str) -> str:
        return " ".join(name.replace(".", " ").lower().split())
    shared = set.intersection(*({key(a) for a in names} for names in lists)) if lists else set()
    return [a for a in lists[0] if key(a) in shared] if lists else []


def probe(store: PaperStore, q: Question, passages_k: int = 4, *, lookups: bool = True) -> Context:
    """What the question points at: metadata of the papers in scope (and, for several, the authors they all share),
    the tables/figures/equations it names (or the table it describes), and the ``passages_k`` passages that best match it. ``lookups=False``:
    the passages only (an agent without SQL)."""
    ids = list(q.papers) if len(q.papers) <= _MAX_PAPERS else []
    items: list = []
    if ids and lookups:
        length = bool(_ASKS_LENGTH.search(q.text))

        def asked_of(p):
            """The paper with only the facts the question asks about: the first page's (affiliations, corresponding
            authors, proceedings header; where the authors are, read by the store, for a question that asks it) and
            the page count (asked for a paper's number of tasks, the small model copied its "pages: 18"). The rest
            of the prompt is what other questions need."""
            update = {} if length else {"num_pages": None}
            if not asks_first_page(q.text, p.authors):
                update["first_page"] = None
            elif asks_affiliation(q.text):
                update["affiliations"] = store.affiliations(p)
            return p.model_copy(update=update)

        papers = [asked_of(p) for p in store.papers(ids, first_page=True)]
        items += papers
        common = _common_authors([p.authors for p in papers])
        if len(papers) > 1 and common:
            # "which author appears on both papers": set by code; the 1.5B model named one paper's first author
            items.append(Note(text=f"authors on every one of these {len(papers)} papers: {', '.join(common)}",
                              paper_ids=[p.paper_id for p in papers], cites=papers[0].source,
                              paper_id=papers[0].paper_id))
        # "Table 2" named in one paper's clause of a two-paper question is that paper's, not the other's
        titles = store.titles() if len(ids) == 2 else {}
        clauses = paper_clauses(q.text, {p: titles.get(p, "") for p in ids}) if titles else {}

        def scope(kind: str, n: str) -> list[str]:
            naming = [p for p, part in clauses.items() if n in references(part, kind)]
            return naming if len(naming) == 1 else ids

        for n in q.tables:
            items += store.tables(scope("tables", n), n)
        items += described_table(store, ids, q)
        for n in q.figures:
            items += store.figures(scope("figures", n), n)
        for n in q.equations:
            items += store.equations(scope("equations", n), n)
    found = passages(store, q, passages_k) if passages_k else Context()
    return Context(items=items + found.items, titles=found.titles, degraded=found.degraded)


__all__ = ["described_table", "ends_first", "names_papers", "passages", "probe", "question_search", "search_space", "without_titles"]

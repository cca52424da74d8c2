"""QASPER papers (title, abstract, full_text, figure and table captions) into the multiview paper store, without
any PDF: the same DuckDB tables, Chroma collections and BM25 indexes a PDF gets (``tools.ingest.writer`` and
``tools.ingest.indexer``), so every QA graph and tool works on them unchanged.

    python -m evidex.tools.ingest.qasper qasper-dev-v0.3.json --db qasper

Layout of one paper (``paper_id`` = :func:`tools.qasper_data.qasper_store_id`, a uuid5 of the QASPER id; the id
itself is in ``metadata.download_url`` = ``https://arxiv.org/abs/<id>``):

==========  ===============================================================================================
page 1      the abstract (one chunk; never returned as evidence: QASPER evidence comes from the full text)
page 2..    one page per full_text paragraph, in order; ``page_content`` and its one chunk are the paragraph's
            exact text, so a cited page or chunk maps back to the verbatim paragraph (predicted evidence)
last pages  one page per figure/table caption (``figures_and_tables``), with a ``tables``/``images`` row and a
            chunk holding the caption; as evidence it reads ``FLOAT SELECTED: <caption>``, as in the gold data
sections    one row per full_text section (title = the last part of ``A ::: B``; level = its depth; a parent
            missing from the file is added without paragraphs); content includes the subsections
==========  ===============================================================================================

Whitespace-only paragraphs keep their page (numbering follows the file) but get no chunk. Ingestion is
idempotent: a paper whose content hash is already stored (and embedded) is skipped; a changed paper is replaced.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from pathlib import Path


from evidex.tools.ingest.config import IngestConfig, load_ingest_config
from evidex.tools.ingest.errors import IngestError, StoreConfigMismatch
from evidex.tools.ingest.indexer import DenseIndexer, rebuild_bm25, write_manifest
from evidex.tools.ingest.pipeline import FileResult, IngestReport
from evidex.tools.ingest.records import (ChunkRecord, ImageRecord, PageRecord, PaperMetadata, ParsedPaper,
                                         SectionRecord, TableRecord)
from evidex.tools.ingest.writer import write_paper
from evidex.tools.qasper_data import QasperPaper
from evidex.tools.store import TABLES, StorePaths, close_readonly, connect_writable, store_paths, writer_lock


INGEST_CONFIG = "qasper"
PARSER = "qasper-json"
FINGERPRINT = "qasper-json-v1"  # evidex.info.parse_fingerprint of a QASPER store: PDFs and QASPER never mix
ABSTRACT_PAGE = 1
FIRST_PARAGRAPH_PAGE = 2
CONFERENCE = "qasper"
NO_BOX = (0, 0, 0, 0)
UNCUT = 10**9  # cells are never cut: a paragraph must stay verbatim to count as evidence
DENSE_GROUP = 16  # papers embedded per encode call
SEP = " ::: "


def source_path(paper_id: str) -> str:
    """What ``evidex.files.pdf_path`` / ``metadata.pdf_path`` hold for a QASPER paper (there is no file)."""
    return f"qasper:{paper_id}"


def _section_tree(paper: QasperPaper) -> tuple[list[tuple[str, str | None, list[int]]], dict[str, int]]:
    """(full name, own-paragraph page numbers) per section in order, with missing parents inserted before their
    first child. Returns the list of (full_name, raw_name, pages) and full_name -> index."""
    out: list[tuple[str, str | None, list[int]]] = []
    index: dict[str, int] = {}
    page = FIRST_PARAGRAPH_PAGE
    for n, s in enumerate(paper.sections):
        full = s.name if s.name is not None else ""
        parts = full.split(SEP) if full else [""]
        for depth in range(1, len(parts)):
            parent = SEP.join(parts[:depth])
            if parent not in index:
                index[parent] = len(out)
                out.append((parent, parent, []))
        pages = list(range(page, page + len(s.paragraphs)))
        page += len(s.paragraphs)
        key = full if full not in index else f"{full}\x00{n}"  # a repeated heading is its own section
        index[key] = len(out)
        out.append((key, s.name, pages))
    return out, index


def paper_records(paper: QasperPaper, counter=None) -> ParsedPaper:
    """One QASPER paper as the records a PDF parser would return (see the module docstring for the layout)."""
    pages: list[PageRecord] = [PageRecord(page_number=ABSTRACT_PAGE, width=0, height=0, content=paper.abstract)]
    for s in paper.sections:
        for para in s.paragraphs:
            pages.append(PageRecord(page_number=len(pages) + 1, width=0, height=0, content=para))
    tables: list[TableRecord] = []
    images: list[ImageRecord] = []
    for f in paper.floats:
        n = len(pages) + 1
        pages.append(PageRecord(page_number=n, width=0, height=0, content=f.caption))
        if f.is_table:
            tables.append(TableRecord(page_number=n, ordinal=0, caption=f.caption, html="", markdown="", box=NO_BOX))
        else:
            images.append(ImageRecord(page_number=n, ordinal=0, caption=f.caption, box=NO_BOX))
    texts = [p for p in pages if p.content.strip()]
    counts = counter.counts([p.content for p in texts]) if counter is not None else [
        len(p.content.split()) for p in texts]
    chunks = [ChunkRecord(page_number=p.page_number, ordinal=1, text=p.content, token_count=int(c), box=NO_BOX)
              for p, c in zip(texts, counts)]

    tree, index = _section_tree(paper)
    sections: list[SectionRecord] = [SectionRecord(ordinal=0, title="Abstract", level=1, content=paper.abstract,
                                                   page_numbers=[ABSTRACT_PAGE])]
    own_text = {key: [pages[p - 1].content for p in pg] for key, _, pg in tree}
    own_pages_of = {key: pg for key, _, pg in tree}
    for i, (key, raw, own_pages) in enumerate(tree):
        name = key.split("\x00")[0]
        parts = name.split(SEP) if name else [""]
        parent = SEP.join(parts[:-1]) if len(parts) > 1 else None
        # descendants: later sections whose name starts with this one's (content includes subsections)
        desc = [k for k, _, _ in tree[i + 1:] if name and k.split("\x00")[0].startswith(name + SEP)]
        text_parts = own_text[key] + [t for k in desc for t in own_text[k]]
        all_pages = own_pages + [p for k in desc for p in own_pages_of[k]]
        sections.append(SectionRecord(ordinal=i + 1, title=parts[-1], level=len(parts),
                                      parent_ordinal=index[parent] + 1 if parent is not None else None,
                                      content="\n\n".join(text_parts), page_numbers=sorted(set(all_pages))))
    meta = PaperMetadata(paper_id=paper.store_id, title=paper.title, abstract=paper.abstract, num_pages=len(pages),
                         conference_year=CONFERENCE, conference_abbreviation="QASPER",
                         download_url=f"https://arxiv.org/abs/{paper.paper_id}", tags=["qasper"])
    return ParsedPaper(path=source_path(paper.paper_id), sha256=paper.content_key(), parser=PARSER, metadata=meta,
                       pages=pages, chunks=chunks, tables=tables, images=images, sections=sections)


# ------------------------------------------------------------------------------------------------ store checks
def _check_store(con, cfg: IngestConfig, paths: StorePaths) -> IngestConfig:
    from evidex.tools.ingest.pipeline import record_signatures

    info = dict(con.execute("SELECT key, value FROM evidex.info").fetchall())
    n_files = con.execute("SELECT count(*) FROM evidex.files").fetchone()[0]
    if n_files and info.get("parse_fingerprint") not in (None, FINGERPRINT):
        raise StoreConfigMismatch(
            f"The store at {paths.root} holds PDFs ingested with evidex ingest; QASPER papers go into a "
            "store of their own. Pick another name (--db qasper, or store.db=NAME).")
    return record_signatures(con, cfg, paths, info, FINGERPRINT)


def stored_papers(db: str | None = None, store_dir: str | Path | None = None) -> set[str]:
    """Store ids of the QASPER papers already ingested and embedded (read-only; empty when there is no store)."""
    from evidex.tools.store import connect_readonly

    paths = store_paths(db, store_dir)
    if not paths.db.exists():
        return set()
    rows = connect_readonly(paths.db).cursor().execute(
        "SELECT CAST(paper_id AS VARCHAR) FROM evidex.files WHERE dense_indexed").fetchall()
    return {r[0] for r in rows}


# ------------------------------------------------------------------------------------------------ ingestion
def ingest_qasper(papers: Iterable[QasperPaper], db: str | None = None, *, store_dir: str | Path | None = None,
                  config: IngestConfig | str | Path | None = None, embeddings=None, skip_dense: bool = False,
                  progress: bool = True) -> IngestReport:
    """Write each paper (see the module docstring) and embed it; skip papers already stored with the same content.
    ``embeddings``: an embedding model to use instead of the configured one (its ``model_name`` names the
    collections). Raises :class:`~evidex.tools.store.StoreBusyError` when another process holds the store, and
    :class:`IngestError` when the store holds PDFs."""
    cfg = config if isinstance(config, IngestConfig) else load_ingest_config(config or INGEST_CONFIG)
    cfg = cfg.with_embedder(embeddings)
    papers = list(papers)
    paths = store_paths(db, store_dir)
    paths.root.mkdir(parents=True, exist_ok=True)
    seconds = {"records": 0.0, "write": 0.0, "dense": 0.0, "bm25": 0.0}
    t_start = time.perf_counter()
    from evidex.tools.vectorstore import require_reachable

    with writer_lock(paths.root):  # one writer per store; a reader or writer in the way is named (StoreBusyError)
        if not skip_dense:
            require_reachable(paths.root, cfg.vector if "vector" in cfg.model_fields_set else None)
        close_readonly(paths.db)
        con = connect_writable(paths.db)
        try:
            cfg = _check_store(con, cfg, paths)
            from evidex.tools.ingest.removal import finish_pending_removals

            finish_pending_removals(con, paths)
            report = _run(con, papers, cfg, paths, embeddings, skip_dense, progress, seconds)
        finally:
            con.close()
    seconds["total"] = time.perf_counter() - t_start
    report.seconds = {k: round(v, 3) for k, v in seconds.items()}
    from evidex.tools.memory import memory_mb

    report.memory = memory_mb()
    return report


def _run(con, papers: list[QasperPaper], cfg: IngestConfig, paths: StorePaths, embeddings, skip_dense: bool,
         progress: bool, seconds: dict[str, float]) -> IngestReport:
    from tqdm import tqdm

    from evidex.tools.ingest.chunking import TokenCounter
    from evidex.tools.ingest.pipeline import _torch_threads

    known = {str(pid): (sha, bool(ok)) for pid, sha, ok in con.execute(
        "SELECT CAST(paper_id AS VARCHAR), pdf_sha256, dense_indexed FROM evidex.files").fetchall()}
    counter = TokenCounter(cfg.embedding.model)
    dense: DenseIndexer | None = None

    def get_dense() -> DenseIndexer:
        nonlocal dense, embeddings
        if dense is None:
            if embeddings is None:
                from evidex.tools.ingest.indexer import make_embeddings

                embeddings = make_embeddings(cfg)
            dense = DenseIndexer(paths, cfg, embeddings)
        return dense

    results: list[FileResult] = []
    todo = []
    for p in papers:
        sha, indexed = known.get(p.store_id, (None, False))
        if sha == p.content_key() and (indexed or skip_dense):
            results.append(FileResult(path=source_path(p.paper_id), status="skipped", paper_id=p.store_id,
                                      title=p.title))
        else:
            todo.append((p, sha == p.content_key()))
    bar = tqdm(total=len(todo), desc=f"ingest {paths.root.name}", unit="paper", disable=not progress or not todo)
    try:
        for start in range(0, len(todo), DENSE_GROUP):
            group = todo[start : start + DENSE_GROUP]
            for paper, written in group:  # each paper in its own transaction
                if written:
                    continue
                t = time.perf_counter()
                parsed = paper_records(paper, counter)
                seconds["records"] += time.perf_counter() - t
                t = time.perf_counter()
                con.execute("DELETE FROM evidex.files WHERE pdf_path = ? AND CAST(paper_id AS VARCHAR) <> ?",
                            [parsed.path, paper.store_id])
                write_paper(con, parsed, parsed.metadata, UNCUT)
                seconds["write"] += time.perf_counter() - t
            if not skip_dense:  # then one encode call for the group; a crash here leaves them to re-embed next run
                t = time.perf_counter()
                d = get_dense()
                ids = [paper.store_id for paper, _ in group]
                for pid in ids:
                    if pid in known:  # vectors of an older version (a new paper has none to delete)
                        d.delete_paper(pid)
                with _torch_threads(cfg.embedding.threads):
                    d.index_papers(con, ids)
                con.execute("UPDATE evidex.files SET dense_indexed = true WHERE CAST(paper_id AS VARCHAR) IN "
                            f"({', '.join('?' for _ in ids)})", ids)
                seconds["dense"] += time.perf_counter() - t
            for paper, written in group:
                results.append(FileResult(path=source_path(paper.paper_id), status="reindexed" if written else "ingested",
                                          paper_id=paper.store_id, title=paper.title))
            bar.update(len(group))
    finally:
        bar.close()
    t = time.perf_counter()
    bm25_counts = rebuild_bm25(con, paths, cfg)
    seconds["bm25"] = time.perf_counter() - t
    dense_counts = get_dense().counts() if not skip_dense else {}
    dim = dense.dimension if dense is not None else None
    if dim is None:
        from evidex.tools.store import read_index_manifest

        dim = read_index_manifest(paths).get("dimension")
    write_manifest(paths, cfg, dense_counts, bm25_counts, dim)
    rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in TABLES}
    con.execute("CHECKPOINT")
    return IngestReport(store=str(paths.root), files=results, seconds={}, rows=rows, dense_entries=dense_counts,
                        bm25_entries=bm25_counts)


# ------------------------------------------------------------------------------------------------ CLI
def main(argv: list[str] | None = None) -> int:
    from evidex.tools.cli_help import plain_help
    from evidex.tools.qasper_data import QasperDataError, load_qasper
    from evidex.tools.store import StoreError

    p = argparse.ArgumentParser(prog="python -m evidex.tools.ingest.qasper", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", type=Path, help="QASPER file: official JSON (qasper-dev-v0.3.json) or Hugging Face rows")
    p.add_argument("--db", help="store name (under <cache_dir>/stores/NAME); default qasper")
    p.add_argument("--store-dir", help="explicit store folder (instead of --db)")
    p.add_argument("--config", default=None, help=f"ingestion config in configs/ingest (default: {INGEST_CONFIG})")
    p.add_argument("--limit", type=int, help="only the first N papers")
    p.add_argument("--skip-dense", action="store_true", help="store and BM25-index only; embed on a later run")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    try:
        papers = load_qasper(args.data)[: args.limit or None]
        report = ingest_qasper(papers, args.db or (None if args.store_dir else "qasper"), store_dir=args.store_dir,
                               config=args.config, skip_dense=args.skip_dense, progress=not args.quiet)
    except (QasperDataError, IngestError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = {s: report.count(s) for s in ("ingested", "reindexed", "skipped")}
    print(f"{report.store}: {len(papers)} papers ({', '.join(f'{k} {v}' for k, v in counts.items())}) in "
          f"{report.seconds.get('total', 0):.1f} s (embedding {report.seconds.get('dense', 0):.1f} s)")
    print("rows: " + ", ".join(f"{k} {v}" for k, v in report.rows.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

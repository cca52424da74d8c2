"""ParsedPaper -> rows of the 8 tables, written in one transaction per paper (a crash loses at most that paper).

Ids follow NeuSym-RAG: uuid5(DNS, "<paper>_page_<n>"), "<paper>_page_<n>_chunk_<k>" (chunk k = its 1-based
ordinal), "<paper>_page_<n>_table_<k>" / "_image_<k>" / "_equation_<k>" (k = ordinal + 1, ordinals 0-based),
"<paper>_section_<i>", "<paper>_reference_<i>".
"""
from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa

from evidex.tools.ingest.records import PaperMetadata, ParsedPaper
from evidex.tools.store import TABLES, row_uuid


def _cut(text: str | None, limit: int) -> str | None:
    if text is None:
        return None
    return text if len(text) <= limit else text[:limit] + " ..."


def paper_rows(paper: ParsedPaper, meta: PaperMetadata, max_chars: int) -> dict[str, list[dict]]:
    pid = meta.paper_id
    assert pid, "paper_id must be resolved before writing"
    page_id = {p.page_number: row_uuid(f"{pid}_page_{p.page_number}") for p in paper.pages}
    rows: dict[str, list[dict]] = {t: [] for t in TABLES}
    rows["metadata"].append(
        {
            "paper_id": pid,
            "title": meta.title,
            "abstract": _cut(meta.abstract, max_chars) or None,
            "num_pages": meta.num_pages,
            "conference_full": meta.conference_full,
            "conference_abbreviation": meta.conference_abbreviation,
            "pub_year": meta.pub_year,
            "volume": meta.volume,
            "download_url": meta.download_url,
            "bibtex": meta.bibtex,
            "authors": list(meta.authors),
            "pdf_path": paper.path,
            "tldr": meta.tldr,
            "tags": list(meta.tags),
            "conference_year": meta.conference_year,
            "pdf_sha256": paper.sha256,
        }
    )
    for p in paper.pages:
        rows["pages"].append(
            {
                "page_id": page_id[p.page_number],
                "page_number": p.page_number,
                "page_width": p.width,
                "page_height": p.height,
                "page_content": _cut(p.content, max_chars),
                "page_summary": p.summary,
                "ocr": p.ocr,
                "ref_paper_id": pid,
            }
        )
    for c in paper.chunks:
        rows["chunks"].append(
            {
                "chunk_id": row_uuid(f"{pid}_page_{c.page_number}_chunk_{c.ordinal}"),
                "text_content": _cut(c.text, max_chars),
                "ordinal": c.ordinal,
                "token_count": c.token_count,
                "bounding_box": list(c.box),
                "ref_paper_id": pid,
                "ref_page_id": page_id[c.page_number],
            }
        )
    for t in paper.tables:
        rows["tables"].append(
            {
                "table_id": row_uuid(f"{pid}_page_{t.page_number}_table_{t.ordinal + 1}"),
                "table_caption": _cut(t.caption, max_chars),
                "table_content": _cut(t.html, max_chars),
                "table_markdown": _cut(t.markdown, max_chars),
                "table_summary": t.summary,
                "bounding_box": list(t.box),
                "ordinal": t.ordinal,
                "ref_paper_id": pid,
                "ref_page_id": page_id[t.page_number],
            }
        )
    for im in paper.images:
        rows["images"].append(
            {
                "image_id": row_uuid(f"{pid}_page_{im.page_number}_image_{im.ordinal + 1}"),
                "image_caption": _cut(im.caption, max_chars),
                "image_summary": im.summary,
                "bounding_box": list(im.box),
                "ordinal": im.ordinal,
                "ref_paper_id": pid,
                "ref_page_id": page_id[im.page_number],
            }
        )
    for e in paper.equations:
        rows["equations"].append(
            {
                "equation_id": row_uuid(f"{pid}_page_{e.page_number}_equation_{e.ordinal + 1}"),
                "equation_content": _cut(e.text, max_chars),
                "equation_number": e.number,
                "bounding_box": list(e.box),
                "ordinal": e.ordinal,
                "ref_paper_id": pid,
                "ref_page_id": page_id[e.page_number],
            }
        )
    section_ids = [row_uuid(f"{pid}_section_{s.ordinal}") for s in paper.sections]
    for s in paper.sections:
        rows["sections"].append(
            {
                "section_id": section_ids[s.ordinal],
                "section_title": s.title,
                "section_content": _cut(s.content, max_chars),
                "section_summary": s.summary,
                "ordinal": s.ordinal,
                "level": s.level,
                "parent_section_id": section_ids[s.parent_ordinal] if s.parent_ordinal is not None else None,
                "page_numbers": list(s.page_numbers),
                "ref_paper_id": pid,
            }
        )
    for r in paper.references:
        rows["reference"].append(
            {
                "reference_id": row_uuid(f"{pid}_reference_{r.ordinal}"),
                "reference_content": _cut(r.text, max_chars),
                "ordinal": r.ordinal,
                "bounding_box": list(r.box),
                "ref_paper_id": pid,
                "ref_page_id": page_id[r.page_number],
            }
        )
    return rows


def delete_paper(con: duckdb.DuckDBPyConnection, paper_id: str) -> None:
    for name, spec in TABLES.items():
        key = "paper_id" if name == "metadata" else "ref_paper_id"
        con.execute(f"DELETE FROM {name} WHERE {key} = ?", [paper_id])


def write_paper(con: duckdb.DuckDBPyConnection, paper: ParsedPaper, meta: PaperMetadata, max_chars: int) -> dict[str, int]:
    """Replace everything stored for this paper (and this file) in one transaction. Returns rows per table."""
    rows = paper_rows(paper, meta, max_chars)
    con.execute("BEGIN TRANSACTION")
    try:
        delete_paper(con, meta.paper_id)
        con.execute("DELETE FROM evidex.files WHERE pdf_sha256 = ? OR paper_id = ?", [paper.sha256, meta.paper_id])
        for name, items in rows.items():
            if not items:
                continue
            cols = TABLES[name].column_names
            # Arrow bulk insert: ~10x faster than executemany; DuckDB casts strings to UUID and lists to INTEGER[4]
            con.register("_evidex_rows", pa.Table.from_pylist(items))
            try:
                con.execute(f"INSERT INTO {name} ({', '.join(cols)}) SELECT {', '.join(cols)} FROM _evidex_rows")
            finally:
                con.unregister("_evidex_rows")
        con.execute(
            "INSERT INTO evidex.files VALUES (?, ?, ?, ?, false, ?, ?, ?)",
            [
                paper.sha256,
                paper.path,
                meta.paper_id,
                len(paper.pages),
                dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
                paper.parse_seconds,
                list(paper.warnings),
            ],
        )
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return {name: len(items) for name, items in rows.items()}

"""LangChain tools over one paper store: sql, search, calculate, view_image.

    from evidex.tools.pdf_tools import make_pdf_tools
    tools = make_pdf_tools(db="airqa")          # list[StructuredTool], usable by any agent / ToolNode

Each tool validates its arguments with a pydantic schema and returns an observation string (view_image
returns content blocks for multimodal models). Bad input becomes an ``[Error]``/``[Refused]`` observation the
model can react to, never an exception that would end the agent run.
"""
from __future__ import annotations

from pathlib import Path

from langchain_core.tools import BaseTool, StructuredTool

from evidex.tools.calc import CalcArgs, calc_observation
from evidex.tools.filters import FilterSyntaxError
from evidex.tools.schema_prompt import FILTER_HELP
from evidex.tools.search import SearchArgs, SearchError, search
from evidex.tools.sql import DEFAULT_MAX_CHARS, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, SQLArgs, sql_observation
from evidex.tools.store import StoreError
from evidex.tools.view_image import ViewImageArgs, ViewImageError, view_image_content


def _validation_message(exc: Exception) -> str:
    """Bad tool arguments go back to the model as an observation it can fix."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors())
            return f"[Error]: invalid arguments: {detail}"
        except Exception:  # noqa: BLE001
            pass
    return f"[Error]: invalid arguments: {exc}"


def make_pdf_tools(
    db: str | None = None,
    store_dir: str | Path | None = None,
    *,
    multimodal: bool = False,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_chars: int = DEFAULT_MAX_CHARS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[BaseTool]:
    def run_sql(sql: str) -> str:
        return sql_observation(sql, db, store_dir, max_rows=max_rows, max_chars=max_chars, timeout_s=timeout_s)

    def run_search(query: str, table: str, column: str, filter: str | None = None, mode: str = "hybrid", limit: int = 5) -> str:
        try:
            args = SearchArgs(query=query, table=table, column=column, filter=filter, mode=mode, limit=limit)
            return search(args, db, store_dir).to_text()
        except (FilterSyntaxError, SearchError, StoreError) as exc:
            return f"[Error]: {exc}"

    def run_calc(expression: str) -> str:
        return calc_observation(expression)

    def run_view(paper_id: str, page_number: int, bounding_box: list[float] | None = None):
        try:
            args = ViewImageArgs(paper_id=paper_id, page_number=page_number, bounding_box=bounding_box or [])
            return view_image_content(args, db, store_dir, multimodal=multimodal)
        except (ViewImageError, StoreError, ValueError) as exc:
            return f"[Error]: {exc}"

    return [
        StructuredTool.from_function(
            func=run_sql,
            name="sql",
            description="Run ONE read-only DuckDB SELECT over the paper database (tables metadata, pages, sections, "
            f"chunks, tables, images, equations, reference). Results are capped at {max_rows} rows / {max_chars} chars.",
            args_schema=SQLArgs,
            handle_validation_error=_validation_message,
        ),
        StructuredTool.from_function(
            func=run_search,
            name="search",
            description="Semantic (dense), keyword (bm25) or hybrid search over one searchable column "
            "(e.g. chunks.text_content). " + FILTER_HELP,
            args_schema=SearchArgs,
            handle_validation_error=_validation_message,
        ),
        StructuredTool.from_function(
            func=run_calc,
            name="calculate",
            description="Evaluate an arithmetic expression exactly (numbers, + - * / // % **, parentheses, "
            "sqrt, log, exp, tanh, sigmoid, abs, round, min, max). Use it instead of mental arithmetic.",
            args_schema=CalcArgs,
            handle_validation_error=_validation_message,
        ),
        StructuredTool.from_function(
            func=run_view,
            name="view_image",
            description="Look at a page or a region of it ([x0, y0, w, h] from a bounding_box column). "
            + ("Returns the rendered image." if multimodal else "Returns the caption and the text in the region."),
            args_schema=ViewImageArgs,
            handle_validation_error=_validation_message,
        ),
    ]

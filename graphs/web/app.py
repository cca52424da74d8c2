"""The Starlette app: the page, its static files, and the JSON and server-sent-event API it calls.

    GET  /                              the page (static/index.html; app.js and app.css under /static/)
    GET  /api/access                    whether a key is needed and given;   POST /api/login {key}
    GET  /api/store                     the store's papers, the configs to choose from, whether warm-up is done
    POST /api/ask {question, config, pdf_ids, answer_format}  -> {run_id, events_url, stop_url}
    GET  /api/runs/{run_id}/events      the run's steps, then its answer (server-sent events, resumable)
    POST /api/runs/{run_id}/stop        stop the run
    GET  /api/history                   the questions asked in this store, newest first
    GET  /api/passage?pdf_id&page&source&answer&question   a cited passage: its text, page and box
    GET  /api/pages/{pdf_id}/{page}.png the page as an image (PyMuPDF)
    POST /api/upload (multipart: file)  ingest one PDF into the store (read as it streams: past the limit, 413)
    GET  /trace/{run_id}                the run's trace in the trace viewer (graphs/trace_html.py)

Errors are JSON ``{"error": message}`` with a 4xx/5xx status; the page shows the message. An unexpected failure
says only what failed and an error id (``"error_id"``); the server log has the details under that id.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from evidex.graphs.web.access import SESSION_COOKIE, Access, AccessMiddleware, LoginThrottle, client_address, throttled
from evidex.graphs.web.asking import Asker, BusyError
from evidex.graphs.web.errors import failure
from evidex.graphs.web.history import History
from evidex.graphs.web.models import AskRequest, AskStarted, LoginRequest, StoreInfo
from evidex.graphs.web.page_render import PageRenderer, RenderError
from evidex.graphs.web.store_claim import claim_store
from evidex.graphs.web.store_gate import StoreBusyError, StoreGate
from evidex.graphs.web.store_view import NotFoundError, check_pdf_id, list_papers, passage, pdf_file
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

log = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent / "static"
READ_WAIT_S = 30.0  # how long a page look-up waits for an upload to finish before saying the store is busy
MAX_JSON_BYTES = 1 << 20  # a question's request body: far above any question the server takes
_RUN_ID = re.compile(r"^web-\d{8}-\d{6}-[0-9a-f]{6}$")


@dataclass
class WebOptions:
    db: str | None = None
    store_dir: Path | None = None
    access_key: str | None = None  # None: no key (loopback only)
    loopback: bool = True
    default_config: str = "airqa/airqa"
    llm_spec: str | None = None  # None: the config's model (local)
    overrides: list[str] = field(default_factory=list)  # --set KEY=VALUE for every config
    ingest_config: str | None = None  # as evidex ingest --config
    max_upload_mb: float = 200
    address: str | None = None  # where the server listens, for a second server's message


def _error(status: int, message: str, error_id: str | None = None, headers: dict | None = None) -> JSONResponse:
    body = {"error": message, **({"error_id": error_id} if error_id else {})}
    return JSONResponse(body, status_code=status, headers={"cache-control": "no-store", **(headers or {})})


class BodyTooLargeError(ValueError):
    pass


async def _json_body(request: Request, limit: int = MAX_JSON_BYTES):
    """The request's JSON, read up to ``limit`` bytes (BodyTooLargeError past it, whatever it declares)."""
    if int(request.headers.get("content-length") or 0) > limit:
        raise BodyTooLargeError
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLargeError
    return json.loads(bytes(body))


def create_app(options: WebOptions, *, llm=None, embeddings=None) -> Starlette:
    """The app over one store. ``llm`` replaces the configs' chat model (tests pass a scripted one);
    ``embeddings`` replaces the store's embedding model for uploads and queries (tests pass fake ones)."""
    from evidex.tools.store import require_store, store_paths

    paths = require_store(store_paths(options.db, options.store_dir))
    store_label = options.db or paths.root.name
    claim = claim_store(paths.root, store_label, options.address)  # a second server on this store stops here
    try:
        return _create_app(options, paths, claim, llm, embeddings)
    except BaseException:
        claim.release()
        raise


def _create_app(options: WebOptions, paths, claim, llm, embeddings) -> Starlette:
    from evidex.tools.paperstore import PaperStore

    store_dir = None if options.db else str(paths.root)
    tools = PaperStore(options.db, store_dir)
    gate = StoreGate()
    history = History(paths.root / "web")
    store_overrides = [f"store.db={options.db}"] if options.db else [f"store.store_dir={paths.root}"]
    asker = Asker(store_overrides=store_overrides, tools=tools, gate=gate, history=history, llm=llm,
                  llm_spec=options.llm_spec, overrides=options.overrides, default_config=options.default_config)
    if options.default_config not in asker.configs:
        raise ValueError(f"unknown config {options.default_config!r}; choose one of {', '.join(asker.configs)}")
    renderer = PageRenderer()
    access = Access(key=options.access_key, loopback=options.loopback)
    throttle = LoginThrottle()
    ingest_kwargs = {"db": options.db, "store_dir": store_dir, "config": options.ingest_config,
                     "embeddings": embeddings}
    store_label = options.db or paths.root.name
    upload_limit = int(options.max_upload_mb * (1 << 20))
    ready = threading.Event()  # the store's indexes are open and the page renderer answers

    def warm_up() -> None:
        renderer.start()
        asker.warm()
        try:
            renderer.warm()
        except Exception as exc:  # noqa: BLE001 - pages will say why they cannot be shown
            log.warning("page renderer: %s", exc)
        ready.set()

    def use_embeddings() -> None:
        """Queries embed with the given model too (after every ingestion, which rebuilds the search engine)."""
        if embeddings is not None:
            from evidex.tools.search import get_engine

            get_engine(options.db, store_dir, embeddings)

    def read(fn, *args):
        """A store look-up on a worker thread, while no upload writes."""
        def run():
            with gate.reading(timeout=READ_WAIT_S):
                return fn(*args)
        return run_in_threadpool(run)

    # -- the page ------------------------------------------------------------------------------------------
    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-cache"})

    async def favicon(request: Request) -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    async def access_state(request: Request) -> Response:
        return JSONResponse({"key_required": access.key is not None, "signed_in": access.has_session(request.cookies)})

    async def login(request: Request) -> Response:
        try:
            body = LoginRequest.model_validate(await _json_body(request, 4096))
        except (ValidationError, ValueError):  # BodyTooLargeError and JSONDecodeError are ValueErrors too
            return _error(400, "Send the access key as {\"key\": ...}.")
        if access.key is None:
            return JSONResponse({"ok": True})
        client = client_address(request.scope)
        outcome = throttle.check(client, lambda: access.key_matches(body.key))
        if outcome is not True and outcome is not False:
            status, message, headers = throttled(outcome)
            return _error(status, message, headers=headers)
        if not outcome:
            await asyncio.sleep(0.5)  # slows guessing one after another (the throttle caps them per minute)
            return _error(401, "That is not the access key the server printed.")
        response = JSONResponse({"ok": True})
        response.set_cookie(SESSION_COOKIE, access.session_token(), httponly=True, samesite="strict", path="/")
        return response

    # -- the store -----------------------------------------------------------------------------------------
    async def store(request: Request) -> Response:
        papers = await read(list_papers, tools)
        info = StoreInfo(store=store_label, papers=papers, configs=list(asker.configs.values()),
                         default_config=options.default_config, ready=ready.is_set(),
                         max_upload_mb=options.max_upload_mb)
        return JSONResponse(info.model_dump())

    async def history_list(request: Request) -> Response:
        entries = await run_in_threadpool(history.entries)
        return JSONResponse([e.model_dump() for e in entries])

    async def passage_view(request: Request) -> Response:
        q = request.query_params
        try:
            page = int(q.get("page", ""))
        except ValueError:
            return _error(400, "page must be a page number")
        pdf_id = check_pdf_id(q.get("pdf_id", ""))

        def lines_of(number: int):  # the page's text lines, from its PDF (a PDF that moved: the passage without)
            return renderer.lines(pdf_file(tools, pdf_id)[0], number)

        found = await read(passage, tools, pdf_id, page, q.get("source", "")[:200], q.get("answer", "")[:2000],
                           q.get("question", "")[:4000], lines_of)
        return JSONResponse(found.model_dump())

    async def page_image(request: Request) -> Response:
        pdf_id = check_pdf_id(request.path_params["pdf_id"])
        page = request.path_params["page"]
        path, pages = await read(pdf_file, tools, pdf_id)
        if not 1 <= page <= max(pages, 1):
            raise NotFoundError(f"paper {pdf_id} has {pages} pages, not page {page}")
        data = await run_in_threadpool(renderer.png, path, page)
        return Response(data, media_type="image/png", headers={"cache-control": "private, max-age=3600"})

    # -- questions -----------------------------------------------------------------------------------------
    async def ask(request: Request) -> Response:
        try:
            body = AskRequest.model_validate(await _json_body(request))
        except BodyTooLargeError:
            return _error(413, "The question is far too long; the limit is 4,000 characters.")
        except (ValidationError, ValueError) as exc:
            return _error(400, f"Not a question the server can run: {_first_error(exc)}")
        try:
            run = await run_in_threadpool(asker.start, body)
        except BusyError as exc:
            return _error(409, str(exc))
        except ValueError as exc:
            return _error(400, str(exc))
        return JSONResponse(AskStarted(run_id=run.id, events_url=f"/api/runs/{run.id}/events",
                                       stop_url=f"/api/runs/{run.id}/stop").model_dump())

    async def events(request: Request) -> Response:
        from sse_starlette import EventSourceResponse

        run = asker.get(request.path_params["run_id"])
        if run is None:
            return _error(404, "No such question (the server keeps the last 50; see the history).")
        try:
            start = int(request.headers.get("last-event-id", "-1")) + 1
        except ValueError:
            start = 0

        async def stream():
            async for event in run.follow(start):
                yield {"id": str(event["seq"]), "data": json.dumps(event, ensure_ascii=False)}

        return EventSourceResponse(stream(), ping=10, headers={"cache-control": "no-store"})

    async def stop(request: Request) -> Response:
        if not asker.stop(request.path_params["run_id"]):
            return _error(404, "No such question.")
        return JSONResponse({"ok": True})

    async def trace(request: Request) -> Response:
        from evidex.graphs.trace_html import render_trace_html
        from evidex.graphs.trace_tree import TraceItem

        run_id = request.path_params["run_id"]
        path = history.trace_file(run_id) if _RUN_ID.match(run_id) else None
        if path is None or not path.is_file():
            return _error(404, "No trace for this question (yet): it is written when the run ends.")
        item = TraceItem(id=run_id, trace_path=path)
        html_text = await run_in_threadpool(render_trace_html, [item], {"run_id": run_id, "task": "ask",
                                                                        "config": store_label})
        # the viewer carries its own CSP (its one inline script by hash); the header only forbids framing
        return HTMLResponse(html_text, headers={"content-security-policy": "frame-ancestors 'none'; base-uri 'none'"})

    # -- uploads -------------------------------------------------------------------------------------------
    async def upload(request: Request) -> Response:
        """One PDF, read as it streams (chunked or not): past the limit the request is answered 413 at once and the
        connection closed, with no more than the limit ever written (``uploads.UploadReceiver``)."""
        from evidex.graphs.web.uploads import (UploadReceiver, UploadRefused, UploadTooLargeError, ingest_upload,
                                               place_upload)

        too_large = {"connection": "close"}  # the rest of the body is not read
        if int(request.headers.get("content-length") or 0) > upload_limit + (64 << 10):
            return _error(413, f"The file is larger than {options.max_upload_mb:g} MB, this server's limit for one "
                               "PDF.", headers=too_large)
        try:
            receiver = UploadReceiver(request.headers.get("content-type", ""), paths.root, upload_limit)
        except UploadRefused as exc:
            return _error(400, str(exc))
        try:
            async for chunk in request.stream():
                if chunk:
                    await run_in_threadpool(receiver.feed, chunk)
            part, original = await run_in_threadpool(receiver.finish)
            saved, reused = await run_in_threadpool(place_upload, part, original)
        except UploadTooLargeError as exc:
            return _error(413, str(exc), headers=too_large)
        except UploadRefused as exc:
            return _error(400, str(exc))
        except ClientDisconnect:
            return _error(400, "The upload was cut off; send the PDF again.")
        finally:
            receiver.discard()

        def ingest_now():
            with gate.writing():
                try:
                    return ingest_upload(saved, original, ingest_kwargs, reused)
                finally:
                    asker.invalidate()
                    use_embeddings()

        result = await run_in_threadpool(ingest_now)
        return JSONResponse(result.model_dump())

    # -- errors --------------------------------------------------------------------------------------------
    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, str(exc))

    async def busy(request: Request, exc: Exception) -> Response:
        return _error(503, str(exc))

    async def unrenderable(request: Request, exc: Exception) -> Response:
        return _error(422, str(exc))

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _error(exc.status_code, exc.detail if exc.status_code != 404 else "Not found.")

    async def server_error(request: Request, exc: Exception) -> Response:
        message, error_id = failure("The server failed on this request", exc,
                                    context=f"{request.method} {request.url.path}")
        return _error(500, message, error_id)

    @asynccontextmanager
    async def lifespan(app):
        use_embeddings()
        threading.Thread(target=warm_up, name="warm-up", daemon=True).start()
        try:
            yield
        finally:
            asker.stop_all()
            renderer.close()
            claim.release()

    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        Route("/api/access", access_state),
        Route("/api/login", login, methods=["POST"]),
        Route("/api/store", store),
        Route("/api/history", history_list),
        Route("/api/passage", passage_view),
        Route("/api/pages/{pdf_id}/{page:int}.png", page_image),
        Route("/api/ask", ask, methods=["POST"]),
        Route("/api/runs/{run_id}/events", events),
        Route("/api/runs/{run_id}/stop", stop, methods=["POST"]),
        Route("/api/upload", upload, methods=["POST"]),
        Route("/trace/{run_id}", trace),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={
        NotFoundError: not_found, StoreBusyError: busy, RenderError: unrenderable, HTTPException: http_error,
        Exception: server_error})
    app.add_middleware(AccessMiddleware, access=access, throttle=throttle)
    app.state.asker = asker
    app.state.store_root = paths.root
    app.state.claim = claim
    app.state.throttle = throttle
    return app


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        e = exc.errors()[0]
        message = e["msg"].removeprefix("Value error, ")
        return f"{'.'.join(str(p) for p in e['loc'])}: {message}"
    return "the body is not JSON"

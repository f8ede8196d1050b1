"""The search service: a JSON API, its OpenAPI docs and a one-page search UI, all from one FastAPI app.

Every error a client can cause answers with a 4xx status and ``{"error": "<message>"}`` (validation errors
included, through a custom handler), so clients have one shape to read. The page and its script and styles are
package data served by the app itself: it works without network access. Swagger UI and ReDoc are not shipped
with FastAPI; by default ``/docs`` and ``/redoc`` list the endpoints in plain HTML (no CDN), and ``docs_assets`` (``ratio serve
--docs-assets DIR``) serves the interactive pages from a local folder (``swagger-ui-bundle.js``, ``swagger-ui.css`` and
``redoc.standalone.js``, from the npm packages swagger-ui-dist and redoc). ``/openapi.json`` needs nothing.
A request body is refused with 413 past :data:`MAX_BODY_BYTES` while it is being read (a query is at most
2,000 characters; nothing a client sends needs more), so an endless body costs the server nothing.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qs

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ratio_bench import __version__
from ratio_bench.core.errors import RatioError
from ratio_bench.evaluation.board.cost import UnknownHardware
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.board.page_cache import PageCache, folder_key
from ratio_bench.evaluation.board.render.html import leaderboard_html
from ratio_bench.evaluation.board.render.page_assets import CONTENT_SECURITY_POLICY
from ratio_bench.leaderboard.board import message_page
from ratio_bench.serve.guard import (
    SESSION_COOKIE,
    CsrfTokens,
    HostCheck,
    NoFrames,
    SiteAddress,
    same_origin,
)
from ratio_bench.serve.search import (
    DEFAULT_K,
    EMPTY_TEXT,
    MAX_K,
    MAX_QUERY_CHARS,
    QueryError,
    Searcher,
    is_blank,
)

STATIC = files("ratio_bench.serve") / "static"
DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js")
MAX_BODY_BYTES = 64 * 1024  # a search request of 2,000 characters is under 10 KiB even as \uXXXX escapes


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes answers 413 before it is read (by its Content-Length) or
    as soon as its chunks pass the limit (chunked transfer): never after reading it whole."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            return await JSONResponse({"error": self._message()}, status_code=413)(scope, receive, send)
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:  # FastAPI re-raises an HTTPException met while reading the body
                raise HTTPException(413, self._message())
            return message

        await self.app(scope, counted, send)

    def _message(self) -> str:
        return f"request body over {self.limit:,} bytes; a search request is a few KiB"


class SearchRequest(BaseModel):
    """A search as the API and the MCP tool take it: strict types (``k: "5"`` or ``k: true`` is no integer),
    no unknown fields, a text with something to search for. ``ratio mcp`` validates its tool arguments with
    this very model, so both front doors refuse the same calls with the same messages."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(
        description=f"the sentence to find inspirations for (1 to {MAX_QUERY_CHARS:,} characters)",
        max_length=MAX_QUERY_CHARS,
        examples=["Dense retrievers fail on rare technical terms."],
    )
    moves: list[str] | None = Field(None, description="a subset of the index's moves (default: all)")
    k: int = Field(DEFAULT_K, ge=1, le=MAX_K, description="results per move")
    role_prior: bool = Field(
        False,
        description="rank first the sentences the release mined as the move's gold (an index of a release "
        "only; default false: the model's ranking alone). The answer's role_prior says whether it was used",
    )

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if is_blank(text):
            raise PydanticCustomError("blank_text", EMPTY_TEXT)
        return text


class Hit(BaseModel):
    rank: int
    score: float
    id: str
    text: str
    paper_id: str | None
    title: str | None
    date: str | None
    venue: str | None
    section: str | None
    role: str | None = Field(
        None, description="what the release mined the sentence as: a move's gold or a distractor category"
    )
    url: str | None = Field(description="the source paper, when its id says where it lives")


class SearchResponse(BaseModel):
    query: str
    k: int
    role_prior: bool = Field(
        False, description="whether the release's mined roles ranked each move's mined golds first"
    )
    results: dict[str, list[Hit]]


class ErrorResponse(BaseModel):
    error: str


def _field(loc: tuple) -> str:
    parts = [str(p) for p in loc if p != "body"]
    return ".".join(parts) or "body"


def first_error(errors: list) -> str:
    """The first of pydantic's validation errors as one line, ``<field>: <message>`` (API and MCP alike)."""
    first = errors[0]
    return f"{_field(first['loc'])}: {first['msg']}"


def check_docs_assets(folder: Path) -> None:
    missing = [name for name in DOCS_ASSETS if not (folder / name).is_file()]
    if missing:
        raise RatioError(
            f"--docs-assets {folder}: missing {', '.join(missing)} (from the npm packages swagger-ui-dist and redoc)"
        )


class LiveBoard(Protocol):
    """A leaderboard service's page and submissions (``ratio_bench.leaderboard.board.LiveBoard``)."""

    allow_submissions: bool
    policy: str

    def page(self, csrf: str = "") -> str: ...

    def submit(self, form: dict[str, str], client: str) -> tuple[int, str]: ...


def create_app(
    searcher: Searcher | None,
    docs_assets: Path | None = None,
    results: Path | None = None,
    live_board: LiveBoard | None = None,
    site: SiteAddress | None = None,
) -> FastAPI:
    """The app over a loaded searcher (tests pass one built in-process; None: the leaderboard only).

    ``results`` (a folder of leaderboard entries) adds ``/leaderboard``: the page ``ratio leaderboard --html``
    writes, rendered on each request so a new submission shows without a restart. ``live_board`` serves a
    leaderboard service's page there instead (results repository and queue), and its submission form's
    ``POST /leaderboard/submit`` when it takes submissions; ``site`` (the server's own addresses) is then
    required: every request must name it as its ``Host`` and each submission come from its pages
    (:mod:`ratio_bench.serve.guard`). No response of the app may be framed.
    """
    if live_board is not None and live_board.allow_submissions and site is None:
        raise RatioError("a leaderboard taking submissions needs the server's own address (site)")
    app = FastAPI(
        title="Ratio inspiration search",
        version=__version__,
        description="Find sentences from other papers that address, broaden or specify a given sentence.",
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodyLimit)
    app.add_middleware(NoFrames)
    if site is not None:
        app.add_middleware(HostCheck, site=site)  # added last: runs first
    _add_error_handlers(app)
    _add_api(app, searcher)
    _add_docs(app, docs_assets)
    if live_board is not None:
        _live_board_routes(app, live_board, site)
    elif results is not None:
        _add_leaderboard(app, results)
    else:
        _no_leaderboard(app)
    _add_page(app, searcher)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    """Every error as ``{"error": "<one line>"}`` with its status, validation errors naming the field."""

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": first_error(exc.errors())}, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


def _add_api(app: FastAPI, searcher: Searcher) -> None:
    """``/api/health`` and ``/api/search``."""
    errors = {422: {"model": ErrorResponse}}

    @app.get("/api/health")
    def health() -> dict:
        return {"status": "ok", **(searcher.describe() if searcher else {})}

    if searcher is not None:

        @app.post("/api/search", response_model=SearchResponse, responses=errors)
        def search(request: SearchRequest):
            # a plain function: FastAPI runs it in its thread pool, so a slow encoding never blocks the loop
            try:
                results = searcher.search(request.text, request.moves, request.k, request.role_prior)
            except QueryError as e:
                return JSONResponse({"error": str(e)}, status_code=422)
            used = searcher.prior_used(request.role_prior)
            return {"query": request.text, "k": request.k, "role_prior": used, "results": results}


def _add_docs(app: FastAPI, docs_assets: Path | None) -> None:
    """``/docs`` and ``/redoc``, from local assets when given (an offline machine), and the static files."""
    if docs_assets is not None:
        check_docs_assets(docs_assets)
        app.mount("/docs-assets", StaticFiles(directory=docs_assets), name="docs-assets")
    local = "/docs-assets/" if docs_assets else None
    swagger = {"swagger_favicon_url": "/static/favicon.svg"}
    redoc = {"redoc_favicon_url": "/static/favicon.svg"}
    if local:
        swagger |= {
            "swagger_js_url": f"{local}swagger-ui-bundle.js",
            "swagger_css_url": f"{local}swagger-ui.css",
        }
        redoc |= {"redoc_js_url": f"{local}redoc.standalone.js", "with_google_fonts": False}

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if not local:  # Swagger UI would come from a CDN: a blank page offline
            return HTMLResponse(offline_api_page(app))
        return get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title} - API", **swagger)

    @app.get("/redoc", include_in_schema=False)
    def redoc_page() -> HTMLResponse:
        if not local:
            return HTMLResponse(offline_api_page(app))
        return get_redoc_html(openapi_url=app.openapi_url, title=f"{app.title} - ReDoc", **redoc)

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")


def offline_api_page(app: FastAPI) -> str:
    """``/docs`` without ``--docs-assets``: the API's endpoints from its own OpenAPI schema, in plain HTML that
    loads nothing from elsewhere (Swagger UI and ReDoc are not shipped with FastAPI and would need a CDN)."""

    rows = "".join(
        f"<tr><td><code>{escape(method.upper())} {escape(path)}</code></td>"
        f"<td>{escape(op.get('summary') or op.get('description') or '')}</td></tr>"
        for path, item in app.openapi()["paths"].items()
        for method, op in item.items()
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(app.title)} - API</title>"
        "<link rel='stylesheet' href='/static/style.css'></head><body><main>"
        f"<h1>{escape(app.title)} - API</h1><p>The schema: <a href='/openapi.json'>/openapi.json</a>. "
        "Interactive docs (Swagger UI, ReDoc) are served when <code>ratio serve --docs-assets DIR</code> "
        "holds their files; nothing here is loaded from elsewhere.</p>"
        f"<table><tr><th>request</th><th>what</th></tr>{rows}</table></main></body></html>"
    )


def _add_leaderboard(app: FastAPI, results: Path) -> None:
    """``/leaderboard``, rendered from ``results`` when its files changed (a stat of each, at most every second)."""

    cache = PageCache(check_s=1.0)

    @app.get("/leaderboard", include_in_schema=False)
    def leaderboard() -> HTMLResponse:
        return HTMLResponse(
            cache.page(lambda: folder_key(results), lambda: leaderboard_html(load_board(results))),
            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
        )


NO_BOARD = (
    "this server has no leaderboard: start `ratio serve` in a checkout that has eval/results, or give "
    "--results DIR (a folder of `ratio score --out` files)"
)


def _no_leaderboard(app: FastAPI) -> None:
    """``/leaderboard`` says how to enable it, instead of a bare 404."""

    @app.get("/leaderboard", include_in_schema=False)
    def leaderboard() -> JSONResponse:
        return JSONResponse({"error": NO_BOARD}, status_code=404)


def _add_page(app: FastAPI, searcher: Searcher | None) -> None:
    """The search page at ``/`` (the leaderboard when the app serves no index)."""

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        if searcher is None:
            return RedirectResponse("/leaderboard")
        return FileResponse(str(STATIC / "index.html"), media_type="text/html")


def _live_board_routes(app: FastAPI, board: LiveBoard, site: SiteAddress | None) -> None:
    """``/leaderboard`` from the service's repositories; ``POST /leaderboard/submit`` when it takes submissions.
    Both are plain functions: FastAPI runs them in its thread pool while they wait for the Hub."""
    tokens = CsrfTokens()

    @app.get("/leaderboard", include_in_schema=False)
    def leaderboard(request: Request, hardware: str | None = None) -> HTMLResponse:
        session, new = tokens.session(request.cookies.get(SESSION_COOKIE))
        try:
            page = board.page(tokens.token(session) if board.allow_submissions else "", hardware)
        except UnknownHardware as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        except RatioError as e:
            return JSONResponse({"error": str(e)}, status_code=502)
        response = HTMLResponse(page, headers={"Content-Security-Policy": board.policy})
        if board.allow_submissions and new:
            response.set_cookie(
                SESSION_COOKIE, session, path="/leaderboard", httponly=True, samesite="strict",
                secure=request.url.scheme == "https",
            )  # fmt: skip
        return response

    if board.allow_submissions:

        @app.post("/leaderboard/submit", include_in_schema=False)
        def submit(request: Request, body: bytes = Depends(_form_body)) -> HTMLResponse:
            form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
            if not same_origin(request.headers, site):
                status, page = 403, _refusal("the form is taken from this site's own page only (Origin)")
            elif not tokens.valid(request.cookies.get(SESSION_COOKIE), form.get("csrf")):
                status, page = 403, _refusal("the form's token is missing or stale; reload /leaderboard")
            else:
                client = request.client.host if request.client else "unknown"
                status, page = board.submit(form, client)
            headers = {"Content-Security-Policy": board.policy}
            if status == 429:  # the page says how long; the header tells a script
                headers["Retry-After"] = "60"
            return HTMLResponse(page, status_code=status, headers=headers)


def _refusal(reason: str) -> str:
    return message_page("Not queued", reason)


async def _form_body(request: Request) -> bytes:
    return await request.body()

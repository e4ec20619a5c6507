"""The phoneloop HTTP service: JSON routes over the lake, frames, read-only SQL, the webhook.

    from api.app import create_app
    app = create_app("./lake")            # settings from the environment (api/settings.py)

Every route parses its input, makes one call into ``Browser`` (api/browse.py),
``api.sql`` or ``annotate.webhook``, and renders the result; domain errors become HTTP
errors in the handlers at the bottom. The viewer's HTML pages live in api/viewer.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from annotate import inbox, webhook
from api import evals, tidy, viewer, viewer_evals, viewer_sql
from api import sql as user_sql
from api.auth import bearer, frame_access, read_access, require_token, webhook_access
from api.browse import SHA_RE, Browser
from api.errors import (
    DatasetNotFound, EvalNotFound, InvalidFrameSha, ReportNotFound, SqlFailed, SqlRejected, SqlTimeout,
    StepNotFound, TooManyQueries,
)
from api.listing import EpisodeFilters, EpisodeQuery
from api.schemas import (
    CompareOut, DatasetDiffOut, DatasetOut, DatasetVersionOut, EpisodeOut, EpisodePage, EvalOut, EvalSummaryOut,
    Health, ModelOut, NeighboursOut, Problem, SqlIn, SqlOut, TreeOut, WebhookOut,
)
from api.sessions import SessionStore
from api.settings import ApiSettings
from datalake.errors import EpisodeNotFound, FrameNotFound
from datalake.lake import Lake

DOCS_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            "script-src 'self' 'unsafe-inline'; worker-src 'self' blob:")
FRAME_HEADERS = {"Cache-Control": "public, max-age=31536000, immutable", "Access-Control-Allow-Origin": "*"}

_ERRORS: list[tuple[type[Exception], int]] = [
    (InvalidFrameSha, 400), (SqlRejected, 400), (SqlFailed, 400), (SqlTimeout, 408), (TooManyQueries, 429),
    (webhook.InvalidPayload, 422), (EpisodeNotFound, 404), (FrameNotFound, 404), (StepNotFound, 404),
    (DatasetNotFound, 404), (ReportNotFound, 404), (EvalNotFound, 404),
]


def _problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": Problem} for code in codes}


async def _browser(request: Request) -> Browser:
    return request.app.state.browser


BrowserDep = Annotated[Browser, Depends(_browser)]
EpisodeId = Annotated[str, PathParam(min_length=1, max_length=200)]
EvalId = Annotated[str, PathParam(min_length=1, max_length=200)]
router = APIRouter()
reads = APIRouter(dependencies=[Depends(read_access), Depends(tidy.known_params)])
frames = APIRouter(dependencies=[Depends(frame_access)])


def create_app(lake: str | Lake, settings: ApiSettings | None = None) -> FastAPI:
    """The ASGI app over a lake (a URI or an open ``Lake``); raises LakeNotFound early."""
    lake = Lake.open(lake) if isinstance(lake, str) else lake
    settings = ApiSettings.from_env() if settings is None else settings
    app = FastAPIOffline(title="phoneloop", version="1", static_url="/static-docs", redoc_url=None,
                         summary="Browse trajectories and evaluations, fetch frames, query the lake.")
    app.state.settings = settings
    app.state.browser = Browser(lake, refresh_s=settings.refresh_s, frame_cache_bytes=settings.frame_cache_mb << 20)
    app.state.sql_gate = user_sql.QueryGate(settings.sql_max_concurrent)
    app.state.sql_pool = user_sql.WorkerPool(warm=1, keep=settings.sql_max_concurrent)
    app.router.on_shutdown.append(app.state.sql_pool.close)
    app.state.sessions = SessionStore.from_api_token(settings.token, settings.session_ttl_s) if settings.token else None
    app.router.routes.append(Route("/frames/{sha}.png", fast_frame, methods=["GET"]))  # before get_frame
    webhook.warm(lake.uri)  # the webhook resolves people through Label Studio's users API: load them now
    app.state.ingestor = inbox.Ingestor(lake.uri, lake.storage_options)
    app.state.ingestor.kick()  # deliveries acknowledged before a crash are ingested now
    app.include_router(router)
    app.include_router(reads)
    app.include_router(frames)
    app.include_router(viewer.public)
    app.include_router(viewer_sql.router, dependencies=[Depends(tidy.known_params)])  # the SQL page: login always
    app.include_router(viewer.router, dependencies=[Depends(read_access), Depends(tidy.known_params)])
    app.include_router(viewer_sql.exports, dependencies=[Depends(read_access), Depends(tidy.known_params)])
    app.include_router(viewer_evals.router, dependencies=[Depends(read_access), Depends(tidy.known_params)])
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    for error, code in _ERRORS:
        app.add_exception_handler(error, _handler(code))
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    return app


@router.get("/redoc", include_in_schema=False)
async def redoc() -> HTMLResponse:
    """ReDoc from fastapi-offline's packaged copy; the CSP keeps it from fetching its CDN logo."""
    page = get_redoc_html(openapi_url="/openapi.json", title="phoneloop - ReDoc", with_google_fonts=False,
                          redoc_js_url="/static-docs/redoc.standalone.js", redoc_favicon_url="/static-docs/favicon.png")
    return HTMLResponse(page.body, headers={"Content-Security-Policy": DOCS_CSP})


@router.get("/health", response_model=Health, tags=["service"])
async def health(browser: BrowserDep) -> dict:
    """Liveness: the service is up; names its lake by folder name only (never a path)."""
    return {"status": "ok", "lake": tidy.lake_name(browser.lake.uri), "schema_version": browser.lake.schema_version}


@reads.get("/api/episodes", response_model=EpisodePage, tags=["episodes"], responses=_problems(401, 503))
def list_episodes(browser: BrowserDep, query: Annotated[EpisodeQuery, Query()]) -> dict:
    """Episodes (outcome after human judgement), searched, filtered and sorted, with counts per facet.

    Unknown parameters and bad values answer 422 naming the parameter (see api/listing.py)."""
    return browser.list_episodes(query)


@reads.get("/api/episodes/{episode_id}", response_model=EpisodeOut, tags=["episodes"],
           responses=_problems(401, 404, 503))
def get_episode(episode_id: EpisodeId, browser: BrowserDep) -> dict:
    """One episode: steps with recorded actions, what the model said, corrections, annotations, outcome."""
    return browser.episode(episode_id)


@reads.get("/api/episodes/{episode_id}/neighbours", response_model=NeighboursOut, tags=["episodes"],
           responses=_problems(401, 503))
def episode_neighbours(episode_id: EpisodeId, browser: BrowserDep,
                       query: Annotated[EpisodeFilters, Query()]) -> dict:
    """The previous and next episode in the listing the same filters and sort give."""
    return browser.neighbours(query, episode_id)


@reads.get("/api/episodes/{episode_id}/steps/{step_index}/tree", response_model=TreeOut, tags=["episodes"],
           responses=_problems(401, 404, 503))
def step_tree(episode_id: EpisodeId, step_index: Annotated[int, PathParam(ge=0, le=100_000)],
              browser: BrowserDep) -> dict:
    """A step's UI tree, flattened in document order (depth, parent), and the node the action targets."""
    return browser.step_tree(episode_id, step_index)


@frames.get("/frames/{sha}.png", tags=["frames"], response_class=Response,
            responses={200: {"content": {"image/png": {}}, "description": "the PNG, immutable"},
                       304: {"description": "not modified (If-None-Match)"}, **_problems(400, 401, 404, 503)})
async def get_frame(sha: Annotated[str, PathParam(pattern=SHA_RE.pattern)], request: Request,
                    browser: BrowserDep) -> Response:
    """A screenshot by the sha256 of its PNG bytes (64 lowercase hex); cacheable forever, CORS-open."""
    return await _frame(sha, request, browser)  # documents the route; requests take fast_frame below


async def fast_frame(request: Request) -> Response:
    """``get_frame`` without FastAPI's dependency and validation machinery (frames are the hot path):
    the same checks by hand, in the same order, with the same answers."""
    sha = request.path_params["sha"]
    if not SHA_RE.match(sha):
        error = {"type": "string_pattern_mismatch", "loc": ["path", "sha"],
                 "msg": f"String should match pattern '{SHA_RE.pattern}'"}
        return JSONResponse({"detail": tidy.validation_errors([error])}, status_code=422)
    await frame_access(request, await bearer(request))
    return await _frame(sha, request, request.app.state.browser)


async def _frame(sha: str, request: Request, browser: Browser) -> Response:
    etag = f'"{sha}"'
    data = browser.cached_frame(sha) or await run_in_threadpool(browser.frame, sha)
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers={"ETag": etag, **FRAME_HEADERS})
    return Response(data, media_type="image/png", headers={"ETag": etag, **FRAME_HEADERS})


@reads.get("/api/evals", response_model=list[EvalSummaryOut], tags=["evals"], responses=_problems(401, 503))
def list_evals(browser: BrowserDep) -> list:
    """Every evaluation, newest first, with each policy's episodes, successes and rate."""
    return evals.list_evals(browser.sql)


@reads.get("/api/evals/compare", response_model=CompareOut, tags=["evals"], responses=_problems(401, 404))
def compare_evals(browser: BrowserDep, left: Annotated[str, Query(max_length=200)],
                  left_policy: Annotated[str, Query(max_length=500)], right: Annotated[str, Query(max_length=200)],
                  right_policy: Annotated[str, Query(max_length=500)]) -> dict:
    """Two policies (each an eval id and a policy) on the task seeds both ran: who solved what."""
    return evals.compare(browser.sql, (left, left_policy), (right, right_policy))


@reads.get("/api/evals/{eval_id}", response_model=EvalOut, tags=["evals"], responses=_problems(401, 404, 503))
def get_eval(eval_id: EvalId, browser: BrowserDep) -> dict:
    """One evaluation: per-policy rows, the table per category and app, per-task results with episode ids."""
    return evals.eval_detail(browser.sql, eval_id)


@reads.get("/api/datasets/diff", response_model=DatasetDiffOut, tags=["datasets"], responses=_problems(401, 404))
def diff_datasets(browser: BrowserDep, name: Annotated[str, Query(max_length=200)],
                  a: Annotated[int, Query(ge=0, le=2**31 - 1)], b: Annotated[int, Query(ge=0, le=2**31 - 1)]) -> dict:
    """What changed between two versions of a dataset: counts, recipe, lake table versions, episodes."""
    return browser.dataset_diff(name, a, b)


@reads.get("/api/datasets/{name}/v{version}", response_model=DatasetVersionOut, tags=["datasets"],
           responses=_problems(401, 404, 503))
def get_dataset(browser: BrowserDep, name: Annotated[str, PathParam(min_length=1, max_length=200)],
                version: Annotated[int, PathParam(ge=0, le=2**31 - 1)]) -> dict:
    """One dataset version (as the viewer's page shows it), with its episode ids by split."""
    row = browser.dataset(name, version)
    return {**row, "episodes": browser.dataset_episodes(row)}


@reads.get("/api/datasets", response_model=list[DatasetOut], tags=["datasets"], responses=_problems(401, 503))
def list_datasets(browser: BrowserDep) -> list:
    """Every dataset version, with its counts and exports."""
    return browser.datasets()


@reads.get("/api/models", response_model=list[ModelOut], tags=["models"], responses=_problems(401, 503))
def list_models(browser: BrowserDep) -> list:
    """Every registered model."""
    return browser.models()


@router.post("/api/sql", response_model=SqlOut, dependencies=[Depends(require_token)], tags=["sql"],
             responses=_problems(400, 401, 408, 429, 503))
def run_sql(body: SqlIn, request: Request, browser: BrowserDep) -> dict:
    """One read-only SELECT over the lake's views (no file access), run in a child process capped in
    memory, time, rows and bytes; ``truncated_by`` says whether the row or the byte cap cut it."""
    settings: ApiSettings = request.app.state.settings
    user_sql.parse_one_select(body.query)  # refuse before taking a slot
    with request.app.state.sql_gate:
        result = user_sql.run_bounded(browser.lake.uri, browser.lake.storage_options, body.query, settings.sql_limits(),
                                      request.app.state.sql_pool)
    return {**result.__dict__, "row_limit": settings.sql_row_limit, "max_bytes": settings.sql_max_bytes}


@router.post("/webhooks/label-studio", response_model=WebhookOut, status_code=202,
             dependencies=[Depends(webhook_access)], tags=["annotate"], responses=_problems(400, 401, 503))
async def label_studio_webhook(payload: Annotated[dict[str, Any], Body()], request: Request,
                               browser: BrowserDep) -> dict:
    """A Label Studio annotation event, stored in the lake's webhook inbox and acknowledged at once;
    the annotations row is written moments later by the background ingest (annotate/inbox.py)."""
    delivery = await run_in_threadpool(inbox.receive, browser.lake, await request.body())
    request.app.state.ingestor.kick()
    return {"delivery_id": delivery, "status": "queued"}


def _handler(code: int):
    async def handle(request: Request, exc: Exception) -> Response:
        message = tidy.message(str(exc), request.app.state.browser.lake.uri)
        if code == 422:  # the shape FastAPI gives its own validation errors
            return JSONResponse({"detail": [{"type": "invalid", "loc": ["body"], "msg": message}]}, status_code=422)
        if not tidy.is_page(request.url.path):
            return JSONResponse({"detail": message}, status_code=code)
        return HTMLResponse(viewer.error_page(message, code), status_code=code)

    return handle


async def _invalid_request(request: Request, exc: RequestValidationError) -> Response:
    """422 naming each bad parameter; the input itself is never echoed (it may be huge)."""
    errors = tidy.validation_errors(exc.errors())
    if not tidy.is_page(request.url.path):
        return JSONResponse({"detail": errors}, status_code=422)
    lines = "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or e['loc'][0]}: {e['msg']}" for e in errors)
    return HTMLResponse(viewer.error_page(f"bad request parameters — {lines}", 422), status_code=422)


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    """JSON for the API; for pages an HTML error, and the token form when a login would help."""
    detail = tidy.message(str(exc.detail), request.app.state.browser.lake.uri)
    headers = getattr(exc, "headers", None)
    if not tidy.is_page(request.url.path):
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers)
    if exc.status_code == 401:
        return HTMLResponse(viewer.login_page(request), status_code=401)  # the form says why
    return HTMLResponse(viewer.error_page(detail, exc.status_code), status_code=exc.status_code, headers=headers)

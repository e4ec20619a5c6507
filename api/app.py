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
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from annotate import webhook
from api import sql as user_sql
from api import viewer
from api.auth import read_access, require_token, webhook_access
from api.signing import frame_access
from api.browse import SHA_RE, Browser
from api.errors import DatasetNotFound, InvalidFrameSha, ReportNotFound, SqlFailed, SqlRejected, SqlTimeout
from api.schemas import (
    DatasetOut, EpisodeOut, EpisodePage, Health, ModelOut, Problem, SqlIn, SqlOut, WebhookOut,
)
from api.settings import ApiSettings
from datalake.errors import EpisodeNotFound, FrameNotFound
from datalake.lake import Lake

FRAME_HEADERS = {"Cache-Control": "public, max-age=31536000, immutable", "Access-Control-Allow-Origin": "*"}

_ERRORS: list[tuple[type[Exception], int]] = [
    (InvalidFrameSha, 400), (SqlRejected, 400), (SqlFailed, 400), (SqlTimeout, 408),
    (webhook.InvalidPayload, 422), (EpisodeNotFound, 404), (FrameNotFound, 404),
    (DatasetNotFound, 404), (ReportNotFound, 404),
]


def _problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": Problem} for code in codes}


async def _browser(request: Request) -> Browser:
    return request.app.state.browser


BrowserDep = Annotated[Browser, Depends(_browser)]
Name = Annotated[str | None, Query(max_length=200)]
router = APIRouter()
reads = APIRouter(dependencies=[Depends(read_access)])


def create_app(lake: str | Lake, settings: ApiSettings | None = None) -> FastAPI:
    """The ASGI app over a lake (a URI or an open ``Lake``); raises LakeNotFound early."""
    lake = Lake.open(lake) if isinstance(lake, str) else lake
    settings = ApiSettings.from_env() if settings is None else settings
    app = FastAPI(title="phoneloop", version="1", summary="Browse trajectories, fetch frames, query the lake.")
    app.state.settings = settings
    app.state.browser = Browser(lake, refresh_s=settings.refresh_s, frame_cache_bytes=settings.frame_cache_mb << 20)
    webhook.warm(lake.uri)  # the webhook resolves people through Label Studio's users API: load them now
    app.include_router(router)
    app.include_router(reads)
    app.include_router(viewer.router, dependencies=[Depends(read_access)])
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    for error, code in _ERRORS:
        app.add_exception_handler(error, _handler(code))
    return app


@router.get("/health", response_model=Health, tags=["service"])
async def health(browser: BrowserDep) -> dict:
    """Liveness: the service is up and knows its lake."""
    return {"status": "ok", "lake": browser.lake.uri}


@reads.get("/api/episodes", response_model=EpisodePage, tags=["episodes"], responses=_problems(401, 503))
def list_episodes(browser: BrowserDep, source: Name = None,
                  app: Annotated[str | None, Query(max_length=200)] = None, category: Name = None,
                  outcome: Name = None, round: Annotated[int | None, Query(ge=0, le=2**31 - 1)] = None,
                  policy: Name = None, limit: Annotated[int, Query(ge=1, le=500)] = 50,
                  offset: Annotated[int, Query(ge=0, le=10**9)] = 0) -> dict:
    """Episodes, newest batch first; every filter is an exact match."""
    filters = {"source": source, "app": app, "category": category, "outcome": outcome, "round": round,
               "policy": policy}
    return browser.list_episodes(filters, limit=limit, offset=offset)


@reads.get("/api/episodes/{episode_id}", response_model=EpisodeOut, tags=["episodes"],
           responses=_problems(401, 404, 503))
def get_episode(episode_id: str, browser: BrowserDep) -> dict:
    """One episode: steps with recorded actions and latest corrections, annotations, outcome."""
    return browser.episode(episode_id)


@router.get("/frames/{sha}.png", tags=["frames"], response_class=Response, dependencies=[Depends(frame_access)],
           responses={200: {"content": {"image/png": {}}, "description": "the PNG, immutable"},
                      304: {"description": "not modified (If-None-Match)"}, **_problems(400, 401, 404, 503)})
async def get_frame(sha: Annotated[str, PathParam(pattern=SHA_RE.pattern)], request: Request,
                    browser: BrowserDep) -> Response:
    """A screenshot by the sha256 of its PNG bytes (64 lowercase hex); cacheable forever, CORS-open.

    With reads behind the token, ``?token=`` from a signed frame URL (api/signing.py) also opens it."""
    etag = f'"{sha}"'
    data = browser.cached_frame(sha) or await run_in_threadpool(browser.frame, sha)
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers={"ETag": etag, **FRAME_HEADERS})
    return Response(data, media_type="image/png", headers={"ETag": etag, **FRAME_HEADERS})


@reads.get("/api/datasets", response_model=list[DatasetOut], tags=["datasets"], responses=_problems(401, 503))
def list_datasets(browser: BrowserDep) -> list:
    """Every dataset version, with its counts and exports."""
    return browser.datasets()


@reads.get("/api/models", response_model=list[ModelOut], tags=["models"], responses=_problems(401, 503))
def list_models(browser: BrowserDep) -> list:
    """Every registered model."""
    return browser.models()


@router.post("/api/sql", response_model=SqlOut, dependencies=[Depends(require_token)], tags=["sql"],
             responses=_problems(400, 401, 408, 503))
def run_sql(body: SqlIn, request: Request, browser: BrowserDep) -> dict:
    """One read-only SELECT over the lake's views (no file access), with a row limit and a timeout."""
    settings: ApiSettings = request.app.state.settings
    with browser.fresh_lake() as lake:
        con = lake.readonly_connection()
    result = user_sql.run_readonly(con, body.query, row_limit=settings.sql_row_limit,
                                   timeout_s=settings.sql_timeout_s)
    return {**result.__dict__, "row_limit": settings.sql_row_limit}


@router.post("/webhooks/label-studio", response_model=WebhookOut, status_code=201,
             dependencies=[Depends(webhook_access)], tags=["annotate"], responses=_problems(400, 401, 503))
def label_studio_webhook(payload: Annotated[dict[str, Any], Body()], browser: BrowserDep) -> dict:
    """A Label Studio ANNOTATION_CREATED/UPDATED event -> one annotations row (annotate/webhook.py)."""
    with browser.fresh_lake() as lake:
        return webhook.ingest(lake, payload)


def _handler(code: int):
    async def handle(request: Request, exc: Exception) -> Response:
        if code == 422:  # the shape FastAPI gives its own validation errors
            return JSONResponse({"detail": [{"type": "invalid", "loc": ["body"], "msg": str(exc)}]}, status_code=422)
        if request.url.path.startswith(("/api/", "/frames/", "/webhooks/")):
            return JSONResponse({"detail": str(exc)}, status_code=code)
        return HTMLResponse(viewer.error_page(str(exc), code), status_code=code)

    return handle

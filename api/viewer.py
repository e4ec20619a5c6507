"""The trajectory viewer: server-rendered HTML pages (Jinja2) plus one small script for keys.

- ``/episodes``: the episode list with the API's filters and paging;
- ``/episodes/{id}``: every step's screenshot with the action drawn over it (api/overlay.py),
  the target element's box, the human correction beside the recorded action, the outcome
  and who verified it; ``j``/``k`` or the arrow keys move between steps;
- ``/datasets``: dataset versions and models; ``/datasets/{name}/v{N}``: one version's
  counts, exports and a link to its curation report.
"""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from api.browse import EPISODE_FILTERS, Browser
from api.overlay import describe, shapes

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
templates.env.trim_blocks = templates.env.lstrip_blocks = True
templates.env.filters["describe"] = describe
templates.env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str)
router = APIRouter(include_in_schema=False)
PAGE = 50


def _browser(request: Request) -> Browser:
    return request.app.state.browser


def error_page(message: str, code: int) -> str:
    return templates.get_template("error.html").render(message=message, code=code)


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/episodes")


@router.get("/episodes", response_class=HTMLResponse)
def episodes_page(request: Request, page: Annotated[int, Query(ge=1, le=10**6)] = 1) -> HTMLResponse:
    filters = {name: request.query_params.get(name) or None for name in EPISODE_FILTERS}
    if filters["round"] is not None:
        if not filters["round"].isdigit():
            raise HTTPException(400, "round must be a non-negative integer")
        filters["round"] = int(filters["round"])
    browser = _browser(request)
    listing = browser.list_episodes(filters, limit=PAGE, offset=(page - 1) * PAGE)
    query = {k: v for k, v in filters.items() if v is not None}
    pages = {"prev": urlencode({**query, "page": page - 1}) if page > 1 else None,
             "next": urlencode({**query, "page": page + 1}) if page * PAGE < listing["total"] else None}
    return templates.TemplateResponse(request, "episodes.html", {
        "listing": listing, "filters": filters, "choices": browser.filter_values(), "page": page, "pages": pages})


@router.get("/episodes/{episode_id}", response_class=HTMLResponse)
def episode_page(request: Request, episode_id: str) -> HTMLResponse:
    episode = _browser(request).episode(episode_id)
    for step in episode["steps"]:
        w, h = step["frame_width"], step["frame_height"]
        step["shapes"] = shapes(step["action"], w, h)
        step["correction_shapes"] = shapes(step["correction"], w, h) if step["correction"] else []
    return templates.TemplateResponse(request, "episode.html", {"e": episode})


@router.get("/datasets", response_class=HTMLResponse)
def datasets_page(request: Request) -> HTMLResponse:
    browser = _browser(request)
    return templates.TemplateResponse(request, "datasets.html", {
        "datasets": browser.datasets(), "models": browser.models()})


@router.get("/datasets/{name}/v{version}", response_class=HTMLResponse)
def dataset_page(request: Request, name: str, version: int) -> HTMLResponse:
    return templates.TemplateResponse(request, "dataset.html", {"d": _browser(request).dataset(name, version)})


@router.get("/datasets/{name}/v{version}/report")
def dataset_report(request: Request, name: str, version: int) -> Response:
    path, body = _browser(request).dataset_report(name, version)
    kind = mimetypes.guess_type(path)[0] or "text/plain"
    if kind not in ("text/html", "application/json", "text/markdown", "text/plain", "text/csv"):
        kind = "application/octet-stream"
    return Response(body, media_type=kind, headers={"Content-Security-Policy": "script-src 'none'"})

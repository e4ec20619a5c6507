"""The trajectory viewer: server-rendered HTML pages (Jinja2) plus one small script for keys.

- ``/episodes``: search, filters with counts per facet, sorting and paging (api/listing.py);
- ``/episodes/{id}``: a filmstrip of every step and one large step view (before/after,
  the action drawn, what the model said and whether it parsed, the target and its UI-tree
  node, the correction, its timing); ``j``/``k`` move between steps, ``[``/``]`` to the previous/next
  episode of the listing the page was opened from (its filters ride along in the URL);
- ``/evals``, ``/evals/{id}``, ``/evals/compare``: evaluations (api/viewer_evals.py);
- ``/datasets``, ``/datasets/{name}/v{N}``, ``.../diff``: versions, their episodes, report
  and card, and what changed between two;
- ``/login``: the token form used when reads need auth (api/auth.py).
"""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path
from typing import Annotated
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from api.auth import COOKIE, token_matches
from api.browse import Browser
from api.listing import FACETS, SORTS, EpisodeFilters, EpisodePageQuery, EpisodeQuery
from api.overlay import describe, shapes

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
templates.env.trim_blocks = templates.env.lstrip_blocks = True
templates.env.filters["describe"] = describe
templates.env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str)
templates.env.filters["pct"] = lambda v: "—" if v is None else f"{100 * v:.1f}%"
router = APIRouter(include_in_schema=False)
public = APIRouter(include_in_schema=False)
PAGE = 50
Name = Annotated[str, PathParam(min_length=1, max_length=200)]  # as the JSON routes: no long id echoed back
Version = Annotated[int, PathParam(ge=0, le=2**31 - 1)]
TIMING_LABELS = {"policy_ms": "policy answered in", "t_ms": "asked at", "frame_lag_ms": "frame lag",
                 "tree_lag_ms": "UI tree lag"}
SAFE_KINDS = ("text/html", "application/json", "text/markdown", "text/plain", "text/csv")


class EpisodeView(EpisodeFilters):
    """An episode page's parameters: the listing it came from, and ``embed`` (no navigation bar)."""

    embed: bool = False


def timing(meta: dict) -> list[tuple[str, str]]:
    """A step's timing facts in words, from its meta's ``*_ms`` numbers (``policy_ms``, ``t_ms``
    from rollouts; ``frame_lag_ms``, ``tree_lag_ms`` from recorded demonstrations)."""
    out = []
    for key, value in meta.items():
        if key.endswith("_ms") and isinstance(value, (int, float)) and not isinstance(value, bool):
            label = TIMING_LABELS.get(key, key[:-3].replace("_", " "))
            out.append((label, f"+{value / 1000:.2f} s" if key == "t_ms" else f"{value:g} ms"))
    return out


def _browser(request: Request) -> Browser:
    return request.app.state.browser


def error_page(message: str, code: int) -> str:
    return templates.get_template("error.html").render(message=message, code=code)


def _safe_next(target: str | None) -> str:
    """Only a local path to go back to after login (never another site)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/episodes"
    return target[:2000]


def login_page(request: Request, message: str | None = None) -> str:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return templates.get_template("login.html").render(message=message, next=_safe_next(target))


@public.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: Annotated[str | None, Query(max_length=2000)] = None) -> HTMLResponse:
    return HTMLResponse(templates.get_template("login.html").render(message=None, next=_safe_next(next)))


@public.post("/login")
async def login(request: Request) -> Response:
    """Form post ``token=...&next=...``: a right token sets the session cookie and goes back."""
    body = (await request.body())[:8192].decode("utf-8", "replace")
    form = {k: v[0] for k, v in parse_qs(body).items()}
    target = _safe_next(form.get("next"))
    if not token_matches(request, form.get("token", "")):
        page = templates.get_template("login.html").render(message="wrong token", next=target)
        return HTMLResponse(page, status_code=401)
    response = RedirectResponse(target, status_code=303)
    sessions = request.app.state.sessions
    response.set_cookie(COOKIE, sessions.open(), max_age=sessions.ttl_s, httponly=True, samesite="lax",
                        secure=request.url.scheme == "https", path="/")
    return response


@public.post("/logout")
def logout(request: Request) -> Response:
    """Revoke the session on the server (a kept copy of the cookie stops working) and drop the cookie."""
    if request.app.state.sessions is not None:
        request.app.state.sessions.close(request.cookies.get(COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/episodes")


@router.get("/episodes", response_class=HTMLResponse)
def episodes_page(request: Request, query: Annotated[EpisodePageQuery, Query()]) -> HTMLResponse:
    listing = _browser(request).list_episodes(
        EpisodeQuery(**query.model_dump(exclude={"page"}), limit=PAGE, offset=(query.page - 1) * PAGE))
    keep = query.active()
    keep.pop("page", None)
    pages = {"prev": urlencode({**keep, "page": query.page - 1}) if query.page > 1 else None,
             "next": urlencode({**keep, "page": query.page + 1}) if query.page * PAGE < listing["total"] else None}
    return templates.TemplateResponse(request, "episodes.html", {
        "listing": listing, "q": query, "facets": FACETS, "sorts": SORTS, "page": query.page, "pages": pages,
        "keep": urlencode(keep)})


@router.get("/episodes/{episode_id}", response_class=HTMLResponse)
def episode_page(request: Request, episode_id: Name, query: Annotated[EpisodeView, Query()]) -> HTMLResponse:
    browser = _browser(request)
    episode = browser.episode(episode_id)
    for step in episode["steps"]:
        step["timing"] = timing(step["meta"])
        step["facts"] = {k: v for k, v in step["meta"].items() if not k.endswith("_ms")}
        w, h = step["frame_width"], step["frame_height"]
        step["shapes"] = shapes(step["action"], w, h) if not step["invalid"] else []
        step["correction_shapes"] = shapes(step["correction"], w, h) if step["correction"] else []
    filters = EpisodeFilters(**query.model_dump(exclude={"embed"}))
    keep = urlencode(filters.active())
    return templates.TemplateResponse(request, "episode.html", {
        "e": episode, "around": browser.neighbours(filters, episode_id), "keep": keep, "embed": query.embed})


@router.get("/datasets", response_class=HTMLResponse)
def datasets_page(request: Request) -> HTMLResponse:
    browser = _browser(request)
    return templates.TemplateResponse(request, "datasets.html", {
        "datasets": browser.datasets(), "models": browser.models()})


@router.get("/datasets/{name}/diff", response_class=HTMLResponse)
def dataset_diff_page(request: Request, name: Name, a: Annotated[int, Query(ge=0, le=2**31 - 1)],
                      b: Annotated[int, Query(ge=0, le=2**31 - 1)]) -> HTMLResponse:
    return templates.TemplateResponse(request, "dataset_diff.html", {"d": _browser(request).dataset_diff(name, a, b)})


@router.get("/datasets/{name}/v{version}", response_class=HTMLResponse)
def dataset_page(request: Request, name: Name, version: Version) -> HTMLResponse:
    browser = _browser(request)
    row = browser.dataset(name, version)
    others = [d["version"] for d in browser.datasets() if d["name"] == name and d["version"] != version]
    return templates.TemplateResponse(request, "dataset.html", {
        "d": row, "episodes": browser.dataset_episodes(row), "others": others})


@router.get("/datasets/{name}/v{version}/report")
def dataset_report(request: Request, name: Name, version: Version) -> Response:
    path, body = _browser(request).dataset_report(name, version)
    return _untrusted(path, body)


@router.get("/datasets/{name}/v{version}/card")
def dataset_card(request: Request, name: Name, version: Version) -> Response:
    path, body = _browser(request).dataset_file(name, version, "card")
    return _untrusted(path, body)


def _untrusted(path: str, body: bytes) -> Response:
    """A file a curation run wrote, served without running its scripts."""
    kind = mimetypes.guess_type(path)[0] or "text/plain"
    if kind == "text/markdown":
        kind = "text/plain"
    if kind not in SAFE_KINDS:
        kind = "application/octet-stream"
    return Response(body, media_type=kind, headers={"Content-Security-Policy": "script-src 'none'"})

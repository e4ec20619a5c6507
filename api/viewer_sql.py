"""The SQL page (datasette is the model) and exports of lists as CSV or JSON.

- ``/sql?query=SELECT ...``: a query box over the lake's views, the result as a table and
  links to the same result as CSV and JSON; the list of views and their columns beside it.
  It needs a login: the session cookie from ``/login`` (or the bearer token), whatever
  ``PHONELOOP_API_AUTH_READS`` says, since SQL reads everything. Queries run exactly as
  ``POST /api/sql`` runs them (api/sql.py: one SELECT, in a child process, capped in rows,
  bytes, time and memory); a cut result says which cap cut it.
- ``/sql.csv``, ``/sql.json``: the same query's result as a download.
- ``/episodes.csv``, ``/episodes.json``: the episode list under any filters, search and sort
  of ``/episodes`` (the same parameters), every matching row up to ``EXPORT_ROWS``; a cut
  export says so in the ``X-Phoneloop-Truncated`` header (and the JSON's ``truncated``).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials

from api import sql as user_sql
from api.auth import bearer, has_session, require_token
from api.errors import SqlFailed, SqlRejected, SqlTimeout
from api.listing import EpisodeFilters
from api.viewer import templates

router = APIRouter(include_in_schema=False)  # the SQL page and downloads: a login always
exports = APIRouter(include_in_schema=False)  # list exports: read like the lists they export
EXPORT_ROWS = 100_000
SqlText = Annotated[str | None, Query(max_length=20_000)]


async def logged_in(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    """The session cookie, or else the bearer token (401 -> the login form on pages)."""
    if request.app.state.settings.token is None:
        raise HTTPException(503, "the SQL page needs PHONELOOP_API_TOKEN to be set on the server")
    if not has_session(request):
        await require_token(request, credentials)


def _run(request: Request, query: str) -> user_sql.SqlResult:
    browser, settings = request.app.state.browser, request.app.state.settings
    user_sql.parse_one_select(query)
    with request.app.state.sql_gate:
        return user_sql.run_bounded(browser.lake.uri, browser.lake.storage_options, query, settings.sql_limits(),
                                    request.app.state.sql_pool)


def _views(request: Request) -> list[dict[str, Any]]:
    rows = request.app.state.browser.sql(
        "SELECT table_name, string_agg(column_name, ', ' ORDER BY ordinal_position) AS columns "
        "FROM information_schema.columns WHERE table_schema = 'main' AND table_name NOT LIKE 'search_%' "
        "AND table_name <> 'listing' AND NOT starts_with(table_name, '__') GROUP BY table_name ORDER BY table_name")
    return rows


@router.get("/sql", response_class=HTMLResponse, dependencies=[Depends(logged_in)])
def sql_page(request: Request, query: SqlText = None) -> HTMLResponse:
    result, error, status = None, None, 200
    if query and query.strip():
        try:
            result = _run(request, query)
        except (SqlRejected, SqlFailed, SqlTimeout) as exc:
            error, status = str(exc), 408 if isinstance(exc, SqlTimeout) else 400
    return templates.TemplateResponse(request, "sql.html", {
        "query": query or "", "result": result, "error": error, "views": _views(request),
        "limits": request.app.state.settings}, status_code=status)


@router.get("/sql.csv", dependencies=[Depends(logged_in)])
def sql_csv(request: Request, query: Annotated[str, Query(min_length=1, max_length=20_000)]) -> Response:
    result = _run(request, query)
    return _csv(result.columns, result.rows, "query.csv", result.truncated_by)


@router.get("/sql.json", dependencies=[Depends(logged_in)])
def sql_json(request: Request, query: Annotated[str, Query(min_length=1, max_length=20_000)]) -> Response:
    result = _run(request, query)
    return JSONResponse({**result.__dict__}, headers=_download("query.json", result.truncated_by))


def _filtered(request: Request, filters: EpisodeFilters) -> tuple[list[str], list[list[Any]], bool]:
    rows, more = request.app.state.browser.episode_rows(filters, EXPORT_ROWS)
    columns = list(rows[0]) if rows else []
    return columns, [[_plain(r[c]) for c in columns] for r in rows], more


@exports.get("/episodes.csv")
def episodes_csv(request: Request, filters: Annotated[EpisodeFilters, Query()]) -> Response:
    columns, rows, more = _filtered(request, filters)
    return _csv(columns, rows, "episodes.csv", "rows" if more else None)


@exports.get("/episodes.json")
def episodes_json(request: Request, filters: Annotated[EpisodeFilters, Query()]) -> Response:
    columns, rows, more = _filtered(request, filters)
    body = {"filters": filters.active(), "total": len(rows), "truncated": more,
            "episodes": [dict(zip(columns, r)) for r in rows]}
    return JSONResponse(body, headers=_download("episodes.json", "rows" if more else None))


def _plain(value: Any) -> Any:
    return user_sql.jsonable(value)


def _download(name: str, truncated_by: str | None) -> dict[str, str]:
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if truncated_by:
        headers["X-Phoneloop-Truncated"] = truncated_by
    return headers


def _csv(columns: list[str], rows: list[list[Any]], name: str, truncated_by: str | None) -> Response:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v for v in row])
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=_download(name, truncated_by))

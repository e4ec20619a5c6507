"""What the service says back: no lake paths, no oversized echoes of the caller's input."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel

MAX_MESSAGE = 500
MAX_NAME = 80
_NOT_PAGES = ("/api/", "/frames/", "/webhooks/", "/openapi", "/docs", "/redoc", "/static", "/health")


def lake_name(uri: str) -> str:
    """The lake's last path component (``/data/lakes/main`` -> ``main``)."""
    return uri.rstrip("/").rsplit("/", 1)[-1] or "lake"


def clip(text: str, limit: int = MAX_NAME) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def message(text: str, lake_uri: str) -> str:
    """An error message without the lake's location, at most MAX_MESSAGE characters."""
    for where in (f" in the lake at {lake_uri}", f" at {lake_uri}", lake_uri):
        text = text.replace(where, "" if where.startswith(" ") else "<lake>")
    return clip(text, MAX_MESSAGE)


def validation_errors(errors: list[dict[str, Any]] | Any) -> list[dict[str, Any]]:
    """FastAPI's validation errors without ``input`` (the caller's value) and with short names."""
    out = []
    for e in list(errors)[:20]:
        loc = [clip(p) if isinstance(p, str) else p for p in e.get("loc", ())]
        msg = str(e.get("msg", "invalid"))
        if e.get("type") == "extra_forbidden" and len(loc) > 1:
            msg = f"unknown parameter {loc[-1]!r}"
        out.append({"type": e.get("type", "invalid"), "loc": loc, "msg": clip(msg, MAX_MESSAGE)})
    return out


def is_page(path: str) -> bool:
    """Whether a path is one of the viewer's HTML pages (errors there are HTML, not JSON)."""
    return not path.startswith(_NOT_PAGES)


def _declared(endpoint: Callable) -> frozenset[str]:
    """The names an endpoint takes (a pydantic query model contributes its fields)."""
    names = set()
    for name, hint in typing.get_type_hints(endpoint, include_extras=True).items():
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
        if isinstance(base, type) and issubclass(base, BaseModel):
            names |= set(base.model_fields)
        else:
            names.add(name)
    return frozenset(names)


_DECLARED: dict[Callable, frozenset[str]] = {}


async def known_params(request: Request) -> None:
    """A route dependency: a query parameter the route does not take is a 422 naming it."""
    route = request.scope.get("route")
    endpoint = getattr(route, "endpoint", None)
    if endpoint is None:
        return
    if endpoint not in _DECLARED:
        _DECLARED[endpoint] = _declared(endpoint)
    unknown = [k for k in request.query_params if k not in _DECLARED[endpoint]]
    if unknown:
        raise RequestValidationError([{"type": "extra_forbidden", "loc": ["query", k], "msg": "unknown parameter"}
                                      for k in unknown])

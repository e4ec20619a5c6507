"""What the service says back: no lake paths, no oversized echoes of the caller's input."""

from __future__ import annotations

from typing import Any

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

"""The FastAPI app ``phoneloop env serve`` runs (``make_app``): OpenEnv's app over ``openenv_env``'s
environment, with the edges added here: client errors as 4xx naming the field, and (``--mcp``) a
standard MCP streamable-HTTP endpoint at ``/mcp``.

OpenEnv's routes raise what the environment raises; without these handlers a bad reset or
a stateless ``/step`` is a 500 with a traceback. Every 4xx body has FastAPI's shape,
``{"detail": [{"loc": [...], "msg": ..., "type": ...}]}``, so a client reads one format:

* 422 ``loc: ["body", FIELD]`` — a reset field that does not exist or has the wrong type,
  a task that is not registered or not served, an action that is not one of the project's;
* 409 ``loc: ["session"]`` — a step with no episode (HTTP is stateless: sessions live on ``/ws``).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import MutableMapping
from functools import partial
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server import create_fastapi_app
from pydantic import ValidationError

from mockphone.openenv_env import (
    MockPhoneEnvironment, NoSession, PhoneAction, PhoneObservation, ResetOptions, UnknownSession,
)

SESSION_HEADER = "phoneloop-session"


def _details(exc: ValidationError) -> list[dict[str, Any]]:
    return [{"loc": ["body", *err["loc"]], "msg": err["msg"], "type": err["type"]}
            for err in exc.errors(include_url=False, include_context=False, include_input=False)]


def add_error_handlers(app: FastAPI) -> None:
    """Map what the environment raises on bad client input to 4xx JSON (see the module docstring)."""
    client_models = {ResetOptions.__name__, PhoneAction.__name__}

    async def invalid(request: Request, exc: ValidationError) -> JSONResponse:
        if exc.title not in client_models:  # a model of the server's own failed: a bug, a 500, not the client's
            raise exc
        return JSONResponse({"detail": _details(exc)}, status_code=422)

    async def no_session(request: Request, exc: NoSession) -> JSONResponse:
        return JSONResponse({"detail": [{"loc": [exc.field], "msg": str(exc), "type": "no_session"}]},
                            status_code=409)

    app.add_exception_handler(ValidationError, invalid)
    app.add_exception_handler(NoSession, no_session)


def mount_mcp(app: FastAPI, sessions: MutableMapping[str, Any], factory: Callable[[], Any]) -> None:
    """Serve the phone's tools at ``POST /mcp`` over MCP's streamable HTTP (FastMCP), in place of OpenEnv's
    JSON-RPC-only route; OpenEnv's ``/mcp`` WebSocket and ``/ws`` ``mcp`` messages stay as they are."""
    from fastmcp.server.dependencies import get_http_headers

    from mockphone.mcp_server import phone_mcp

    own: list[Any] = []  # the server's own phone, for calls that name no session (made on the first one)
    own_lock = threading.Lock()

    def resolve():
        name = get_http_headers().get(SESSION_HEADER)
        if name:
            env = sessions.get(name)
            if env is None:
                raise UnknownSession(f"no open session {name!r} (header {SESSION_HEADER}): sessions are the "
                                     "WebSocket connections at /ws; each observation carries its session id")
            return env.env.phone, env.lock
        with own_lock:
            if not own:
                own.append(factory())
        return own[0].env.phone, own[0].lock

    server = phone_mcp(resolve)
    mcp_app = server.http_app(path="/mcp")

    def openenv_post_mcp(route: Any) -> bool:  # OpenEnv's JSON-RPC-only POST /mcp gives way to FastMCP's
        return getattr(route, "path", None) == "/mcp" and "POST" in (getattr(route, "methods", None) or ())

    app.router.routes[:] = [r for r in app.router.routes if not openenv_post_mcp(r)]
    app.mount("/", mcp_app)  # after every OpenEnv route: only what they do not match reaches it
    outer = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a):
        async with outer(a), mcp_app.lifespan(a):  # OpenEnv's session reaper, then FastMCP's session manager
            try:
                yield
            finally:
                for env in own:
                    env.close()

    app.router.lifespan_context = lifespan


def make_app(tasks: str = "all", max_steps: int = 30, perturb: str = "none", sessions: int = 4,
             width: int = 1080, height: int = 2400, dpi: int = 420, locale: str = "en-US", mcp: bool = False):
    """The FastAPI app ``phoneloop env serve`` runs (checks the selector and profile before serving)."""
    from mockphone.i18n import check as check_locale
    from mockphone.perturb import load_profile
    from mockphone.tasks.registry import select

    select(tasks)  # UnknownTask now, not on the first reset
    load_profile(perturb)
    check_locale(locale)
    open_sessions: MutableMapping[str, MockPhoneEnvironment] = weakref.WeakValueDictionary()
    factory = partial(MockPhoneEnvironment, open_sessions, tasks=tasks, max_steps=max_steps, perturb=perturb,
                      width=width, height=height, dpi=dpi, locale=locale)
    app = create_fastapi_app(factory, PhoneAction, PhoneObservation, max_concurrent_envs=sessions)
    add_error_handlers(app)
    if mcp:
        mount_mcp(app, open_sessions, factory)
    return app


__all__ = ["SESSION_HEADER", "add_error_handlers", "make_app", "mount_mcp"]

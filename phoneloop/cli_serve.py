"""`phoneloop serve`: the HTTP service and trajectory viewer over a lake (api/)."""

from __future__ import annotations

from typing import Annotated

import typer

from api.errors import InvalidSettings
from api.settings import DEFAULT_HOST, DEFAULT_PORT
from datalake.errors import LakeError
from phoneloop.output import err_console, fail


def serve(
    lake: Annotated[str, typer.Option("--lake", envvar="PHONELOOP_LAKE", help="Lake path or URI.")] = "./lake",
    host: Annotated[str, typer.Option(help="Address to bind; keep 127.0.0.1 unless a proxy adds TLS.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="TCP port.")] = DEFAULT_PORT,
) -> None:
    """Serve the lake over HTTP: viewer (episodes, evaluations, datasets), JSON API, frames,
    read-only SQL, Label Studio webhook; API docs offline at /docs and /redoc.

    Tokens come from the environment: PHONELOOP_API_TOKEN (needed by POST routes),
    PHONELOOP_WEBHOOK_SECRET (the webhook), PHONELOOP_API_AUTH_READS=1 (token on GETs too;
    browsers log in once at /login). Other settings: PHONELOOP_SQL_MEMORY_MB, PHONELOOP_SQL_PROCESS_MB,
    PHONELOOP_SQL_MAX_BYTES_MB,
    PHONELOOP_SQL_MAX_CONCURRENT, ... (api/settings.py).

    Example: PHONELOOP_API_TOKEN=s3cret phoneloop serve --lake ./lake --port 8765
    """
    import uvicorn

    from api.app import create_app

    try:
        app = create_app(lake)
    except (LakeError, InvalidSettings) as exc:
        fail(str(exc))
    err_console.print(f"phoneloop serving {lake} on http://{host}:{port}/episodes (API docs at /docs)", soft_wrap=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")

"""`phoneloop env serve`: mock phones as an OpenEnv environment for RL trainers in other processes or machines."""

from __future__ import annotations

from typing import Annotated

import typer

from phoneloop.output import err_console, fail

env_app = typer.Typer(help="Mock phones as RL environments (OpenEnv over HTTP/WebSocket, tools over MCP).",
                      no_args_is_help=True)


@env_app.command("serve")
def serve(
    port: Annotated[int, typer.Option("--port", "-p", help="Port to listen on.")] = 8010,
    host: Annotated[str, typer.Option(help="Bind address (127.0.0.1: this machine only).")] = "127.0.0.1",
    tasks: Annotated[str, typer.Option("--tasks", help="Task selector episodes are drawn from.")] = "all",
    max_steps: Annotated[int, typer.Option("--max-steps", min=1, help="Actions before an episode is truncated.")] = 30,
    perturb: Annotated[str, typer.Option("--perturb", help="none, light, real-like, heavy, or a YAML of rates.")] = "none",
    sessions: Annotated[int, typer.Option(min=1, help="Concurrent sessions (one phone each).")] = 4,
    locale: Annotated[str, typer.Option("--locale", help="Phones' locale: en-US or zh-CN.")] = "en-US",
    mcp: Annotated[bool, typer.Option("--mcp", help="Also serve the phone's tools to MCP clients at /mcp "
                                      "(streamable HTTP; header phoneloop-session picks a session's phone).")] = False,
) -> None:
    """Serve mock phones over OpenEnv's reset/step/state protocol (WebSocket sessions at /ws).

    Only the --tasks selector's tasks can be reset to; client errors are 4xx naming the field.
    With --mcp, MCP clients list and call the phone's tools at http://HOST:PORT/mcp.

    Example: phoneloop env serve --port 8010 --tasks app:clock,category:safety --perturb light --mcp
    """
    import uvicorn

    from mockphone.errors import MockPhoneError
    from mockphone.openenv_app import make_app

    try:
        app = make_app(tasks=tasks, max_steps=max_steps, perturb=perturb, sessions=sessions, locale=locale, mcp=mcp)
    except (MockPhoneError, ValueError) as exc:
        fail(str(exc))
    extra = f"; MCP tools at http://{host}:{port}/mcp" if mcp else ""
    err_console.print(f"OpenEnv mock phones on http://{host}:{port} (tasks {tasks}, perturb {perturb}){extra}")
    uvicorn.run(app, host=host, port=port, log_level="warning")

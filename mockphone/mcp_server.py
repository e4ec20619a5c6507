"""The phone's tool set (``mockphone.tools``) as an MCP server, with FastMCP.

    server = phone_mcp(lambda: phone)            # a FastMCP server acting on one phone
    server.http_app(path="/mcp")                 # streamable HTTP, what `phoneloop env serve --mcp` mounts

``tools/list`` answers exactly ``tools.specs()`` (name, description, JSON schema).
``tools/call`` is a ``tool`` action on the phone (``phone.act(Action("tool", ...))``), so
it goes the same way as a tool call from the GUI stream: the arguments are validated
against the schema by the phone, the call is logged in ``system.tool_calls``, and a bad
call is an error step the next screen shows ("Tool error: ..."). Over MCP that error is
a tool result with ``isError: true`` and the phone's message, as MCP asks of tool
execution errors, not a protocol error.

Which phone a call acts on is the ``resolve`` callable's choice (``openenv_env`` picks
the phone of the OpenEnv session named by the ``phoneloop-session`` header). Phones are
not thread-safe: calls run in a worker thread under the phone holder's lock.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

import anyio
from fastmcp import FastMCP
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from mcp.types import TextContent

from datalake.types import Action
from mockphone.errors import MockPhoneError
from mockphone.tools import TOOLS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

Resolve = Callable[[], "tuple[MockPhone, threading.Lock]"]  # the phone a call acts on, and its lock


class PhoneTool(Tool):
    """One of the phone's tools; ``run`` is a ``tool`` action on the phone ``resolve`` returns."""

    resolve: Any = None  # Resolve; Any: pydantic does not check callables

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            phone, lock = self.resolve()
        except MockPhoneError as exc:  # e.g. a session that does not exist
            return _result(str(exc), error=True)

        def call():
            with lock:
                return phone.act(Action("tool", name=self.name, args=dict(arguments or {})))

        result = await anyio.to_thread.run_sync(call)
        return _result(result.output, error=not result.ok)


def _result(text: str, *, error: bool) -> ToolResult:
    return ToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def phone_mcp(resolve: Resolve, name: str = "phoneloop mock phone") -> FastMCP:
    """A FastMCP server listing the phone's tools; each call acts on the phone ``resolve()`` gives."""
    server = FastMCP(name, instructions="Tools of a phoneloop mock phone: calendar, contacts, notes, clock, "
                                        "settings. They change the same state the phone's apps show.",
                     strict_input_validation=False, mask_error_details=False)
    for spec in (TOOLS[name] for name in sorted(TOOLS)):  # the order specs() lists them in
        server.add_tool(PhoneTool(name=spec.name, description=spec.description, parameters=spec.input_schema,
                                  resolve=resolve))
    return server


def one_phone(phone: MockPhone) -> Resolve:
    """A resolver for a single phone (tests, scripts)."""
    lock = threading.Lock()
    return lambda: (phone, lock)

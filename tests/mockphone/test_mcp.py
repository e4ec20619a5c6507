"""The phone's tools over MCP: FastMCP's client against `phoneloop env serve --mcp` over real HTTP on 127.0.0.1,
and OpenEnv's own JSON-RPC /mcp route."""

import asyncio
import json

import pytest
from fastapi.testclient import TestClient
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from websockets.sync.client import connect

from mockphone.openenv_app import SESSION_HEADER
from mockphone.openenv_app import make_app
from mockphone.tools import specs
from tests.mockphone.served import env_server


@pytest.fixture(scope="module")
def url():
    with env_server("--tasks", "app:clock,app:notes", "--mcp") as base:
        yield base


def run(coro):
    return asyncio.run(coro)


async def _list(url, headers=None):
    async with Client(StreamableHttpTransport(f"{url}/mcp", headers=headers or {})) as client:
        return await client.list_tools()


async def _call(url, name, arguments, headers=None):
    async with Client(StreamableHttpTransport(f"{url}/mcp", headers=headers or {})) as client:
        return await client.call_tool(name, arguments, raise_on_error=False)


def test_mcp_client_lists_exactly_the_phones_tools(url):
    tools = run(_list(url))
    assert [(t.name, t.description, t.input_schema) for t in sorted(tools, key=lambda t: t.name)] == [
        (s["name"], s["description"], s["inputSchema"]) for s in specs()]


def test_mcp_call_changes_the_phone_and_returns_the_tools_output(url):
    made = run(_call(url, "notes.create", {"title": "Groceries", "body": "eggs, milk"}))
    assert not made.is_error and made.content[0].text == "created note 'Groceries'"
    again = run(_call(url, "notes.create", {"title": "Groceries", "body": "again"}))
    assert again.is_error and "already exists" in again.content[0].text  # the same phone, across requests


@pytest.mark.parametrize("name, arguments, says", [
    ("clock.create_alarm", {"hour": 24, "minute": 0}, "bad hour"),
    ("calendar.create_event", {"title": "X", "date": "2026-02-30", "time": "15:00"}, "not a real date"),
    ("contacts.create", {"name": "Ada"}, "'phone' is a required property"),
    ("notes.create", {"title": "T", "body": "b", "colour": "red"}, "colour"),
    ("no.such_tool", {}, "no.such_tool"),
])
def test_bad_calls_are_tool_errors_with_the_phones_message(url, name, arguments, says):
    result = run(_call(url, name, arguments))
    assert result.is_error and says in result.content[0].text


def test_a_call_with_the_session_header_acts_on_that_sessions_phone(url):
    with connect(url.replace("http", "ws", 1) + "/ws", max_size=2**26, open_timeout=30) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task": "ClockAddAlarm", "task_seed": 4}}))  # alarm at 08:05
        session = json.loads(ws.recv(timeout=60))["data"]["observation"]["session"]
        header = {SESSION_HEADER: session}
        bad = run(_call(url, "clock.create_alarm", {"hour": 8, "minute": 99}, header))
        assert bad.is_error and "bad minute" in bad.content[0].text
        ws.send(json.dumps({"type": "step", "data": {"action": {"type": "wait", "seconds": 0}}}))
        seen = json.loads(ws.recv(timeout=60))["data"]["observation"]["ui_xml"]
        assert "Tool error" in seen  # the same error step the in-phone tool makes, on that phone's screen
        assert not run(_call(url, "clock.create_alarm", {"hour": 8, "minute": 5}, header)).is_error
        ws.send(json.dumps({"type": "step", "data": {"action": {"type": "terminate", "status": "success"}}}))
        done = json.loads(ws.recv(timeout=60))["data"]
        assert done["done"] and done["reward"] == 1.0


def test_an_unknown_session_header_is_a_tool_error_naming_it(url):
    result = run(_call(url, "notes.create", {"title": "A", "body": "b"}, {SESSION_HEADER: "nosuchsession"}))
    assert result.is_error and "no open session 'nosuchsession'" in result.content[0].text


def test_openenv_jsonrpc_mcp_route_lists_and_calls_the_tools():
    with TestClient(make_app(tasks="app:notes", width=540, height=1200, dpi=210)) as client:
        listed = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).json()
        assert [t["name"] for t in listed["result"]["tools"]] == sorted(s["name"] for s in specs())
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "notes.create", "arguments": {"title": "T"}}}
        result = client.post("/mcp", json=call).json()["result"]
        assert result["isError"] and "'body' is a required property" in result["content"][0]["text"]

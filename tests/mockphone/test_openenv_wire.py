"""`phoneloop env serve` against a client written from OpenEnv's HTTP/WebSocket wire format, not the project's client.

Requests are plain httpx / websockets messages shaped as openenv-core 0.3 defines them:
``POST /reset`` (ResetRequest: ``seed``, ``episode_id`` and the environment's own fields),
``POST /step`` (StepRequest: ``{"action": <the action model's fields>}``), ``GET /state``,
``GET /schema``, ``GET /health``; WebSocket ``/ws`` messages ``{"type": "reset"|"step"|
"state"|"close"|"mcp", "data": ...}`` answered by ``{"type": "observation"|"state"|"mcp"|
"error", "data": ...}``.
"""

import base64
import json

import httpx
import pytest
from websockets.sync.client import connect

from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY, select
from mockphone.tools import specs
from tests.mockphone.served import env_server

SERVED = "app:clock,category:safety"


@pytest.fixture(scope="module")
def url():
    with env_server("--tasks", SERVED, "--max-steps", "40") as base:
        yield base


@pytest.fixture
def ws(url):
    with connect(url.replace("http", "ws", 1) + "/ws", max_size=2**26, open_timeout=30) as socket:
        yield socket


def send(ws, message: dict) -> dict:
    ws.send(json.dumps(message))
    return json.loads(ws.recv(timeout=60))


def oracle_actions(name: str, seed: int) -> list[dict]:
    mirror = MockPhone(seed=seed)  # the phone is deterministic: plan the episode on a local copy
    task = REGISTRY[name](seed=seed)
    task.initialize_task(mirror)
    return [a.to_dict() for a in solve(mirror, task)]  # ends with terminate(success)


# --- HTTP -----------------------------------------------------------------------------------

def test_http_health_schema_and_a_stateless_reset(url):
    assert httpx.get(f"{url}/health").json()["status"] == "healthy"
    schema = httpx.get(f"{url}/schema").json()
    assert "action" in schema["action"]["properties"] and "ui_xml" in schema["observation"]["properties"]
    body = httpx.post(f"{url}/reset", json={"task": "ClockAddAlarm", "task_seed": 4}, timeout=60).json()
    obs = body["observation"]
    assert (body["reward"], body["done"]) == (0.0, False)
    assert obs["instruction"] == REGISTRY["ClockAddAlarm"](seed=4).goal and obs["task"] == "ClockAddAlarm"
    assert base64.b64decode(obs["screenshot_png_b64"])[:8] == b"\x89PNG\r\n\x1a\n"


def _detail(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert isinstance(body["detail"], list) and body["detail"], body
    return body["detail"][0]


@pytest.mark.parametrize("body, loc, says", [
    ({"task": "NotesCreate"}, ["body", "task"], "'NotesCreate' is not served here"),
    ({"task": "NoSuchTask"}, ["body", "task"], "no task named 'NoSuchTask'"),
    ({"task": 7}, ["body", "task"], "string"),
    ({"task_seed": "4"}, ["body", "task_seed"], "integer"),
    ({"tsk": "ClockAddAlarm"}, ["body", "tsk"], "Extra inputs are not permitted"),
])
def test_http_reset_client_errors_are_422_naming_the_field(url, body, loc, says):
    detail = _detail(httpx.post(f"{url}/reset", json=body, timeout=60), 422)
    assert detail["loc"] == loc and says in detail["msg"]


def test_http_reset_to_every_served_task_works_and_only_those(url):
    served = {cls.name() for cls in select(SERVED)}
    assert "NotesCreate" not in served and "ClockAddAlarm" in served
    for name in sorted(served)[:3]:
        assert httpx.post(f"{url}/reset", json={"task": name, "task_seed": 0}, timeout=60).status_code == 200


def test_http_step_without_a_session_is_409_naming_the_session(url):
    detail = _detail(httpx.post(f"{url}/step", json={"action": {"action": {"type": "wait", "seconds": 1}}}), 409)
    assert detail["loc"] == ["session"] and "/ws" in detail["msg"]


@pytest.mark.parametrize("body, field", [
    ({"action": {"action": {"type": "fly"}}}, "action"),
    ({"action": {"action": {"type": "tap"}}}, "action"),
    ({"action": {"action": "tap 3 4"}}, "action"),
    ({"action": {"action": {"type": "wait", "seconds": 1}, "colour": "red"}}, "colour"),
    ({}, "action"),
])
def test_http_bad_actions_are_422_naming_the_field(url, body, field):
    detail = _detail(httpx.post(f"{url}/step", json=body), 422)
    assert field in detail["loc"], detail


def test_http_body_that_is_not_json_is_422(url):
    response = httpx.post(f"{url}/reset", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422


def test_http_mcp_jsonrpc_lists_the_phones_tools_and_a_bad_call_is_a_tool_error(url):
    listed = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                        timeout=60).json()
    assert [(t["name"], t["inputSchema"]) for t in listed["result"]["tools"]] == [
        (s["name"], s["inputSchema"]) for s in specs()]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "clock.create_alarm", "arguments": {"hour": 25, "minute": 0}}}
    result = httpx.post(f"{url}/mcp", json=call, timeout=60).json()["result"]
    assert result["isError"] is True and "bad hour" in result["content"][0]["text"]


# --- WebSocket ------------------------------------------------------------------------------

def test_ws_whole_episode_reaches_the_verifiers_reward(ws):
    actions = oracle_actions("ClockAddAlarm", 4)
    reply = send(ws, {"type": "reset", "data": {"task": "ClockAddAlarm", "task_seed": 4}})
    assert reply["type"] == "observation" and reply["data"]["done"] is False
    session = reply["data"]["observation"]["session"]
    for i, action in enumerate(actions):
        reply = send(ws, {"type": "step", "data": {"action": action}})
        assert reply["type"] == "observation", reply
        assert reply["data"]["done"] == (i == len(actions) - 1)
    assert reply["data"]["reward"] == 1.0 and reply["data"]["observation"]["score"] == 1.0
    state = send(ws, {"type": "state"})
    assert state["type"] == "state"
    assert (state["data"]["task"], state["data"]["seed"], state["data"]["step_count"], state["data"]["done"],
            state["data"]["session"]) == ("ClockAddAlarm", 4, len(actions), True, session)
    ws.send(json.dumps({"type": "close"}))


def _error(reply: dict) -> dict:
    assert reply["type"] == "error", reply
    return reply["data"]


def test_ws_step_before_reset_names_the_session(ws):
    error = _error(send(ws, {"type": "step", "data": {"action": {"type": "wait", "seconds": 1}}}))
    assert "no session" in error["message"]


@pytest.mark.parametrize("data, loc, says", [
    ({"task": "NotesCreate"}, ["task"], "not served here"),
    ({"task": "NoSuchTask"}, ["task"], "no task named"),
    ({"tsk": 1}, ["tsk"], "Extra inputs"),
])
def test_ws_reset_errors_name_the_field_and_the_session_lives_on(ws, data, loc, says):
    error = _error(send(ws, {"type": "reset", "data": data}))
    assert error["code"] == "VALIDATION_ERROR"
    assert [e for e in error["errors"] if e["loc"] == loc and says in e["msg"]], error
    assert send(ws, {"type": "reset", "data": {"task": "ClockAddAlarm", "task_seed": 1}})["type"] == "observation"


def test_ws_bad_action_names_the_field_and_changes_nothing(ws):
    first = send(ws, {"type": "reset", "data": {"task": "ClockAddAlarm", "task_seed": 2}})["data"]["observation"]
    error = _error(send(ws, {"type": "step", "data": {"action": {"type": "fly"}}}))
    assert error["code"] == "VALIDATION_ERROR" and error["errors"][0]["loc"] == ["action"]
    assert "unknown action type 'fly'" in error["errors"][0]["msg"]
    state = send(ws, {"type": "state"})["data"]
    assert state["step_count"] == 0
    after = send(ws, {"type": "step", "data": {"action": {"type": "wait", "seconds": 0}}})["data"]["observation"]
    assert after["ui_xml"].count("<node") == first["ui_xml"].count("<node")


@pytest.mark.parametrize("raw, code", [("{not json", "INVALID_JSON"), ('{"type": "fly"}', "UNKNOWN_TYPE")])
def test_ws_malformed_messages_are_errors_not_disconnects(ws, raw, code):
    ws.send(raw)
    assert _error(json.loads(ws.recv(timeout=30)))["code"] == code
    assert send(ws, {"type": "state"})["type"] == "state"


def test_ws_mcp_messages_list_and_call_the_sessions_tools(ws):
    send(ws, {"type": "reset", "data": {"task": "ClockAddAlarm", "task_seed": 4}})  # goal: an alarm at 08:05
    listed = send(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}})
    assert listed["type"] == "mcp"
    tools = {t["name"]: t for t in listed["data"]["result"]["tools"]}
    assert {name: (t["description"], t["inputSchema"]) for name, t in tools.items()} == {
        s["name"]: (s["description"], s["inputSchema"]) for s in specs()}
    bad = send(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                            "params": {"name": "clock.create_alarm",
                                                       "arguments": {"hour": 99, "minute": 5}}}})
    assert bad["data"]["result"]["isError"] is True and "hour" in bad["data"]["result"]["content"][0]["text"]
    good = send(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                             "params": {"name": "clock.create_alarm",
                                                        "arguments": {"hour": 8, "minute": 5}}}})
    assert good["data"]["result"]["isError"] is False
    done = send(ws, {"type": "step", "data": {"action": {"type": "terminate", "status": "success"}}})["data"]
    assert done["done"] and done["reward"] == 1.0  # the tool call changed the session's phone

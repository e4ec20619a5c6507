"""The mock phone as an OpenEnv environment: ``reset`` / ``step`` / ``state`` over HTTP and WebSocket, tools over MCP.

    phoneloop env serve --port 8010 --tasks app:clock          # 127.0.0.1 unless --host says otherwise

    from mockphone.openenv_env import MockPhoneClient
    with MockPhoneClient(base_url="http://127.0.0.1:8010").sync() as env:
        result = env.reset(task="ClockAddAlarm", task_seed=4)    # or seed=S: a task drawn from the selector
        result = env.step(PhoneAction(action={"type": "open_app", "app": "clock"}))
        result.observation.screenshot_png_b64, result.observation.ui_xml, result.reward, result.done

The server is ``openenv-core``'s FastAPI app (``create_fastapi_app``) around
:class:`MockPhoneEnvironment`, which wraps ``mockphone.gym.MockPhoneEnv``: same task
selection, same ``terminate`` / ``max_steps`` rules, same reward (the task verifier's
score, at the end of the episode). Each WebSocket session (``/ws``) gets its own phone;
the stateless HTTP ``/reset`` and ``/step`` routes make a fresh one per request, as
OpenEnv does, so an HTTP ``/step`` has no episode to act in and is refused (409). Screens
travel as base64 PNG (raw pixels are for in-process RL). Requests never reach the
filesystem: a task is a registry name, an action the project's action JSON.

Wire format (OpenEnv's): HTTP ``POST /reset`` with ``{"task": NAME, "task_seed": S}`` or
``{"seed": S}``; ``POST /step`` with ``{"action": {"action": {"type": "tap", ...}}}``; each
answers ``{"observation": {...}, "reward": R, "done": D}``. WebSocket ``/ws`` messages
``{"type": "reset"|"step"|"state"|"close"|"mcp", "data": {...}}``, answered by
``{"type": "observation"|"state"|"mcp"|"error", "data": {...}}``.

Client errors name the field, as FastAPI's own 422s do: HTTP answers
``{"detail": [{"loc": [...], "msg": ..., "type": ...}]}`` with 422 (unknown field, a task
not served or not registered, an action that is not one of the project's) or 409 (no
session); over the WebSocket the same list is an ``error`` message's ``errors``.

Tools: the phone's tool set (``mockphone.tools``) through FastMCP (``mockphone.mcp_server``).
OpenEnv's own ``/mcp`` (JSON-RPC ``tools/list`` / ``tools/call``, and ``mcp`` messages on
``/ws``, which act on that session's phone) always; with ``mockphone.openenv_app.make_app(mcp=True)``
(``phoneloop env serve --mcp``) ``POST /mcp`` is a standard MCP streamable-HTTP endpoint
for MCP clients: a call acts on the phone of the session named by the
``phoneloop-session`` header (every observation carries its ``session``), or without one
on the server's own phone.
"""

from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import MutableMapping
from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server import Action, Environment, Observation, State
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from datalake.types import Action as ProjectAction
from mockphone.errors import MockPhoneError


class PhoneAction(Action):
    """One action of the project's vocabulary, as its JSON object (``datalake.types.Action``)."""

    action: dict[str, Any] = Field(description='e.g. {"type": "tap", "x": 540, "y": 1200}')

    @field_validator("action")
    @classmethod
    def _is_an_action(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            ProjectAction.from_dict(value)
        except (ValueError, TypeError) as exc:  # InvalidAction is a ValueError
            raise PydanticCustomError("invalid_action", "not a valid action: {reason}", {"reason": str(exc)}) \
                from None
        return value


class ResetOptions(BaseModel):
    """What ``reset`` takes (OpenEnv's ``seed`` and ``episode_id``, and the phone's task and task seed)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seed: int | None = Field(default=None, description="seeds the draw of a task (and its seed) from the selector")
    episode_id: str | None = None
    task: str | None = Field(default=None, description="a task name from the served set")
    task_seed: int | None = Field(default=None, description="the task's seed (its parameters, the phone's world)")

    @field_validator("task")
    @classmethod
    def _served(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            try:
                info.context["env"].check_task(value)
            except MockPhoneError as exc:
                raise PydanticCustomError("task_not_served", "{reason}", {"reason": str(exc)}) from None
        return value


class NoSession(MockPhoneError):
    """A ``step`` with no episode to act in (a stateless HTTP request, or a session that never reset)."""

    field = "session"


class UnknownSession(MockPhoneError):
    """An MCP call named a ``phoneloop-session`` that is not open."""


NO_SESSION = ("no session: this step has no episode to act in. OpenEnv's HTTP /reset and /step are stateless "
              "(a fresh phone per request): open a WebSocket session at /ws, send a reset, then steps")


class PhoneObservation(Observation):
    screenshot_png_b64: str = Field(default="", description="the screen, PNG, base64")
    ui_xml: str = Field(default="", description="uiautomator dump of the same screen")
    instruction: str = ""
    task: str = ""
    seed: int = 0
    session: str = Field(default="", description="this session's id: the phoneloop-session header of MCP calls")
    terminated: bool = False
    truncated: bool = False
    score: float | None = Field(default=None, description="the verifier's score, once the episode ended")
    error: str | None = Field(default=None, description="why the last action did nothing, if it did not")


class PhoneState(State):
    task: str | None = None
    seed: int | None = None
    session: str = ""
    done: bool = False


class MockPhoneEnvironment(Environment):
    """One session's mock phone; keyword arguments are those of ``mockphone.gym.MockPhoneEnv``."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session owns its phone: nothing is shared

    def __init__(self, sessions: MutableMapping[str, MockPhoneEnvironment] | None = None,
                 **env_options: Any) -> None:
        from mockphone.gym import MockPhoneEnv

        super().__init__()
        self.env = MockPhoneEnv(**env_options)
        self.session = uuid.uuid4().hex[:16]
        self.lock = threading.Lock()  # steps (a session's thread) and MCP calls (the event loop) take turns
        self._state = PhoneState(session=self.session)
        self.sessions = sessions
        if sessions is not None:
            sessions[self.session] = self
        self.mcp_client = SessionMcp(self)  # OpenEnv's /mcp and /ws "mcp" messages

    def reset(self, **options: Any) -> PhoneObservation:
        opts = ResetOptions.model_validate(options, context={"env": self.env})  # ValidationError names the field
        env_options: dict[str, Any] = {}
        if opts.task:
            env_options["task"] = opts.task
        if opts.task_seed is not None:
            env_options["seed"] = opts.task_seed
        with self.lock:
            _, info = self.env.reset(seed=opts.seed, options=env_options)
            self._state = PhoneState(episode_id=opts.episode_id or uuid.uuid4().hex[:12], step_count=0,
                                     task=info["task"], seed=info["seed"], session=self.session)
            return self._observation(reward=0.0)

    def step(self, action: PhoneAction, timeout_s: float | None = None, **kwargs: Any) -> PhoneObservation:
        if self.env.task is None:
            raise NoSession(NO_SESSION)
        with self.lock:
            _, reward, terminated, truncated, info = self.env.step(action.action)
            self._state.step_count += 1
            self._state.done = terminated or truncated
            return self._observation(reward=reward, terminated=terminated, truncated=truncated,
                                     score=info.get("score"), error=info.get("error"))

    @property
    def state(self) -> PhoneState:
        return self._state

    def close(self) -> None:
        if self.sessions is not None:
            self.sessions.pop(self.session, None)
        self.env.close()

    def _observation(self, **fields: Any) -> PhoneObservation:
        phone = self.env.phone
        done = fields.get("terminated", False) or fields.get("truncated", False)
        return PhoneObservation(screenshot_png_b64=base64.b64encode(phone.screenshot()).decode(),
                                ui_xml=phone.ui_tree(), instruction=self.env.task.goal, task=self._state.task or "",
                                seed=self._state.seed or 0, session=self.session, done=done, **fields)


class SessionMcp:
    """What OpenEnv's MCP routes call (``mcp_client``): the phone's FastMCP server over an in-memory client."""

    def __init__(self, environment: MockPhoneEnvironment) -> None:
        self.environment = environment
        self._server = None

    def _client(self):
        from fastmcp import Client

        from mockphone.mcp_server import phone_mcp

        if self._server is None:  # built on the first MCP request: most sessions never make one
            env = self.environment
            self._server = phone_mcp(lambda: (env.env.phone, env.lock))
        return Client(self._server)

    def is_connected(self) -> bool:
        return False  # OpenEnv then enters ``async with`` around each call

    async def __aenter__(self) -> SessionMcp:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    async def list_tools(self) -> list[dict[str, Any]]:
        async with self._client() as client:
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await client.list_tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        async with self._client() as client:
            result = await client.call_tool(name, arguments or {}, raise_on_error=False)
        return {"content": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content],
                "isError": result.is_error}


class MockPhoneClient(EnvClient[PhoneAction, PhoneObservation, PhoneState]):
    """An OpenEnv client for ``phoneloop env serve`` (``.sync()`` for the blocking API)."""

    def _step_payload(self, action: PhoneAction) -> dict[str, Any]:
        return {"action": action.action}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[PhoneObservation]:
        observation = PhoneObservation(**payload.get("observation", {}), reward=payload.get("reward"),
                                       done=payload.get("done", False))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> PhoneState:
        return PhoneState(**payload)

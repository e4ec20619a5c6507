"""The mock phone as an OpenEnv environment: ``reset`` / ``step`` / ``state`` over HTTP and WebSocket.

    phoneloop env serve --port 8010 --tasks app:clock          # 127.0.0.1 unless --host says otherwise

    from mockphone.openenv_env import MockPhoneClient
    with MockPhoneClient(base_url="http://127.0.0.1:8010").sync() as env:
        result = env.reset(task="ClockAddAlarm", task_seed=4)    # or seed=S: a task drawn from the selector
        result = env.step(PhoneAction(action={"type": "open_app", "app": "clock"}))
        result.observation.screenshot_png_b64, result.observation.ui_xml, result.reward, result.done

The server is ``openenv-core``'s FastAPI app (``create_fastapi_app``) around
:class:`MockPhoneEnvironment`, which wraps ``mockphone.gym.MockPhoneEnv``: same task
selection, same ``terminate`` / ``max_steps`` rules, same reward (the task verifier's
score, at the end of the episode). Each WebSocket session gets its own phone; the
stateless HTTP ``/reset`` and ``/step`` routes make a fresh one per request, as OpenEnv
does. Screens travel as base64 PNG (raw pixels are for in-process RL). Requests never
reach the filesystem: a task is a registry name, an action the project's action JSON.
"""

from __future__ import annotations

import base64
import uuid
from functools import partial
from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app
from pydantic import Field


class PhoneAction(Action):
    """One action of the project's vocabulary, as its JSON object (``datalake.types.Action``)."""

    action: dict[str, Any] = Field(description='e.g. {"type": "tap", "x": 540, "y": 1200}')


class PhoneObservation(Observation):
    screenshot_png_b64: str = Field(default="", description="the screen, PNG, base64")
    ui_xml: str = Field(default="", description="uiautomator dump of the same screen")
    instruction: str = ""
    task: str = ""
    seed: int = 0
    terminated: bool = False
    truncated: bool = False
    score: float | None = Field(default=None, description="the verifier's score, once the episode ended")
    error: str | None = Field(default=None, description="why the last action did nothing, if it did not")


class PhoneState(State):
    task: str | None = None
    seed: int | None = None
    done: bool = False


class MockPhoneEnvironment(Environment):
    """One session's mock phone; keyword arguments are those of ``mockphone.gym.MockPhoneEnv``."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session owns its phone: nothing is shared

    def __init__(self, **env_options: Any) -> None:
        from mockphone.gym import MockPhoneEnv

        super().__init__()
        self.env = MockPhoneEnv(**env_options)
        self._state = PhoneState()

    def reset(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None,
              task_seed: int | None = None, **kwargs: Any) -> PhoneObservation:
        options: dict[str, Any] = {}
        if task:
            options["task"] = task
        if task_seed is not None:
            options["seed"] = int(task_seed)
        _, info = self.env.reset(seed=seed, options=options)
        self._state = PhoneState(episode_id=episode_id or uuid.uuid4().hex[:12], step_count=0, task=info["task"],
                                 seed=info["seed"])
        return self._observation(reward=0.0)

    def step(self, action: PhoneAction, timeout_s: float | None = None, **kwargs: Any) -> PhoneObservation:
        _, reward, terminated, truncated, info = self.env.step(action.action)
        self._state.step_count += 1
        self._state.done = terminated or truncated
        return self._observation(reward=reward, terminated=terminated, truncated=truncated, score=info.get("score"),
                                 error=info.get("error"))

    @property
    def state(self) -> PhoneState:
        return self._state

    def close(self) -> None:
        self.env.close()

    def _observation(self, **fields: Any) -> PhoneObservation:
        phone = self.env.phone
        done = fields.get("terminated", False) or fields.get("truncated", False)
        return PhoneObservation(screenshot_png_b64=base64.b64encode(phone.screenshot()).decode(),
                                ui_xml=phone.ui_tree(), instruction=self.env.task.goal, task=self._state.task or "",
                                seed=self._state.seed or 0, done=done, **fields)


def make_app(tasks: str = "all", max_steps: int = 30, perturb: str = "none", sessions: int = 4,
             width: int = 1080, height: int = 2400, dpi: int = 420, locale: str = "en-US"):
    """The FastAPI app ``phoneloop env serve`` runs (checks the selector and profile before serving)."""
    from mockphone.i18n import check as check_locale
    from mockphone.perturb import load_profile
    from mockphone.tasks.registry import select

    select(tasks)  # UnknownTask now, not on the first reset
    load_profile(perturb)
    check_locale(locale)
    factory = partial(MockPhoneEnvironment, tasks=tasks, max_steps=max_steps, perturb=perturb, width=width,
                      height=height, dpi=dpi, locale=locale)
    return create_fastapi_app(factory, PhoneAction, PhoneObservation, max_concurrent_envs=sessions)


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

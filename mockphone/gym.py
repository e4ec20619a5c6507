"""The mock phone as a ``gymnasium.Env`` (gymnasium >= 1.0), for RL frameworks that speak gymnasium.

    import gymnasium
    from mockphone.gym import MockPhoneEnv

    env = MockPhoneEnv(tasks="app:clock", max_steps=20)
    obs, info = env.reset(seed=0)                  # obs: screenshot (H, W, 3) uint8, ui_xml, instruction
    obs, reward, terminated, truncated, info = env.step('{"type": "open_app", "app": "clock"}')

* Observation: ``Dict(screenshot=Box(0, 255, (H, W, 3), uint8), ui_xml=Text, instruction=Text)``;
  pixels come from ``observe(encoding="raw")`` (no PNG is encoded).
* Action: ``Text`` — the project's action JSON (``datalake.types.Action``: tap, swipe,
  input_text, open_app, key, terminate, ...); a dict of the same fields is accepted too.
  Text that is not a valid action is a step that does nothing (``info["error"]`` says why).
* Episode: ``reset`` draws a task from the selector and a seed from the env's RNG (or
  takes ``options={"task": NAME, "seed": S}``), resets the phone and puts it in the
  task's start state. ``terminated`` when the agent sends ``terminate``; ``truncated``
  after ``max_steps`` actions. The reward is 0 until the episode ends, then the task
  verifier's score (0..1) read from the phone's state, never from the agent's claims.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from datalake.types import Action
from mockphone.errors import MockPhoneError
from mockphone.layout import Display
from mockphone.phone import MockPhone

MAX_XML = 1_000_000  # characters of UI XML an observation may carry
MAX_ACTION = 4096
_CHARSET: frozenset[str] | None = None


def charset() -> frozenset[str]:
    """Every character XML text can hold (the Basic Multilingual Plane without surrogates and controls)."""
    global _CHARSET
    if _CHARSET is None:
        _CHARSET = frozenset(chr(c) for c in (9, 10, 13, *range(0x20, 0xD800), *range(0xE000, 0xFFFE)))
    return _CHARSET


class MockPhoneEnv(gymnasium.Env):
    """One mock phone and a task selector; see the module docstring."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, tasks: str = "all", *, width: int = 1080, height: int = 2400, dpi: int = 420,
                 max_steps: int = 30, perturb: str = "none", render_mode: str | None = None,
                 locale: str = "en-US") -> None:
        from mockphone.tasks.registry import select

        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.task_names = [cls.name() for cls in select(tasks)]
        self.max_steps, self.render_mode = max_steps, render_mode
        self.phone = MockPhone(display=Display(width, height, dpi), perturbations=perturb, locale=locale)
        chars = charset()
        self.observation_space = spaces.Dict({
            "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "ui_xml": spaces.Text(MAX_XML, min_length=0, charset=chars),
            "instruction": spaces.Text(MAX_XML, min_length=0, charset=chars),
        })
        self.action_space = spaces.Text(MAX_ACTION, min_length=1, charset=chars)
        self.task: Any = None
        self.steps = 0
        self.done = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        from mockphone.tasks.registry import get

        super().reset(seed=seed)
        options = options or {}
        name = options.get("task") or self.task_names[int(self.np_random.integers(len(self.task_names)))]
        task_seed = int(options["seed"]) if "seed" in options else int(self.np_random.integers(2**31 - 1))
        self.phone.reset(task_seed)
        self.task = get(name)(seed=task_seed)
        self.task.initialize_task(self.phone)
        self.steps, self.done = 0, False
        return self._obs(), {"task": name, "seed": task_seed, "perturbation": self.phone.perturbation_meta(),
                             "locale": self.phone.locale}

    def step(self, action: str | dict):
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        if self.done:
            return self._obs(), 0.0, True, False, {"error": "the episode is over: call reset()"}
        info: dict[str, Any] = {"task": self.task.name()}
        parsed = self._parse(action, info)
        if parsed is not None:
            try:
                info["detail"] = self.phone.act(parsed).detail
            except (MockPhoneError, ValueError, TypeError) as exc:  # e.g. a tap without coordinates
                info["error"] = f"the phone could not do {parsed.type}: {exc}"
        self.steps += 1
        terminated = parsed is not None and parsed.type == "terminate"
        truncated = not terminated and self.steps >= self.max_steps
        reward = 0.0
        if terminated or truncated:
            self.done = True
            reward = float(self.task.is_successful(self.phone))
            info["score"] = reward
        return self._obs(), reward, terminated, truncated, info

    def render(self):
        return self.phone.pixels() if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        self.phone.close()

    def _parse(self, action: str | dict, info: dict[str, Any]) -> Action | None:
        try:
            return Action.from_dict(action) if isinstance(action, dict) else Action.from_json(action)
        except (ValueError, TypeError) as exc:  # InvalidAction and json.JSONDecodeError are ValueErrors
            info["error"] = f"not a valid action: {exc}"
            return None

    def _obs(self) -> dict[str, Any]:
        raw = self.phone.observe(encoding="raw")
        return {"screenshot": raw.pixels, "ui_xml": raw.ui_tree, "instruction": self.task.goal if self.task else ""}


ENV_ID = "phoneloop/MockPhone-v0"
if ENV_ID not in gymnasium.registry:  # gymnasium.make(ENV_ID, tasks=..., ...) once this module is imported
    gymnasium.register(ENV_ID, entry_point="mockphone.gym:MockPhoneEnv")

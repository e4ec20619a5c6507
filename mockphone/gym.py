"""The mock phone as a ``gymnasium.Env`` (gymnasium >= 1.0), for RL frameworks that speak gymnasium.

    import gymnasium
    from mockphone.gym import MockPhoneEnv

    env = MockPhoneEnv(tasks="app:clock", max_steps=20)
    obs, info = env.reset(seed=0)                  # obs: screenshot (H, W, 3) uint8, ui_xml, instruction
    obs, reward, terminated, truncated, info = env.step('{"type": "open_app", "app": "clock"}')

* Observation: ``Dict(screenshot=Box(0, 255, (H, W, 3), uint8), ui_xml=UnicodeText, instruction=UnicodeText)``;
  pixels come from ``observe(encoding="raw")`` (no PNG is encoded). ``UnicodeText`` is a
  gymnasium ``Text`` whose character set is every Unicode scalar value (what the phone
  accepts as typed text: emoji and other astral characters, CJK, right-to-left scripts),
  held as ranges rather than a million-element set.
* Action: ``UnicodeText`` — the project's action JSON (``datalake.types.Action``: tap, swipe,
  input_text, open_app, key, terminate, ...); a dict of the same fields is accepted too.
  Text that is not a valid action is a step that does nothing (``info["error"]`` says why).
* Episode: ``reset`` draws a task from the selector and a seed from the env's RNG (or
  takes ``options={"task": NAME, "seed": S}``; a task outside the selector is refused with
  :class:`TaskNotServed`), resets the phone and puts it in the task's start state. ``terminated`` when the agent sends ``terminate``; ``truncated``
  after ``max_steps`` actions. The reward is 0 until the episode ends, then the task
  verifier's score (0..1) read from the phone's state, never from the agent's claims.
* ``env.spec`` is the registered ``phoneloop/MockPhone-v0`` with this env's arguments, also
  for an env built directly, so ``gymnasium.utils.env_checker.check_env`` tests its render
  modes.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import replace
from itertools import chain
from typing import Any, Iterator

import gymnasium
import numpy as np
from gymnasium import spaces

from datalake.types import Action
from mockphone.errors import MockPhoneError, UnknownTask
from mockphone.layout import Display
from mockphone.phone import MockPhone

MAX_XML = 1_000_000  # characters of UI XML an observation may carry
MAX_ACTION = 4096
ENV_ID = "phoneloop/MockPhone-v0"
OPTIONS = ("task", "seed")  # what reset(options=...) takes


class TaskNotServed(UnknownTask):
    """A reset asked for a registered task that is not in the env's task selector."""


class EpisodeNotStarted(MockPhoneError, RuntimeError):
    """``step`` was called before the first ``reset``."""


class BadResetOption(MockPhoneError, ValueError):
    """``reset(options=...)`` had a key other than ``task`` and ``seed``, or a value of the wrong type."""


class Scalars(Set):
    """Every Unicode scalar value (all code points but the surrogates), as a set that is never materialised."""

    SIZE = 0x110000 - 0x800

    def __contains__(self, char: object) -> bool:
        return isinstance(char, str) and len(char) == 1 and not 0xD800 <= ord(char) <= 0xDFFF

    def __len__(self) -> int:
        return self.SIZE

    def __iter__(self) -> Iterator[str]:
        return (chr(c) for c in chain(range(0xD800), range(0xE000, 0x110000)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scalars) or (isinstance(other, Set) and len(other) == self.SIZE
                                              and all(c in other for c in self))

    def __hash__(self) -> int:
        return hash(Scalars)

    def __repr__(self) -> str:
        return "Scalars(U+0000..U+10FFFF without surrogates)"


SCALARS = Scalars()


class UnicodeText(spaces.Text):
    """``gymnasium.spaces.Text`` over every Unicode scalar value; samples code points uniformly."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None) -> None:
        if not 0 <= min_length <= max_length:
            raise ValueError(f"UnicodeText needs 0 <= min_length <= max_length, got {min_length}, {max_length}")
        self.min_length, self.max_length = int(min_length), int(max_length)
        self._char_set = SCALARS  # Text.__init__ would build a list, a dict and a str of 1.1M characters
        spaces.Space.__init__(self, dtype=str, seed=seed)

    def contains(self, x: Any) -> bool:
        if not isinstance(x, str) or not self.min_length <= len(x) <= self.max_length:
            return False
        try:
            x.encode("utf-8")  # fails on a lone surrogate, the one kind of code point that is not a scalar
        except UnicodeEncodeError:
            return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise NotImplementedError("UnicodeText samples uniformly: no mask or probability")
        length = int(self.np_random.integers(self.min_length, self.max_length + 1))
        codes = self.np_random.integers(0, Scalars.SIZE, size=length)
        codes = np.where(codes >= 0xD800, codes + 0x800, codes)
        return "".join(map(chr, codes.tolist()))

    @property
    def character_list(self) -> tuple[str, ...]:
        raise NotImplementedError("UnicodeText does not list its 1.1M characters; see character_index")

    def character_index(self, char: str) -> np.int32:
        code = ord(char)
        return np.int32(code - 0x800 if code >= 0xE000 else code)

    @property
    def characters(self) -> str:
        return repr(SCALARS)

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (other.min_length,
                                                                                          other.max_length)


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
        self.tasks = tasks
        self.phone = MockPhone(display=Display(width, height, dpi), perturbations=perturb, locale=locale)
        self.observation_space = spaces.Dict({
            "screenshot": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "ui_xml": UnicodeText(MAX_XML),
            "instruction": UnicodeText(MAX_XML),
        })
        self.action_space = UnicodeText(MAX_ACTION, min_length=1)
        self.spec = replace(gymnasium.spec(ENV_ID), kwargs={  # what check_env remakes it from, one render mode each
            "tasks": tasks, "width": width, "height": height, "dpi": dpi, "max_steps": max_steps, "perturb": perturb,
            "locale": locale})
        self.task: Any = None
        self.steps = 0
        self.done = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        from mockphone.tasks.registry import get

        super().reset(seed=seed)
        options = options or {}
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise BadResetOption(f"unknown reset option(s) {', '.join(map(repr, unknown))}: reset takes "
                                 f"{' and '.join(OPTIONS)}")
        name = options.get("task")
        if name is not None:
            self.check_task(name)
        else:
            name = self.task_names[int(self.np_random.integers(len(self.task_names)))]
        if "seed" in options and (isinstance(options["seed"], bool) or not isinstance(options["seed"], int)):
            raise BadResetOption(f"reset option 'seed' must be an integer, got {options['seed']!r}")
        task_seed = int(options["seed"]) if "seed" in options else int(self.np_random.integers(2**31 - 1))
        self.phone.reset(task_seed)
        self.task = get(name)(seed=task_seed)
        self.task.initialize_task(self.phone)
        self.steps, self.done = 0, False
        return self._obs(), {"task": name, "seed": task_seed, "perturbation": self.phone.perturbation_meta(),
                             "locale": self.phone.locale}

    def check_task(self, name: Any) -> None:
        """Raise UnknownTask for a name no task has, TaskNotServed for one outside this env's selector."""
        from mockphone.tasks.registry import get

        if not isinstance(name, str):
            raise BadResetOption(f"reset option 'task' must be a task name, got {name!r}")
        get(name)
        if name not in self.task_names:
            shown = ", ".join(self.task_names[:8]) + (f", ... ({len(self.task_names)} in all)"
                                                      if len(self.task_names) > 8 else "")
            raise TaskNotServed(f"task {name!r} is not served here (tasks {self.tasks!r}: {shown})")

    def step(self, action: str | dict):
        if self.task is None:
            raise EpisodeNotStarted("call reset() before step(): no episode has started")
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


if ENV_ID not in gymnasium.registry:  # gymnasium.make(ENV_ID, tasks=..., ...) once this module is imported
    gymnasium.register(ENV_ID, entry_point="mockphone.gym:MockPhoneEnv")

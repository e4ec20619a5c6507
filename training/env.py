"""Online mock-phone environments for multi-turn GRPO (TRL ``environment_factory``).

Each rollout owns one ``MockPhone`` and one task instance. ``reset(task, seed)``
resets the phone from the seed, puts it in the task's start state and returns the
first screenshot; the model acts through one tool, ``mobile_use`` (the same
Qwen3-VL tool the exports teach: click, long_press, swipe, type, system_button,
open, scroll, wait, terminate), and every call returns the new screenshot. The
reward is the task's verifier (``is_successful``, 0..1), read from the phone's
state, never from the model's trace. Turns are capped: after ``max_turns`` actions
(or a ``terminate``) the phone stops taking actions.

With ``elements`` on (a policy SFT'd on the element-list format, ``curation.elements``)
the prompts and every returned screen also list the screen's numbered UI elements, and a
call may name its target as ``element`` (a number on the current screen) instead of a
``coordinate``; it acts at that element's centre, as ``parse_with_marks`` does offline.

``OfflineStep`` is the environment of offline rows in a ``--mix`` run: no tools and
no reward of its own (the step rewards score those rows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from curation.exports import COORDS_TEXT, SYSTEM
from curation.elements import parse_with_marks
from curation.formats import ActionParseError
from training.data import cap_image

COORDS = "rel1000"


@dataclass(frozen=True)
class EnvSettings:
    max_turns: int = 5
    max_pixels: int = 8192
    width: int = 360  # the mock phone's screen; small screens keep CPU runs fast
    height: int = 800
    perturb: str = "none"  # perturbation profile of the mock phones (see mockphone.perturb)
    elements: bool = False  # list the screen's numbered elements; calls may name one by number


class MockPhoneEnv:
    """One mock phone and one task; the model's actions are ``mobile_use`` tool calls."""

    settings = EnvSettings()

    def __init__(self) -> None:
        from mockphone.layout import Display
        from mockphone.phone import MockPhone

        self.phone = MockPhone(display=Display(self.settings.width, self.settings.height),
                               perturbations=self.settings.perturb)
        self.task = None
        self.turns = 0
        self.done = False
        self.items: list = []  # the marks of the screen last shown (element mode)
        self.rewards: list[float] = []  # every verifier result this instance returned (for tests and logs)

    def reset(self, task: str | None = None, seed: int | None = None, **row: Any) -> list[dict] | None:
        from mockphone.tasks.registry import get

        if not task:
            return None
        seed = int(seed or 0)
        self.phone.reset(seed)
        self.task = get(task)(seed=seed)
        self.task.initialize_task(self.phone)
        self.turns, self.done = 0, False
        self.items = _marks(self.phone) if self.settings.elements else []
        return None  # the row's prompt already shows this start screen (see task_rows)

    def mobile_use(self, action: str, coordinate: list[int] | None = None, coordinate2: list[int] | None = None,
                   text: str | None = None, button: str | None = None, direction: str | None = None,
                   time: float | None = None, status: str | None = None,
                   element: int | None = None) -> list[dict] | str:
        """Act on the phone; returns the new screen.

        Args:
            action: click, double_tap, long_press, swipe, scroll, type, system_button, open, wait or terminate.
            coordinate: [x, y], 0-1000 on each axis.
            coordinate2: [x, y] where a swipe ends.
            text: Text to type, or the app to open.
            button: Back, Home, Enter or AppSwitch.
            direction: up, down, left or right.
            time: Seconds to wait or press.
            status: success or failure.
            element: The number of the listed screen element to act on (instead of coordinate).
        """
        if self.task is None:
            return "The episode is over; no more actions."
        if self.done:  # every answer carries the screen: TRL's tool loop fails on a turn whose answers hold none
            return self._screen("The episode is over; no more actions. Current screen:")
        args = {k: v for k, v in dict(action=action, coordinate=coordinate, coordinate2=coordinate2, text=text,
                                      button=button, direction=direction, time=time, status=status).items()
                if v is not None}
        if element is not None:
            args["element"] = element
        call = "<tool_call>" + json.dumps({"name": "mobile_use", "arguments": args}) + "</tool_call>"
        size = (self.phone.display.width, self.phone.display.height)
        try:
            parsed = parse_with_marks(call, "qwen3vl", COORDS, size, self.items)
        except ActionParseError as exc:
            return self._screen(f"Invalid action: {exc}. Current screen:")
        result = self.phone.act(parsed)
        self.turns += 1
        if parsed.type == "terminate" or self.turns >= self.settings.max_turns:
            self.done = True
            return self._screen(f"{'ok' if result.ok else 'failed'}: {result.detail}. The episode is over. Final screen:")
        return self._screen(f"{'ok' if result.ok else 'failed'}: {result.detail}. Current screen:")

    def get_reward(self) -> float:
        reward = float(self.task.is_successful(self.phone)) if self.task is not None else 0.0
        self.rewards.append(reward)
        return reward

    def _screen(self, caption: str) -> list[dict]:
        import io

        from PIL import Image

        image = cap_image(Image.open(io.BytesIO(self.phone.screenshot())), self.settings.max_pixels)
        out = [{"type": "text", "text": caption}, {"type": "image", "image": image}]
        if self.settings.elements:
            self.items = _marks(self.phone)
            out.append({"type": "text", "text": "Elements:\n" + (_listing(self.items, self.phone) or "(none)")})
        return out


def _marks(phone) -> list:
    from curation.elements import marks

    return marks(phone.observe().ui_tree, (phone.display.width, phone.display.height))


def _listing(items: list, phone) -> str:
    from curation.elements import render_marks

    return render_marks(items, COORDS, (phone.display.width, phone.display.height))


class OfflineStep:
    """The environment of offline rows in a mixed run: nothing to do, no reward of its own."""

    def reset(self, **row: Any) -> None:
        return None


def env_factory(settings: EnvSettings) -> Callable[[], MockPhoneEnv]:
    """A factory TRL calls once per concurrent rollout; ``settings`` fixes turns, screen and image cap."""
    env_class = type("MockPhoneEnv", (MockPhoneEnv,), {"settings": settings})
    return env_class


def task_rows(selector: str, n: int, settings: EnvSettings, seed: int = 0) -> list[dict]:
    """``n`` online prompts cycling over the selected tasks, each with its own seed.

    A prompt looks exactly like an ``sft``/``grpo`` export row (system, then the start
    screenshot and the task), so a policy meets online episodes in the form it was
    fine-tuned on; ``reset`` puts the rollout's phone in that same start state."""
    import io

    from PIL import Image

    from mockphone.layout import Display
    from mockphone.phone import MockPhone
    from mockphone.tasks.registry import select

    from curation.exports import build_prompt

    tasks = select(selector)
    system = SYSTEM["qwen3vl"].format(coords=COORDS_TEXT[COORDS])
    phone = MockPhone(display=Display(settings.width, settings.height), perturbations=settings.perturb)
    rows = []
    for k in range(n):
        cls = tasks[k % len(tasks)]
        s = seed + k
        phone.reset(s)
        task = cls(seed=s)
        task.initialize_task(phone)
        screen = cap_image(Image.open(io.BytesIO(phone.screenshot())), settings.max_pixels)
        if settings.elements:  # the export's element-list prompt of this start screen
            prompt = build_prompt(task.goal, [], {"action_format": "qwen3vl", "coords": COORDS}, 1,
                                  elements=_listing(_marks(phone), phone))
        else:
            user = [{"type": "image", "text": None}, {"type": "text", "text": f"Task: {task.goal}"}]
            prompt = [{"role": "system", "content": [{"type": "text", "text": system}]},
                      {"role": "user", "content": user}]
        rows.append({"prompt": prompt, "images": [screen], "task": cls.name(), "seed": s})
    phone.close()
    return rows

"""Oracle demonstrations that look human: jittered taps, pauses, split typing, and recoverable detours.

    policy = HumanOracle(phone, task, seed=3, noise=0.3, detours=0.5)   # phone: a MockPhone
    episode = run_episode(phone, policy, task, seed=3)
    policy.labels        # one label per recorded step: "oracle", "noise" or "detour"

* ``noise`` (per oracle action): a tap lands anywhere in the central part of its target
  (never on another clickable element, never on a slider, whose x is the value), or a
  one-second pause comes first, or typing goes in two bursts.
* ``detours`` (per episode): before one oracle step, a recoverable mistake and its
  recovery, so the data also teaches recovery. The oracle is computed from the live
  screen, so it resumes from wherever the recovery leaves it. Kinds (``DETOUR_KINDS``):

  - ``wrong_app``: open an app the task does not use, go home, reopen the app it was in;
    possible before any step;
  - ``wrong_item``: tap a list row that is not the one (a contact, a mail, a note, a
    folder; never a toggle row), then press back; possible before the steps whose screen
    shows such rows.

Rates: an episode gets a detour with probability ``detours``; its kind is drawn uniformly
among the kinds possible in that episode (so ``wrong_item`` in half the detoured
episodes whose oracle passes a list, ``wrong_app`` in the other half and in every
detoured episode that never shows one); its step uniformly among the steps where that
kind is possible.

Whether a plan works is settled before the episode, on a scratch phone with the same
seed and perturbations (the mock phone is deterministic, so the recorded run repeats
the rehearsal step for step): ``plan_variant`` draws the kind once, tries up to
``PLAN_TRIES`` places (and rows) for it and keeps the first whose rehearsal the verifier
passes; if none does, the episode is the plain oracle. The kind is never redrawn after a
failed rehearsal: that would favour the kind that fails less (it made ``wrong_item``,
whose taps more often change state, all but vanish).
"""

from __future__ import annotations

import random
from typing import Any, Iterator

from datalake.types import Action, Observation, Step
from phones.episode import OraclePolicy

SLIDERS = ("android.widget.SeekBar",)
PLAN_TRIES = 6
DETOUR_KINDS = ("wrong_app", "wrong_item")
SYSTEM_UI = "com.android.systemui"


class HumanOracle:
    """The task's oracle with human noise and at most one detour; ``variant`` picks the random plan."""

    source = "oracle"

    def __init__(self, phone: Any, task: Any, *, seed: int, noise: float = 0.0, detours: float = 0.0,
                 variant: int = 0, detour_at: int | None = None, detour_kind: str | None = None) -> None:
        for name, rate in (("noise", noise), ("detours", detours)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {rate!r}")
        if detour_kind is not None and detour_kind not in DETOUR_KINDS:
            raise ValueError(f"detour_kind must be one of {', '.join(DETOUR_KINDS)}, got {detour_kind!r}")
        self.phone, self.task, self.noise = phone, task, noise
        self.rng = random.Random(f"human:{task.name()}:{seed}:{variant}")
        self.inner = OraclePolicy(phone, task)
        self.name = self.inner.name
        self.ui = self.inner._ui
        self.detour_at, self.planned_kind = detour_at, detour_kind
        self.detour_kind: str | None = None  # the kind done, once done
        self.labels: list[str] = []
        self.row_steps: list[int] = []  # oracle steps whose screen showed rows a wrong_item detour could tap
        self._stream = self._actions()

    def act(self, instruction: str, observation: Observation | None, history: list[Step]) -> tuple[Action, None]:
        action, label = next(self._stream, (Action("terminate", status="success"), "oracle"))
        self.labels.append(label)
        return action, None

    def steps_labelled(self, label: str) -> list[int]:
        return [i for i, value in enumerate(self.labels) if value == label]

    def _actions(self) -> Iterator[tuple[Action, str]]:
        k = 0
        while True:
            if _item_rows(self.ui.elements()):
                self.row_steps.append(k)
            if k == self.detour_at:
                yield from ((a, "detour") for a in self._detour())
            action = next(self.inner._plan, None)  # computed now, from the screen the detour left
            if action is None:
                return
            if action.type != "terminate" and self.noise and self.rng.random() < self.noise:
                yield from self._humanise(action)
            else:
                yield action, "oracle"
            k += 1

    # --- noise ------------------------------------------------------------------------------

    def _humanise(self, action: Action) -> Iterator[tuple[Action, str]]:
        draw = self.rng.random()
        if action.type in ("tap", "long_press", "double_tap") and action.element is not None and draw < 0.6:
            yield self._jitter(action), "oracle"
        elif action.type == "input_text" and action.text and len(action.text) >= 4 and draw < 0.8:
            cut = self.rng.randrange(1, len(action.text))
            yield Action("input_text", text=action.text[:cut], x=action.x, y=action.y, clear=action.clear,
                         element=action.element), "noise"
            yield Action("input_text", text=action.text[cut:], x=action.x, y=action.y, clear=False,
                         element=action.element), "oracle"
        else:
            yield Action("wait", seconds=1), "noise"
            yield action, "oracle"

    def _jitter(self, action: Action) -> Action:
        target = action.element
        if target.bounds is None or (target.class_name or "") in SLIDERS:
            return action
        x1, y1, x2, y2 = target.bounds
        els = self.ui.elements()
        for _ in range(6):
            x = int(x1 + (x2 - x1) * self.rng.uniform(0.2, 0.8))
            y = int(y1 + (y2 - y1) * self.rng.uniform(0.25, 0.75))
            inside = [e for e in els if (e.clickable or e.long_clickable) and _contains(e.bounds, x, y)]
            if inside and min(inside, key=_area).bounds == tuple(target.bounds):
                return Action(action.type, x=x, y=y, duration_ms=action.duration_ms, element=target)
        return action

    # --- detours ----------------------------------------------------------------------------

    def _detour(self) -> Iterator[Action]:
        yield from self.ui.interruptions()  # a person deals with the dialog in front of them first
        rows = _item_rows(self.ui.elements())
        kind = self.planned_kind or ("wrong_item" if rows and self.rng.random() < 0.5 else "wrong_app")
        if kind == "wrong_item" and rows:
            yield from self._wrong_item(self.rng.choice(rows))
        else:
            yield from self._wrong_app()

    def _wrong_app(self) -> Iterator[Action]:
        self.detour_kind = "wrong_app"
        phone = self.phone
        back_to = phone.nav.foreground
        others = [n for n in phone.app_names() if n not in self.task.app_names
                  and phone.app(n).package != back_to]
        yield Action("open_app", app=self.rng.choice(others))
        yield from self.ui.interruptions()
        yield Action("key", key="home")
        if back_to is not None:
            yield Action("open_app", app=phone.app_by_package(back_to).name)
            yield from self.ui.interruptions()

    def _wrong_item(self, row: Any) -> Iterator[Action]:
        self.detour_kind = "wrong_item"
        before = self.phone.ui_tree()
        x, y = row.center
        yield Action("tap", x=x, y=y, element=row.as_target())
        if self.phone.ui_tree() != before:
            yield Action("key", key="back")
        yield from self.ui.interruptions()


def _item_rows(els: list[Any]) -> list[Any]:
    """List rows a person could tap by mistake: clickable rows without their own text (a contact, a mail,
    a folder), not the system UI's, and not toggle rows (whose tap changes a setting)."""
    switches = {e.parent for e in els if e.checkable}
    return [e for e in els if e.clickable and e.text == "" and _area(e) > 0 and not e.checkable
            and e.class_name == "android.widget.LinearLayout" and e.package != SYSTEM_UI
            and e.index not in switches]


def _contains(bounds: tuple[int, int, int, int], x: int, y: int) -> bool:
    return bounds[0] <= x < bounds[2] and bounds[1] <= y < bounds[3]


def _area(el: Any) -> int:
    x1, y1, x2, y2 = el.bounds
    return max(0, x2 - x1) * max(0, y2 - y1)


def rehearse(make_phone, task_cls: type, seed: int, max_steps: int, **plan: Any) -> tuple[bool, HumanOracle]:
    """Run a plan on a scratch phone (tree only, no screenshots); True if the verifier passes it."""
    phone = make_phone()
    try:
        phone.reset(seed)
        task = task_cls(seed=seed)
        task.initialize_task(phone)
        policy = HumanOracle(phone, task, seed=seed, **plan)
        for _ in range(max_steps):
            action, _ = policy.act(task.goal, None, [])
            phone.act(action)
            if action.type == "terminate":
                return task.is_successful(phone) >= 1.0, policy
        return False, policy
    except Exception:  # noqa: BLE001  a rehearsal is a sandbox: any failure means "try another plan"
        return False, None  # type: ignore[return-value]
    finally:
        phone.close()


def plan_variant(make_phone, task_cls: type, seed: int, *, noise: float, detours: float,
                 max_steps: int = 300) -> dict[str, Any]:
    """Keyword arguments of a HumanOracle whose rehearsal succeeds (the plain oracle if none does);
    the detour's kind, place and rates are in the module docstring."""
    plain = {"noise": 0.0, "detours": 0.0}
    if not noise and not detours:
        return plain
    ok, base = rehearse(make_phone, task_cls, seed, max_steps, **plain)
    if not ok:
        return plain  # the oracle itself fails here: record it as it is
    kind, places = draw_detour(random.Random(f"plan:{task_cls.name()}:{seed}"), base, detours)
    pick = random.Random(f"place:{task_cls.name()}:{seed}")
    for variant in range(PLAN_TRIES):
        plan = {"noise": noise, "detours": detours, "variant": variant,
                "detour_at": pick.choice(places) if kind else None, "detour_kind": kind}
        if rehearse(make_phone, task_cls, seed, max_steps, **plan)[0]:
            return plan
    return plain


def draw_detour(rng: random.Random, base: HumanOracle, detours: float) -> tuple[str | None, list[int]]:
    """The detour kind of one episode and the oracle steps it may come before, from the plain oracle's
    rehearsal ``base``; (None, []) for no detour."""
    last = len(base.labels) - 1  # the oracle's terminate: a detour comes before a step that does something
    places = {"wrong_app": list(range(last)), "wrong_item": [k for k in base.row_steps if k < last]}
    if last < 1 or rng.random() >= detours:
        return None, []
    kind = rng.choice([k for k in DETOUR_KINDS if places[k]])
    return kind, places[kind]

"""Playing a task on a phone, for the checks and the endings that need it: a phone set up for a
template (``start``), its oracle run (``run_oracle``), and another instance's oracle played on a
phone set up for this one (``play_other``, the near misses). Below ``base`` and ``invariants``,
so a template's wrong endings can play oracles without importing the invariant checks."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Callable

from datalake.types import Action
from mockphone import i18n
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import UI, solve

Ending = Callable[[MockPhone, "Task"], None]

if TYPE_CHECKING:
    from mockphone.tasks.base import Task

# the locale the checks set up their phones in (``invariants.check(..., locale=...)`` sets it)
LOCALE: contextvars.ContextVar[str] = contextvars.ContextVar("invariants_locale", default=i18n.DEFAULT)


def start(cls: type[Task], seed: int, params: dict | None = None) -> tuple[MockPhone, Task]:
    phone = MockPhone(seed=seed, locale=LOCALE.get())
    task = cls(params, seed=seed) if params is not None else cls(seed=seed)
    task.initialize_task(phone)
    return phone, task


def run_oracle(phone: MockPhone, task: Task, terminate: bool = True) -> list[Action]:
    return solve(phone, task, terminate=terminate)


def play_other(phone: MockPhone, other: Task) -> None:
    """``other``'s oracle on ``phone``: set up on its own probe phone, only its oracle's choices are used."""
    probe = MockPhone(seed=phone.seed, locale=phone.locale)
    other.initialize_task(probe)
    ui = UI(phone)
    for a in other.oracle(ui):
        phone.act(a)
        for extra in ui.interruptions():
            phone.act(extra)


def ending_of(actions: list[Action]) -> Action:
    """The oracle's own terminate (infeasible tasks end with one), else ``terminate(success)``."""
    return actions[-1] if actions and actions[-1].type == "terminate" else Action("terminate", status="success")


def also_params(params: dict) -> Ending:
    """The task done, and then the same done to a second target (the text also sent to another contact)."""
    def play(phone: MockPhone, task: Task) -> None:
        ending = ending_of(run_oracle(phone, task, terminate=False))
        also_play(phone, task, params)
        phone.act(ending)

    return play


def also_play(phone: MockPhone, task: Task, params: dict) -> None:
    for app in task.app_names:  # start the apps afresh, as an agent going back to them would
        phone.act(Action("shell", command=f"am force-stop {phone.app(app).package}"))
    try:
        play_other(phone, type(task)(params))
    except Exception:  # noqa: BLE001 - the second target is not there: what was done so far stays
        pass


def oracle_answer(task: Task, phone: MockPhone) -> str:
    """The right answer as the oracle reads it off the screen (a probe phone of the same seed and locale)."""
    probe, own = start(type(task), phone.seed, task.params)
    return next(a.text for a in run_oracle(probe, own, terminate=False) if a.type == "answer")

"""Scripted wrong endings and small oracle helpers shared by the Maps and Rides task modules.

A wrong-but-plausible ending is a script: an oracle-like generator that reads the live
UI and yields actions (``play`` runs it and claims success), so an ending such as "booked
the nearest cafe instead of the best-rated one" is code that a test replays, not a note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from datalake.types import Action
from mockphone.tasks.oracle import UI

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.base import Task

Script = Callable[[UI], Iterator[Action]]


def play(phone: MockPhone, script: Script, terminate: bool = True) -> None:
    """Run ``script`` on ``phone`` as the oracle runner would (interruptions handled), then terminate(success)."""
    ui = UI(phone)
    for action in script(ui):
        phone.act(action)
        for extra in ui.interruptions():
            phone.act(extra)
    if terminate:
        phone.act(Action("terminate", status="success"))


def ending(script_of: Callable[[Task], Script]) -> Callable[[MockPhone, Task], None]:
    """A wrong ending for ``Task.wrong_endings``: ``script_of(task)`` played on the task's phone."""
    def run(phone: MockPhone, task: Task) -> None:
        play(phone, script_of(task))

    return run


def answer(text: str) -> Iterator[Action]:
    yield Action("answer", text=text)


def read(ui: UI, rid: str) -> str:
    """The text of element ``rid`` on the current screen ("" when it is not there)."""
    el = ui.find(rid=rid)
    return el.text if el is not None else ""

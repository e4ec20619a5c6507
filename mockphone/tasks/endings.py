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


# --- a template's own wrong entity, and "did it and another one too", in one declaration ------------------
# ``Task.swaps`` lists (param, pick): ``pick(task, phone)`` names another item of the same kind that is on this
# phone (another contact, note, alarm, product, another choice of the param); the template gets two endings from
# it: the oracle played for that item instead ("another-PARAM") and the task done, then done for it too
# ("also-another-PARAM"). An answer task gets "answered-for-another-PARAM": the right answer of that item.

Pick = Callable[["Task", "MockPhone"], object]


def _other(task: Task, phone: MockPhone, key: str, pick: Pick) -> Task:
    """``task`` with ``params[key]`` set to what ``pick`` names (not validated against the schema's choices:
    the other item is one of this phone's, which another seed's world may not draw)."""
    import copy
    import weakref

    from mockphone.errors import InvalidTaskParams

    value = pick(task, phone)
    if value is None or value == task.params[key]:
        raise InvalidTaskParams(f"{task.name()}: no other {key} on this phone")
    other = copy.copy(task)
    other.params = {**task.params, key: value}
    other._starts = weakref.WeakKeyDictionary()
    return other


def instead(key: str, pick: Pick) -> Callable[[MockPhone, Task], None]:
    """The oracle for another ``key`` (the wrong contact, note, amount; an answer task answers for it), then
    terminate(success)."""
    def run(phone: MockPhone, task: Task) -> None:
        from mockphone.tasks.play import play_other

        other = _other(task, phone, key, pick)
        try:
            play_other(phone, other)
        except Exception:  # noqa: BLE001 - the other item's path stops early: what was done stays
            pass
        phone.act(Action("terminate", status="success"))

    return run


def also(key: str, pick: Pick) -> Callable[[MockPhone, Task], None]:
    """The task done, then the same done for another ``key`` too (also deleted, also sent, also bought)."""
    def run(phone: MockPhone, task: Task) -> None:
        from mockphone.tasks.play import ending_of, play_other, run_oracle

        last = ending_of(run_oracle(phone, task, terminate=False))
        other = _other(task, phone, key, pick)
        for app in task.app_names:  # start the apps afresh, as an agent going back to them would
            phone.act(Action("shell", command=f"am force-stop {phone.app(app).package}"))
        try:
            play_other(phone, other)
        except Exception:  # noqa: BLE001 - the second item's path stops early: what was done stays
            pass
        phone.act(last)

    return run


def choice(key: str) -> Pick:
    """Another of the param's declared choices (the next one in the schema's order)."""
    def pick(task: Task, phone: MockPhone) -> object:
        options = [c for c in (task.schema[key].choices or ()) if c != task.params[key]]
        return options[task.seed % len(options)] if options else None

    return pick


def record(prefix: str, where: Callable[[dict], bool] | None = None, field: str = "") -> Pick:
    """Another record key under ``prefix`` in the phone's snapshot (``notes.notes``: another note's title), or
    its ``field`` (``mail.emails`` by ``subject``), none that a param names or is named in; ``where`` filters on
    the record's fields."""
    def pick(task: Task, phone: MockPhone) -> object:
        from mockphone.tasks import events, statediff

        recs = events.records(statediff.snapshot(phone), prefix)
        taken = [str(v) for v in task.params.values()]
        keys = sorted(str(fields.get(field)) if field else k[len(prefix) + 1:-1] for k, fields in recs.items()
                      if (where is None or where(fields)) and (not field or fields.get(field)))
        keys = [k for k in keys if k and not any(k in t or t in k for t in taken)
                and not any(k != m and k in m for m in keys)]
        return keys[task.seed % len(keys)] if keys else None

    return pick


def scaled(key: str, factor: float, at_least: int = 1) -> Pick:
    """The param times ``factor`` (a wrong amount, quantity, budget), at least ``at_least``."""
    def pick(task: Task, phone: MockPhone) -> object:
        value = task.params[key]
        out = max(at_least, int(round(value * factor)))
        return out if out != value else value + 1

    return pick


def misread(task: Task, phone: MockPhone) -> str:
    """A wrong answer: the right one misread (its last digit one off; without digits, only its first half)."""
    import re

    from mockphone.tasks.play import oracle_answer

    right = oracle_answer(task, phone)
    digits = list(re.finditer(r"\d", right))
    if digits:
        i = digits[-1].start()
        return right[:i] + str((int(right[i]) + 1) % 10) + right[i + 1:]
    words = right.split()
    return " ".join(words[:max(1, len(words) // 2)]) if len(words) > 1 else right[: max(1, len(right) // 2)]


def after(script_of: Callable[[Task], Script]) -> Callable[[MockPhone, Task], None]:
    """The task done (its oracle), then ``script_of(task)``: one step too many (starred it too, archived it
    again), then the oracle's own terminate."""
    def run(phone: MockPhone, task: Task) -> None:
        from mockphone.tasks.play import ending_of, run_oracle

        last = ending_of(run_oracle(phone, task, terminate=False))
        for app in task.app_names:  # start the apps afresh, as an agent going back to them would
            phone.act(Action("shell", command=f"am force-stop {phone.app(app).package}"))
        play(phone, script_of(task), terminate=False)
        phone.act(last)

    return run


def transposed(task: Task, phone: MockPhone) -> str:
    """A wrong answer: the right one with its last two digits swapped (a typing slip)."""
    import re

    from mockphone.tasks.play import oracle_answer

    right = oracle_answer(task, phone)
    pos = [m.start() for m in re.finditer(r"\d", right)]
    pairs = [(i, j) for i, j in zip(pos, pos[1:]) if right[i] != right[j]]
    if not pairs:
        return misread(task, phone)
    i, j = pairs[-1]
    return right[:i] + right[j] + right[i + 1:j] + right[i] + right[j + 1:]


def digit_slip(text: str) -> str:
    """``text`` with its first digit one off (a house number, a flight misread), or one letter short."""
    for i, ch in enumerate(text):
        if ch.isdigit():
            return text[:i] + str((int(ch) + 1) % 10) + text[i + 1:]
    return text[:-1]

"""Oracle demonstrations: actions computed from the live UI tree, never from hard-coded coordinates.

An oracle is a generator; the runner executes each yielded action before the
generator resumes, so every lookup below sees the screen the previous action left.
Interruptions a real phone throws at you (permission dialogs, ads, slow loads,
network errors) are handled before each lookup, the way a careful human would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generator, Iterator

from datalake.types import Action
from datalake.uitree import UIElement, parse_ui_tree
from mockphone import i18n
from mockphone.errors import OracleFailed

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.base import Task

MAX_SCROLLS = 12
INTERRUPTION_BUTTONS = {"perm_dialog": "ALLOW", "ad_popup": "CLOSE", "runtime_perm": "WHILE USING THE APP",
                        "login_prompt": "NOT NOW", "rate_dialog": "NO THANKS"}


class UI:
    """Reads the phone's current uiautomator tree and turns targets into Actions."""

    def __init__(self, phone: MockPhone) -> None:
        self.phone = phone

    def elements(self) -> list[UIElement]:
        return parse_ui_tree(self.phone.ui_tree())

    def find(self, text: str | None = None, rid: str | None = None, desc: str | None = None,
             contains: str | None = None, clickable: bool | None = None, actionable: bool = False) -> UIElement | None:
        """The first element matching every given criterion; ``actionable``: it or an ancestor takes taps.

        ``text``, ``contains`` and ``desc`` are English labels: on a phone in another locale they are
        looked up as that locale shows them (``mockphone.i18n``); data (names, titles) stays as it is.
        """
        locale = getattr(self.phone, "locale", i18n.DEFAULT)
        text, contains, desc = (None if v is None else i18n.label(v, locale) for v in (text, contains, desc))
        els = self.elements()
        for el in els:
            if actionable and not _actionable(els, el):
                continue
            if text is not None and el.text.lower() != text.lower():
                continue
            if contains is not None and contains.lower() not in el.text.lower():
                continue
            if rid is not None and not _rid_matches(el.resource_id, rid):
                continue
            if desc is not None and el.content_desc != desc:
                continue
            if clickable is not None and el.clickable != clickable:
                continue
            return el
        return None

    def find_all(self, rid: str) -> list[UIElement]:
        return [el for el in self.elements() if _rid_matches(el.resource_id, rid)]

    def interruptions(self) -> Iterator[Action]:
        """Dismiss what perturbations put in the way: dialogs, ads, spinners, error pages."""
        for _ in range(10):
            els = self.elements()
            blocking = next((rid for el in els for rid in INTERRUPTION_BUTTONS if _rid_matches(el.resource_id, rid)),
                            None)
            spinner = next((el for el in els if el.class_name == "android.widget.ProgressBar"), None)
            retry = next((el for el in els if _rid_matches(el.resource_id, "retry")), None)
            banner = next((el for el in els if el.resource_id == "com.android.systemui:id/heads_up"), None)
            if banner is not None:
                x, y = banner.center
                yield Action("swipe", x=x, y=y, x2=x, y2=0)
            elif blocking is not None:
                label = i18n.label(INTERRUPTION_BUTTONS[blocking], getattr(self.phone, "locale", i18n.DEFAULT))
                button = next(el for el in els if el.text == label)
                yield _tap(button)
            elif spinner is not None:
                yield Action("wait", seconds=2)
            elif retry is not None:
                yield _tap(retry)
            else:
                return

    def locate(self, **query) -> Iterator[Action | UIElement]:
        """Yield scroll actions until the element is on screen; the last item yielded is the element."""
        yield from self.interruptions()
        el = self.find(**query)
        direction = "down"
        tries = 0
        while el is None and tries < 2 * MAX_SCROLLS:
            before = self.phone.ui_tree()
            yield Action("scroll", direction=direction)
            tries += 1
            if self.phone.ui_tree() == before:
                if direction == "up":
                    break
                direction = "up"
            el = self.find(**query)
        if el is None:
            raise OracleFailed(f"no element matching {query} on screen {self.phone.activity()}")
        yield el

    def _target(self, **query) -> Iterator[Action]:
        for item in self.locate(**query):
            if isinstance(item, Action):
                yield item
            else:
                self._found = item

    def collect(self, rid: str) -> Generator[Action, None, list[list[str]]]:
        """Scroll through a list reading each row ``rid`` as [title, summary, ...].

        Use as ``rows = yield from ui.collect(rid)``.
        """
        rows: dict[str, list[str]] = {}
        while True:
            els = self.elements()
            for row in (el for el in els if _rid_matches(el.resource_id, rid)):
                kids = [e for e in els if e.parent == row.index and e.text]
                if not kids or kids[0].resource_id != "android:id/title":
                    continue  # the title is scrolled off: read this row on another screen
                texts = [e.text for e in kids]
                if len(texts) > len(rows.get(texts[0], ())):  # keep the most complete reading
                    rows[texts[0]] = texts
            before = self.phone.ui_tree()
            yield Action("scroll", direction="down")
            if self.phone.ui_tree() == before:
                return list(rows.values())

    def tap(self, **query) -> Iterator[Action]:
        query.setdefault("actionable", True)
        yield from self._target(**query)
        yield _tap(self._found)

    def long_press(self, **query) -> Iterator[Action]:
        yield from self._target(**query)
        x, y = self._found.center
        yield Action("long_press", x=x, y=y, element=self._found.as_target())

    def type_into(self, rid: str, text: str, clear: bool = True) -> Iterator[Action]:
        yield from self._target(rid=rid)
        x, y = self._found.center
        yield Action("input_text", text=text, x=x, y=y, clear=clear, element=self._found.as_target())

    def slide(self, rid: str, value: int, vmin: int, vmax: int) -> Iterator[Action]:
        """Tap a SeekBar at the x that maps to ``value``."""
        yield from self._target(rid=rid)
        x1, y1, x2, y2 = self._found.bounds
        x = x1 + (value - vmin) / (vmax - vmin) * (x2 - x1 - 1)
        yield Action("tap", x=int(round(x)), y=(y1 + y2) // 2, element=self._found.as_target())

    def open(self, app: str) -> Iterator[Action]:
        yield Action("open_app", app=app)
        yield from self.interruptions()

    def key(self, key: str) -> Iterator[Action]:
        yield Action("key", key=key)


def _rid_matches(resource_id: str, rid: str) -> bool:
    """``rid`` is a full id, or an app's short id (never matching the framework's android:id/...)."""
    if ":" in rid:
        return resource_id == rid
    return resource_id.endswith(f":id/{rid}") and not resource_id.startswith("android:")


def _actionable(els: list[UIElement], el: UIElement | None) -> bool:
    while el is not None:
        if el.clickable or el.long_clickable:
            return True
        el = els[el.parent] if el.parent is not None else None
    return False


def _tap(el: UIElement) -> Action:
    x, y = el.center
    return Action("tap", x=x, y=y, element=el.as_target())


def solve(phone: MockPhone, task: Task, max_steps: int = 300, terminate: bool = True) -> list[Action]:
    """Run ``task``'s oracle on ``phone``; returns the actions taken.

    With ``terminate`` the demonstration ends as an agent's should: ``terminate(success)``.
    """
    ui = UI(phone)
    taken: list[Action] = []

    def act(action: Action) -> None:
        if len(taken) >= max_steps:
            raise OracleFailed(f"{task.name()}: oracle exceeded {max_steps} steps")
        phone.act(action)
        taken.append(action)

    for action in task.oracle(ui):
        act(action)
        for extra in ui.interruptions():  # the oracle always resumes on a settled screen
            act(extra)
    if terminate and not (taken and taken[-1].type == "terminate"):  # infeasible tasks terminate themselves
        act(Action("terminate", status="success"))
    return taken

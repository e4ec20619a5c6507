"""Mixed tasks: one goal, three ways — the GUI, the ``shell`` subset, or a ``tool`` call.

Each template reuses a GUI task's instruction, allowed changes and verifier (which reads
only state, so it cannot tell which path was taken) and adds oracles for the other two
paths. ``task.via`` picks the oracle ("gui", "shell" or "tool"; default "gui"); the
invariant tests run all three.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, ClassVar, Iterator

from datalake.types import Action
from mockphone.tasks.base import Param
from mockphone.tasks.comm_tasks import ContactsAdd, ContactsLookupNumber
from mockphone.tasks.notes_tasks import ClockAddAlarm, NotesCreate
from mockphone.tasks.organiser_tasks import CalendarCreateEvent
from mockphone.tasks.settings_tasks import (
    SettingsAirplaneModeOn, SettingsBluetoothOn, SettingsDoNotDisturbOn, SettingsWifiOff,
)

if TYPE_CHECKING:
    from mockphone.tasks.oracle import UI

PATHS = ("gui", "shell", "tool")


class MixedTask:
    """Mixin: ``oracle`` dispatches on ``via``; subclasses define ``by_shell`` and ``by_tool``."""

    category = "mixed"
    via: str = "gui"

    def oracle(self, ui: UI) -> Iterator[Action]:
        if self.via == "gui":
            yield from super().oracle(ui)  # type: ignore[misc]
        elif self.via == "shell":
            yield from self.by_shell()
        elif self.via == "tool":
            yield from self.by_tool(ui)
        else:
            raise ValueError(f"unknown path {self.via!r}; use one of {', '.join(PATHS)}")

    def by_shell(self) -> Iterator[Action]:
        raise NotImplementedError

    def by_tool(self, ui: UI) -> Iterator[Action]:
        raise NotImplementedError


def _insert(uri: str, **binds: str | int) -> Action:
    parts = [f"{k}:{'i' if isinstance(v, int) else 's'}:{v}" for k, v in binds.items()]
    return Action("shell", command=f"content insert --uri {uri} " + " ".join(f"--bind {shlex.quote(p)}" for p in parts))


class MixedCreateEvent(MixedTask, CalendarCreateEvent):
    """Create a calendar event by GUI, ``content insert`` or ``calendar.create_event``."""

    def by_shell(self) -> Iterator[Action]:
        p = self.params
        yield _insert("content://com.android.calendar/events", title=p["title"], date=p["date"], time=p["time"])

    def by_tool(self, ui: UI) -> Iterator[Action]:
        p = self.params
        yield Action("tool", name="calendar.create_event", args={"title": p["title"], "date": p["date"],
                                                                 "time": p["time"]})


class MixedAddContact(MixedTask, ContactsAdd):
    """Add a contact by GUI, ``content insert`` or ``contacts.create``."""

    def by_shell(self) -> Iterator[Action]:
        yield _insert("content://com.android.contacts/contacts", name=self.params["name"], phone=self.params["number"])

    def by_tool(self, ui: UI) -> Iterator[Action]:
        yield Action("tool", name="contacts.create", args={"name": self.params["name"], "phone": self.params["number"]})


class MixedCreateNote(MixedTask, NotesCreate):
    """Create a note by GUI, ``content insert`` or ``notes.create``."""

    def by_shell(self) -> Iterator[Action]:
        yield _insert("content://com.phoneloop.notes/notes", title=self.params["title"], body=self.params["body"])

    def by_tool(self, ui: UI) -> Iterator[Action]:
        yield Action("tool", name="notes.create", args={"title": self.params["title"], "body": self.params["body"]})


class MixedAddAlarm(MixedTask, ClockAddAlarm):
    """Set an alarm by GUI, ``content insert`` or ``clock.create_alarm``."""

    def by_shell(self) -> Iterator[Action]:
        yield _insert("content://com.android.deskclock/alarms", hour=self.params["hour"], minute=self.params["minute"])

    def by_tool(self, ui: UI) -> Iterator[Action]:
        yield Action("tool", name="clock.create_alarm", args={"hour": self.params["hour"],
                                                              "minute": self.params["minute"]})


def _world(world):
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


PLACES = (("flat", "office", "studio", "café", "shop", "workshop"), ("家", "办公室", "工作室", "咖啡馆", "店", "车间"))
DEVICES = (("speaker", "headphones", "earbuds", "car kit", "keyboard", "smartwatch"),
           ("音箱", "耳机", "蓝牙耳塞", "车载套件", "键盘", "智能手表"))
CITIES = (("Lisbon", "Denver", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Seoul", "Austin", "Dublin"),
          ("成都", "西安", "厦门", "昆明", "青岛", "哈尔滨", "三亚", "重庆", "杭州", "乌鲁木齐"))


class _MixedToggle(MixedTask):
    """A toggle whose instruction gives the seed's reason (who, where, which flight, until when); the
    verifier reads only the switch, as the GUI task's does."""

    toggle: ClassVar[str]  # the settings.set_toggle name
    command: ClassVar[str]  # the shell command line
    context: ClassVar[tuple[str, ...]] = ()  # the params the instruction's reason names

    @classmethod
    def draw_context(cls, rng, world) -> dict[str, str]:
        raise NotImplementedError

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return cls.draw_context(rng, _world(world))

    def by_shell(self) -> Iterator[Action]:
        yield Action("shell", command=self.command)

    def by_tool(self, ui: UI) -> Iterator[Action]:
        yield Action("tool", name="settings.set_toggle", args={"name": self.toggle, "on": self.want == "1"})


class MixedWifiOff(_MixedToggle, SettingsWifiOff):
    """Turn Wi-Fi off by GUI, ``svc wifi disable`` or ``settings.set_toggle``."""

    toggle, command = "wifi", "svc wifi disable"
    template = "I've just left {person}'s {place}: turn off Wi-Fi."
    schema = {"person": Param(str), "place": Param(str)}

    @classmethod
    def draw_context(cls, rng, world):
        return {"person": rng.choice(world.people).name, "place": rng.choice(PLACES[world.zh])}


class MixedBluetoothOn(_MixedToggle, SettingsBluetoothOn):
    """Turn Bluetooth on by GUI, ``svc bluetooth enable`` or ``settings.set_toggle``."""

    toggle, command = "bluetooth", "svc bluetooth enable"
    template = "Turn on Bluetooth so I can pair {person}'s {device}."
    schema = {"person": Param(str), "device": Param(str)}

    @classmethod
    def draw_context(cls, rng, world):
        return {"person": rng.choice(world.people).name, "device": rng.choice(DEVICES[world.zh])}


class MixedAirplaneModeOn(_MixedToggle, SettingsAirplaneModeOn):
    """Turn airplane mode on by GUI, ``settings put global airplane_mode_on 1`` or ``settings.set_toggle``."""

    toggle, command = "airplane_mode", "settings put global airplane_mode_on 1"
    template = "I'm boarding flight {flight} to {city}: turn on airplane mode."
    schema = {"flight": Param(str), "city": Param(str)}

    @classmethod
    def draw_context(cls, rng, world):
        letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(2))
        return {"flight": f"{letters}{rng.randint(100, 9999)}", "city": rng.choice(CITIES[world.zh])}


class MixedDoNotDisturbOn(_MixedToggle, SettingsDoNotDisturbOn):
    """Turn Do not disturb on by GUI, ``settings put global do_not_disturb 1`` or ``settings.set_toggle``."""

    toggle, command = "do_not_disturb", "settings put global do_not_disturb 1"
    template = "I'm in a meeting with {person} until {time}: turn on Do not disturb."
    schema = {"person": Param(str), "time": Param(str, doc="HH:MM")}

    @classmethod
    def draw_context(cls, rng, world):
        return {"person": rng.choice(world.people).name,
                "time": f"{rng.randint(9, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}"}


class MixedLookupNumber(MixedTask, ContactsLookupNumber):
    """Answer a contact's number read from the GUI, ``content query`` or ``contacts.search``."""

    def oracle(self, ui: UI) -> Iterator[Action]:
        import json

        from mockphone import shell
        from mockphone.tools import TOOLS

        name = self.params["name"]
        if self.via == "shell":
            query = f"content query --uri content://com.android.contacts/contacts --where \"name LIKE '%{name}%'\""
            yield Action("shell", command=query)
            out = shell.run(ui.phone, query)[1]  # what the command printed (reading it changes nothing)
            yield Action("answer", text=out.split("phone=")[1].split(",")[0])
        elif self.via == "tool":
            yield Action("tool", name="contacts.search", args={"query": name})
            found = json.loads(TOOLS["contacts.search"].fn(ui.phone, {"query": name}))
            yield Action("answer", text=found[0]["phone"])
        else:
            yield from super().oracle(ui)


TASKS = [MixedAddAlarm, MixedAddContact, MixedAirplaneModeOn, MixedBluetoothOn, MixedCreateEvent, MixedCreateNote,
         MixedDoNotDisturbOn, MixedLookupNumber, MixedWifiOff]

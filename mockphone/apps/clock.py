"""Clock: alarms (add with hour/minute/label, toggle, delete) and a countdown timer on the simulated clock."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.widgets import Page, View


@dataclass
class Alarm:
    hour: int
    minute: int
    label: str = ""
    enabled: bool = True

    @property
    def time(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}"


@dataclass
class ClockState:
    alarms: list[Alarm] = field(default_factory=list)
    timer_end_s: int | None = None  # simulated clock second the running timer ends at
    timer_set_s: int = 0  # length of the last started timer

    def find(self, time: str) -> Alarm | None:
        return next((a for a in self.alarms if a.time == time), None)


class ClockApp(App):
    name = "clock"
    package = "com.google.android.deskclock"
    label = "Clock"
    aliases = ("alarm", "alarms", "timer")
    color = "#5e35b1"

    def initial_state(self, rng: random.Random) -> ClockState:
        times = sorted(rng.sample([(6, 30), (7, 0), (7, 15), (8, 0), (9, 30), (22, 0)], 3))
        labels = ("Wake up", "Gym", "", "Meds", "")
        return ClockState([Alarm(h, m, rng.choice(labels), rng.random() < 0.7) for h, m in times])

    def page_main(self, page: Page) -> View:
        rows = []
        for a in sorted(self.state.alarms, key=lambda a: (a.hour, a.minute)):
            rows.append(ui.toggle(a.time, a.enabled, (lambda v, a=a: setattr(a, "enabled", v)), rid="alarm_switch",
                                  subtitle=a.label or "Alarm"))
            rows.append(ui.button(f"Delete {a.time}", (lambda a=a: self._delete(a)), rid="delete_alarm",
                                  style="outline"))
        if not rows:
            rows = [ui.text("No alarms", style="caption", copyable=False, rid="empty")]
        actions = (ui.button("Timer", lambda: self.push("timer"), rid="timer_tab"),
                   ui.button("Add", lambda: self.push("new"), rid="add_alarm"))
        return View("Alarms", body=tuple(rows), actions=actions)

    def _delete(self, alarm: Alarm) -> None:
        self.state.alarms.remove(alarm)
        self.toast("Alarm deleted")

    def page_new(self, page: Page) -> View:
        return View("Add alarm", up=True, body=(
            ui.row(ui.edit("hour", page.field("hour"), hint="HH"), ui.edit("minute", page.field("minute"), hint="MM")),
            ui.edit("label", page.field("label"), hint="Label"),
        ), footer=(ui.button("Save", lambda: self._save(page), rid="save"),))

    def _save(self, page: Page) -> None:
        try:
            hour, minute = int(page.field("hour")), int(page.field("minute"))
        except ValueError:
            self.toast("Enter the time as numbers")
            return
        if not (0 <= hour < 24 and 0 <= minute < 60):
            self.toast("Invalid time")
            return
        self.state.alarms.append(Alarm(hour, minute, page.field("label").strip()))
        self.back()
        self.toast(f"Alarm set for {hour:02d}:{minute:02d}")

    def page_timer(self, page: Page) -> View:
        now = self.phone.system.clock_s
        end = self.state.timer_end_s
        status = "No timer running" if end is None else (
            f"Time left: {max(end - now, 0) // 60:02d}:{max(end - now, 0) % 60:02d}" if end > now else "Time's up")
        body = [ui.text(status, style="headline", rid="timer_status"),
                ui.edit("minutes", page.field("minutes"), hint="Minutes")]
        body.append(ui.button("Start", lambda: self._start(page), rid="start"))
        if end is not None:
            body.append(ui.button("Cancel timer", self._cancel, rid="cancel", style="outline"))
        return View("Timer", up=True, body=tuple(body))

    def _start(self, page: Page) -> None:
        try:
            minutes = int(page.field("minutes"))
        except ValueError:
            self.toast("Enter minutes")
            return
        self.state.timer_set_s = minutes * 60
        self.state.timer_end_s = self.phone.system.clock_s + minutes * 60

    def _cancel(self) -> None:
        self.state.timer_end_s = None

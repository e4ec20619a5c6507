"""Calendar: an agenda of upcoming events, event details, create (date / time / place), edit time, delete."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from mockphone import i18n
from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.system import EPOCH
from mockphone.widgets import Page, View

@dataclass
class Event:
    title: str
    date: str  # YYYY-MM-DD
    time: str  # HH:MM
    location: str = ""

    @property
    def label(self) -> str:
        day = dt.date.fromisoformat(self.date)
        return f"{day.strftime('%a, %b')} {day.day} · {self.time}"


@dataclass
class CalendarState:
    events: list[Event] = field(default_factory=list)

    def find(self, title: str) -> Event | None:
        return next((e for e in self.events if e.title == title), None)

    def agenda(self) -> list[Event]:
        return sorted(self.events, key=lambda e: (e.date, e.time, e.title))


def _valid(date: str, time: str) -> bool:
    try:
        dt.date.fromisoformat(date)
        dt.datetime.strptime(time, "%H:%M")
    except ValueError:
        return False
    return True


class CalendarApp(App):
    name = "calendar"
    package = "com.google.android.calendar"
    label = "Calendar"
    color = "#1a73e8"

    def initial_state(self, rng: random.Random) -> CalendarState:
        """The seed's five events from the world (``mockphone.world.organiser``), in the phone's language."""
        from mockphone import world

        seeded = getattr(self.phone, "world", None) or world.generate(self.phone.seed, self.phone.locale)
        return CalendarState([Event(e.title, (EPOCH.date() + dt.timedelta(days=e.day)).isoformat(), e.time, e.location)
                              for e in seeded.calendar])

    def _when(self, e: Event) -> str:
        """The event's day and time as the locale writes them ("Tue, Mar 3 · 10:00", "3月3日 周二 · 10:00")."""
        return f"{i18n.short_date(dt.date.fromisoformat(e.date), self.phone.locale)} · {e.time}"

    def page_main(self, page: Page) -> View:
        rows = [ui.item(e.title, self._when(e) + (f" · {e.location}" if e.location else ""), rid="event_row",
                        on_tap=(lambda e=e: self.push("detail", title=e.title))) for e in self.state.agenda()]
        if not rows:
            rows = [ui.text("No upcoming events", style="caption", copyable=False, rid="empty")]
        today = EPOCH.date()
        return View("Calendar", body=(ui.text(f"Today: {i18n.long_date(today, self.phone.locale)}", style="caption",
                                              rid="today"), *rows),
                    actions=(ui.button("New event", lambda: self.push("edit"), rid="new_event"),))

    def page_detail(self, page: Page) -> View:
        e = self.state.find(page.args["title"])
        if e is None:
            return View("Event", up=True, body=(ui.text("Event deleted", style="caption"),))
        return View(e.title, up=True, body=(
            ui.text(e.title, style="title", rid="event_title"),
            ui.text(self._when(e), rid="event_when"),
            ui.text(e.location or "No location", style="caption", rid="event_location"),
            ui.row(ui.button("Edit", lambda: self.push("edit", title=e.title), rid="edit", style="outline"),
                   ui.button("Delete", lambda: self._confirm_delete(e), rid="delete", style="danger")),
        ))

    def _confirm_delete(self, e: Event) -> None:
        self.dialog("Delete event?", f"\"{e.title}\" on {self._when(e)} will be deleted.",
                    (("Cancel", None), ("Delete", lambda: self._delete(e))), rid="confirm_delete")

    def _delete(self, e: Event) -> None:
        self.state.events.remove(e)
        self.back()
        self.toast("Event deleted")

    def page_edit(self, page: Page) -> View:
        existing = self.state.find(page.args.get("title", ""))
        if existing is not None and not page.fields:
            page.fields.update(title=existing.title, date=existing.date, time=existing.time,
                               location=existing.location)
        return View("Edit event" if existing else "New event", up=True, body=(
            ui.edit("title", page.field("title"), hint="Title"),
            ui.row(ui.edit("date", page.field("date"), hint="YYYY-MM-DD"), ui.edit("time", page.field("time"),
                                                                                 hint="HH:MM")),
            ui.edit("location", page.field("location"), hint="Location"),
        ), actions=(ui.button("Save", lambda: self._save(page), rid="save"),))

    def _save(self, page: Page) -> None:
        title, date, time = page.field("title").strip(), page.field("date").strip(), page.field("time").strip()
        if not title or not _valid(date, time):
            self.dialog("Check the event", "A title, a date (YYYY-MM-DD) and a time (HH:MM) are required.",
                        rid="invalid_event")
            return
        old = page.args.get("title")
        self.state.events = [e for e in self.state.events if e.title != old]
        self.state.events.append(Event(title, date, time, page.field("location").strip()))
        self.back()
        self.toast("Event saved")

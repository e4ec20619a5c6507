"""Calendar and Files tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.calendar import Event
from mockphone.apps.files import NAMES
from mockphone.errors import OracleFailed
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, fraction, final_answer

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

EVENT_TITLES = ("Budget review", "Visa appointment", "Piano lesson", "Quarterly planning")
DATES = ("2026-03-04", "2026-03-09", "2026-03-13", "2026-03-21")
TIMES = ("09:00", "11:30", "14:15", "16:45")


class CalendarCreateEvent(Task):
    """Create an event with title, date and time."""

    template = "Add a calendar event \"{title}\" on {date} at {time}."
    app_names = ("calendar",)
    complexity = 4.0
    allowed = ('calendar.events[{title}].*',)
    schema = {"title": Param(str, choices=EVENT_TITLES), "date": Param(str, choices=DATES),
              "time": Param(str, choices=TIMES)}

    def check(self, phone: MockPhone) -> float:
        e = phone.state("calendar").find(self.params["title"])
        return fraction(e is not None, e is not None and e.date == self.params["date"],
                        e is not None and e.time == self.params["time"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(rid="new_event")
        yield from ui.type_into("title", self.params["title"])
        yield from ui.type_into("date", self.params["date"])
        yield from ui.type_into("time", self.params["time"])
        yield from ui.tap(rid="save")


class CalendarCreateEventWithPlace(Task):
    """Create an event that also has a location."""

    template = "Schedule \"{title}\" on {date} at {time} at {place}."
    app_names = ("calendar",)
    complexity = 5.0
    allowed = ('calendar.events[{title}].*',)
    schema = {"title": Param(str, choices=EVENT_TITLES), "date": Param(str, choices=DATES),
              "time": Param(str, choices=TIMES), "place": Param(str, choices=("City hall", "Room 12", "Cafe Nero"))}

    def check(self, phone: MockPhone) -> float:
        e = phone.state("calendar").find(self.params["title"])
        return fraction(e is not None and e.date == self.params["date"] and e.time == self.params["time"],
                        e is not None and e.location == self.params["place"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(rid="new_event")
        for rid in ("title", "date", "time"):
            yield from ui.type_into(rid, self.params[rid])
        yield from ui.type_into("location", self.params["place"])
        yield from ui.tap(rid="save")


def _seed_event(phone: MockPhone, title: str) -> None:
    events = phone.app("calendar").state.events
    events[:] = [e for e in events if e.title != title]
    events.append(Event(title, "2026-03-05", "10:00", "Room 4B"))


class CalendarDeleteEvent(Task):
    """Delete one event through its detail page and a confirmation."""

    template = "Delete the \"{title}\" event from my calendar."
    app_names = ("calendar",)
    complexity = 3.0
    allowed = ('calendar.events[{title}].*',)
    schema = {"title": Param(str, choices=EVENT_TITLES)}

    def setup(self, phone: MockPhone) -> None:
        _seed_event(phone, self.params["title"])

    def check(self, phone: MockPhone) -> float:
        state = phone.state("calendar")
        return float(state.find(self.params["title"]) is None and len(state.events) == 5)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(text=self.params["title"])
        yield from ui.tap(rid="delete")
        yield from ui.tap(text="DELETE")


class CalendarReschedule(Task):
    """Move an existing event to another time on the same day."""

    template = "Move \"{title}\" to {time}."
    app_names = ("calendar",)
    complexity = 4.0
    allowed = ('calendar.events[{title}].time',)
    schema = {"title": Param(str, choices=EVENT_TITLES), "time": Param(str, choices=TIMES)}

    def setup(self, phone: MockPhone) -> None:
        _seed_event(phone, self.params["title"])

    def check(self, phone: MockPhone) -> float:
        e = phone.state("calendar").find(self.params["title"])
        return fraction(e is not None and e.time == self.params["time"], e is not None and e.date == "2026-03-05")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(text=self.params["title"])
        yield from ui.tap(rid="edit")
        yield from ui.type_into("time", self.params["time"], clear=True)
        yield from ui.tap(rid="save")


class CalendarAnswerNextEvent(Task):
    """Information retrieval: name the first event on the agenda."""

    template = "What is my next calendar event? Answer with its title."
    app_names = ("calendar",)
    complexity = 2.0
    changes_state = False
    schema = {}

    def check(self, phone: MockPhone) -> float:
        first = phone.state("calendar").agenda()[0].title
        return float(answers.norm(final_answer(phone)) == answers.norm(first))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        row = ui.find_all("event_row")[0]
        title = next(e for e in ui.elements() if e.parent == row.index)
        yield Action("answer", text=title.text)


class CalendarAnswerPlace(Task):
    """Information retrieval: where an event takes place."""

    template = "Where is my \"{title}\" event? Answer with the place."
    app_names = ("calendar",)
    complexity = 2.0
    changes_state = False
    schema = {"title": Param(str, choices=EVENT_TITLES)}

    def setup(self, phone: MockPhone) -> None:
        _seed_event(phone, self.params["title"])
        phone.app("calendar").state.find(self.params["title"]).location = ("Room 4B", "City hall", "Cafe Nero")[
            phone.seed % 3]

    def check(self, phone: MockPhone) -> float:
        state = phone.state("calendar")
        places = [e.location for e in state.events]
        return float(answers.only(answers.mentions(final_answer(phone), places), state.find(self.params["title"]).location))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(text=self.params["title"])
        yield Action("answer", text=ui.find(rid="event_location").text)


FILES = ("resume.pdf", "lease_2026.pdf", "boarding_pass.pdf", "menu.pdf", "IMG_2031.jpg")


def _open_file(ui: UI, name: str) -> Iterator[Action]:
    """Look through the folders, as a user would, until the file shows up; then open it."""
    yield from ui.open("files")
    folders = [e.text for e in ui.elements() if e.resource_id == "android:id/title"]
    for folder in folders:
        yield from ui.tap(text=folder)
        if ui.find(text=name) is not None:
            yield from ui.tap(text=name)
            return
        yield from ui.key("back")
    raise OracleFailed(f"file {name!r} is in no folder")


class FilesDelete(Task):
    """Delete one file; every other file stays."""

    template = "Delete the file {name}."
    app_names = ("files",)
    complexity = 4.0
    allowed = ('files.files[{name}].*',)
    schema = {"name": Param(str, choices=FILES)}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("files")
        return float(state.find(self.params["name"]) is None and len(state.files) == 16)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_file(ui, self.params["name"])
        yield from ui.tap(rid="delete")
        yield from ui.tap(text="DELETE")


class FilesRename(Task):
    """Rename a file."""

    template = "Rename {name} to {new}."
    app_names = ("files",)
    complexity = 4.0
    allowed = ('files.files[{name}].*', 'files.files[{new}].*')
    schema = {"name": Param(str, choices=FILES), "new": Param(str, choices=("old_copy.pdf", "keep_this.pdf"))}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("files")
        return fraction(state.find(self.params["name"]) is None, state.find(self.params["new"]) is not None)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_file(ui, self.params["name"])
        yield from ui.tap(rid="rename")
        yield from ui.type_into("name", self.params["new"], clear=True)
        yield from ui.tap(rid="ok")


class FilesMove(Task):
    """Move a file from Download to another folder."""

    template = "Move {name} from Download to {folder}."
    app_names = ("files",)
    complexity = 4.0
    allowed = ('files.files[{name}].folder',)
    schema = {"name": Param(str, choices=("boarding_pass.pdf", "menu.pdf", "invoice_4521.pdf")),
              "folder": Param(str, choices=("Documents", "Pictures"))}

    def check(self, phone: MockPhone) -> float:
        f = phone.state("files").find(self.params["name"])
        return float(f is not None and f.folder == self.params["folder"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_file(ui, self.params["name"])
        yield from ui.tap(rid="move")
        yield from ui.tap(text=self.params["folder"])


class FilesEmptyFolder(Task):
    """Delete every file in a folder (scored by the share of files removed; other folders untouched)."""

    template = "Delete all the files in my {folder} folder."
    app_names = ("files",)
    complexity = 8.0
    schema = {"folder": Param(str, choices=("Music", "Pictures"))}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"files.files[{k}].*" for k in statediff.keys_where(start, "files.files", "folder", self.params["folder"])]

    def check(self, phone: MockPhone) -> float:
        state = phone.state("files")
        gone = [state.find(n) is None for n in NAMES[self.params["folder"]]]
        others = all(state.find(n) is not None for f, names in NAMES.items() if f != self.params["folder"]
                     for n in names)
        return fraction(*gone) if others else 0.0

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("files")
        yield from ui.tap(text=self.params["folder"])
        while ui.find_all("file_row"):
            first = ui.find_all("file_row")[0]
            yield from ui.tap(text=next(e.text for e in ui.elements() if e.parent == first.index))
            yield from ui.tap(rid="delete")
            yield from ui.tap(text="DELETE")


class FilesCreateFolder(Task):
    """Create a new top-level folder."""

    template = "Create a folder called {folder} in Files."
    app_names = ("files",)
    complexity = 3.0
    allowed = ('files.folders',)
    schema = {"folder": Param(str, choices=("Receipts", "Travel 2026", "Scans"))}

    def check(self, phone: MockPhone) -> float:
        # exactly this one folder more than at the start: an extra folder is collateral damage too
        before = self.start_state(phone)["files.folders"]
        return float(tuple(phone.state("files").folders) == (*before, self.params["folder"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("files")
        yield from ui.tap(rid="new_folder")
        yield from ui.type_into("folder_name", self.params["folder"])
        yield from ui.tap(rid="create")


TASKS = (
    CalendarAnswerNextEvent, CalendarAnswerPlace, CalendarCreateEvent, CalendarCreateEventWithPlace,
    CalendarDeleteEvent, CalendarReschedule, FilesCreateFolder, FilesDelete, FilesEmptyFolder, FilesMove,
    FilesRename,
)

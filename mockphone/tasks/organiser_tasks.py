"""Calendar and Files tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.calendar import Event
from mockphone.apps.files import FOLDERS, NAMES
from mockphone.errors import InvalidTaskParams, OracleFailed
from mockphone.tasks import endings as ends
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, final_answer, fraction, later, oracle_answer, other_candidate

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
    # never the event's start time (10:00, ``_seed_event``): moving it there changes nothing
    near_misses = (("an-hour-off", lambda p: {"time": _off(p["time"], 1)}),
                   ("twelve-hours-off", lambda p: {"time": _off(p["time"], 12)}))

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
    # never the event's start time (10:00, ``_seed_event``): moving it there changes nothing
    near_misses = (("an-hour-off", lambda p: {"time": _off(p["time"], 1)}),
                   ("twelve-hours-off", lambda p: {"time": _off(p["time"], 12)}))

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

    swaps = (("title", ends.record("calendar.events")),)
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


def _off(time: str, hours: int) -> str:
    """``time`` moved by ``hours``, or back by them where that lands on the seeded event's own 10:00."""
    moved = later(time, hours)
    return moved if moved != "10:00" else later(time, -hours)


class CalendarReschedule(Task):
    """Move an existing event to another time on the same day."""

    template = "Move \"{title}\" to {time}."
    app_names = ("calendar",)
    complexity = 4.0
    allowed = ('calendar.events[{title}].time',)
    schema = {"title": Param(str, choices=EVENT_TITLES), "time": Param(str, choices=TIMES)}
    # never the event's start time (10:00, ``_seed_event``): moving it there changes nothing
    near_misses = (("an-hour-off", lambda p: {"time": _off(p["time"], 1)}),
                   ("twelve-hours-off", lambda p: {"time": _off(p["time"], 12)}))

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
    wrong_answers = (("another-candidate", other_candidate),
                     ("two-candidates", lambda t, phone: f"{oracle_answer(t, phone)} or {other_candidate(t, phone)}"))

    def check(self, phone: MockPhone) -> float:
        first = phone.state("calendar").agenda()[0].title
        return float(answers.names_exactly(final_answer(phone), first, self.answer_candidates(phone)))

    def answer_candidates(self, phone: MockPhone) -> list[str]:
        """Every value the answer could name (extra words around one of them are fine, two fail)."""
        return [e.title for e in phone.state("calendar").events]

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        row = ui.find_all("event_row")[0]
        title = next(e for e in ui.elements() if e.parent == row.index)
        yield Action("answer", text=title.text)


class CalendarAnswerPlace(Task):
    """Information retrieval: where an event takes place."""

    swaps = (("title", lambda t, phone: next((e.title for e in phone.state("calendar").events if e.location and
                                              e.location != phone.state("calendar").find(t.params["title"]).location),
                                             None)),)
    wrong_answers = (("half-of-it", ends.misread),)
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
NEW_FOLDERS = ("Receipts", "Travel 2026", "Scans", "Taxes", "Kids", "Recipes", "Work projects", "Screenshots 2026",
               "Warranty cards", "Old phone backup", "House", "Car", "Medical", "Wallpapers", "Podcasts",
               "Contracts", "Invoices 2026", "Vacation photos", "School", "Tickets")
NEW_FOLDERS_ZH = ("收据", "2026旅行", "扫描件", "报税", "孩子", "菜谱", "工作项目", "2026截图", "保修卡", "旧手机备份",
                  "房子", "车辆", "病历", "壁纸", "播客", "合同", "2026发票", "度假照片", "学校", "票据")
RENAME_TAGS = ("old", "copy", "final", "backup", "signed", "v2", "archived", "2025", "shared", "draft")


def _world(world):
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def _world_files(world) -> list[tuple[str, str]]:
    """(name, folder) of every file a phone of ``world`` starts with (the fixed ones and the seed's own)."""
    return [(n, folder) for folder, names in NAMES.items() for n in names] + [(f.name, f.folder)
                                                                              for f in _world(world).files]


def _ensure_file(phone: MockPhone, name: str, folder: str | None = None) -> None:
    """Make sure ``name`` exists (planted in ``folder``, or Documents, when this phone lacks it; moved to ``folder``)."""
    from mockphone.apps.files import FileEntry

    state = phone.app("files").state
    entry = state.find(name)
    if entry is None:
        state.files.append(FileEntry(name, folder or "Documents", 40 + sum(map(ord, name)) % 4000))
    elif folder is not None:
        entry.folder = folder


def _file_count(start: dict) -> int:
    return sum(1 for k in start if k.startswith("files.files[") and k.endswith("].name"))


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

    swaps = (("name", ends.record("files.files")),)
    template = "Delete the file {name}."
    app_names = ("files",)
    complexity = 4.0
    allowed = ('files.files[{name}].*',)
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"name": rng.choice(_world_files(world))[0]}

    def setup(self, phone: MockPhone) -> None:
        _ensure_file(phone, self.params["name"])

    def check(self, phone: MockPhone) -> float:
        state = phone.state("files")
        return float(state.find(self.params["name"]) is None
                     and len(state.files) == _file_count(self.start_state(phone)) - 1)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_file(ui, self.params["name"])
        yield from ui.tap(rid="delete")
        yield from ui.tap(text="DELETE")


class FilesRename(Task):
    """Rename a file."""

    swaps = (("name", ends.record("files.files"), "instead"),)
    near_misses = (("dropped-the-extension", lambda p: {"new": p["new"].rsplit(".", 1)[0]}),)
    template = "Rename {name} to {new}."
    app_names = ("files",)
    complexity = 4.0
    allowed = ('files.files[{name}].*', 'files.files[{new}].*')
    schema = {"name": Param(str), "new": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        name = rng.choice(_world_files(world))[0]
        stem, ext = name.rsplit(".", 1)
        return {"name": name, "new": f"{stem}_{rng.choice(RENAME_TAGS)}.{ext}"}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["new"] == params["name"] or "/" in params["new"]:
            raise InvalidTaskParams(f"{cls.name()}: the new name must be a different plain file name")

    def setup(self, phone: MockPhone) -> None:
        _ensure_file(phone, self.params["name"])
        state = phone.app("files").state
        state.files = [f for f in state.files if f.name != self.params["new"]]

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

    swaps = (("name", ends.record("files.files", lambda r: r.get("folder") != "Documents")),)
    template = "Move {name} from {source} to {folder}."
    app_names = ("files",)
    complexity = 4.0
    allowed = ('files.files[{name}].folder',)
    schema = {"name": Param(str), "source": Param(str, choices=FOLDERS), "folder": Param(str, choices=FOLDERS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        name, source = rng.choice(_world_files(world))
        return {"name": name, "source": source, "folder": rng.choice([f for f in FOLDERS if f != source])}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["source"] == params["folder"]:
            raise InvalidTaskParams(f"{cls.name()}: the file must move to another folder")

    def setup(self, phone: MockPhone) -> None:
        _ensure_file(phone, self.params["name"], self.params["source"])

    def check(self, phone: MockPhone) -> float:
        f = phone.state("files").find(self.params["name"])
        return float(f is not None and f.folder == self.params["folder"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_file(ui, self.params["name"])
        yield from ui.tap(rid="move")
        yield from ui.tap(text=self.params["folder"])


class FilesEmptyFolder(Task):
    """Delete every file in a folder (scored by the share of files removed; other folders untouched)."""

    swaps = (("folder", ends.choice("folder")),)
    template = "Delete all the files in my {folder} folder."
    app_names = ("files",)
    complexity = 8.0
    schema = {"folder": Param(str, choices=FOLDERS)}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"files.files[{k}].*" for k in statediff.keys_where(start, "files.files", "folder", self.params["folder"])]

    def check(self, phone: MockPhone) -> float:
        # the folder's files at the start (the phone's own and the seed's): each one gone scores; others all stay
        start = self.start_state(phone)
        state = phone.state("files")
        inside = statediff.keys_where(start, "files.files", "folder", self.params["folder"])
        every = [p[len("files.files["):-len("].name")] for p in start if p.startswith("files.files[")
                 and p.endswith("].name")]
        outside = [k for k in every if k not in inside]
        gone = [state.find(n) is None for n in inside]
        others = all(state.find(n) is not None for n in outside)
        return fraction(*gone) if others and inside else 0.0

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

    swaps = (("folder", lambda t, phone: f"{t.params['folder']} 2", "also"),)
    near_misses = (("a-letter-short", lambda p: {"folder": p["folder"][:-1]}),)
    template = "Create a folder called {folder} in Files."
    app_names = ("files",)
    complexity = 3.0
    allowed = ('files.folders',)
    schema = {"folder": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"folder": rng.choice(NEW_FOLDERS_ZH if _world(world).zh else NEW_FOLDERS)}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["folder"] in FOLDERS or "/" in params["folder"]:
            raise InvalidTaskParams(f"{cls.name()}: {params['folder']!r} is not a new folder name")

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

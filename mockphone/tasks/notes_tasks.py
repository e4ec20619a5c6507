"""Notes and Clock tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action

from mockphone.apps.clock import Alarm
from mockphone.apps.notes import Note
from mockphone.errors import InvalidTaskParams
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, fraction, final_answer

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

TITLES = ("Shopping list", "Project plan", "Packing list", "Call log")
# titles of notes the delete / rename tasks plant (none is one of the Notes app's own seeded titles)
NOTE_TITLES = ("Shopping list", "Project plan", "Packing list", "Call log", "Birthday plans", "Car insurance",
               "Garden to-do", "Wi-Fi passwords", "Movie list", "Dentist questions", "Weekend chores",
               "Podcast ideas", "Holiday budget", "Plant care", "Moving checklist", "Team lunch",
               "Bike repair", "Language practice", "Tax documents", "Wedding gifts")
NOTE_TITLES_ZH = ("购物清单", "项目计划", "行李清单", "通话记录", "生日安排", "车险", "花园待办", "无线密码", "电影清单",
                  "看牙问题", "周末家务", "播客点子", "假期预算", "养花笔记", "搬家清单", "团队午餐", "修自行车",
                  "外语练习", "报税材料", "婚礼礼物")
DRAFT_TITLES = ("Draft", "Untitled", "New note", "Quick note", "Scratch", "To sort", "Temp", "Untitled 2")
DRAFT_TITLES_ZH = ("草稿", "未命名", "新笔记", "随手记", "草稿纸", "待整理", "临时", "未命名 2")


def _world(world):
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def _note_titles(world) -> tuple[str, ...]:
    return NOTE_TITLES_ZH if _world(world).zh else NOTE_TITLES


def _note_count(start: dict) -> int:
    return sum(1 for k in start if k.startswith("notes.notes[") and k.endswith("].title"))


def _alarm_count(start: dict) -> int:
    return sum(1 for k in start if k.startswith("clock.alarms[") and k.endswith("].hour"))


def _alarm_time(rng) -> str:
    return f"{rng.randint(5, 22):02d}:{rng.randrange(0, 60, 5):02d}"


def _plant_alarm(phone, time: str, enabled: bool = True) -> None:
    """The phone's own alarms, with one alarm at ``time`` (replacing any there): the task's target."""
    hour, minute = map(int, time.split(":"))
    state = phone.app("clock").state
    state.alarms = sorted([a for a in state.alarms if a.time != time] + [Alarm(hour, minute, enabled=enabled)],
                          key=lambda a: (a.hour, a.minute))
BODIES = ("Buy batteries and tape", "Draft the budget by Friday", "Passport, charger, socks", "Call the landlord at 5")


class NotesCreate(Task):
    """Create a note with a given title and body."""

    template = "Create a note titled \"{title}\" with the text \"{body}\"."
    app_names = ("notes",)
    complexity = 3.0
    allowed = ('notes.notes[{title}].*',)
    schema = {"title": Param(str, choices=TITLES), "body": Param(str, choices=BODIES)}
    near_misses = (("body-cut-short", lambda p: {"body": p["body"][:max(1, len(p["body"]) // 2)]}),
                   ("other-title", lambda p: {"title": p["title"] + " 2"}))

    def check(self, phone: MockPhone) -> float:
        note = phone.state("notes").find(self.params["title"])
        return fraction(note is not None, note is not None and note.body.strip() == self.params["body"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.tap(rid="new_note")
        yield from ui.type_into("title", self.params["title"])
        yield from ui.type_into("body", self.params["body"])
        yield from ui.tap(rid="save")


class NotesAppend(Task):
    """Add a line at the end of an existing note, keeping what was there."""

    swaps = (("title", ends.record("notes.notes")),)
    template = "Add the line \"{line}\" to the end of the note \"{title}\"."
    app_names = ("notes",)
    complexity = 3.0
    allowed = ('notes.notes[{title}].body',)
    schema = {"title": Param(str, choices=TITLES), "line": Param(str, choices=BODIES)}

    def setup(self, phone: MockPhone) -> None:
        phone.app("notes").state.notes.insert(1, Note(self.params["title"], "First item"))

    def check(self, phone: MockPhone) -> float:
        note = phone.state("notes").find(self.params["title"])
        if note is None:
            return 0.0
        lines = [ln.strip() for ln in note.body.split("\n") if ln.strip()]
        # what was there, then the line once (appending it twice, or anything else, is not the task)
        return fraction(lines[0] == "First item", lines[1:] == [self.params["line"]]) if lines else 0.0

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.tap(text=self.params["title"])
        # the newline as a key (``input text`` over adb types no control characters): enter in the
        # focused multi-line body adds a line break at its end, then the line is typed after it
        yield from ui.tap(rid="body")
        yield from ui.key("enter")
        yield from ui.type_into("body", self.params["line"], clear=False)
        yield from ui.tap(rid="save")


class NotesDelete(Task):
    """Delete one note by long-pressing it in the list."""

    swaps = (("title", ends.record("notes.notes")),)
    template = "Delete the note \"{title}\"."
    app_names = ("notes",)
    complexity = 2.0
    allowed = ('notes.notes[{title}].*',)
    schema = {"title": Param(str), "position": Param(int, min=0, max=5)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": rng.choice(_note_titles(world)), "position": rng.randint(0, 5)}

    def setup(self, phone: MockPhone) -> None:
        notes = phone.app("notes").state.notes
        notes[:] = [n for n in notes if n.title != self.params["title"]]
        notes.insert(min(self.params["position"], len(notes)), Note(self.params["title"], "Old content"))

    def check(self, phone: MockPhone) -> float:
        notes = phone.state("notes").notes
        return float(all(n.title != self.params["title"] for n in notes)
                     and len(notes) == _note_count(self.start_state(phone)) - 1)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.long_press(text=self.params["title"])
        yield from ui.tap(text="DELETE")


class NotesRename(Task):
    """Change a note's title, keeping its body."""

    swaps = (("old", ends.record("notes.notes")),)
    template = "Rename the note \"{old}\" to \"{new}\"."
    app_names = ("notes",)
    complexity = 3.0
    allowed = ('notes.notes[{old}].*', 'notes.notes[{new}].*')
    schema = {"old": Param(str), "new": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"old": rng.choice(DRAFT_TITLES_ZH if _world(world).zh else DRAFT_TITLES),
                "new": rng.choice(_note_titles(world))}

    def setup(self, phone: MockPhone) -> None:
        notes = phone.app("notes").state.notes
        notes[:] = [n for n in notes if n.title not in (self.params["old"], self.params["new"])]
        notes.insert(0, Note(self.params["old"], "Keep this text"))

    def check(self, phone: MockPhone) -> float:
        state = phone.state("notes")
        note = state.find(self.params["new"])
        return fraction(note is not None and note.body == "Keep this text", state.find(self.params["old"]) is None)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.tap(text=self.params["old"])
        yield from ui.type_into("title", self.params["new"], clear=True)
        yield from ui.tap(rid="save")


class NotesAnswerContent(Task):
    """Information retrieval: read a note's text back."""

    swaps = (("title", ends.record("notes.notes")),)
    wrong_answers = (("half-of-it", ends.misread),)
    template = "What does my note \"{title}\" say? Answer with its text."
    app_names = ("notes",)
    complexity = 2.0
    changes_state = False
    schema = {"title": Param(str, choices=TITLES)}

    def setup(self, phone: MockPhone) -> None:
        phone.app("notes").state.notes.insert(2, Note(self.params["title"], BODIES[phone.seed % len(BODIES)]))

    def check(self, phone: MockPhone) -> float:
        body = phone.state("notes").find(self.params["title"]).body
        bodies = [n.body for n in phone.state("notes").notes]
        return float(answers.only(answers.mentions(final_answer(phone), bodies), body))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.tap(text=self.params["title"])
        yield Action("answer", text=ui.find(rid="body").text)


HOURS = (5, 6, 7, 8, 10, 13, 17, 21)
MINUTES = (0, 5, 15, 20, 45, 50)


def _drop_alarm(phone: MockPhone, hour: int, minute: int) -> None:
    """Remove alarms at hour:minute, so the one the agent sets is the only one there."""
    alarms = phone.app("clock").state.alarms
    alarms[:] = [a for a in alarms if (a.hour, a.minute) != (hour, minute)]


class ClockAddAlarm(Task):
    """Create an alarm at a given time (24-hour)."""

    template = "Set an alarm for {hour:02d}:{minute:02d}."
    app_names = ("clock",)
    complexity = 3.0
    allowed = ('clock.alarms[{hour:02d}:{minute:02d}].*', 'clock.alarms')
    schema = {"hour": Param(int, choices=HOURS, min=0, max=23), "minute": Param(int, choices=MINUTES, min=0, max=59)}
    near_misses = (("other-half-of-day", lambda p: {"hour": (p["hour"] + 12) % 24}),
                   ("five-minutes-off", lambda p: {"minute": (p["minute"] + 5) % 60}))

    def setup(self, phone: MockPhone) -> None:  # the seed's world may hold an alarm at that time already
        _drop_alarm(phone, self.params["hour"], self.params["minute"])

    def check(self, phone: MockPhone) -> float:
        alarm = phone.state("clock").find(f"{self.params['hour']:02d}:{self.params['minute']:02d}")
        return float(alarm is not None and alarm.enabled)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        yield from ui.tap(rid="add_alarm")
        yield from ui.type_into("hour", str(self.params["hour"]))
        yield from ui.type_into("minute", str(self.params["minute"]))
        yield from ui.tap(rid="save")


class ClockAddLabeledAlarm(Task):
    """Create an alarm with a label; both time and label are checked."""

    template = "Create an alarm at {hour:02d}:{minute:02d} labelled \"{label}\"."
    app_names = ("clock",)
    complexity = 4.0
    allowed = ('clock.alarms[{hour:02d}:{minute:02d}].*', 'clock.alarms')
    schema = {"hour": Param(int, choices=HOURS, min=0, max=23), "minute": Param(int, choices=MINUTES, min=0, max=59),
              "label": Param(str, choices=("Take pills", "Pick up kids", "Stand-up", "Water plants"))}
    near_misses = (("other-half-of-day", lambda p: {"hour": (p["hour"] + 12) % 24}),
                   ("five-minutes-off", lambda p: {"minute": (p["minute"] + 5) % 60}))

    def setup(self, phone: MockPhone) -> None:  # the seed's world may hold an alarm at that time already
        _drop_alarm(phone, self.params["hour"], self.params["minute"])

    def check(self, phone: MockPhone) -> float:
        alarm = phone.state("clock").find(f"{self.params['hour']:02d}:{self.params['minute']:02d}")
        # an alarm created and then switched off is not the alarm asked for (the fuzzer's find)
        return fraction(alarm is not None and alarm.enabled, alarm is not None and alarm.label == self.params["label"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        yield from ui.tap(rid="add_alarm")
        yield from ui.type_into("hour", str(self.params["hour"]))
        yield from ui.type_into("minute", str(self.params["minute"]))
        yield from ui.type_into("label", self.params["label"])
        yield from ui.tap(rid="save")


class ClockDisableAlarm(Task):
    """Switch off one alarm; the other alarms keep their state."""

    swaps = (("time", ends.record("clock.alarms", lambda r: r.get("enabled"))),)
    template = "Turn off the {time} alarm."
    app_names = ("clock",)
    complexity = 2.0
    allowed = ('clock.alarms[{time}].enabled',)
    schema = {"time": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"time": _alarm_time(rng)}

    def setup(self, phone: MockPhone) -> None:
        _plant_alarm(phone, self.params["time"])

    def check(self, phone: MockPhone) -> float:
        # the others keep their state (the collateral-damage check), this one is off, none deleted
        state = phone.state("clock")
        alarm = state.find(self.params["time"])
        return float(alarm is not None and not alarm.enabled
                     and len(state.alarms) == _alarm_count(self.start_state(phone)))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        yield from ui.tap(text=self.params["time"])


class ClockDeleteAlarm(Task):
    """Delete one alarm."""

    swaps = (("time", ends.record("clock.alarms")),)
    template = "Delete the {time} alarm."
    app_names = ("clock",)
    complexity = 2.0
    allowed = ('clock.alarms[{time}].*',)
    schema = {"time": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"time": _alarm_time(rng)}

    def setup(self, phone: MockPhone) -> None:
        _plant_alarm(phone, self.params["time"], enabled=True)

    def check(self, phone: MockPhone) -> float:
        times = [a.time for a in phone.state("clock").alarms]
        return float(self.params["time"] not in times and len(times) == _alarm_count(self.start_state(phone)) - 1)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        yield from ui.tap(text=f"Delete {self.params['time']}")


class ClockAnswerEarliest(Task):
    """Information retrieval: the earliest alarm that is switched on (off ones do not count)."""

    template = "What time is my earliest alarm that is turned on? Answer as HH:MM."
    app_names = ("clock",)
    complexity = 2.0
    changes_state = False
    # the answer the planted alarms give: an earlier alarm that is off, the earliest one on, later ones
    schema = {"earliest": Param(str), "off_before": Param(str), "later": Param(str)}
    wrong_answers = (("the-alarm-that-is-off", lambda t, phone: t.params["off_before"]),
                     ("a-later-alarm", lambda t, phone: t.params["later"].split(",")[0]))

    @classmethod
    def generate_random_params(cls, rng, world=None):
        hour = rng.randint(5, 9)
        earliest = f"{hour:02d}:{rng.randrange(5, 60, 5):02d}"
        off_before = f"{rng.randint(4, hour - 1) if hour > 4 else 4:02d}:{rng.randrange(0, 60, 5):02d}"
        later = ",".join(f"{h:02d}:{rng.randrange(0, 60, 5):02d}" for h in sorted(rng.sample(range(hour + 1, 23), 2)))
        return {"earliest": earliest, "off_before": off_before, "later": later}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        times = [params["off_before"], params["earliest"], *params["later"].split(",")]
        try:
            parsed = [tuple(map(int, t.split(":"))) for t in times]
        except ValueError:
            raise InvalidTaskParams(f"{cls.name()}: times must be HH:MM, got {times}") from None
        if not all(0 <= h < 24 and 0 <= m < 60 for h, m in parsed) or parsed != sorted(set(parsed)):
            raise InvalidTaskParams(f"{cls.name()}: need off_before < earliest < later times, got {times}")

    def setup(self, phone: MockPhone) -> None:
        times = [self.params["off_before"], self.params["earliest"], *self.params["later"].split(",")]
        phone.app("clock").state.alarms = [Alarm(*map(int, t.split(":")), enabled=i != 0)
                                           for i, t in enumerate(times)]

    def check(self, phone: MockPhone) -> float:
        first = min((a for a in phone.state("clock").alarms if a.enabled), key=lambda a: (a.hour, a.minute))
        return float(answers.only(answers.times(final_answer(phone)), first.time))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        for row in ui.find_all("alarm_switch"):
            kids = [e for e in ui.elements() if e.parent == row.index]
            switch = next(e for e in kids if e.class_name == "android.widget.Switch")
            if switch.checked:
                yield Action("answer", text=kids[0].text)
                return


class ClockStartTimer(Task):
    """Start a countdown timer of N minutes."""

    template = "Start a {minutes}-minute timer."
    app_names = ("clock",)
    complexity = 3.0
    allowed = ('clock.timer_end_s', 'clock.timer_set_s')
    schema = {"minutes": Param(int, min=1, max=120)}
    near_misses = (("five-minutes-more", lambda p: {"minutes": p["minutes"] + 5}),
                   ("an-hour-more", lambda p: {"minutes": p["minutes"] + 60}))

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"minutes": rng.choice((rng.randint(1, 15), rng.randrange(20, 95, 5)))}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("clock")
        return float(state.timer_end_s is not None and state.timer_set_s == self.params["minutes"] * 60)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        yield from ui.tap(rid="timer_tab")
        yield from ui.type_into("minutes", str(self.params["minutes"]))
        yield from ui.tap(rid="start")


TASKS = (
    ClockAddAlarm, ClockAddLabeledAlarm, ClockAnswerEarliest, ClockDeleteAlarm, ClockDisableAlarm,
    ClockStartTimer, NotesAnswerContent, NotesAppend, NotesCreate, NotesDelete, NotesRename,
)

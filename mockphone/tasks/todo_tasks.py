"""To-do tasks: add, complete, delete, reschedule, reprioritise and move tasks; count and rank them; a Calendar handoff.

Parameters come from the seed's lists and tasks (``mockphone.world.todo``). A task named
by an instance is planted on a phone whose world lacks it, so an instance runs on any
phone; questions over a list ("how many open tasks") are decided on the phone's own tasks.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.todo import Todo
from mockphone.tasks import endings as ends
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, final_answer
from mockphone.tasks.endings import answer, ending
from mockphone.world.todo import EPOCH_DAY, PRIORITIES

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World

NEW_TITLES = ("Buy stamps", "Book a haircut", "Renew car insurance", "Call grandma", "Clean the gutters",
              "Submit expense report", "Pick up the parcel", "Defrost the freezer", "Sign up for the 10k",
              "Order new glasses", "Recycle old batteries", "Print boarding passes")
NEW_TITLES_ZH = ("买邮票", "预约理发", "续买车险", "给奶奶打电话", "清理排水沟", "提交报销单", "取快递", "给冰箱除霜",
                 "报名十公里跑", "配新眼镜", "回收旧电池", "打印登机牌")
DATES = tuple((EPOCH_DAY.replace(day=d)).isoformat() for d in range(3, 21))


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def pick_todo(rng: random.Random, world: World | None, done: bool = False, dated: bool = False):
    todos = [t for t in _world(world).todo if t.done == done and (t.due or not dated)]
    return rng.choice(todos)


def ensure_todo(phone: MockPhone, task: Task, title: str) -> Todo:
    """The task titled ``title`` on ``phone`` (planted, with its list, from the task's world when missing)."""
    state = phone.app("todo").state
    found = state.find(title)
    if found is None:
        wt = next((t for t in task.world.todo if t.title == title), None)
        found = Todo(f"p{len(state.tasks):02d}", title, wt.list if wt else state.lists[0], wt.due if wt else "2026-03-06",
                     wt.priority if wt else "Medium", wt.done if wt else False)
        state.tasks.append(found)
        ensure_list(phone, found.list)
    return found


def ensure_list(phone: MockPhone, name: str) -> None:
    state = phone.app("todo").state
    if name not in state.lists:
        state.lists.append(name)


def _tid(start: dict, title: str) -> list[str]:
    return statediff.keys_where(start, "todo.tasks", "title", title)


def open_todo(ui: UI, title: str) -> Iterator[Action]:
    """Open To-do, search for ``title`` and open its page."""
    yield from ui.open("todo")
    yield from ui.type_into("search", title)
    yield from ui.key("enter")
    yield from ui.tap(text=title, rid="android:id/title")  # the row, not the search box holding the same text


def _neighbour(phone: MockPhone, title: str) -> Todo:
    """Another open task, of the same list when there is one: the plausible mix-up."""
    state = phone.app("todo").state
    me = state.find(title)
    others = [t for t in state.tasks if t.title != title and not t.done]
    return ([t for t in others if t.list == me.list] or others)[0]


class TodoAdd(Task):
    """Add a task with a list, a due date and a priority (the form validates the date)."""

    template = "Add a to-do \"{title}\" to my {list} list, due {due}, with {priority} priority."
    app_names = ("todo",)
    complexity = 6.0
    allowed = ("todo.tasks[+1]*",)
    schema = {"title": Param(str), "list": Param(str, doc="one of the seed's lists"), "due": Param(str, choices=DATES),
              "priority": Param(str, choices=PRIORITIES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        w = _world(world)
        return {"title": rng.choice(NEW_TITLES_ZH if w.zh else NEW_TITLES),
                "list": rng.choice(sorted({t.list for t in w.todo})), "due": rng.choice(DATES),
                "priority": rng.choice(PRIORITIES)}

    def setup(self, phone: MockPhone) -> None:
        ensure_list(phone, self.params["list"])
        state = phone.app("todo").state
        state.tasks = [t for t in state.tasks if t.title != self.params["title"]]

    def check(self, phone: MockPhone) -> float:
        p, start = self.params, self.start_state(phone)
        new = [t for t in phone.state("todo").tasks if f"todo.tasks[{t.tid}].tid" not in start]
        return float(len(new) == 1 and (new[0].title, new[0].list, new[0].due, new[0].priority)
                     == (p["title"], p["list"], p["due"], p["priority"]))

    def add(self, ui: UI, list_name: str | None, due: str) -> Iterator[Action]:
        yield from ui.open("todo")
        yield from ui.tap(rid="new_task")
        yield from ui.type_into("title", self.params["title"])
        if due:
            yield from ui.type_into("due", due)
        yield from ui.tap(rid=f"priority_{self.params['priority'].lower()}")
        if list_name is not None:
            yield from ui.tap(text=list_name)
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.add(ui, self.params["list"], self.params["due"])

    def wrong_endings(self) -> dict:
        def first_list(task):  # never picked the list: the form's default (another list when that is the one asked)
            def script(ui):
                lists = ui.phone.app("todo").state.lists
                other = lists[0] if lists[0] != task.params["list"] else lists[1]
                yield from task.add(ui, other, task.params["due"])
            return script

        def twice(task):
            def script(ui):
                yield from task.add(ui, task.params["list"], task.params["due"])
                yield from task.add(ui, task.params["list"], task.params["due"])
            return script
        return {"another-list": ending(first_list), "no-due-date": ending(lambda task: lambda ui: task.add(
            ui, task.params["list"], "")), "added-twice": ending(twice)}


class _OneTodo(Task):
    """A task that changes one field of one to-do (``field``), found by title."""

    app_names = ("todo",)
    field = ""

    def setup(self, phone: MockPhone) -> None:
        ensure_todo(phone, self, self.params["title"])

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"todo.tasks[{k}].{self.field}" for k in _tid(start, self.params["title"])]

    def todo(self, phone: MockPhone) -> Todo | None:
        return phone.state("todo").find(self.params["title"])


class TodoComplete(_OneTodo):
    """Mark one open task as done."""

    template = "Mark the to-do \"{title}\" as done."
    complexity = 4.0
    field = "done"
    schema = {"title": Param(str, doc="an open task of the seed's To-do")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": pick_todo(rng, world).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_todo(phone, self, self.params["title"]).done = False

    def check(self, phone: MockPhone) -> float:
        return float(self.todo(phone).done)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_todo(ui, self.params["title"])
        yield from ui.tap(rid="toggle_done")

    def wrong_endings(self) -> dict:
        def neighbour(task):
            def script(ui):
                yield from open_todo(ui, _neighbour(ui.phone, task.params["title"]).title)
                yield from ui.tap(rid="toggle_done")
            return script

        return {"completed-another": ending(neighbour), "completed-it-and-another-too": ends.after(neighbour)}


class TodoDelete(_OneTodo):
    """Delete one task after the confirmation dialog."""

    template = "Delete the to-do \"{title}\"."
    complexity = 4.0
    field = "*"
    schema = {"title": Param(str, doc="an open task of the seed's To-do")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": pick_todo(rng, world).title}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"todo.tasks[{k}]*" for k in _tid(start, self.params["title"])]

    def check(self, phone: MockPhone) -> float:
        return float(self.todo(phone) is None)

    def delete(self, ui: UI, title: str, button: str = "Delete") -> Iterator[Action]:
        yield from open_todo(ui, title)
        yield from ui.tap(rid="delete")
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.delete(ui, self.params["title"])

    def wrong_endings(self) -> dict:
        return {"deleted-another": ending(lambda task: lambda ui: task.delete(
                    ui, _neighbour(ui.phone, task.params["title"]).title)),
                "deleted-it-and-another-too": ends.after(lambda task: lambda ui: task.delete(
                    ui, next(t.title for t in ui.phone.app("todo").state.tasks if not t.done)))}


class _EditTodo(_OneTodo):
    """Open a task's form, change one thing, save."""

    def edit(self, ui: UI, title: str, change) -> Iterator[Action]:
        yield from open_todo(ui, title)
        yield from ui.tap(rid="edit")
        yield from change(ui)
        yield from ui.tap(rid="save")


class TodoReschedule(_EditTodo):
    """Change a task's due date in its form."""

    template = "Move the due date of the to-do \"{title}\" to {due}."
    complexity = 5.0
    field = "due"
    schema = {"title": Param(str, doc="an open task of the seed's To-do"), "due": Param(str, choices=DATES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        t = pick_todo(rng, world)
        return {"title": t.title, "due": rng.choice([d for d in DATES if d != t.due])}

    def setup(self, phone: MockPhone) -> None:
        t = ensure_todo(phone, self, self.params["title"])
        if t.due == self.params["due"]:
            t.due = ""

    def check(self, phone: MockPhone) -> float:
        return float(self.todo(phone).due == self.params["due"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.edit(ui, self.params["title"], lambda u: u.type_into("due", self.params["due"]))

    def wrong_endings(self) -> dict:
        def day_off(task):
            i = DATES.index(task.params["due"])
            wrong = DATES[i + 1] if i + 1 < len(DATES) else DATES[i - 1]
            return lambda ui: task.edit(ui, task.params["title"], lambda u: u.type_into("due", wrong))

        def neighbour(task):
            return lambda ui: task.edit(ui, _neighbour(ui.phone, task.params["title"]).title,
                                        lambda u: u.type_into("due", task.params["due"]))
        return {"a-day-off": ending(day_off), "rescheduled-another": ending(neighbour)}


class TodoSetPriority(_EditTodo):
    """Change a task's priority in its form."""

    swaps = (("title", lambda t, phone: next((x.title for x in phone.state("todo").tasks if x.title != t.params["title"]
                                              and x.priority != t.params["priority"]), None), "also"),)
    template = "Set the priority of the to-do \"{title}\" to {priority}."
    complexity = 5.0
    field = "priority"
    schema = {"title": Param(str, doc="a task of the seed's To-do"), "priority": Param(str, choices=PRIORITIES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        t = pick_todo(rng, world)
        return {"title": t.title, "priority": rng.choice([p for p in PRIORITIES if p != t.priority])}

    def setup(self, phone: MockPhone) -> None:
        t = ensure_todo(phone, self, self.params["title"])
        if t.priority == self.params["priority"]:
            t.priority = next(p for p in PRIORITIES if p != self.params["priority"])

    def check(self, phone: MockPhone) -> float:
        return float(self.todo(phone).priority == self.params["priority"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.edit(ui, self.params["title"],
                             lambda u: u.tap(rid=f"priority_{self.params['priority'].lower()}"))

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                now = ui.phone.app("todo").state.find(task.params["title"]).priority
                wrong = next(p for p in PRIORITIES if p not in (now, task.params["priority"]))
                yield from task.edit(ui, task.params["title"], lambda u: u.tap(rid=f"priority_{wrong.lower()}"))
            return script
        return {"the-third-priority": ending(other)}


class TodoMoveToList(_EditTodo):
    """Move a task to another list in its form."""

    swaps = (("title", lambda t, phone: next((x.title for x in phone.state("todo").tasks if x.title != t.params["title"]
                                              and x.list != t.params["list"]), None), "also"),)
    template = "Move the to-do \"{title}\" to my {list} list."
    complexity = 5.0
    field = "list"
    schema = {"title": Param(str, doc="a task of the seed's To-do"), "list": Param(str, doc="one of the seed's lists")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        t = pick_todo(rng, world)
        return {"title": t.title, "list": rng.choice(sorted({x.list for x in _world(world).todo} - {t.list}))}

    def setup(self, phone: MockPhone) -> None:
        t = ensure_todo(phone, self, self.params["title"])
        ensure_list(phone, self.params["list"])
        if t.list == self.params["list"]:
            t.list = next(n for n in phone.app("todo").state.lists if n != self.params["list"])

    def check(self, phone: MockPhone) -> float:
        return float(self.todo(phone).list == self.params["list"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.edit(ui, self.params["title"], lambda u: u.tap(text=self.params["list"]))

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("todo").state
                now = state.find(task.params["title"]).list
                wrong = next(n for n in state.lists if n not in (now, task.params["list"]))
                yield from task.edit(ui, task.params["title"], lambda u: u.tap(text=wrong))
            return script
        return {"another-list": ending(other)}


def _open_in(phone: MockPhone, list_name: str | None) -> list[Todo]:
    return [t for t in phone.app("todo").state.tasks if not t.done and (list_name is None or t.list == list_name)]


def show_list(ui: UI, list_name: str) -> Iterator[Action]:
    yield from ui.open("todo")
    yield from ui.tap(text=list_name)


class TodoAnswerOpenCount(Task):
    """Count the open tasks of one list with one priority (list chip, then read each row's priority)."""

    template = "How many open to-dos in my {list} list have {priority} priority? Answer with the number."
    app_names = ("todo",)
    complexity = 4.0
    changes_state = False
    schema = {"list": Param(str, doc="one of the seed's lists"), "priority": Param(str, choices=PRIORITIES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"list": rng.choice(sorted({t.list for t in _world(world).todo})), "priority": rng.choice(PRIORITIES)}

    def setup(self, phone: MockPhone) -> None:
        ensure_list(phone, self.params["list"])

    def _count(self, phone: MockPhone, list_name: str | None, priority: str | None) -> int:
        return sum(1 for t in _open_in(phone, list_name) if priority is None or t.priority == priority)

    def check(self, phone: MockPhone) -> float:
        right = float(self._count(phone, self.params["list"], self.params["priority"]))
        return float(answers.only(answers.numbers(final_answer(phone)), right))

    def oracle(self, ui: UI) -> Iterator[Action]:
        from mockphone import i18n

        yield from show_list(ui, self.params["list"])
        rows = yield from ui.collect("todo_row")
        shown = i18n.label(self.params["priority"], ui.phone.locale)
        yield Action("answer", text=str(sum(1 for r in rows if r[1].split(" · ")[1] == shown)))

    def _off(self, phone: MockPhone, wrong: int) -> str:
        right = self._count(phone, self.params["list"], self.params["priority"])
        return str(wrong if wrong != right else right + 1)

    def wrong_endings(self) -> dict:
        return {"every-priority": ending(lambda task: lambda ui: answer(task._off(
                    ui.phone, task._count(ui.phone, task.params["list"], None)))),
                "every-list": ending(lambda task: lambda ui: answer(task._off(
                    ui.phone, task._count(ui.phone, None, task.params["priority"]))))}


class TodoAnswerNextDue(Task):
    """The open task of a list with the earliest due date (the list's default order is by due date)."""

    template = "Which open to-do in my {list} list has the earliest due date? Answer with its title."
    app_names = ("todo",)
    complexity = 3.0
    changes_state = False
    schema = {"list": Param(str, doc="one of the seed's lists")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"list": rng.choice(sorted({t.list for t in _world(world).todo}))}

    def setup(self, phone: MockPhone) -> None:
        ensure_list(phone, self.params["list"])
        dated = [t for t in _open_in(phone, self.params["list"]) if t.due]
        for i, due in enumerate(("2026-03-04", "2026-03-11")[len(dated):]):  # at least two to choose between
            phone.app("todo").state.tasks.append(Todo(f"p9{i}", ("Plan the week", "Tidy the desk")[i],
                                                      self.params["list"], due))

    def _ranked(self, phone: MockPhone, list_name: str | None) -> list[Todo]:
        return sorted((t for t in _open_in(phone, list_name) if t.due), key=lambda t: (t.due, t.title))

    def check(self, phone: MockPhone) -> float:
        first = self._ranked(phone, self.params["list"])[0].title
        return float(answers.norm(final_answer(phone)) == answers.norm(first))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from show_list(ui, self.params["list"])
        row = ui.find_all("todo_row")[0]
        yield Action("answer", text=next(e for e in ui.elements() if e.parent == row.index and e.text).text)

    def wrong_endings(self) -> dict:
        def by_priority(task):
            def script(ui):
                ranked = task._ranked(ui.phone, task.params["list"])
                top = sorted(ranked, key=lambda t: (PRIORITIES.index(t.priority), t.due))
                yield from answer(next(t.title for t in top if t.title != ranked[0].title))
            return script

        def latest(task):  # read the list the wrong way round
            return lambda ui: answer(task._ranked(ui.phone, task.params["list"])[-1].title)
        return {"most-important-instead": ending(by_priority), "latest-due": ending(latest)}


class CrossTodoToCalendar(Task):
    """To-do -> Calendar: put a task in the calendar on its due date (read in the task's form as YYYY-MM-DD)."""

    template = "Add my to-do \"{title}\" to the Calendar as an event on its due date at {time}."
    app_names = ("todo", "calendar")
    category = "cross-app"
    complexity = 9.0
    allowed = ("calendar.events[{title}].*",)
    schema = {"title": Param(str, doc="an open, dated task of the seed's To-do"), "time": Param(str, doc="HH:MM")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": pick_todo(rng, world, dated=True).title,
                "time": f"{rng.randint(8, 19):02d}:{rng.choice(('00', '30'))}"}

    def setup(self, phone: MockPhone) -> None:
        t = ensure_todo(phone, self, self.params["title"])
        t.due = t.due or "2026-03-06"
        cal = phone.app("calendar").state
        cal.events = [e for e in cal.events if e.title != self.params["title"]]

    def check(self, phone: MockPhone) -> float:
        due = phone.state("todo").find(self.params["title"]).due
        e = phone.state("calendar").find(self.params["title"])
        return float(e is not None and e.date == due and e.time == self.params["time"])

    def read_due(self, ui: UI, title: str) -> Iterator[Action]:
        yield from open_todo(ui, title)
        yield from ui.tap(rid="edit")
        self.due = ui.find(rid="due").text
        yield from ui.key("back")

    def add_event(self, ui: UI, date: str) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(rid="new_event")
        yield from ui.type_into("title", self.params["title"])
        yield from ui.type_into("date", date)
        yield from ui.type_into("time", self.params["time"])
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.read_due(ui, self.params["title"])
        yield from self.add_event(ui, self.due)

    def wrong_endings(self) -> dict:
        def today(task):
            return lambda ui: task.add_event(ui, EPOCH_DAY.isoformat())

        def neighbours_date(task):
            def script(ui):
                state = ui.phone.app("todo").state
                mine = state.find(task.params["title"]).due
                other = next(t for t in state.tasks if t.due and t.due != mine)
                yield from task.add_event(ui, other.due)
            return script
        return {"on-today": ending(today), "another-tasks-date": ending(neighbours_date)}


TASKS = (CrossTodoToCalendar, TodoAdd, TodoAnswerNextDue, TodoAnswerOpenCount, TodoComplete, TodoDelete,
         TodoMoveToList, TodoReschedule, TodoSetPriority)

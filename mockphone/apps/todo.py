"""To-do: lists of tasks with due dates and priorities, search, a detail page, a validated form, settings.

Tabs: Tasks (a search box, one chip per list plus All, the open tasks in the order the
settings ask for: due date, priority or title; an empty state), Completed (done tasks,
each can be reopened) and Settings (sort order, hide completed tasks from Tasks, a daily
reminder). A task's page marks it done or not, edits it, or deletes it after a confirmation.
The form requires a title and takes an optional due date (YYYY-MM-DD, checked), a priority
and a list. The search box and the list chip are navigation (kept on the app, outside its
state); tasks, lists and settings are state. Data comes from ``mockphone.world.todo``.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from mockphone import i18n
from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.kit import tab_bar, tr
from mockphone.widgets import Page, View
from mockphone.world.todo import PRIORITIES

TABS = (("main", "Tasks"), ("completed", "Completed"), ("settings", "Settings"))
SORTS = ("Due date", "Priority", "Title")


@dataclass
class Todo:
    tid: str
    title: str
    list: str
    due: str = ""  # YYYY-MM-DD or ""
    priority: str = "Medium"
    done: bool = False


@dataclass
class TodoSettings:
    sort: str = "Due date"
    hide_completed: bool = True
    reminder: bool = False


@dataclass
class TodoState:
    tasks: list[Todo] = field(default_factory=list)
    lists: list[str] = field(default_factory=list)
    settings: TodoSettings = field(default_factory=TodoSettings)

    def find(self, title: str) -> Todo | None:
        return next((t for t in self.tasks if t.title == title), None)

    def by_id(self, tid: str) -> Todo | None:
        return next((t for t in self.tasks if t.tid == tid), None)

    def ordered(self, tasks: list[Todo]) -> list[Todo]:
        """``tasks`` in the settings' order (no due date sorts last)."""
        key = self.settings.sort
        if key == "Priority":
            return sorted(tasks, key=lambda t: (PRIORITIES.index(t.priority), t.due or "9999", t.title))
        if key == "Title":
            return sorted(tasks, key=lambda t: t.title.lower())
        return sorted(tasks, key=lambda t: (t.due or "9999", t.title))


def valid_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


class TodoApp(App):
    name = "todo"
    package = "com.phoneloop.todo"
    label = "To-do"
    aliases = ("tasks", "todos", "reminders")
    color = "#7b1fa2"

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.query, self.list_filter = "", ""  # navigation: the search box and the list chip

    def reset(self, rng: random.Random) -> None:
        super().reset(rng)
        self.query, self.list_filter = "", ""

    def initial_state(self, rng: random.Random) -> TodoState:
        todos = data.world_of(self.phone).todo
        lists = list(dict.fromkeys(t.list for t in todos))
        return TodoState([Todo(t.tid, t.title, t.list, t.due, t.priority, t.done) for t in todos], lists)

    def _when(self, due: str) -> str:
        return i18n.short_date(dt.date.fromisoformat(due), self.phone.locale) if due else "No due date"

    def _row(self, t: Todo) -> ui.Widget:
        return ui.item(t.title, tr(self, "{due} · {priority} · {list}", due=self._when(t.due), priority=t.priority,
                                   list=t.list),
                       on_tap=(lambda tid=t.tid: self.push("detail", tid=tid)), rid="todo_row",
                       trailing="✓" if t.done else "")

    def page_main(self, page: Page) -> View:
        st = self.state
        chips = [ui.chip("All", self.list_filter == "", (lambda: self._filter("")), rid="list_all")]
        chips += [ui.chip(name, self.list_filter == name, (lambda n=name: self._filter(n)), rid=f"list_{i}")
                  for i, name in enumerate(st.lists)]
        words = self.query.lower().split()
        shown = [t for t in st.tasks if (not t.done or not st.settings.hide_completed)
                 and (not self.list_filter or t.list == self.list_filter)
                 and all(w in t.title.lower() for w in words)]
        rows = [self._row(t) for t in st.ordered(shown)]
        if not rows:
            rows = [ui.text("Nothing to do here", style="caption", copyable=False, rid="empty")]
        return View("To-do", body=(
            tab_bar(self, "main", TABS),
            ui.edit("search", page.field("search"), hint="Search tasks", on_submit=lambda: self._query(page)),
            ui.row(*chips[:4]), *([ui.row(*chips[4:])] if len(chips) > 4 else []),
            *rows,
        ), actions=(ui.button("New", lambda: self.push("edit", tid=""), rid="new_task"),))

    def _filter(self, name: str) -> None:
        self.list_filter = name

    def _query(self, page: Page) -> None:
        self.query = page.field("search").strip()

    def page_completed(self, page: Page) -> View:
        rows = [self._row(t) for t in sorted((t for t in self.state.tasks if t.done), key=lambda t: t.title.lower())]
        if not rows:
            rows = [ui.text("No completed tasks", style="caption", copyable=False, rid="empty")]
        return View("Completed", body=(tab_bar(self, "completed", TABS), *rows))

    def page_detail(self, page: Page) -> View:
        t = self.state.by_id(page.args["tid"])
        if t is None:
            return View("Task", up=True, body=(ui.text("Task deleted", style="caption", rid="empty"),))
        return View("Task", up=True, body=(
            ui.text(t.title, style="title", rid="todo_title"),
            ui.text(tr(self, "Due: {due}", due=self._when(t.due)), rid="todo_due"),
            ui.text(tr(self, "Priority: {priority}", priority=t.priority), rid="todo_priority"),
            ui.text(tr(self, "List: {list}", list=t.list), style="caption", rid="todo_list"),
            ui.button("Mark as not done" if t.done else "Mark as done", lambda: self._toggle(t.tid), rid="toggle_done"),
            ui.row(ui.button("Edit", lambda: self.push("edit", tid=t.tid), rid="edit", style="outline"),
                   ui.button("Delete", lambda: self._confirm_delete(t.tid), rid="delete", style="danger")),
        ))

    def _toggle(self, tid: str) -> None:
        t = self.state.by_id(tid)
        t.done = not t.done
        self.toast("Marked as done" if t.done else "Marked as not done")

    def _confirm_delete(self, tid: str) -> None:
        t = self.state.by_id(tid)
        self.dialog("Delete task?", tr(self, "\"{title}\" will be deleted.", title=t.title),
                    (("Cancel", None), ("Delete", lambda: self._delete(tid))), rid="confirm_delete")

    def _delete(self, tid: str) -> None:
        self.state.tasks = [t for t in self.state.tasks if t.tid != tid]
        self.back()
        self.toast("Task deleted")

    def page_edit(self, page: Page) -> View:
        t = self.state.by_id(page.args["tid"])
        if not page.fields:
            page.fields.update(title=t.title if t else "", due=t.due if t else "")
            page.args.update(priority=t.priority if t else "Medium", list=t.list if t else self.state.lists[0])
        priorities = ui.row(*(ui.chip(p, page.args["priority"] == p, (lambda p=p: page.args.update(priority=p)),
                                      rid=f"priority_{p.lower()}") for p in PRIORITIES))
        lists = ui.row(*(ui.chip(name, page.args["list"] == name, (lambda n=name: page.args.update(list=n)),
                                 rid=f"in_list_{i}") for i, name in enumerate(self.state.lists)))
        return View("Edit task" if t else "New task", up=True, body=(
            ui.edit("title", page.field("title"), hint="Title"),
            ui.edit("due", page.field("due"), hint="Due date (YYYY-MM-DD, optional)"),
            ui.text("Priority", style="caption", copyable=False), priorities,
            ui.text("List", style="caption", copyable=False), lists,
        ), actions=(ui.button("Save", lambda: self._save(page), rid="save"),))

    def _save(self, page: Page) -> None:
        title, due = page.field("title").strip(), page.field("due").strip()
        if not title or (due and not valid_date(due)):
            self.dialog("Check the task", "A title is required; a due date is written YYYY-MM-DD.", rid="invalid_task")
            return
        old = self.state.by_id(page.args["tid"])
        if old is None:
            tid = next(f"n{i:02d}" for i in range(len(self.state.tasks) + 1) if self.state.by_id(f"n{i:02d}") is None)
            self.state.tasks.append(Todo(tid, title, page.args["list"], due, page.args["priority"]))
        else:
            old.title, old.due, old.priority, old.list = title, due, page.args["priority"], page.args["list"]
        self.back()
        self.toast("Task saved")

    def page_settings(self, page: Page) -> View:
        st = self.state.settings
        return View("Settings", body=(
            tab_bar(self, "settings", TABS),
            ui.text("Sort tasks by", style="caption", copyable=False),
            *(ui.checkbox(name, st.sort == name, (lambda v, n=name: setattr(st, "sort", n)),
                          rid=f"sort_{name.split()[0].lower()}") for name in SORTS),
            ui.toggle("Hide completed tasks", st.hide_completed, lambda v: setattr(st, "hide_completed", v),
                      rid="hide_completed"),
            ui.toggle("Daily reminder", st.reminder, lambda v: setattr(st, "reminder", v), rid="reminder"),
        ))

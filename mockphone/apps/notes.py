"""Notes (docs): a list of notes, an editor with title and multi-line body, delete with confirmation."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.widgets import Page, View

SEED_NOTES = (("Groceries", "Milk, eggs, spinach, rice"), ("Trip ideas", "Kyoto in spring\nLisbon in autumn"),
              ("Books to read", "The Dispossessed; Piranesi"), ("Meeting notes", "Q3 roadmap review, owners TBD"),
              ("Passwords hint", "Ask IT for the new VPN token"), ("Recipes", "Tomato egg stir-fry"),
              ("Gift ideas", "Headphones for Sam"), ("Workout", "Mon: run 5k\nWed: yoga"))


@dataclass
class Note:
    title: str
    body: str


@dataclass
class NotesState:
    notes: list[Note] = field(default_factory=list)

    def find(self, title: str) -> Note | None:
        return next((n for n in self.notes if n.title == title), None)


class NotesApp(App):
    name = "notes"
    package = "com.phoneloop.notes"
    label = "Notes"
    aliases = ("docs", "documents")
    color = "#e37400"

    def initial_state(self, rng: random.Random) -> NotesState:
        return NotesState([Note(t, b) for t, b in rng.sample(SEED_NOTES, 5)])

    def page_main(self, page: Page) -> View:
        rows = [ui.item(n.title, n.body.split("\n")[0], on_tap=(lambda i=i: self.push("editor", index=i)),
                        rid="note_row", on_long_press=(lambda t=n.title: self._confirm_delete(t)))
                for i, n in enumerate(self.state.notes)]
        if not rows:
            rows = [ui.text("No notes yet", style="caption", copyable=False, rid="empty")]
        return View("Notes", body=tuple(rows), actions=(ui.button("New", lambda: self.push("editor", index=-1),
                                                                 rid="new_note"),))

    def _confirm_delete(self, title: str) -> None:
        self.dialog("Delete note?", f"\"{title}\" will be deleted.",
                    (("Cancel", None), ("Delete", lambda: self._delete(title))), rid="confirm_delete")

    def _delete(self, title: str) -> None:
        self.state.notes = [n for n in self.state.notes if n.title != title]
        self.toast("Note deleted")

    def page_editor(self, page: Page) -> View:
        index = page.args["index"]
        if index >= 0 and not page.fields:
            note = self.state.notes[index]
            page.fields.update(title=note.title, body=note.body)
        return View("Edit note" if index >= 0 else "New note", up=True, body=(
            ui.edit("title", page.field("title"), hint="Title"),
            ui.edit("body", page.field("body"), hint="Note", lines=6),
        ), actions=(ui.button("Save", lambda: self._save(page), rid="save"),))

    def _save(self, page: Page) -> None:
        title, body = page.field("title").strip(), page.field("body")
        if not title and not body.strip():
            self.toast("Empty note discarded")
            self.back()
            return
        note = Note(title or body.strip().split("\n")[0][:30], body)
        if page.args["index"] >= 0:
            self.state.notes[page.args["index"]] = note
        else:
            self.state.notes.insert(0, note)
        self.back()
        self.toast("Note saved")

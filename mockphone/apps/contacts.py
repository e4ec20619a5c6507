"""Contacts: a searchable list, detail pages, create / edit / delete, favourites."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.widgets import Page, View


@dataclass
class Contact:
    name: str
    phone: str
    email: str = ""
    starred: bool = False


@dataclass
class ContactsState:
    contacts: list[Contact] = field(default_factory=list)

    def find(self, name: str) -> Contact | None:
        return next((c for c in self.contacts if c.name == name), None)


class ContactsApp(App):
    name = "contacts"
    package = "com.android.contacts"
    label = "Contacts"
    color = "#1967d2"

    def initial_state(self, rng: random.Random) -> ContactsState:
        """The seed's people (``mockphone.world.people``), in the phone's language."""
        return ContactsState([Contact(p.name, p.phone, p.email) for p in data.world_of(self.phone).people])

    def page_main(self, page: Page) -> View:
        query = page.field("search").lower()
        shown = sorted((c for c in self.state.contacts if query in c.name.lower()), key=lambda c: c.name)
        rows = [ui.item(c.name, ("★ " if c.starred else "") + c.phone, rid="contact_row",
                        on_tap=(lambda c=c: self.push("detail", name=c.name)), icon=f"avatar:{c.name}") for c in shown]
        if not rows:
            rows = [ui.text("No contacts found", style="caption", copyable=False, rid="empty")]
        return View("Contacts", body=(ui.edit("search", page.field("search"), hint="Search contacts"), *rows),
                    actions=(ui.button("Add", lambda: self.push("edit"), rid="add_contact"),))

    def page_detail(self, page: Page) -> View:
        c = self.state.find(page.args["name"])
        if c is None:
            return View("Contact", up=True, body=(ui.text("Contact was deleted", style="caption"),))
        return View(c.name, up=True, body=(
            ui.image(c.name, color="#8ab4f8", height_dp=96, label=c.name[:1], icon=f"avatar:{c.name}"),
            ui.text(c.name, style="title", rid="name"),
            ui.item("Phone", c.phone, rid="phone", on_long_press=lambda: self._copy(c.phone)),
            ui.item("Email", c.email or "—", rid="email", on_long_press=lambda: self._copy(c.email)),
            ui.toggle("Favourite", c.starred, lambda v: setattr(c, "starred", v), rid="favourite"),
            ui.row(ui.button("Message", lambda: self._message(c.name), rid="message"),
                   ui.button("Edit", lambda: self.push("edit", name=c.name), rid="edit", style="outline")),
            ui.button("Delete", lambda: self._confirm_delete(c.name), rid="delete", style="danger"),
        ))

    def _copy(self, value: str) -> None:
        self.phone.system.clipboard = value
        self.toast("Copied to clipboard")

    def _message(self, name: str) -> None:
        msgs = self.phone.app("messages")
        msgs.state.thread(name)
        self.phone.nav.open_app("messages", Page("thread", {"contact": name}))

    def _confirm_delete(self, name: str) -> None:
        self.dialog("Delete this contact?", f"{name} will be removed from your contacts.",
                    (("Cancel", None), ("Delete", lambda: self._delete(name))), rid="confirm_delete")

    def _delete(self, name: str) -> None:
        self.state.contacts = [c for c in self.state.contacts if c.name != name]
        self.back()
        self.toast("Contact deleted")

    def page_edit(self, page: Page) -> View:
        existing = self.state.find(page.args.get("name", ""))
        if existing is not None and not page.fields:
            page.fields.update(name=existing.name, phone=existing.phone, email=existing.email)
        return View("Edit contact" if existing else "Create contact", up=True, body=(
            ui.edit("name", page.field("name"), hint="Name"),
            ui.edit("phone", page.field("phone"), hint="Phone"),
            ui.edit("email", page.field("email"), hint="Email"),
        ), footer=(ui.button("Save", lambda: self._save(page), rid="save"),))

    def _save(self, page: Page) -> None:
        name, phone = page.field("name").strip(), page.field("phone").strip()
        if not name or not phone:
            self.toast("Name and phone are required")
            return
        old = page.args.get("name")
        starred = any(c.starred for c in self.state.contacts if c.name == old)
        self.state.contacts = [c for c in self.state.contacts if c.name != old]
        self.state.contacts.append(Contact(name, phone, page.field("email").strip(), starred))
        self.back()
        self.toast("Contact saved")

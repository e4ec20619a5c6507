"""Mail: inbox, reading, compose (to / subject / multi-line body), reply, archive, delete, star."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.widgets import Page, View

SUBJECTS = (("Quarterly report", "Please find the Q3 numbers attached. Comments by Thursday?"),
            ("Team offsite", "The offsite is confirmed for next month in Hangzhou."),
            ("Invoice #4521", "Your invoice of $320 is due on March 15."),
            ("Lunch?", "Free for lunch on Wednesday?"),
            ("Password reset", "Use code 482913 to reset your password."),
            ("Welcome aboard", "Great to have you on the team. Your badge is ready at reception."),
            ("Flight itinerary", "Your flight CA1234 departs at 08:40 on March 20."))


@dataclass
class Email:
    eid: int
    sender: str
    to: str
    subject: str
    body: str
    folder: str = "inbox"  # inbox, sent, archive, trash
    read: bool = False
    starred: bool = False


@dataclass
class MailState:
    emails: list[Email] = field(default_factory=list)
    me: str = "alex@example.com"

    def folder(self, name: str) -> list[Email]:
        return [e for e in self.emails if e.folder == name]

    def sent(self) -> list[Email]:
        return self.folder("sent")

    def by_subject(self, subject: str) -> Email | None:
        return next((e for e in self.emails if e.subject == subject), None)


class MailApp(App):
    name = "mail"
    package = "com.phoneloop.mail"
    label = "Mail"
    aliases = ("email", "gmail")
    color = "#d93025"

    def initial_state(self, rng: random.Random) -> MailState:
        """The seed's inbox (``mockphone.world.mail``), in the phone's language."""
        inbox = data.world_of(self.phone).mail
        return MailState([Email(i, e.sender, "alex@example.com", e.subject, e.body, read=e.read)
                          for i, e in enumerate(inbox)])

    def _new_id(self) -> int:
        return max((e.eid for e in self.state.emails), default=-1) + 1

    def page_main(self, page: Page) -> View:
        folder = page.args.get("folder", "inbox")
        tabs = ui.row(*(ui.chip(f.capitalize(), f == folder, (lambda f=f: page.args.__setitem__("folder", f)),
                                rid=f"folder_{f}") for f in ("inbox", "sent", "archive", "trash")))
        rows = [ui.item(("★ " if e.starred else "") + e.subject, e.sender if folder != "sent" else f"To: {e.to}",
                        on_tap=(lambda e=e: self._open(e)), rid="email_row", trailing="" if e.read else "•",
                        icon=f"avatar:{e.sender if folder != 'sent' else e.to}")
                for e in reversed(self.state.folder(folder))]
        if not rows:
            rows = [ui.text(f"Nothing in {folder.capitalize()}", style="caption", copyable=False, rid="empty")]
        return View("Mail", body=(tabs, *rows), actions=(ui.button("Compose", lambda: self.push("compose"),
                                                                   rid="compose"),))

    def _open(self, email: Email) -> None:
        email.read = True
        self.push("read", eid=email.eid)

    def page_read(self, page: Page) -> View:
        e = next((x for x in self.state.emails if x.eid == page.args["eid"]), None)
        if e is None:
            return View("Mail", up=True, body=(ui.text("Message deleted", style="caption"),))
        return View(e.subject, up=True, body=(
            ui.text(e.subject, style="title", rid="subject"),
            ui.text(f"From: {e.sender}", style="caption", rid="sender"),
            ui.text(f"To: {e.to}", style="caption", rid="recipient"),
            ui.text(e.body, rid="body"),
            ui.row(ui.button("Reply", lambda: self.push("compose", reply_to=e.eid), rid="reply"),
                   ui.button("Archive", lambda: self._move(e, "archive"), rid="archive", style="outline")),
            ui.row(ui.button("Star" if not e.starred else "Unstar", lambda: setattr(e, "starred", not e.starred),
                             rid="star", style="outline"),
                   ui.button("Delete", lambda: self._move(e, "trash"), rid="delete", style="danger")
                   if e.folder != "trash" else
                   ui.button("Move to Inbox", lambda: self._move(e, "inbox"), rid="restore", style="outline")),
        ))

    def _move(self, email: Email, folder: str) -> None:
        email.folder = folder
        self.back()
        self.toast("Moved to " + folder.capitalize())

    def page_compose(self, page: Page) -> View:
        if "reply_to" in page.args and not page.fields:
            src = next(x for x in self.state.emails if x.eid == page.args["reply_to"])
            page.fields.update(to=src.sender, subject=f"Re: {src.subject}")
        return View("Compose", up=True, body=(
            ui.edit("to", page.field("to"), hint="To"),
            ui.edit("subject", page.field("subject"), hint="Subject"),
            ui.edit("body", page.field("body"), hint="Compose email", lines=8),
        ), actions=(ui.button("Send", lambda: self._send(page), rid="send"),))

    def _send(self, page: Page) -> None:
        to = page.field("to").strip()
        if "@" not in to:
            self.dialog("Add a recipient", "Enter a valid email address in the To field.", rid="no_recipient")
            return
        self.state.emails.append(Email(self._new_id(), self.state.me, to, page.field("subject").strip(),
                                       page.field("body"), folder="sent", read=True))
        self.back()
        self.toast("Sent")

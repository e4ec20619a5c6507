"""Messages: conversation list, threads with bubbles, compose and send, delete by long-press."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.widgets import Page, View

INCOMING = ("Are we still on for lunch tomorrow?", "Can you send me the slides?", "Running 10 minutes late.",
            "Happy birthday!", "Did you see the game last night?", "Call me when you are free.",
            "Thanks for yesterday!", "Where should we meet?")


@dataclass
class Message:
    sender: str  # "me" or the contact's name
    text: str


@dataclass
class MessagesState:
    threads: dict[str, list[Message]] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)

    def thread(self, contact: str) -> list[Message]:
        return self.threads.setdefault(contact, [])

    def sent_to(self, contact: str) -> list[str]:
        return [m.text for m in self.threads.get(contact, []) if m.sender == "me"]


class MessagesApp(App):
    name = "messages"
    package = "com.google.android.apps.messaging"
    label = "Messages"
    aliases = ("sms", "texts")
    color = "#0b57d0"

    def initial_state(self, rng: random.Random) -> MessagesState:
        """The seed's conversations (``mockphone.world.messages``), in the phone's language."""
        state = MessagesState()
        for thread in data.world_of(self.phone).messages:
            state.threads[thread.contact] = [Message(thread.contact, text) for text in thread.texts]
        return state

    def page_main(self, page: Page) -> View:
        rows = []
        for contact, msgs in self.state.threads.items():
            last = msgs[-1].text if msgs else ""
            rows.append(ui.item(contact, last, on_tap=(lambda c=contact: self._open(c)), rid="conversation",
                                trailing="new" if contact in self.state.unread else "",
                                on_long_press=(lambda c=contact: self._confirm_delete(c)), icon=f"avatar:{contact}"))
        if not rows:
            rows = [ui.text("No conversations", style="caption", copyable=False)]
        return View("Messages", body=tuple(rows), actions=(ui.button("Start chat", lambda: self.push("new"),
                                                                      rid="start_chat"),))

    def _open(self, contact: str) -> None:
        if contact in self.state.unread:
            self.state.unread.remove(contact)
        self.push("thread", contact=contact)

    def _confirm_delete(self, contact: str) -> None:
        self.dialog("Delete conversation?", f"All messages with {contact} will be deleted.",
                    (("Cancel", None), ("Delete", lambda: self.state.threads.pop(contact, None))), rid="confirm_delete")

    def page_new(self, page: Page) -> View:
        contacts = self.phone.app("contacts").state.contacts if self.phone.has_package("com.android.contacts") else []
        query = page.field("to").lower()
        rows = [ui.item(c.name, c.phone, on_tap=(lambda n=c.name: self._start(n)), rid="suggestion")
                for c in sorted(contacts, key=lambda c: c.name) if query and query in c.name.lower()]
        return View("New conversation", up=True, body=(ui.edit("to", page.field("to"), hint="Type a name"), *rows))

    def _start(self, contact: str) -> None:
        self.state.thread(contact)
        self.back()
        self.push("thread", contact=contact)

    def page_thread(self, page: Page) -> View:
        contact = page.args["contact"]
        bubbles = [ui.text(m.text, style="bubble_out" if m.sender == "me" else "bubble_in", rid="message_text")
                   for m in self.state.threads.get(contact, [])]
        return View(contact, up=True, body=tuple(bubbles), footer=(
            ui.row(ui.edit("compose", page.field("compose"), hint="Text message", on_submit=lambda: self._send(page)),
                   ui.button("Send", lambda: self._send(page), rid="send")),
        ))

    def _send(self, page: Page) -> None:
        text = page.field("compose").strip()
        if not text:
            return
        self.state.thread(page.args["contact"]).append(Message("me", text))
        page.fields["compose"] = ""
        page.scroll = 10 ** 9

"""Assistant: a chat that deterministically drafts texts (leave requests, summaries, wishes) to carry to other apps.

Every draft carries a reference derived from the prompt and the phone's seed, so a
text pasted from a stale clipboard never equals a freshly generated one.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.widgets import Page, View

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_DATE = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})\b")


@dataclass
class ChatTurn:
    role: str  # "user" or "assistant"
    text: str


@dataclass
class AssistantState:
    turns: list[ChatTurn] = field(default_factory=list)
    salt: str = ""

    def replies(self) -> list[str]:
        return [t.text for t in self.turns if t.role == "assistant"]


def first_sentence(text: str) -> str:
    """The text up to its first full stop (``.`` or ``。``), stripped."""
    return re.split(r"[.。]", text, maxsplit=1)[0].strip()


def generate(prompt: str, salt: str) -> str:
    """The assistant's reply to ``prompt`` (pure function of prompt and salt)."""
    ref = hashlib.sha256(f"{salt}:{prompt.strip().lower()}".encode()).hexdigest()[:6].upper()
    low = prompt.lower()
    date = _DATE.search(prompt)
    when = f"{date.group(1)} {int(date.group(2))}" if date else "the requested day"
    if "leave" in low:
        reason = re.split(r"\bbecause\b|\bdue to\b|\bfor a\b", prompt, maxsplit=1, flags=re.I)
        why = reason[1].strip().rstrip(".") if len(reason) > 1 else "personal reasons"
        return (f"Dear manager,\n\nI would like to request a day of leave on {when} because {why}. "
                f"My tasks will be covered and I will be reachable by email.\n\nThank you,\nAlex\nRef: LR-{ref}")
    if "summar" in low:
        source = prompt.split(":", 1)[1].strip() if ":" in prompt else prompt
        words = len(source.split())
        first = first_sentence(source)
        return f"Summary ({words} words): {first}. Ref: SM-{ref}"
    if "birthday" in low:
        name = prompt.rsplit(" for ", 1)[1].strip().rstrip(".") if " for " in prompt else "you"
        return f"Happy birthday, {name}! Wishing you a wonderful year ahead. Ref: BD-{ref}"
    return "I can draft leave requests, summaries and birthday wishes. Try: \"Write a leave request for March 12.\""


class AssistantApp(App):
    name = "assistant"
    package = "com.phoneloop.assistant"
    label = "Assistant"
    aliases = ("ai assistant", "chat assistant")
    color = "#188038"

    def initial_state(self, rng: random.Random) -> AssistantState:
        return AssistantState(salt=f"{rng.getrandbits(32):08x}")

    def page_main(self, page: Page) -> View:
        body: list[ui.Widget] = [ui.text("Hi! Ask me to draft something.", style="caption", copyable=False)]
        for i, turn in enumerate(self.state.turns):
            if turn.role == "user":
                body.append(ui.text(turn.text, style="bubble_out", rid="prompt_text"))
            else:
                body.append(ui.text(turn.text, style="bubble_in", rid="reply_text"))
                body.append(ui.button("Copy", (lambda t=turn.text: self._copy(t)), rid="copy_reply", style="outline"))
        return View("Assistant", body=tuple(body), footer=(
            ui.row(ui.edit("prompt", page.field("prompt"), hint="Ask anything", on_submit=lambda: self._ask(page)),
                   ui.button("Send", lambda: self._ask(page), rid="send")),
        ), actions=(ui.button("New chat", self._clear, rid="new_chat"),))

    def _copy(self, text: str) -> None:
        self.phone.system.clipboard = text
        self.toast("Copied to clipboard")

    def _clear(self) -> None:
        self.state.turns.clear()

    def _ask(self, page: Page) -> None:
        prompt = page.field("prompt").strip()
        if not prompt:
            return
        self.state.turns.append(ChatTurn("user", prompt))
        self.state.turns.append(ChatTurn("assistant", generate(prompt, self.state.salt)))
        page.fields["prompt"] = ""
        page.scroll = 10 ** 9

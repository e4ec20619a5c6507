"""Tasks about the phone itself (notification shade, quick settings) and a few more single-app look-ups."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.bank import Transaction
from mockphone.apps.messages import Message
from mockphone.tasks import answers, statediff
from mockphone.tasks import endings as ends
from mockphone.tasks.base import Param, Task, fraction, final_answer
from mockphone.tasks.comm_tasks import ensure_people

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI


def _open_shade(ui: UI) -> Iterator[Action]:
    d = ui.phone.display
    yield Action("swipe", x=d.width // 2, y=d.status_h // 2, x2=d.width // 2, y2=d.height // 2)


class NotificationReply(Task):
    """Open a message notification from the shade and reply in that thread."""

    near_misses = (("half-the-reply", lambda p: {"text": p["text"][:max(1, len(p["text"]) // 2)]}),)
    template = "Reply \"{text}\" to the person whose message notification just arrived."
    app_names = ("messages",)
    complexity = 4.0
    schema = {"text": Param(str)}

    REPLIES = ("Yes, see you there", "Give me {n} minutes", "Call you later", "Be there by {h} pm",
               "Running late, {n} minutes", "Can't tonight, sorry", "On my way, {n} minutes out", "Sure, at {h}:30?")
    REPLIES_ZH = ("好的，到时见", "给我 {n} 分钟", "晚点给你打电话", "{h} 点前到", "要晚 {n} 分钟", "今晚去不了，抱歉",
                  "在路上了，还有 {n} 分钟", "好啊，{h} 点半？")

    @classmethod
    def generate_random_params(cls, rng, world=None) -> dict:
        replies = cls.REPLIES_ZH if world is not None and world.zh else cls.REPLIES
        return {"text": rng.choice(replies).format(n=rng.randint(5, 30), h=rng.randint(6, 9))}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"messages.threads[{self._sender}][+1]*"]

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        # the sender: one of this phone's contacts, by the phone's seed
        sender = random.Random(f"{self.name()}:{phone.seed}").choice(sorted(phone.contact_names()))
        said = "今晚你来吗？" if phone.locale == "zh-CN" else "Are you coming tonight?"
        phone.app("messages").state.thread(sender).append(Message(sender, said))
        messages = "com.google.android.apps.messaging"
        phone.nav.notify(messages, sender, said, "thread", contact=sender)
        self._sender = sender

    def check(self, phone: MockPhone) -> float:
        return float(self.params["text"] in phone.state("messages").sent_to(self._sender))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_shade(ui)
        yield from ui.tap(rid="notification")
        yield from ui.type_into("compose", self.params["text"])
        yield from ui.tap(rid="send")

    def wrong_endings(self) -> dict:
        def elsewhere(t):  # the reply typed into another conversation
            def script(ui):
                yield from ui.open("messages")
                yield from ui.tap(text=next(n for n in sorted(ui.phone.state("messages").threads) if n != t._sender))
                yield from ui.type_into("compose", t.params["text"])
                yield from ui.tap(rid="send")
            return script
        return {"replied-in-another-conversation": ends.ending(elsewhere)}

class NotificationsClearAll(Task):
    """Clear every notification from the shade."""

    template = "Clear all my notifications."
    app_names = ("settings",)
    complexity = 2.0
    changes_state = False
    schema = {}
    fixed = True
    fixed_reason = ("one gesture and one button (the shade's Clear all): whatever notifications the phone shows, "
                    "the instruction and the two actions are the same")

    def setup(self, phone: MockPhone) -> None:
        phone.nav.notify("com.phoneloop.mail", "New email", "Invoice #4521")
        phone.nav.notify("com.phoneloop.shop", "Flash sale", "20% off headphones")

    def check(self, phone: MockPhone) -> float:
        return float(not phone.system_state().notifications)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_shade(ui)
        yield from ui.tap(rid="clear_all")

    def wrong_endings(self) -> dict:
        def dnd(t):  # "silence the notifications": the Do not disturb tile beside Clear all
            return lambda ui: (a for step in (_open_shade(ui), ui.tap(rid="qs_dnd")) for a in step)
        return {"do-not-disturb-instead": ends.ending(dnd),
                "cleared-and-do-not-disturb-too": ends.after(dnd)}

class QuickSettingsAirplaneMode(Task):
    """Turn airplane mode on from the quick settings in the notification shade, then close the shade."""

    template = "Use quick settings to turn on airplane mode, then close the notification shade."
    app_names = ("settings",)
    complexity = 2.0
    allowed = ('system.settings[global/airplane_mode_on]',)
    schema = {}
    fixed = True
    fixed_reason = ("the instruction names the path (quick settings, then close the shade): one tile, "
                    "no value to vary; the parametric airplane-mode tasks are SettingsAirplaneModeOn/Off")

    def check(self, phone: MockPhone) -> float:
        return fraction(phone.system_state().flag("global/airplane_mode_on"), phone.nav.overlay is None)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_shade(ui)
        yield from ui.tap(rid="qs_airplane")
        yield from ui.key("back")

    def wrong_endings(self) -> dict:
        def tile(rid):
            return lambda t: lambda ui: (a for step in (_open_shade(ui), ui.tap(rid=rid), ui.key("back")) for a in step)
        return {"the-wi-fi-tile-instead": ends.ending(tile("qs_wifi")),
                "airplane-and-bluetooth-too": ends.after(tile("qs_bluetooth"))}

class ClockCancelTimer(Task):
    """Cancel a running timer."""

    template = "Cancel the {minutes}-minute timer that is running."
    app_names = ("clock",)
    complexity = 2.0
    allowed = ('clock.timer_end_s',)
    schema = {"minutes": Param(int, min=1, max=120)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"minutes": rng.choice((rng.randint(2, 15), rng.randrange(20, 95, 5)))}

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("clock").state
        state.timer_set_s = self.params["minutes"] * 60
        state.timer_end_s = phone.system.clock_s + state.timer_set_s

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("clock").timer_end_s is None)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("clock")
        yield from ui.tap(rid="timer_tab")
        yield from ui.tap(rid="cancel")

    def wrong_endings(self) -> dict:
        def alarm(t):
            def script(ui):
                yield Action("shell", command=f"am force-stop {ui.phone.app('clock').package}")
                yield from ui.open("clock")
                yield from ui.tap(rid="alarm_switch")
            return script
        return {"switched-off-an-alarm-instead": ends.ending(alarm),
                "cancelled-and-switched-off-an-alarm-too": ends.after(alarm)}

class FilesAnswerSize(Task):
    """Information retrieval: report a file's size."""

    swaps = (("name", ends.choice("name")),)
    wrong_answers = (("misread", ends.misread),)
    template = "How large is {name} in the Download folder? Answer in kB."
    app_names = ("files",)
    complexity = 3.0
    changes_state = False
    schema = {"name": Param(str, choices=("boarding_pass.pdf", "setup.apk", "menu.pdf"))}

    def check(self, phone: MockPhone) -> float:
        size = phone.state("files").find(self.params["name"]).size_kb
        return float(answers.only(answers.numbers(final_answer(phone)), size))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("files")
        yield from ui.tap(text="Download")
        row = next(e for e in ui.elements() if e.text == self.params["name"])
        size = next(e.text for e in ui.elements() if e.parent == row.parent and e.resource_id == "android:id/summary")
        yield Action("answer", text=size)


class BankAnswerSpending(Task):
    """Information retrieval: how much a card payment was, from recent activity."""

    swaps = (("shop", lambda t, phone: next((h.description for h in phone.state("bank").history if h.amount < 0
                                             and h.description != t.params["shop"]), None)),)
    wrong_answers = (("misread", ends.misread),)
    template = "How much did I pay at {shop}? Answer with the amount."
    app_names = ("bank",)
    complexity = 3.0
    changes_state = False
    schema = {"shop": Param(str, choices=("Coffee Corner", "Bookshop", "Pharmacy"))}

    def setup(self, phone: MockPhone) -> None:
        history = phone.app("bank").state.history
        history[:] = [t for t in history if t.description != self.params["shop"]]
        history.insert(0, Transaction("card", self.params["shop"], -(1234 + 111 * phone.seed % 5000)))

    def check(self, phone: MockPhone) -> float:
        paid = next(t for t in phone.state("bank").history if t.description == self.params["shop"])
        return float(answers.only(answers.numbers(final_answer(phone)), -paid.amount / 100))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("bank")
        yield from ui.tap(rid="history")
        row = next(e for e in ui.elements() if e.text == self.params["shop"])
        yield Action("answer", text=next(e.text for e in ui.elements()
                                         if e.parent == row.parent and e.resource_id == "android:id/text2"))


TASKS = (
    BankAnswerSpending, ClockCancelTimer, FilesAnswerSize, NotificationReply, NotificationsClearAll,
    QuickSettingsAirplaneMode,
)

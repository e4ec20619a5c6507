"""Assistant and cross-app tasks: generate text in one app, carry it to another.

The phone starts with a stale draft on the clipboard (an older leave request, an old
wish). Verifiers require the pasted text to equal a reply the assistant generated
in this episode, so pasting the stale clipboard — the seed article's failure — fails.
"""

from __future__ import annotations

import random
import re
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.assistant import MONTHS, first_sentence
from mockphone.apps.calendar import Event
from mockphone.tasks import endings as ends
from mockphone.tasks.base import Param, Task, fraction
from mockphone.tasks.comm_tasks import AlsoAnother, ensure_person, pick_name, search_key
from mockphone.tasks.mail_tasks import ensure_mail, inbox_subject

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

DATES = ("March 12", "March 18", "April 3", "April 20")
REASONS = ("a family event", "a medical appointment", "moving house")
STALE = ("Dear manager,\n\nI would like to request a day of leave on February 2 because of a trip. "
         "My tasks will be covered.\n\nThank you,\nAlex\nRef: LR-000000")


def _stale_clipboard(phone: MockPhone) -> None:
    phone.system.clipboard = STALE


def _fresh(phone, must_contain: str) -> list[str]:
    """Assistant replies generated this episode that contain ``must_contain``."""
    return [r for r in phone.state("assistant").replies() if must_contain in r]


def _copy_last(ui: UI) -> Iterator[Action]:
    buttons = ui.find_all("copy_reply")
    last = buttons[-1]
    x, y = last.center
    yield Action("tap", x=x, y=y, element=last.as_target())


# AssistantSummarize's texts: a first sentence (what the summary keeps) and a second one
SUMMARY_FIRST = ("The {thing} launch moved to {month}", "Rain all week in {city}", "Sales grew {n}% in {month}",
                 "The {thing} review is on {day}", "Our {city} office opens in {month}",
                 "Ticket prices rise {n}% in {month}", "The {thing} survey closed on {day}")
SUMMARY_SECOND = ("Budget is unchanged.", "Sunny on Sunday.", "Costs fell.", "Everyone should attend.",
                  "Hiring starts now.", "Details follow by email.", "Questions go to the team lead.")
SUMMARY_FIRST_ZH = ("{thing}发布推迟到{month}", "{city}这周一直下雨", "{month}销售额增长了 {n}%", "{thing}评审定在{day}",
                    "我们{city}的办公室{month}开业", "{month}票价上涨 {n}%", "{thing}调研在{day}结束")
SUMMARY_SECOND_ZH = ("预算不变。", "周日转晴。", "成本下降了。", "请大家参加。", "现在开始招聘。", "细节随后邮件通知。",
                     "有问题请找组长。")
THINGS = ("app", "website", "product", "catalogue", "campaign")
THINGS_ZH = ("应用", "网站", "新产品", "目录", "活动")
CITIES = ("Lisbon", "Osaka", "Denver", "Nairobi", "Oslo")
CITIES_ZH = ("杭州", "成都", "厦门", "青岛", "昆明")


def _summary_text(rng: random.Random, zh: bool) -> str:
    months = tuple(f"{m}月" for m in range(1, 13)) if zh else MONTHS
    first = rng.choice(SUMMARY_FIRST_ZH if zh else SUMMARY_FIRST).format(
        thing=rng.choice(THINGS_ZH if zh else THINGS), month=rng.choice(months), n=rng.randint(2, 19),
        city=rng.choice(CITIES_ZH if zh else CITIES), day=rng.choice(("周一", "周三", "周五") if zh else
                                                                      ("Monday", "Wednesday", "Friday")))
    return f"{first}。{rng.choice(SUMMARY_SECOND_ZH)}" if zh else f"{first}. {rng.choice(SUMMARY_SECOND)}"


def _leave_prompt(params) -> str:
    return f"Write a leave request for {params['date']} because of {params['reason']}"


class AssistantLeaveRequest(Task):
    """Ask the assistant to draft a leave request for a date (the reply must mention that date)."""

    swaps = (("date", ends.choice("date")), ("reason", ends.choice("reason")))
    template = "Ask the Assistant to write a leave request for {date} because of {reason}."
    app_names = ("assistant",)
    complexity = 2.0
    allowed = ('assistant.turns*',)
    schema = {"date": Param(str, choices=DATES), "reason": Param(str, choices=REASONS)}

    def check(self, phone: MockPhone) -> float:
        replies = _fresh(phone, "Ref: LR-")  # the latest draft counts: asking for every date does not
        return fraction(bool(replies), bool(replies) and self.params["date"] in replies[-1]
                        and self.params["reason"] in replies[-1])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("assistant")
        yield from ui.type_into("prompt", _leave_prompt(self.params))
        yield from ui.tap(rid="send")


class AssistantSummarize(Task):
    """Ask the assistant to summarise a given text."""

    template = "Ask the Assistant to summarize: \"{text}\""
    app_names = ("assistant",)
    complexity = 2.0
    allowed = ('assistant.turns*',)
    schema = {"text": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"text": _summary_text(rng, bool(world is not None and world.zh))}

    def check(self, phone: MockPhone) -> float:
        first = first_sentence(self.params["text"])
        replies = phone.state("assistant").replies()  # the latest reply: summarising every text does not count
        return float(bool(replies) and f"{first}. Ref: SM-" in replies[-1])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._ask(ui, f"Summarize: {self.params['text']}")

    def _ask(self, ui: UI, prompt: str) -> Iterator[Action]:
        yield from ui.open("assistant")
        yield from ui.type_into("prompt", prompt)
        yield from ui.tap(rid="send")

    def wrong_endings(self) -> dict:
        rest = re.split(r"(?<=[.。])\s*", self.params["text"], maxsplit=1)[-1]
        return {"summarised-from-the-second-sentence": ends.ending(
                    lambda t: lambda ui: t._ask(ui, f"Summarize: {rest}")),
                "pasted-the-text-without-asking": ends.ending(lambda t: lambda ui: t._ask(ui, t.params["text"]))}


class CrossLeaveRequestToNote(Task):
    """Draft a leave request with the assistant and save it as a note (stale clipboard must not be pasted)."""

    swaps = (("date", ends.choice("date")), ("reason", ends.choice("reason")))
    template = ("Ask the Assistant to write a leave request for {date} because of {reason}, then save the "
                "text in a new note titled \"Leave request\".")
    app_names = ("assistant", "notes")
    category = "cross-app"
    complexity = 8.0
    allowed = ('assistant.turns*', 'notes.notes[Leave request].*', 'system.clipboard')
    schema = {"date": Param(str, choices=DATES), "reason": Param(str, choices=REASONS)}

    def setup(self, phone: MockPhone) -> None:
        _stale_clipboard(phone)

    def check(self, phone: MockPhone) -> float:
        fresh = [r for r in _fresh(phone, "Ref: LR-") if self.params["date"] in r and self.params["reason"] in r]
        note = phone.state("notes").find("Leave request")
        return fraction(bool(fresh), note is not None and note.body.strip() in [r.strip() for r in fresh])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("assistant")
        yield from ui.type_into("prompt", _leave_prompt(self.params))
        yield from ui.tap(rid="send")
        yield from _copy_last(ui)
        yield from ui.open("notes")
        yield from ui.tap(rid="new_note")
        yield from ui.type_into("title", "Leave request")
        yield from ui.long_press(rid="body")
        yield from ui.tap(rid="save")


class CrossLeaveRequestToMail(Task):
    """Draft a leave request with the assistant and email it (body must be the fresh draft)."""

    swaps = (("to", ends.choice("to")), ("date", ends.choice("date")))
    template = ("Have the Assistant draft a leave request for {date} because of {reason} and email it to {to} "
                "with the subject \"Leave request\".")
    app_names = ("assistant", "mail")
    category = "cross-app"
    complexity = 9.0
    allowed = ('assistant.turns*', 'mail.emails[+1]*', 'system.clipboard')
    schema = {"date": Param(str, choices=DATES), "reason": Param(str, choices=REASONS),
              "to": Param(str, choices=("boss@example.com", "hr@example.com"))}

    def setup(self, phone: MockPhone) -> None:
        _stale_clipboard(phone)

    def check(self, phone: MockPhone) -> float:
        fresh = [r.strip() for r in _fresh(phone, "Ref: LR-") if self.params["date"] in r and self.params["reason"] in r]
        sent = [e for e in phone.state("mail").sent() if e.to == self.params["to"]]
        ok = bool(sent) and sent[-1].subject == "Leave request"
        return fraction(bool(fresh), ok, ok and sent[-1].body.strip() in fresh)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("assistant")
        yield from ui.type_into("prompt", _leave_prompt(self.params))
        yield from ui.tap(rid="send")
        yield from _copy_last(ui)
        yield from ui.open("mail")
        yield from ui.tap(rid="compose")
        yield from ui.type_into("to", self.params["to"])
        yield from ui.type_into("subject", "Leave request")
        yield from ui.long_press(rid="body")
        yield from ui.tap(rid="send")


class CrossBirthdayWishToMessage(AlsoAnother):
    """Get a birthday wish from the assistant and text it to the person."""

    template = "Ask the Assistant for a birthday wish for {name} and send it to {name} in Messages."
    app_names = ("assistant", "messages")
    category = "cross-app"
    complexity = 9.0
    allowed = ('assistant.turns*', 'messages.threads[{name}][+1]*', 'system.clipboard')
    also = ("name", "person")
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}  # any of the seed's contacts

    def setup(self, phone: MockPhone) -> None:
        ensure_person(phone, self.params["name"], self.world)
        phone.system.clipboard = f"Happy birthday, {self.params['name']}! Ref: BD-000000"

    def check(self, phone: MockPhone) -> float:
        wishes = _fresh(phone, "Ref: BD-")  # every wish asked for this episode must be for this person
        fresh = [r.strip() for r in _fresh(phone, f"Happy birthday, {self.params['name']}!")]
        sent = phone.state("messages").sent_to(self.params["name"])
        return fraction(bool(fresh) and len(fresh) == len(wishes), any(s.strip() in fresh for s in sent))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("assistant")
        yield from ui.type_into("prompt", f"Write a birthday wish for {self.params['name']}")
        yield from ui.tap(rid="send")
        yield from _copy_last(ui)
        yield from ui.open("messages")
        yield from ui.tap(rid="start_chat")
        yield from ui.type_into("to", search_key(self.params["name"]))
        yield from ui.tap(text=self.params["name"])
        yield from ui.long_press(rid="compose")
        yield from ui.tap(rid="send")


class CrossContactNumberToNote(AlsoAnother):
    """Copy a contact's number (long-press) into a new note."""

    template = "Save {name}'s phone number in a new note titled \"{name}\"."
    app_names = ("contacts", "notes")
    category = "cross-app"
    complexity = 7.0
    allowed = ('notes.notes[{name}].*', 'system.clipboard')
    also = ("name", "person")
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}  # any of the seed's contacts

    def setup(self, phone: MockPhone) -> None:
        ensure_person(phone, self.params["name"], self.world)
        phone.system.clipboard = "+1 555-000-0000"

    def check(self, phone: MockPhone) -> float:
        number = phone.state("contacts").find(self.params["name"]).phone
        note = phone.state("notes").find(self.params["name"])
        return float(note is not None and number in note.body)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(text=self.params["name"])
        yield from ui.long_press(rid="phone")
        yield from ui.open("notes")
        yield from ui.tap(rid="new_note")
        yield from ui.type_into("title", self.params["name"])
        yield from ui.long_press(rid="body")
        yield from ui.tap(rid="save")


# items whose name is no other product's substring (the search shows one row)
PRICE_ITEMS = ("Yoga Mat", "Desk Lamp", "Backpack", "French Press", "Travel Pillow", "Jump Rope", "Coffee Grinder",
               "Luggage Scale")


class CrossPriceToMessage(AlsoAnother):
    """Look up a product price in Shop and text it to someone."""

    template = "Find the price of the {item} in Shop and text it to {name}."
    app_names = ("shop", "messages")
    category = "cross-app"
    complexity = 8.0
    allowed = ('messages.threads[{name}][+1]*', 'system.clipboard')
    also = ("name", "person")
    schema = {"item": Param(str, choices=PRICE_ITEMS), "name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"item": rng.choice(PRICE_ITEMS), "name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        price = f"${phone.state('shop').product(self.params['item']).price}"
        return float(any(price in s for s in phone.state("messages").sent_to(self.params["name"])))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("shop")
        yield from ui.type_into("search", self.params["item"])
        yield from ui.key("enter")
        yield from ui.tap(text=self.params["item"])
        price = ui.find(rid="price").text
        yield from ui.open("messages")
        yield from ui.tap(rid="start_chat")
        yield from ui.type_into("to", search_key(self.params["name"]))
        yield from ui.tap(text=self.params["name"])
        yield from ui.type_into("compose", f"The {self.params['item']} costs {price}")
        yield from ui.tap(rid="send")


class CrossEventToAlarm(Task):
    """Read an event time in Calendar and set an alarm one hour before it."""

    template = "Set an alarm one hour before my \"{title}\" event."
    app_names = ("calendar", "clock")
    category = "cross-app"
    complexity = 7.0
    allowed = ('clock.alarms[+1]*', 'clock.alarms')
    schema = {"title": Param(str, choices=("Flight to Chengdu", "Job interview", "Marathon"))}

    def setup(self, phone: MockPhone) -> None:
        hour = 7 + phone.seed % 5
        phone.app("calendar").state.events.append(Event(self.params["title"], "2026-03-06", f"{hour:02d}:40"))

    def check(self, phone: MockPhone) -> float:
        event = phone.state("calendar").find(self.params["title"])
        h, m = (int(v) for v in event.time.split(":"))
        alarm = phone.state("clock").find(f"{h - 1:02d}:{m:02d}")
        return float(alarm is not None and alarm.enabled)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._alarm(ui)

    def wrong_endings(self) -> dict:
        return {"at-the-event-time": ends.ending(lambda t: lambda ui: t._alarm(ui, hours_before=0)),
                "two-hours-before": ends.ending(lambda t: lambda ui: t._alarm(ui, hours_before=2))}

    def _alarm(self, ui: UI, hours_before: int = 1) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(text=self.params["title"])
        when = ui.find(rid="event_when").text.split("· ")[1]
        h, m = (int(v) for v in when.split(":"))
        yield from ui.open("clock")
        yield from ui.tap(rid="add_alarm")
        yield from ui.type_into("hour", str(h - hours_before))
        yield from ui.type_into("minute", str(m))
        yield from ui.tap(rid="save")


class CrossEmailSummaryToNote(AlsoAnother):
    """Three apps: read an email, have the assistant summarize it, save the fresh summary as a note."""

    template = ("Ask the Assistant to summarize the \"{subject}\" email and save the summary in a new note "
                "titled \"Summary\".")
    app_names = ("mail", "assistant", "notes")
    category = "cross-app"
    complexity = 12.0
    allowed = ('assistant.turns*', 'notes.notes[Summary].*', 'system.clipboard')
    also = ("subject", "email")
    schema = {"subject": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"subject": inbox_subject(rng, world)}  # one email of the seed's inbox

    def setup(self, phone: MockPhone) -> None:
        ensure_mail(phone, self.params["subject"], self.world)
        phone.system.clipboard = "Summary (3 words): Old notes. Ref: SM-000000"

    def check(self, phone: MockPhone) -> float:
        body = phone.state("mail").by_subject(self.params["subject"]).body
        fresh = [r.strip() for r in _fresh(phone, f"{first_sentence(body)}. Ref: SM-")]
        note = phone.state("notes").find("Summary")
        return fraction(bool(fresh), note is not None and note.body.strip() in fresh)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        body = ui.find(rid="body").text
        yield from ui.open("assistant")
        yield from ui.type_into("prompt", f"Summarize: {body}")
        yield from ui.tap(rid="send")
        yield from _copy_last(ui)
        yield from ui.open("notes")
        yield from ui.tap(rid="new_note")
        yield from ui.type_into("title", "Summary")
        yield from ui.long_press(rid="body")
        yield from ui.tap(rid="save")


TASKS = (
    AssistantLeaveRequest, AssistantSummarize, CrossBirthdayWishToMessage, CrossContactNumberToNote,
    CrossEmailSummaryToNote, CrossEventToAlarm, CrossLeaveRequestToMail, CrossLeaveRequestToNote,
    CrossPriceToMessage,
)

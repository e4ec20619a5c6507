"""More cross-app hand-offs: mail → messages / calendar, contacts → mail, messages → bank, hotel → messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action

from mockphone.apps import data
from mockphone.apps.mail import Email
from mockphone.apps.messages import Message
from mockphone.errors import InvalidTaskParams
from mockphone.tasks import endings as ends
from mockphone.tasks.base import Param, Task, fraction, later
from mockphone.tasks.comm_tasks import FIXED, AlsoAnother, ensure_people, ensure_person, pick_name, search_key
from mockphone.tasks.superapp_tasks import hotel_search, set_budget

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI


def _message(ui: UI, name: str, text: str) -> Iterator[Action]:
    yield from ui.open("messages")
    yield from ui.tap(rid="start_chat")
    yield from ui.type_into("to", search_key(name))
    yield from ui.tap(text=name)
    yield from ui.type_into("compose", text)
    yield from ui.tap(rid="send")


class CrossMailCodeToMessage(Task):
    """Read a booking code from an email and text it to someone."""

    swaps = (("name", ends.choice("name")),)
    template = "Text {name} the booking code from the \"Table reservation\" email."
    app_names = ("mail", "messages")
    category = "cross-app"
    complexity = 8.0
    allowed = ('messages.threads[{name}][+1]*', 'system.clipboard')
    schema = {"name": Param(str, choices=FIXED)}

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        code = f"TB{4000 + phone.seed * 37 % 5000}"
        mail = phone.app("mail").state
        mail.emails.append(Email(98, "bookings@bistro.example", mail.me, "Table reservation",
                                 f"Your table for 4 is confirmed. Booking code {code}."))

    def check(self, phone: MockPhone) -> float:
        code = phone.state("mail").by_subject("Table reservation").body.split("code ")[1].rstrip(".")
        return float(any(code in s for s in phone.state("messages").sent_to(self.params["name"])))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text="Table reservation")
        code = ui.find(rid="body").text.split("code ")[1].rstrip(".")
        yield from _message(ui, self.params["name"], f"Booking code: {code}")


class CrossMailToCalendar(Task):
    """Create a calendar event from the date and time given in an email."""

    template = "Add the appointment from the \"{subject}\" email to my calendar, titled \"{subject}\"."
    app_names = ("mail", "calendar")
    category = "cross-app"
    complexity = 8.0
    allowed = ('calendar.events[{subject}].*', 'system.clipboard')
    schema = {"subject": Param(str, choices=("Dentist appointment", "Car inspection", "Vaccination"))}

    def setup(self, phone: MockPhone) -> None:
        day, hour = 10 + phone.seed % 9, 9 + phone.seed % 7
        mail = phone.app("mail").state
        mail.emails.append(Email(97, "booking@clinic.example", mail.me, self.params["subject"],
                                 f"Your appointment is on 2026-03-{day:02d} at {hour:02d}:15. Please arrive early."))

    def check(self, phone: MockPhone) -> float:
        body = phone.state("mail").by_subject(self.params["subject"]).body
        date, time = body.split(" on ")[1].split(" at ")[0], body.split(" at ")[1][:5]
        e = phone.state("calendar").find(self.params["subject"])
        return fraction(e is not None and e.date == date, e is not None and e.time == time)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._add(ui)

    def wrong_endings(self) -> dict:
        return {"the-day-after": ends.ending(lambda t: lambda ui: t._add(ui, days=1)),
                "an-hour-later": ends.ending(lambda t: lambda ui: t._add(ui, hours=1))}

    def _add(self, ui: UI, days: int = 0, hours: int = 0) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        body = ui.find(rid="body").text
        date, time = body.split(" on ")[1].split(" at ")[0], body.split(" at ")[1][:5]
        date, time = f"{date[:-2]}{int(date[-2:]) + days:02d}", later(time, hours) if hours else time
        yield from ui.open("calendar")
        yield from ui.tap(rid="new_event")
        yield from ui.type_into("title", self.params["subject"])
        yield from ui.type_into("date", date)
        yield from ui.type_into("time", time)
        yield from ui.tap(rid="save")


class CrossContactEmailToMail(AlsoAnother):
    """Look up a contact's email address and send them an email."""

    template = "Email {name} (address in Contacts) with the subject \"{subject}\"."
    app_names = ("contacts", "mail")
    category = "cross-app"
    complexity = 8.0
    allowed = ('mail.emails[+1]*', 'system.clipboard')
    also = ("name", "person")
    schema = {"name": Param(str), "subject": Param(str, choices=("Photos", "Tomorrow", "Thanks"))}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"name": pick_name(rng, world), "subject": rng.choice(("Photos", "Tomorrow", "Thanks"))}

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        address = phone.state("contacts").find(self.params["name"]).email
        sent = [e for e in phone.state("mail").sent() if e.to == address]
        return fraction(bool(sent), bool(sent) and sent[-1].subject == self.params["subject"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(text=self.params["name"])
        row = ui.find(rid="email")
        address = next(e.text for e in ui.elements() if e.parent == row.index and e.resource_id == "android:id/summary")
        yield from ui.open("mail")
        yield from ui.tap(rid="compose")
        yield from ui.type_into("to", address)
        yield from ui.type_into("subject", self.params["subject"])
        yield from ui.tap(rid="send")


class CrossMessageRequestToBank(Task):
    """Pay back the amount a friend asked for in a text message."""

    template = "{name} asked me for money in Messages. Send them the amount they asked for from my bank app."
    app_names = ("messages", "bank")
    category = "cross-app"
    complexity = 9.0
    allowed = ('bank.balances[Checking]', 'bank.history[+1]*')
    schema = {"name": Param(str, choices=FIXED)}

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        amount = 12 + phone.seed % 40
        phone.app("messages").state.threads[self.params["name"]] = [
            Message(self.params["name"], f"Hey! Could you send me ${amount} for the concert tickets?")]
        bank = phone.app("bank").state
        if self.params["name"] not in bank.payees:
            bank.payees.insert(0, self.params["name"])

    def check(self, phone: MockPhone) -> float:
        text = phone.state("messages").threads[self.params["name"]][0].text
        cents = int(text.split("$")[1].split()[0]) * 100
        paid = [t for t in phone.state("bank").history if t.kind == "payment"]
        return fraction(len(paid) == 1 and paid[0].description.startswith(f"To {self.params['name']}"),
                        len(paid) == 1 and paid[0].amount == -cents)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._pay(ui)

    def wrong_endings(self) -> dict:
        return {"ten-times-the-amount": ends.ending(lambda t: lambda ui: t._pay(ui, lambda a: a * 10)),
                "a-dollar-less": ends.ending(lambda t: lambda ui: t._pay(ui, lambda a: a - 1))}

    def _pay(self, ui: UI, misread=lambda a: a) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.tap(text=self.params["name"])
        text = ui.find(rid="message_text").text
        amount = str(misread(int(text.split("$")[1].split()[0])))
        yield from ui.open("bank")
        yield from ui.tap(rid="send_money")
        yield from ui.tap(text=self.params["name"])
        yield from ui.type_into("amount", amount)
        yield from ui.tap(rid="send")
        yield from ui.tap(text="SEND")


class CrossHotelShare(Task):
    """Book a hotel within budget in the mini-app, then text its name to someone."""

    swaps = (("name", ends.choice("name")),)
    template = "Book a hotel in {city} under ¥{budget} a night and text the hotel's name to {name}."
    app_names = ("superapp", "messages")
    category = "cross-app"
    complexity = 10.0
    allowed = ('messages.threads[{name}][+1]*', 'superapp.bookings[+1]*', 'system.clipboard')
    schema = {"city": Param(str, choices=data.CITIES), "budget": Param(int, choices=(150, 200), min=50, max=1000),
              "name": Param(str, choices=FIXED)}
    # any hotel of the city within budget is right: another budget may book another right hotel, so the
    # invariants' other-params ending is another city
    other_params_differ = ("city",)

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)

    def check(self, phone: MockPhone) -> float:
        b = phone.state("superapp").bookings
        booked = len(b) == 1 and b[0].city == self.params["city"] and b[0].price <= self.params["budget"]
        shared = booked and any(b[0].hotel in s for s in phone.state("messages").sent_to(self.params["name"]))
        return fraction(booked, shared)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from hotel_search(ui, self.params["city"])
        yield from set_budget(ui, self.params["budget"])
        row = ui.find_all("hotel_row")[0]
        hotel = next(e.text for e in ui.elements() if e.parent == row.index)
        yield from ui.tap(text=hotel)
        yield from ui.tap(rid="book")
        yield from ui.tap(text="PAY")
        yield from _message(ui, self.params["name"], f"I booked {hotel}")


class FoodOrderTwoDishes(Task):
    """Order two different dishes from one restaurant in a single order."""

    swaps = (("second", lambda t, phone: next(d for d, _ in data.RESTAURANTS[t.params["restaurant"]]
                                              if d not in (t.params["first"], t.params["second"]))),)
    template = "Order {first} and {second} from {restaurant} in one food order."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 7.0
    allowed = ('superapp.food_orders[+1]*', 'superapp.basket*')
    schema = {"restaurant": Param(str, choices=tuple(data.RESTAURANTS)), "first": Param(str), "second": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        restaurant = rng.choice(sorted(data.RESTAURANTS))
        first, second = rng.sample([d for d, _ in data.RESTAURANTS[restaurant]], 2)
        return {"restaurant": restaurant, "first": first, "second": second}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        menu = dict(data.RESTAURANTS[params["restaurant"]])
        if params["first"] not in menu or params["second"] not in menu or params["first"] == params["second"]:
            raise InvalidTaskParams(f"{cls.name()}: need two different dishes from {params['restaurant']}'s menu")

    def check(self, phone: MockPhone) -> float:
        orders = phone.state("superapp").food_orders
        return float(len(orders) == 1 and orders[0].items == {self.params["first"]: 1, self.params["second"]: 1})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("superapp")
        yield from ui.tap(rid="mini_food")
        yield from ui.tap(text=self.params["restaurant"])
        yield from ui.tap(text=f"Add {self.params['first']}")
        yield from ui.tap(text=f"Add {self.params['second']}")
        yield from ui.tap(rid="basket")
        yield from ui.tap(rid="place_order")
        yield from ui.tap(text="ORDER")


TASKS = (
    CrossContactEmailToMail, CrossHotelShare, CrossMailCodeToMessage, CrossMailToCalendar,
    CrossMessageRequestToBank, FoodOrderTwoDishes,
)

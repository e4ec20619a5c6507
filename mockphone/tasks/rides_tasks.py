"""Rides tasks: request and schedule rides, cancel, rate, pay, promo codes, saved addresses, fares.

Parameters come from the seed's Rides account and places (``mockphone.world.places``):
which address, which past trip, which card, which code. What a task names is planted on a
phone whose world lacks it, so an instance runs on any phone; prices are the app's own
quote (``RidesApp.price``), so the verifier and the screen agree.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.rides import Scheduled, Trip
from mockphone.tasks import endings as ends
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, final_answer
from mockphone.tasks.endings import answer, ending
from mockphone.world.places import KINDS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World

TRIPS = "rides.trips[+1]*"  # one new trip
LABELS = ("Home address", "Work address")
DATES = tuple(f"2026-03-{d:02d}" for d in range(3, 10))


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def _address(rng: random.Random, world: World | None) -> str:
    return rng.choice(_world(world).places).address


def other_kind(kind: str) -> str:
    return "Comfort" if kind == "Economy" else "Economy"


def ensure_trip(phone: MockPhone, task: Task, address: str, date: str) -> Trip:
    """The past trip to ``address`` on ``date`` on ``phone``, planted from the task's world when missing."""
    state = phone.app("rides").state
    found = next((t for t in state.trips if t.destination == address and t.date == date), None)
    if found is None:
        wt = next((t for t in task.world.rides.trips if t.destination == address and t.date == date), None)
        found = Trip(wt.tid if wt else f"T9{len(state.trips):03d}", address, wt.kind if wt else "Economy",
                     wt.fare if wt else 14.5, date, wt.driver if wt else "Sam Ortiz", 0, "Completed", state.payment)
        state.trips.append(found)
    return found


def request(ui: UI, address: str, kind: str, confirm: bool = True) -> Iterator[Action]:
    """Open Rides, type the destination, pick ``kind`` and request it."""
    yield from ui.open("rides")
    yield from ui.type_into("destination", address)
    yield from ui.tap(rid="see_prices")
    yield from ui.tap(text=kind)
    yield from ui.tap(rid="request")
    if confirm:
        yield from ui.tap(text="Confirm")


def requested(phone: MockPhone) -> list[Trip]:
    return phone.state("rides").requested()


class RidesRequestRide(Task):
    """Request a ride of a given type to an address."""

    template = "Request a Rides {kind} ride to {address}."
    app_names = ("rides",)
    complexity = 5.0
    allowed = (TRIPS,)
    schema = {"address": Param(str, doc="an address of the seed's places"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": _address(rng, world), "kind": rng.choice(KINDS)}

    def check(self, phone: MockPhone) -> float:
        trips = requested(phone)
        return float(len(trips) == 1 and trips[0].destination == self.params["address"]
                     and trips[0].kind == self.params["kind"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from request(ui, self.params["address"], self.params["kind"])

    def wrong_endings(self) -> dict:
        def wrong_kind(task):
            return lambda ui: request(ui, task.params["address"], other_kind(task.params["kind"]))

        def twice(task):
            def script(ui):
                yield from request(ui, task.params["address"], task.params["kind"])
                yield from ui.key("back")
                yield from request(ui, task.params["address"], task.params["kind"])
            return script
        return {"other-ride-type": ending(wrong_kind), "requested-twice": ending(twice)}


class RidesRideToSavedPlace(Task):
    """Request a ride to the account's Home or Work address (its shortcut on the Ride tab)."""

    swaps = (("kind", ends.choice("kind"), "also"),)
    template = "Get me a Rides {kind} ride to my {place}."
    app_names = ("rides",)
    complexity = 4.0
    allowed = (TRIPS,)
    schema = {"place": Param(str, choices=LABELS), "kind": Param(str, choices=KINDS)}

    def check(self, phone: MockPhone) -> float:
        label = self.params["place"].split()[0]
        target = self.start_state(phone)[f"rides.places[{label}]"]
        trips = requested(phone)
        return float(len(trips) == 1 and trips[0].destination == target and trips[0].kind == self.params["kind"])

    def _ride(self, ui: UI, label: str, kind: str) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid=f"place_{label.split()[0].lower()}")  # the saved place's shortcut on the Ride tab
        yield from ui.tap(text=kind)
        yield from ui.tap(rid="request")
        yield from ui.tap(text="Confirm")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._ride(ui, self.params["place"], self.params["kind"])

    def wrong_endings(self) -> dict:
        def other_place(task):
            other = next(lb for lb in LABELS if lb != task.params["place"])
            return lambda ui: task._ride(ui, other, task.params["kind"])
        return {"the-other-saved-place": ending(other_place)}


class RidesAnswerFare(Task):
    """Read a quote: what a ride type costs to an address."""

    wrong_answers = (("misread", ends.misread),)
    template = "How much does a Rides {kind} ride to {address} cost? Answer with the price."
    app_names = ("rides",)
    complexity = 4.0
    changes_state = False
    schema = {"address": Param(str, doc="an address of the seed's places"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": _address(rng, world), "kind": rng.choice(KINDS)}

    def check(self, phone: MockPhone) -> float:
        price = phone.app("rides").price(self.params["address"], self.params["kind"])
        return float(answers.only(answers.numbers(final_answer(phone)), price))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.type_into("destination", self.params["address"])
        yield from ui.tap(rid="see_prices")
        rows = yield from ui.collect("ride_option")
        yield Action("answer", text=next(r for r in rows if r[0] == _shown(ui, self.params["kind"]))[-1])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                price = ui.phone.app("rides").price(task.params["address"], other_kind(task.params["kind"]))
                yield from answer(f"{price:.2f}")
            return script
        return {"another-ride-types-price": ending(other)}


def _shown(ui: UI, word: str) -> str:
    from mockphone import i18n

    return i18n.label(word, ui.phone.locale)


class RidesApplyPromo(Task):
    """Enter a promo code in the account's promo form (format and validity are checked)."""

    template = "Apply the promo code {code} in Rides."
    app_names = ("rides",)
    complexity = 4.0
    allowed = ("rides.promos",)
    schema = {"code": Param(str, doc="one of the seed's promo codes (4 letters, 2 digits)")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"code": rng.choice(_world(world).rides.promo_codes)}

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("rides").state
        if self.params["code"] not in state.offers:
            state.offers = (*state.offers, self.params["code"])

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("rides").promos == [self.params["code"]])

    @staticmethod
    def enter(ui: UI, code: str) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_account")
        yield from ui.tap(rid="promo_codes")
        yield from ui.type_into("code", code)
        yield from ui.tap(rid="apply")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.enter(ui, self.params["code"])

    def wrong_endings(self) -> dict:
        def another(task):
            def script(ui):
                code = next(c for c in ui.phone.app("rides").state.offers if c != task.params["code"])
                yield from task.enter(ui, code)
            return script

        def both(task):
            def script(ui):
                code = next(c for c in ui.phone.app("rides").state.offers if c != task.params["code"])
                yield from task.enter(ui, task.params["code"])
                yield from ui.type_into("code", code)
                yield from ui.tap(rid="apply")
            return script
        return {"another-offer": ending(another), "an-extra-code-too": ending(both)}


class RidesScheduleRide(Task):
    """Schedule a ride for a date and time (the form validates both)."""

    template = "Schedule a Rides {kind} ride to {address} on {date} at {time}."
    app_names = ("rides",)
    complexity = 7.0
    allowed = ("rides.scheduled[+1]*",)
    schema = {"address": Param(str, doc="an address of the seed's places"), "kind": Param(str, choices=KINDS),
              "date": Param(str, choices=DATES), "time": Param(str, doc="HH:MM")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": _address(rng, world), "kind": rng.choice(KINDS), "date": rng.choice(DATES),
                "time": f"{rng.randint(6, 21):02d}:{rng.choice(('00', '15', '30', '45'))}"}

    def check(self, phone: MockPhone) -> float:
        start = {k for k in self.start_state(phone) if k.startswith("rides.scheduled[")}
        new = [s for s in phone.state("rides").scheduled if f"rides.scheduled[{s.sid}].sid" not in start]
        p = self.params
        return float(len(new) == 1 and (new[0].destination, new[0].kind, new[0].date, new[0].time)
                     == (p["address"], p["kind"], p["date"], p["time"]))

    def schedule(self, ui: UI, time: str) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.type_into("destination", self.params["address"])
        yield from ui.tap(rid="see_prices")
        yield from ui.tap(text=self.params["kind"])
        yield from ui.tap(rid="schedule")
        yield from ui.type_into("date", self.params["date"])
        yield from ui.type_into("time", time)
        yield from ui.tap(rid="save_schedule")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.schedule(ui, self.params["time"])

    def wrong_endings(self) -> dict:
        def now(task):
            return lambda ui: request(ui, task.params["address"], task.params["kind"])

        def hour_later(task):
            hour, minute = map(int, task.params["time"].split(":"))
            return lambda ui: task.schedule(ui, f"{(hour + 1) % 24:02d}:{minute:02d}")
        return {"requested-now": ending(now), "an-hour-later": ending(hour_later)}


class RidesCancelScheduled(Task):
    """Cancel one scheduled ride (detail page, confirmation), keeping the others."""

    template = "Cancel my scheduled ride to {address} in Rides."
    app_names = ("rides",)
    complexity = 4.0
    schema = {"address": Param(str, doc="the destination of one of the seed's scheduled rides")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": rng.choice(_world(world).rides.scheduled).destination}

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("rides").state
        if not any(s.destination == self.params["address"] for s in state.scheduled):
            state.scheduled.append(Scheduled("S9001", self.params["address"], "Comfort", "2026-03-05", "08:30"))

    def derived_allowed(self, start: dict) -> list[str]:
        keys = statediff.keys_where(start, "rides.scheduled", "destination", self.params["address"])
        return [f"rides.scheduled[{k}]*" for k in keys]

    def check(self, phone: MockPhone) -> float:
        return float(not any(s.destination == self.params["address"] for s in phone.state("rides").scheduled))

    @staticmethod
    def cancel(ui: UI, address: str, button: str = "Cancel ride") -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_activity")
        yield from ui.tap(text=address)
        yield from ui.tap(rid="unschedule")
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.cancel(ui, self.params["address"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                s = next(s for s in ui.phone.app("rides").state.scheduled if s.destination != task.params["address"])
                yield from task.cancel(ui, s.destination)
            return script
        return {"cancelled-another-ride": ending(other),
                "cancelled-it-and-another-too": ends.after(other)}


def _trip_param(rng: random.Random, world: World | None, unrated: bool) -> dict:
    trips = _world(world).rides.trips
    pool = [t for t in trips if t.rating == 0] if unrated else list(trips)
    trip = rng.choice(pool or list(trips))
    return {"address": trip.destination, "date": trip.date}


class RidesRateTrip(Task):
    """Rate one past trip from its detail page."""

    template = "Rate my Rides trip to {address} on {date} {stars} stars."
    app_names = ("rides",)
    complexity = 4.0
    schema = {"address": Param(str, doc="a past trip's destination"), "date": Param(str, doc="its date"),
              "stars": Param(int, choices=(1, 2, 3, 4, 5), min=1, max=5)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {**_trip_param(rng, world, unrated=True), "stars": rng.choice((1, 2, 3, 4, 5))}

    def setup(self, phone: MockPhone) -> None:
        ensure_trip(phone, self, self.params["address"], self.params["date"]).rating = 0

    def derived_allowed(self, start: dict) -> list[str]:
        keys = set(statediff.keys_where(start, "rides.trips", "destination", self.params["address"]))
        keys &= set(statediff.keys_where(start, "rides.trips", "date", self.params["date"]))
        return [f"rides.trips[{k}].rating" for k in sorted(keys)]

    def check(self, phone: MockPhone) -> float:
        trip = next(t for t in phone.state("rides").trips
                    if t.destination == self.params["address"] and t.date == self.params["date"])
        return float(trip.rating == self.params["stars"])

    @staticmethod
    def rate(ui: UI, address: str, stars: int) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_activity")
        yield from ui.tap(text=address)
        yield from ui.tap(rid=f"rate_{stars}")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.rate(ui, self.params["address"], self.params["stars"])

    def wrong_endings(self) -> dict:
        def other_trip(task):
            def script(ui):
                t = next(t for t in ui.phone.app("rides").state.trips if t.destination != task.params["address"])
                yield from task.rate(ui, t.destination, task.params["stars"])
            return script

        def five(task):
            stars = 5 if task.params["stars"] != 5 else 4
            return lambda ui: task.rate(ui, task.params["address"], stars)
        return {"rated-another-trip": ending(other_trip), "other-stars": ending(five)}


class RidesAnswerPastFare(Task):
    """Read a past trip's fare from Activity."""

    wrong_answers = (("misread", ends.misread),)
    template = "How much did I pay for my Rides trip to {address} on {date}? Answer with the amount."
    app_names = ("rides",)
    complexity = 3.0
    changes_state = False
    schema = {"address": Param(str, doc="a past trip's destination"), "date": Param(str, doc="its date")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return _trip_param(rng, world, unrated=False)

    def setup(self, phone: MockPhone) -> None:
        ensure_trip(phone, self, self.params["address"], self.params["date"])

    def check(self, phone: MockPhone) -> float:
        trip = next(t for t in phone.state("rides").trips
                    if t.destination == self.params["address"] and t.date == self.params["date"])
        return float(answers.only(answers.numbers(final_answer(phone)), trip.fare))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_activity")
        yield from ui.tap(text=self.params["address"])
        yield Action("answer", text=ui.find(rid="fare").text)

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                trips = ui.phone.app("rides").state.trips
                mine = next(t for t in trips if t.destination == task.params["address"])
                t = next(t for t in trips if t.fare != mine.fare)
                yield from answer(f"{t.fare:.2f}")
            return script
        return {"another-trips-fare": ending(other)}


class RidesSetDefaultCard(Task):
    """Choose another default payment card in Account."""

    swaps = (("card", lambda t, phone: next((c for c in phone.state("rides").cards if c not in (
        t.params["card"], t.start_state(phone)["rides.payment"])), None), "also"),)
    template = "Make my {card} the default payment method in Rides."
    app_names = ("rides",)
    complexity = 3.0
    allowed = ("rides.payment",)
    schema = {"card": Param(str, doc="one of the seed's cards, not the default")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        r = _world(world).rides
        return {"card": rng.choice([c for c in r.cards if c != r.default_card])}

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("rides").state
        if self.params["card"] not in state.cards:
            state.cards = (*state.cards, self.params["card"])

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("rides").payment == self.params["card"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_account")
        yield from ui.tap(text=self.params["card"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("rides").state
                card = next(c for c in state.cards if c not in (task.params["card"], state.payment))
                yield from ui.open("rides")
                yield from ui.tap(rid="tab_account")
                yield from ui.tap(text=card)
            return script
        return {"another-card": ending(other)}


class RidesSetWorkAddress(Task):
    """Change the account's Work address (the form refuses an address under 5 characters)."""

    near_misses = (("house-number-off", lambda p: {"address": ends.digit_slip(p["address"])}),)
    template = "Change my Work address in Rides to {address}."
    app_names = ("rides",)
    complexity = 4.0
    allowed = ("rides.places[Work]",)
    schema = {"address": Param(str, doc="an address of the seed's places")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": _address(rng, world)}

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("rides").places.get("Work") == self.params["address"])

    @staticmethod
    def fill(ui: UI, label: str, address: str) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_account")
        yield from ui.tap(rid=f"edit_{label}")
        yield from ui.type_into("address", address)
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.fill(ui, "work", self.params["address"])

    def wrong_endings(self) -> dict:
        return {"changed-home-instead": ending(lambda task: lambda ui: task.fill(ui, "home", task.params["address"]))}


TASKS = (RidesAnswerFare, RidesAnswerPastFare, RidesApplyPromo, RidesCancelScheduled, RidesRateTrip, RidesRequestRide,
         RidesRideToSavedPlace, RidesScheduleRide, RidesSetDefaultCard, RidesSetWorkAddress)

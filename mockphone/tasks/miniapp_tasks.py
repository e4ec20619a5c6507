"""Tasks of the SuperApp's ride-hailing and movie-tickets mini-programs (``mockphone.apps.miniapps``), and their helpers.

Parameters come from the seed's world (``mockphone.world.miniapps`` and the Maps places):
which film, cinema, address (``services_tasks`` holds the express and utility ones). What a task names is planted on a phone whose
world lacks it, so an instance runs on any phone. Prices and fares are the mini-programs'
own (``miniapps.ride_fare``), so the verifier and the screen agree. Every template has its
wrong-but-plausible endings as code (``mockphone.tasks.endings``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone import i18n
from mockphone.apps.miniapps import Ticket, ride_fare
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer
from mockphone.tasks.endings import answer, ending
from mockphone.world.places import KINDS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World

RIDES, TICKETS, PARCELS, SHIPMENTS = ("superapp.minis.rides*", "superapp.minis.recent"), ("superapp.minis.tickets*",), \
    ("superapp.minis.parcels*",), ("superapp.minis.shipments*",)
BILL_CHANGES = ("superapp.minis.bills*", "superapp.minis.payments*")
ROWS = {"ride": "mini_ride", "movie": "mini_movie", "express": "mini_express", "utility": "mini_utility"}


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def minis(phone: MockPhone):
    """The mini-programs' state (the live one: setup plants into it, checks only read it)."""
    return phone.app("superapp").state.minis


def open_mini(ui: UI, mini: str) -> Iterator[Action]:
    yield from ui.open("superapp")
    yield from ui.tap(rid=ROWS[mini])


def said(phone: MockPhone, value: str) -> bool:
    """The episode's one answer is ``value`` (as this phone shows it)."""
    got = answers.norm(final_answer(phone))
    return bool(got) and got in {answers.norm(value), answers.norm(i18n.t(value, phone.locale))}


def said_number(phone: MockPhone, value: float) -> bool:
    return answers.only(answers.numbers(final_answer(phone)), float(value))


def records(start: dict, prefix: str) -> list[dict]:
    """The records of list ``prefix`` in a state snapshot, as ``{field: value}`` dicts in snapshot order."""
    out: dict[str, dict] = {}
    for path, value in start.items():
        if path.startswith(prefix + "[") and "]." in path:
            key, name = path[len(prefix) + 1:].rsplit("].", 1)
            out.setdefault(key, {})[name] = value
    return list(out.values())


def seq(*steps):
    """A script that plays ``steps`` (functions of the UI giving actions) one after another."""
    def script(ui):
        for step in steps:
            yield from step(ui)
    return script


# --- ride hailing ------------------------------------------------------------------

def request_ride(ui: UI, to: str, kind: str) -> Iterator[Action]:
    """Open the ride mini-program, type ``to`` (an address or a place), pick ``kind`` and confirm."""
    yield from open_mini(ui, "ride")
    yield from ui.type_into("ride_to", to)
    yield from ui.tap(rid="ride_fares")
    yield from ui.tap(text=kind)
    yield from ui.tap(text="REQUEST")


def one_ride(phone: MockPhone, to: str, kind: str) -> bool:
    rides = minis(phone).rides
    return len(rides) == 1 and rides[0].destination == to and rides[0].kind == kind


def pick_address(rng: random.Random, world: World | None) -> str:
    return rng.choice(_world(world).places).address


def other_kind(kind: str) -> str:
    return "Comfort" if kind == "Economy" else "Economy"


def recent_instead(task: Task, kind: str):
    def script(ui):  # tapped the first recent destination instead of typing the asked one
        yield from open_mini(ui, "ride")
        yield from ui.tap(rid="ride_recent")
        yield from ui.tap(text=kind)
        yield from ui.tap(text="REQUEST")
    return script


class MiniRideRequest(Task):
    """Request a ride of a given type to an address in the ride-hailing mini-program."""

    template = "In the SuperApp ride-hailing mini-program, request an {kind} ride to {address}."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 5.0
    allowed = RIDES
    schema = {"address": Param(str, doc="an address of the seed's places"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": pick_address(rng, world), "kind": rng.choice(KINDS)}

    def check(self, phone: MockPhone) -> float:
        return float(one_ride(phone, self.params["address"], self.params["kind"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from request_ride(ui, self.params["address"], self.params["kind"])

    def wrong_endings(self) -> dict:
        return {"other-ride-type": ending(lambda t: lambda ui: request_ride(ui, t.params["address"],
                                                                             other_kind(t.params["kind"]))),
                "a-recent-destination": ending(lambda t: recent_instead(t, t.params["kind"]))}


class MiniRideToPlace(Task):
    """Request a ride to a Maps place by name (the mini-program resolves it to the place's address)."""

    template = "Use the SuperApp ride-hailing mini-program to get an {kind} ride to {place}."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 5.0
    allowed = RIDES
    schema = {"place": Param(str, doc="a place of the seed's Maps"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": rng.choice(_world(world).places).name, "kind": rng.choice(KINDS)}

    def setup(self, phone: MockPhone) -> None:
        wp = next((p for p in self.world.places if p.name == self.params["place"]), None)
        minis(phone).places.setdefault(self.params["place"], wp.address if wp else f"1 {self.params['place']} Road")

    def check(self, phone: MockPhone) -> float:
        return float(one_ride(phone, minis(phone).places[self.params["place"]], self.params["kind"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from request_ride(ui, self.params["place"], self.params["kind"])

    def wrong_endings(self) -> dict:
        return {"other-ride-type": ending(lambda t: lambda ui: request_ride(ui, t.params["place"],
                                                                             other_kind(t.params["kind"]))),
                "a-recent-destination": ending(lambda t: recent_instead(t, t.params["kind"]))}


class MiniRideAnswerFare(Task):
    """Read a quote in the ride mini-program: what a ride type to an address costs."""

    swaps = (("kind", ends.choice("kind")),)
    wrong_answers = (("misread", ends.misread),)
    template = "How much is an {kind} ride to {address} in the SuperApp ride-hailing mini-program? Answer with the price."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 4.0
    changes_state = False
    schema = {"address": Param(str, doc="an address of the seed's places"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": pick_address(rng, world), "kind": rng.choice(KINDS)}

    def check(self, phone: MockPhone) -> float:
        return float(said_number(phone, ride_fare(self.params["address"], self.params["kind"])))

    def _quote(self, ui: UI, kind: str) -> Iterator[Action]:
        yield from open_mini(ui, "ride")
        yield from ui.type_into("ride_to", self.params["address"])
        yield from ui.tap(rid="ride_fares")
        rows = yield from ui.collect("ride_option")
        yield Action("answer", text=next(r[1] for r in rows if r[0] == i18n.t(kind, ui.phone.locale)))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._quote(ui, self.params["kind"])

    def wrong_endings(self) -> dict:
        return {"other-ride-type": ending(lambda t: lambda ui: t._quote(ui, other_kind(t.params["kind"])))}


class MiniRideComfortIfUnder(Task):
    """A conditional request: Comfort when its fare is within a limit, Economy otherwise."""

    template = ("In the SuperApp ride-hailing mini-program, request a Comfort ride to {address} if it costs at most "
                "¥{limit}; otherwise request an Economy ride.")
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 6.0
    allowed = RIDES
    schema = {"address": Param(str, doc="an address of the seed's places"), "limit": Param(int, min=5, max=1000)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        address = pick_address(rng, world)
        comfort = ride_fare(address, "Comfort")
        return {"address": address, "limit": int(comfort) + rng.choice((-10, -5, 5, 10))}

    def _kind(self) -> str:
        return "Comfort" if ride_fare(self.params["address"], "Comfort") <= self.params["limit"] else "Economy"

    def check(self, phone: MockPhone) -> float:
        return float(one_ride(phone, self.params["address"], self._kind()))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from request_ride(ui, self.params["address"], self._kind())

    def wrong_endings(self) -> dict:
        return {"the-other-branch": ending(lambda t: lambda ui: request_ride(ui, t.params["address"],
                                                                              other_kind(t._kind()))),
                "the-biggest-car": ending(lambda t: lambda ui: request_ride(ui, t.params["address"], "XL"))}


# --- movie tickets -----------------------------------------------------------------

def ensure_film(phone: MockPhone, task: Task, title: str):
    state = minis(phone)
    found = state.film(title)
    if found is None:
        found = next(f for f in task.world.movies if f.title == title)
        state.films.append(found)
    return found


def buy(ui: UI, title: str, cinema: str, qty: int = 1) -> Iterator[Action]:
    """From the film list: open ``title``, pick the showing at ``cinema``, ``qty`` tickets, pay."""
    yield from ui.tap(text=title)
    yield from ui.tap(text=cinema)
    yield from ui.tap(rid=f"qty_{qty}")
    yield from ui.tap(rid="buy")
    yield from ui.tap(text="PAY")


def new_tickets(task: Task, phone: MockPhone) -> list[Ticket] | None:
    """The tickets bought in this episode (newest first), or None when an earlier one changed."""
    now = minis(phone).tickets
    before = records(task.start_state(phone), "superapp.minis.tickets")
    if len(now) < len(before) or sorted(t.code for t in now[len(now) - len(before):]) != sorted(
            r["code"] for r in before):
        return None
    return now[:len(now) - len(before)]


class MovieBuyTickets(Task):
    """Buy a number of tickets for a film at one cinema in the movie-tickets mini-program."""

    template = "Buy {qty} tickets for {film} at {cinema} in the SuperApp movie-tickets mini-program."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 6.0
    allowed = TICKETS
    schema = {"film": Param(str, doc="a film of the seed's cinemas"), "cinema": Param(str),
              "qty": Param(int, choices=(1, 2, 3, 4))}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        film = rng.choice(_world(world).movies)
        return {"film": film.title, "cinema": rng.choice(film.showings).cinema, "qty": rng.choice((1, 2, 3, 4))}

    def setup(self, phone: MockPhone) -> None:
        ensure_film(phone, self, self.params["film"])

    def check(self, phone: MockPhone) -> float:
        got = new_tickets(self, phone)
        return float(got is not None and len(got) == 1 and (got[0].film, got[0].cinema, got[0].qty) ==
                     (self.params["film"], self.params["cinema"], self.params["qty"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_mini(ui, "movie")
        yield from buy(ui, self.params["film"], self.params["cinema"], self.params["qty"])

    def wrong_endings(self) -> dict:
        def other_cinema(t):
            cinemas = [s.cinema for s in next(f for f in t.world.movies if f.title == t.params["film"]).showings]
            other = next(c for c in cinemas if c != t.params["cinema"])
            return seq(lambda ui: open_mini(ui, "movie"), lambda ui: buy(ui, t.params["film"], other, t.params["qty"]))

        def one_more(t):
            return seq(lambda ui: open_mini(ui, "movie"),
                       lambda ui: buy(ui, t.params["film"], t.params["cinema"], t.params["qty"] % 4 + 1))
        return {"other-cinema": ending(other_cinema), "wrong-quantity": ending(one_more)}


def cheapest(film):
    return min(film.showings, key=lambda s: (s.price, s.cinema))


class MovieCheapestShowing(Task):
    """Buy one ticket for a film at its cheapest showing (the list is by cinema, not by price)."""

    template = "Buy one ticket for {film} at its cheapest showing in the SuperApp movie-tickets mini-program."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 6.0
    allowed = TICKETS
    schema = {"film": Param(str, doc="a film of the seed's cinemas")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"film": rng.choice(_world(world).movies).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_film(phone, self, self.params["film"])

    def check(self, phone: MockPhone) -> float:
        got, best = new_tickets(self, phone), cheapest(minis(phone).film(self.params["film"]))
        return float(got is not None and len(got) == 1 and got[0].film == self.params["film"]
                     and got[0].cinema == best.cinema and got[0].qty == 1)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_mini(ui, "movie")
        yield from ui.tap(text=self.params["film"])
        rows = yield from ui.collect("showing_row")  # [cinema, "19:30 · ¥45"]: the cheapest read off the screen
        yield from ui.tap(text=min(rows, key=lambda r: (int(r[1].split("¥")[-1]), r[0]))[0])
        yield from ui.tap(rid="qty_1")
        yield from ui.tap(rid="buy")
        yield from ui.tap(text="PAY")

    def wrong_endings(self) -> dict:
        def dearest(t):
            return seq(lambda ui: open_mini(ui, "movie"), lambda ui: buy(ui, t.params["film"], max(
                minis(ui.phone).film(t.params["film"]).showings, key=lambda s: s.price).cinema))

        def two(t):
            return seq(lambda ui: open_mini(ui, "movie"), lambda ui: buy(
                ui, t.params["film"], cheapest(minis(ui.phone).film(t.params["film"])).cinema, 2))
        return {"the-dearest-showing": ending(dearest), "two-tickets": ending(two)}


class MovieAnswerRating(Task):
    """Read a film's rating in the movie-tickets mini-program."""

    template = "What is {film} rated in the SuperApp movie-tickets mini-program? Answer with the rating."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 3.0
    changes_state = False
    schema = {"film": Param(str, doc="a film of the seed's cinemas")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"film": rng.choice(_world(world).movies).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_film(phone, self, self.params["film"])

    def check(self, phone: MockPhone) -> float:
        return float(said_number(phone, minis(phone).film(self.params["film"]).rating))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_mini(ui, "movie")
        yield from ui.tap(text=self.params["film"])
        yield Action("answer", text=ui.find(rid="film_rating").text.lstrip("★"))

    def wrong_endings(self) -> dict:
        def other(t):
            def script(ui):
                films = minis(ui.phone).films
                f = next(f for f in films if f.title != t.params["film"]
                         and f.rating != minis(ui.phone).film(t.params["film"]).rating)
                yield from answer(str(f.rating))
            return script

        def price(t):
            return lambda ui: answer(str(cheapest(minis(ui.phone).film(t.params["film"])).price))
        return {"another-film-s-rating": ending(other), "answered-the-price": ending(price)}


class MovieAnswerTicketCode(Task):
    """Read the pickup code of a ticket bought earlier (My tickets holds two)."""

    wrong_answers = (("misread", ends.misread),)
    template = "What is the pickup code of my {film} ticket in the SuperApp movie-tickets mini-program?"
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 3.0
    changes_state = False
    schema = {"film": Param(str, doc="the film of one of the seed's earlier tickets")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"film": rng.choice(_world(world).movie_tickets).film}

    def setup(self, phone: MockPhone) -> None:
        ensure_ticket(phone, self, self.params["film"])

    def check(self, phone: MockPhone) -> float:
        code = next(t.code for t in minis(phone).tickets if t.film == self.params["film"])
        return float(answers.norm(final_answer(phone)) == code)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_mini(ui, "movie")
        yield from ui.tap(rid="my_tickets")
        yield Action("answer", text=code_of(ui, self.params["film"]))

    def wrong_endings(self) -> dict:
        def other(t):
            def script(ui):
                yield from open_mini(ui, "movie")
                yield from ui.tap(rid="my_tickets")
                yield from answer(next(x.code for x in minis(ui.phone).tickets if x.film != t.params["film"]))
            return script
        return {"the-other-ticket-s-code": ending(other)}


def ensure_ticket(phone: MockPhone, task: Task, film: str) -> Ticket:
    state = minis(phone)
    found = next((t for t in state.tickets if t.film == film), None)
    if found is None:
        wt = next(t for t in task.world.movie_tickets if t.film == film)
        found = Ticket(wt.film, wt.cinema, wt.time, 1, 50, wt.code)
        state.tickets.append(found)
    return found


def code_of(ui: UI, film: str) -> str:
    """On My tickets: the code shown under ``film``'s row (rows and codes alternate, top to bottom)."""
    last = ""
    for e in ui.elements():
        if e.resource_id.endswith("/ticket_code") and last == film:
            return e.text
        if e.text and not e.resource_id.endswith("/ticket_code"):
            last = e.text if e.text == film else (last if e.text.count("·") else "")
    return ""


TASKS = (
    MiniRideAnswerFare, MiniRideComfortIfUnder, MiniRideRequest, MiniRideToPlace, MovieAnswerRating,
    MovieAnswerTicketCode, MovieBuyTickets, MovieCheapestShowing,
)

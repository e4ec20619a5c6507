"""The seed article's first case as a family: a constraint that must be applied through a filter.

PhoneBuddy-4B-SFT reached the hotel search page but never applied the budget: the page
looked right and was not. Each template here asks for a result under a bound (a nightly
budget, a ticket price, a rating, a fare) and is verified on the filter the result was found
under (a ride or a ticket records it; the hotel search is the app's state), set exactly as asked
(not stricter, not looser), and on a result that satisfies it. Browsing to a
plausible result without the filter, or with another bound, scores 0; the endings are code.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps import data
from mockphone.apps.miniapps import RIDE_MAX, TICKET_MAX, ride_fare
from mockphone.tasks.base import Param, Task
from mockphone.tasks.endings import ending
from mockphone.tasks.miniapp_tasks import RIDES, TICKETS, _world, ensure_film, minis, new_tickets, open_mini, \
    pick_address
from mockphone.tasks.superapp_tasks import BUDGETS, hotel_search

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

RATINGS = (6, 7, 8)  # the rating filter's chips (besides "Any")


def slide_filter(ui: UI, value: int, vmax: int, chip: str = "") -> Iterator[Action]:
    yield from ui.tap(rid="filter")
    yield from ui.slide("budget", value, 0, vmax)
    if chip:
        yield from ui.tap(rid=chip)
    yield from ui.tap(rid="apply")


def tap_first(ui: UI, rid: str) -> Iterator[Action]:
    """Tap the first row ``rid`` (by its title); nothing when the list is empty (the agent gives up)."""
    rows = ui.find_all(rid)
    if rows:
        title = next(e for e in ui.elements() if e.parent == rows[0].index and e.text)
        yield from ui.tap(text=title.text)


def _fives(lo: float, hi: float) -> list[int]:
    """Multiples of 5 in [lo, hi)."""
    return [v for v in range(5 * -(-int(lo) // 5), int(hi) + 1, 5) if lo <= v < hi]


class FilterHotelBudget(Task):
    """Book the top recommended hotel in a city within a nightly budget applied as the price filter."""

    template = ("In the SuperApp hotel mini-app, apply a budget of at most ¥{budget} per night as the price filter "
                "and book the top recommended hotel in {city}.")
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 8.0
    allowed = ("superapp.bookings[+1]*",)
    schema = {"city": Param(str, choices=data.CITIES), "budget": Param(int, choices=BUDGETS, min=50, max=1000)}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("superapp")
        s = state.hotel_search
        if s is None or s.city != self.params["city"] or s.max_price != self.params["budget"] or s.min_stars:
            return 0.0
        top = state.hotel_results()[:1]
        return float(bool(top) and len(state.bookings) == 1 and state.bookings[0].hotel == top[0].name)

    def _book(self, ui: UI, budget: int | None) -> Iterator[Action]:
        yield from hotel_search(ui, self.params["city"])
        if budget is not None:
            yield from slide_filter(ui, budget, 1000)
        rows = ui.find_all("hotel_row")
        if rows:
            yield from tap_first(ui, "hotel_row")
            yield from ui.tap(rid="book")
            yield from ui.tap(text="PAY")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._book(ui, self.params["budget"])

    def wrong_endings(self) -> dict:
        b = self.params["budget"]
        return {"budget-never-applied": ending(lambda t: lambda ui: t._book(ui, None)),
                "stopped-on-the-unfiltered-results": ending(lambda t: lambda ui: hotel_search(ui, t.params["city"])),
                "a-stricter-budget": ending(lambda t: lambda ui: t._book(ui, b - 50)),
                "a-looser-budget": ending(lambda t: lambda ui: t._book(ui, b + 100))}


class FilterMovieTicketPrice(Task):
    """Buy a ticket for a film at a showing within a price limit applied as the price filter."""

    template = ("In the SuperApp movie-tickets mini-program, set the price filter to at most ¥{budget} and buy one "
                "ticket for {film} at a showing within that price.")
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 7.0
    allowed = TICKETS
    schema = {"film": Param(str, doc="a film of the seed's cinemas"), "budget": Param(int, min=5, max=TICKET_MAX)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        film = rng.choice(_world(world).movies)
        prices = sorted(s.price for s in film.showings)
        return {"film": film.title, "budget": rng.choice(_fives(prices[0], prices[-1]) or [prices[0] // 5 * 5 + 5])}

    def setup(self, phone: MockPhone) -> None:
        ensure_film(phone, self, self.params["film"])

    def check(self, phone: MockPhone) -> float:
        got = new_tickets(self, phone)
        return float(got is not None and len(got) == 1 and got[0].price_filter == self.params["budget"]
                     and got[0].rating_filter == 0 and got[0].film == self.params["film"] and got[0].qty == 1
                     and got[0].total <= self.params["budget"])

    def _buy(self, ui: UI, budget: int | None) -> Iterator[Action]:
        yield from open_mini(ui, "movie")
        if budget is not None:
            yield from slide_filter(ui, budget, TICKET_MAX)
        if ui.find(text=self.params["film"]) is None:
            return  # the film is filtered out: the agent stops
        yield from ui.tap(text=self.params["film"])
        if ui.find_all("showing_row"):
            yield from tap_first(ui, "showing_row")
            yield from ui.tap(rid="buy")
            yield from ui.tap(text="PAY")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._buy(ui, self.params["budget"])

    def wrong_endings(self) -> dict:
        b = self.params["budget"]
        return {"price-filter-never-applied": ending(lambda t: lambda ui: t._buy(ui, None)),
                "a-stricter-price": ending(lambda t: lambda ui: t._buy(ui, b - 5)),
                "a-looser-price": ending(lambda t: lambda ui: t._buy(ui, min(TICKET_MAX, b + 10)))}


def _showing_price(subtitle: str) -> int:
    """'19:30 · ¥45' -> 45."""
    return int(subtitle.split("¥")[-1])


class FilterMovieRating(Task):
    """Buy a ticket for a film rated at least R (applied as the rating filter), at its cheapest showing."""

    template = ("In the SuperApp movie-tickets mini-program, filter movies to ★{rating}+ and buy one ticket for the "
                "first movie shown, at its cheapest showing.")
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 8.0
    allowed = TICKETS
    schema = {"rating": Param(int, choices=RATINGS), "film": Param(str, doc="the seed's best-rated film (planted)")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        films = _world(world).movies
        fits = [r for r in RATINGS if any(f.rating >= r for f in films) and any(f.rating < r for f in films)]
        return {"rating": rng.choice(fits or [6]), "film": max(films, key=lambda f: f.rating).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_film(phone, self, self.params["film"])  # at least one film passes the filter on any phone

    def _want(self, phone: MockPhone):
        r = self.params["rating"]
        shown = sorted((f for f in minis(phone).films if f.rating >= r), key=lambda f: f.title)
        film = shown[0]
        return film.title, min(s.price for s in film.showings)

    def check(self, phone: MockPhone) -> float:
        got = new_tickets(self, phone)
        return float(got is not None and len(got) == 1 and got[0].rating_filter == self.params["rating"]
                     and got[0].price_filter == TICKET_MAX and (got[0].film, got[0].total) == self._want(phone))

    def _buy(self, ui: UI, rating: int | None) -> Iterator[Action]:
        yield from open_mini(ui, "movie")
        if rating is not None:
            yield from ui.tap(rid="filter")
            yield from ui.tap(rid=f"rating_{rating}")
            yield from ui.tap(rid="apply")
        if not ui.find_all("film_row"):
            return
        yield from tap_first(ui, "film_row")
        rows = yield from ui.collect("showing_row")
        yield from ui.tap(text=min(rows, key=lambda r: (_showing_price(r[1]), r[0]))[0])
        yield from ui.tap(rid="buy")
        yield from ui.tap(text="PAY")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._buy(ui, self.params["rating"])

    def wrong_endings(self) -> dict:
        r = self.params["rating"]
        out = {"rating-filter-never-applied": ending(lambda t: lambda ui: t._buy(ui, None)),
               "a-looser-rating": ending(lambda t: lambda ui: t._buy(ui, RATINGS[RATINGS.index(r) - 1] if r > 6
                                                                     else 0))}
        if r < RATINGS[-1]:
            out["a-stricter-rating"] = ending(lambda t: lambda ui: t._buy(ui, r + 1))
        return out


class FilterRideFare(Task):
    """Request a ride within a fare limit applied as the ride mini-program's fare filter."""

    template = ("In the SuperApp ride-hailing mini-program, set the fare filter to at most ¥{budget} and request a "
                "ride to {address} within that fare.")
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 7.0
    allowed = RIDES
    schema = {"address": Param(str, doc="an address of the seed's places"), "budget": Param(int, min=5, max=RIDE_MAX)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None):
        for _ in range(50):
            address = pick_address(rng, world)
            fits = _fives(ride_fare(address, "Economy"), min(ride_fare(address, "Comfort"), RIDE_MAX))
            if fits:
                return {"address": address, "budget": rng.choice(fits)}
        raise ValueError("no address with a fare limit between Economy and Comfort")

    def check(self, phone: MockPhone) -> float:
        rides = minis(phone).rides
        return float(len(rides) == 1 and rides[0].fare_filter == self.params["budget"]
                     and rides[0].destination == self.params["address"] and rides[0].fare <= self.params["budget"])

    def _ride(self, ui: UI, budget: int | None, kind: str = "") -> Iterator[Action]:
        yield from open_mini(ui, "ride")
        yield from ui.type_into("ride_to", self.params["address"])
        yield from ui.tap(rid="ride_fares")
        if budget is not None:
            yield from slide_filter(ui, budget, RIDE_MAX)
        if kind:
            yield from ui.tap(text=kind)
        elif ui.find_all("ride_option"):
            yield from tap_first(ui, "ride_option")
        else:
            return
        yield from ui.tap(text="REQUEST")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._ride(ui, self.params["budget"])

    def wrong_endings(self) -> dict:
        b = self.params["budget"]
        return {"fare-filter-never-applied": ending(lambda t: lambda ui: t._ride(ui, None, "Economy")),
                "comfort-without-the-filter": ending(lambda t: lambda ui: t._ride(ui, None, "Comfort")),
                "a-stricter-fare": ending(lambda t: lambda ui: t._ride(ui, b - 5)),
                "a-looser-fare": ending(lambda t: lambda ui: t._ride(ui, min(RIDE_MAX, b + 20)))}


TASKS = (FilterHotelBudget, FilterMovieRating, FilterMovieTicketPrice, FilterRideFare)

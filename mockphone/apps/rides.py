"""Rides (ride-hailing): where to, a quote per ride type, request with confirmation, trips, schedules, account.

Tabs: Ride ("Where to?" with Home, Work and recent destinations), Activity (upcoming
scheduled rides, cancellable with confirmation; past trips, newest first, with a detail
page where a completed trip is rated) and Account (the default payment card, promo codes
in a form that validates them, the Home and Work addresses, e-mailed receipts). A quote
prices Economy, Comfort and XL from the trip's distance: a Maps place's distance when the
destination is one of its addresses, else one derived from the address
(``mockphone.world.places.fare``); an applied promo code takes 20% off. The account and the
past trips come from ``mockphone.world.places``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import re
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.kit import switch_tab, tab_bar, tr
from mockphone.widgets import Page, View
from mockphone.world.places import KINDS, address_km, drivers_and_cars, fare

TABS = (("main", "Ride"), ("activity", "Activity"), ("account", "Account"))
PROMO = re.compile(r"[A-Z]{4}\d{2}\Z")
PROMO_OFF = 0.2
SEATS = {"Economy": 4, "Comfort": 4, "XL": 6}


@dataclass
class Trip:
    tid: str
    destination: str
    kind: str
    fare: float
    date: str
    driver: str
    rating: int = 0  # 0 = not rated
    status: str = "Completed"  # "Completed", "Requested", "Cancelled"
    payment: str = ""


@dataclass
class Scheduled:
    sid: str
    destination: str
    kind: str
    date: str
    time: str


@dataclass
class RidesSettings:
    receipts: bool = True


@dataclass
class RidesState:
    trips: list[Trip] = field(default_factory=list)
    scheduled: list[Scheduled] = field(default_factory=list)
    cards: tuple[str, ...] = ()
    payment: str = ""  # the default card
    offers: tuple[str, ...] = ()  # promo codes the service accepts
    promos: list[str] = field(default_factory=list)  # promo codes applied to the account
    places: dict[str, str] = field(default_factory=dict)  # "Home"/"Work" -> address
    settings: RidesSettings = field(default_factory=RidesSettings)

    def requested(self) -> list[Trip]:
        """Trips requested on this phone (not the seeded history), oldest first."""
        return [t for t in self.trips if t.status == "Requested"]

    def trip(self, tid: str) -> Trip | None:
        return next((t for t in self.trips if t.tid == tid), None)


def money(value: float, zh: bool) -> str:
    """"$12.50" / "¥81.50"."""
    return f"{'¥' if zh else '$'}{value:.2f}"


def quote(km: float, kind: str, zh: bool, promo: bool) -> float:
    """What a ride costs: the world's fare, less ``PROMO_OFF`` with a promo code (to 0.5)."""
    value = fare(km, kind, zh)
    return round(value * (1 - PROMO_OFF) * 2) / 2 if promo else value


class RidesApp(App):
    name = "rides"
    package = "com.phoneloop.rides"
    label = "Rides"
    aliases = ("ride", "taxi", "cab")
    color = "#202124"
    permissions = ("location",)

    def initial_state(self, rng: random.Random) -> RidesState:
        w = data.world_of(self.phone).rides
        return RidesState(
            trips=[Trip(t.tid, t.destination, t.kind, t.fare, t.date, t.driver, t.rating, "Completed", w.default_card)
                   for t in w.trips],
            scheduled=[Scheduled(s.sid, s.destination, s.kind, s.date, s.time) for s in w.scheduled],
            cards=w.cards, payment=w.default_card, offers=w.promo_codes, places={"Home": w.home, "Work": w.work})

    @property
    def zh(self) -> bool:
        return self.phone.locale == "zh-CN"

    def km(self, destination: str) -> float:
        """The trip's distance: the Maps place at that address, else one derived from the address."""
        maps = self.phone.apps.get("com.phoneloop.maps")
        place = maps.state.by_address(destination) if maps is not None and maps.state is not None else None
        return place.km if place is not None else address_km(destination)

    def price(self, destination: str, kind: str) -> float:
        return quote(self.km(destination), kind, self.zh, bool(self.state.promos))

    # --- Ride ------------------------------------------------------------------------

    def page_main(self, page: Page) -> View:
        shortcuts = [ui.item(f"{label} address", address, on_tap=(lambda a=address: self._quote(a)),
                             rid=f"place_{label.lower()}")
                     for label, address in self.state.places.items() if address]
        recent = list(dict.fromkeys(t.destination for t in sorted(self.state.trips, key=lambda t: t.date,
                                                                  reverse=True)))[:3]
        rows = [ui.item(a, "Recent", on_tap=(lambda a=a: self._quote(a)), rid="recent_row") for a in recent]
        return View("Rides", body=(
            tab_bar(self, "main", TABS),
            ui.edit("destination", page.field("destination"), hint="Where to?",
                    on_submit=lambda: self._quote(page.field("destination"))),
            ui.button("See prices", lambda: self._quote(page.field("destination")), rid="see_prices"),
            *shortcuts, *rows,
        ))

    def _quote(self, destination: str) -> None:
        destination = destination.strip()
        if not destination:
            self.dialog("Enter a destination", "Type an address or pick a saved place.", rid="no_destination")
            return
        self.push("quote", destination=destination, kind="Economy")

    def page_quote(self, page: Page) -> View:
        dest, kind = page.args["destination"], page.args["kind"]
        promo = (tr(self, "Promo {code}: 20% off", code=self.state.promos[-1]) if self.state.promos
                 else "No promo code applied")
        rows = [ui.item(k, tr(self, "{seats} seats · {n} min away", seats=SEATS[k], n=3 + i * 2), rid="ride_option",
                        trailing=money(self.price(dest, k), self.zh), on_tap=(lambda k=k: self._kind(page, k)))
                for i, k in enumerate(KINDS)]
        return View("Choose a ride", up=True, body=(
            ui.text(tr(self, "Trip to {place}", place=dest), style="title", rid="quote_to"),
            ui.text(tr(self, "{km} km · Pay with {card}", km=f"{self.km(dest):.1f}", card=self.state.payment),
                    style="caption", rid="quote_info"),
            *rows,
            ui.text(tr(self, "Selected: {kind}", kind=kind), rid="selected"),
            ui.text(promo, style="caption", rid="promo_info"),
        ), footer=(ui.row(ui.button("Schedule", lambda: self.push("schedule", destination=dest, kind=kind),
                                    rid="schedule", style="outline"),
                          ui.button(tr(self, "Request {kind}", kind=kind), lambda: self._confirm(dest, kind),
                                    rid="request")),))

    def _kind(self, page: Page, kind: str) -> None:
        page.args["kind"] = kind

    def _confirm(self, dest: str, kind: str) -> None:
        price = money(self.price(dest, kind), self.zh)
        self.dialog(tr(self, "Request {kind}?", kind=kind),
                    tr(self, "{kind} to {place} for {price}, paid with {card}.", kind=kind, place=dest, price=price,
                       card=self.state.payment),
                    (("Cancel", None), ("Confirm", lambda: self._request(dest, kind))), rid="confirm_ride")

    def _request(self, dest: str, kind: str) -> None:
        drivers, _ = drivers_and_cars(self.zh)
        tid = f"R{len(self.state.trips) + 1:03d}"
        pick = int.from_bytes(hashlib.sha256(f"{dest}:{tid}".encode()).digest()[:2], "big")
        today = dt.date(2026, 3, 2).isoformat()
        self.state.trips.append(Trip(tid, dest, kind, self.price(dest, kind), today, drivers[pick % len(drivers)],
                                     0, "Requested", self.state.payment))
        self.phone.nav.stacks[self.package] = [Page("main"), Page("trip", {"tid": tid})]
        self.phone.nav.focus = None
        self.toast("Ride requested")

    def page_trip(self, page: Page) -> View:
        t = self.state.trip(page.args["tid"])
        if t is None:
            return View("Trip", up=True, body=(ui.text("Trip not found", style="caption", rid="empty"),))
        _, cars = drivers_and_cars(self.zh)
        pick = int.from_bytes(hashlib.sha256(t.tid.encode()).digest()[:2], "big")
        body = [ui.text(t.destination, style="title", rid="trip_destination"),
                ui.text(tr(self, "{kind} · {date} · {status}", kind=t.kind, date=t.date, status=t.status),
                        style="caption", rid="trip_info"),
                ui.text(tr(self, "Driver: {driver}", driver=t.driver), rid="driver"),
                ui.text(tr(self, "Fare: {fare}", fare=money(t.fare, self.zh)), rid="fare")]
        footer: tuple = ()
        if t.status == "Requested":
            body.insert(0, ui.text("Your driver is on the way", style="headline", rid="trip_status"))
            body.append(ui.text(tr(self, "{car} · Arriving in {n} min", car=cars[pick % len(cars)], n=3 + pick % 6),
                                rid="car"))
            footer = (ui.button("Cancel ride", lambda: self._confirm_cancel(t.tid), rid="cancel_ride", style="danger"),)
        elif t.status == "Completed":
            body.append(ui.text(tr(self, "You rated {n} ★", n=t.rating) if t.rating else "Rate this trip",
                                style="caption", rid="rating"))
            body.append(ui.row(*(ui.chip(f"{n}★", n == t.rating, (lambda n=n: self._rate(t.tid, n)), rid=f"rate_{n}")
                                 for n in range(1, 6))))
        return View("Trip", up=True, body=tuple(body), footer=footer)

    def _rate(self, tid: str, stars: int) -> None:
        trip = self.state.trip(tid)
        if trip is not None:
            trip.rating = stars
            self.toast("Thanks for rating")

    def _confirm_cancel(self, tid: str) -> None:
        self.dialog("Cancel this ride?", "Your driver will be told.",
                    (("Keep ride", None), ("Cancel ride", lambda: self._cancel(tid))), rid="confirm_cancel")

    def _cancel(self, tid: str) -> None:
        trip = self.state.trip(tid)
        if trip is not None:
            trip.status = "Cancelled"
        self.toast("Ride cancelled")

    def page_schedule(self, page: Page) -> View:
        if not page.fields:
            page.fields.update(date="2026-03-03", time="")
        return View("Schedule a ride", up=True, body=(
            ui.text(tr(self, "{kind} ride to {place}", kind=page.args["kind"], place=page.args["destination"]),
                    style="title", rid="schedule_to"),
            ui.row(ui.edit("date", page.field("date"), hint="YYYY-MM-DD"), ui.edit("time", page.field("time"),
                                                                                 hint="HH:MM")),
        ), footer=(ui.button("Schedule ride", lambda: self._schedule(page), rid="save_schedule"),))

    def _schedule(self, page: Page) -> None:
        date, time = page.field("date").strip(), page.field("time").strip()
        try:
            when = dt.datetime.strptime(f"{date} {time}", "%Y-%m-%d %H:%M")
        except ValueError:
            when = None
        if when is None or len(time) != 5 or when <= dt.datetime(2026, 3, 2, 9, 0):
            self.dialog("Check the time", "Pick a future date (YYYY-MM-DD) and time (HH:MM).", rid="invalid_time")
            return
        sid = f"S{len(self.state.scheduled) + 1:02d}{len(self.state.trips):02d}"
        self.state.scheduled.append(Scheduled(sid, page.args["destination"], page.args["kind"], date, time))
        switch_tab(self, "activity")
        self.toast("Ride scheduled")

    # --- Activity --------------------------------------------------------------------

    def page_activity(self, page: Page) -> View:
        upcoming = [ui.item(s.destination, tr(self, "{date} {time} · {kind}", date=s.date, time=s.time, kind=s.kind),
                            rid="scheduled_row",
                            on_tap=(lambda sid=s.sid: self.push("scheduled", sid=sid)))
                    for s in sorted(self.state.scheduled, key=lambda s: (s.date, s.time))]
        if not upcoming:
            upcoming = [ui.text("No upcoming rides", style="caption", copyable=False, rid="empty")]
        past = [ui.item(t.destination, tr(self, "{date} · {kind} · {status}", date=t.date, kind=t.kind,
                                          status=t.status), rid="trip_row",
                        trailing=money(t.fare, self.zh), on_tap=(lambda tid=t.tid: self.push("trip", tid=tid)))
                for t in sorted(self.state.trips, key=lambda t: (t.date, t.tid), reverse=True)]
        return View("Activity", body=(tab_bar(self, "activity", TABS),
                                      ui.text("Upcoming", style="caption", copyable=False), *upcoming,
                                      ui.text("Past trips", style="caption", copyable=False), *past))

    def page_scheduled(self, page: Page) -> View:
        s = next((x for x in self.state.scheduled if x.sid == page.args["sid"]), None)
        if s is None:
            return View("Scheduled ride", up=True, body=(ui.text("Ride cancelled", style="caption", rid="empty"),))
        return View("Scheduled ride", up=True, body=(
            ui.text(s.destination, style="title", rid="scheduled_destination"),
            ui.text(tr(self, "{date} {time} · {kind}", date=s.date, time=s.time, kind=s.kind), rid="scheduled_when"),
        ), footer=(ui.button("Cancel scheduled ride", lambda: self._confirm_unschedule(s.sid), rid="unschedule",
                             style="danger"),))

    def _confirm_unschedule(self, sid: str) -> None:
        self.dialog("Cancel scheduled ride?", "It will be removed from Upcoming.",
                    (("Keep ride", None), ("Cancel ride", lambda: self._unschedule(sid))), rid="confirm_unschedule")

    def _unschedule(self, sid: str) -> None:
        self.state.scheduled = [s for s in self.state.scheduled if s.sid != sid]
        self.back()
        self.toast("Ride cancelled")

    # --- Account ---------------------------------------------------------------------

    def page_account(self, page: Page) -> View:
        cards = [ui.checkbox(c, c == self.state.payment, (lambda v, c=c: setattr(self.state, "payment", c)),
                             rid="card_option") for c in self.state.cards]
        places = [ui.item(f"{label} address", address or "Not set", rid=f"edit_{label.lower()}",
                          on_tap=(lambda lb=label: self.push("place", label=lb)))
                  for label, address in self.state.places.items()]
        applied = ", ".join(self.state.promos) if self.state.promos else "None"
        st = self.state.settings
        return View("Account", body=(
            tab_bar(self, "account", TABS),
            ui.text("Payment method", style="caption", copyable=False), *cards,
            ui.item("Promo codes", tr(self, "Applied: {codes}", codes=applied), on_tap=lambda: self.push("promo"),
                    rid="promo_codes"),
            *places,
            ui.toggle("Email receipts", st.receipts, lambda v: setattr(st, "receipts", v), rid="receipts"),
        ))

    def page_promo(self, page: Page) -> View:
        return View("Promo codes", up=True, body=(
            ui.edit("code", page.field("code"), hint="Enter promo code", on_submit=lambda: self._apply(page)),
            ui.text("Codes are 4 letters and 2 digits.", style="caption", copyable=False),
            *(ui.item(code, "20% off your next rides", rid="applied_code") for code in self.state.promos),
        ), footer=(ui.button("Apply", lambda: self._apply(page), rid="apply"),))

    def _apply(self, page: Page) -> None:
        code = page.field("code").strip().upper()
        if not PROMO.match(code):
            self.dialog("Invalid code", "Codes are 4 letters and 2 digits.", rid="invalid_code")
        elif code not in self.state.offers:
            self.dialog("Code not recognised", tr(self, "{code} is not a valid promo code.", code=code),
                        rid="unknown_code")
        elif code in self.state.promos:
            self.toast("Code already applied")
        else:
            self.state.promos.append(code)
            page.fields["code"] = ""
            self.toast("Promo code applied")

    def page_place(self, page: Page) -> View:
        label = page.args["label"]
        if not page.fields:
            page.fields["address"] = self.state.places.get(label, "")
        return View(f"{label} address", up=True, body=(
            ui.edit("address", page.field("address"), hint="Street address"),
        ), footer=(ui.button("Save", lambda: self._save_place(page), rid="save"),))

    def _save_place(self, page: Page) -> None:
        address = page.field("address").strip()
        if len(address) < 5:
            self.dialog("Check the address", "Enter a street address of at least 5 characters.",
                        rid="invalid_address")
            return
        self.state.places[page.args["label"]] = address
        self.back()
        self.toast("Address saved")

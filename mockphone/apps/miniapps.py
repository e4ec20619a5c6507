"""The SuperApp's newer mini-programs: ride hailing, movie tickets, express delivery and utility bills.

They live beside the hotel and food mini-programs (``mockphone.apps.superapp``) and share
their semantics: each opens from the main page's list and its "Recently used" row, from a
card shared in a chat, or from the search box; every page shows the capsule; "✕" closes
back to where the mini-program was opened. Data is the seed's (``mockphone.world.miniapps``
and the Maps places): films and showings, earlier tickets, parcels, bills.

What a filter or a search shows is navigation: the fare limit, the ticket price limit and
the rating filter live on the app (``SuperApp.nav``), outside the state the snapshot reads,
so browsing never counts as a change. A ride or a ticket records the filters it was found under, which
is what the filter tasks verify.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.kit import tr
from mockphone.widgets import Page, View
from mockphone.world.places import KINDS, address_km, fare

RIDE_MAX, TICKET_MAX = 300, 100  # the fare and ticket-price sliders' top ("no limit")


@dataclass
class MiniRide:
    destination: str
    kind: str
    fare: float
    fare_filter: int = RIDE_MAX  # the fare limit the options were shown under when it was requested


@dataclass
class Ticket:
    film: str
    cinema: str
    time: str
    qty: int
    total: int
    code: str
    price_filter: int = TICKET_MAX  # the filters the film list was shown under when the tickets were bought
    rating_filter: int = 0


@dataclass
class Parcel:
    number: str
    courier: str
    item: str
    status: str


@dataclass
class Shipment:
    recipient: str
    phone: str
    address: str


@dataclass
class Bill:
    kind: str
    account: str
    due: int
    credit: int = 0


@dataclass
class Payment:
    kind: str
    amount: int


@dataclass
class MiniState:
    """The newer mini-programs' state (``SuperAppState.minis``)."""

    films: list = field(default_factory=list)  # mockphone.world.miniapps.Film, as seeded
    places: dict[str, str] = field(default_factory=dict)  # place name -> address (the ride mini-program's search)
    recent: list[str] = field(default_factory=list)  # recent ride destinations, newest first
    rides: list[MiniRide] = field(default_factory=list)
    tickets: list[Ticket] = field(default_factory=list)  # newest first
    parcels: list[Parcel] = field(default_factory=list)
    shipments: list[Shipment] = field(default_factory=list)
    bills: list[Bill] = field(default_factory=list)
    payments: list[Payment] = field(default_factory=list)

    def film(self, title: str):
        return next((f for f in self.films if f.title == title), None)

    def parcel(self, number: str) -> Parcel | None:
        return next((p for p in self.parcels if p.number == number.strip().upper()), None)

    def bill(self, kind: str) -> Bill:
        return next(b for b in self.bills if b.kind == kind)

    def address(self, destination: str) -> str:
        return self.places.get(destination.strip(), destination.strip())

    def km(self, address: str) -> float:
        return address_km(address)


@dataclass
class MiniNav:
    """What the newer mini-programs' filters show now (navigation, not state)."""

    ride_max: int = RIDE_MAX
    ticket_max: int = TICKET_MAX
    min_rating: int = 0
    recent_minis: list[str] = field(default_factory=list)


def mini_state(world) -> MiniState:
    tickets = [Ticket(t.film, t.cinema, t.time, 1, next(s.price for f in world.movies if f.title == t.film
                                                        for s in f.showings if s.cinema == t.cinema), t.code)
               for t in world.movie_tickets]
    return MiniState(films=list(world.movies), places={p.name: p.address for p in world.places},
                     recent=[t.destination for t in world.rides.trips[:3]], tickets=tickets,
                     parcels=[Parcel(p.number, p.courier, p.item, p.status) for p in world.parcels],
                     bills=[Bill(b.kind, b.account, b.due) for b in world.utility])


def ride_fare(address: str, kind: str) -> float:
    """The ride mini-program's quote in ¥ (the Rides app's fare on a zh-CN phone)."""
    return fare(address_km(address), kind, zh=True)


def ticket_code(film: str, cinema: str, qty: int, n: int) -> str:
    return str(10_000_000 + int(hashlib.sha256(f"{film}|{cinema}|{qty}|{n}".encode()).hexdigest(), 16) % 90_000_000)


def _yuan(v: float) -> str:
    return f"¥{v:g}"


class MiniPrograms:
    """Page methods of the newer mini-programs, mixed into ``SuperApp`` (``self.state.minis``, ``self.nav``)."""

    # --- ride hailing --------------------------------------------------------------

    def page_ride_home(self, page: Page) -> View:
        m = self.state.minis
        recent = [ui.item(a, "", rid="ride_recent", on_tap=(lambda a=a: self.push("ride_fares", to=a)))
                  for a in m.recent]
        return View("Ride hailing", up=True, body=(
            ui.edit("ride_to", page.field("ride_to"), hint="Where to? (address or place)",
                    on_submit=lambda: self._ride_fares(page)),
            ui.text("Recent", style="caption", copyable=False), *recent,
        ), footer=(ui.button("See fares", lambda: self._ride_fares(page), rid="ride_fares"),))

    def _ride_fares(self, page: Page) -> None:
        to = self.state.minis.address(page.field("ride_to"))
        if not to:
            self.dialog("Where to?", "Type an address or pick a recent one.", rid="no_destination")
            return
        self.push("ride_fares", to=to)

    def page_ride_fares(self, page: Page) -> View:
        to, limit = page.args["to"], self.nav.ride_max
        options = [(k, ride_fare(to, k)) for k in KINDS]
        shown = [ui.item(k, _yuan(f), rid="ride_option", on_tap=(lambda k=k, f=f: self._confirm_ride(to, k, f)))
                 for k, f in options if f <= limit or limit >= RIDE_MAX]
        budget = "any fare" if limit >= RIDE_MAX else tr(self, "up to ¥{price}", price=limit)
        return View("Choose a ride", up=True, body=(
            ui.text(to, style="title", rid="ride_destination"),
            ui.text(budget, style="caption", rid="summary"),
            *(shown or [ui.text("No ride fits this fare limit.", style="caption", rid="empty")]),
        ), actions=(ui.button("Filter", lambda: self.push("ride_filter"), rid="filter"),))

    def page_ride_filter(self, page: Page) -> View:
        if "budget" not in page.args:
            page.args["budget"] = self.nav.ride_max
        return View("Filter", up=True, body=(
            ui.slider("Max fare (¥)", page.args["budget"], 0, RIDE_MAX,
                      (lambda v: page.args.__setitem__("budget", v)), rid="budget", step=5),
        ), footer=(ui.button("Apply", lambda: self._apply_ride(page), rid="apply"),))

    def _apply_ride(self, page: Page) -> None:
        self.nav.ride_max = page.args["budget"]
        self.back()

    def _confirm_ride(self, to: str, kind: str, price: float) -> None:
        self.dialog(tr(self, "Request {kind}?", kind=kind), tr(self, "To {to}, {price}", to=to, price=_yuan(price)),
                    (("Cancel", None), ("Request", lambda: self._ride(to, kind, price))), rid="confirm_ride")

    def _ride(self, to: str, kind: str, price: float) -> None:
        m = self.state.minis
        m.rides.append(MiniRide(to, kind, price, self.nav.ride_max))
        m.recent = [to] + [a for a in m.recent if a != to][:2]
        self.toast("Ride requested")

    # --- movie tickets -------------------------------------------------------------

    def _showings(self, film):
        return [s for s in film.showings if s.price <= self.nav.ticket_max or self.nav.ticket_max >= TICKET_MAX]

    def page_movie_home(self, page: Page) -> View:
        query = page.field("movie_search").strip().lower()
        films = [f for f in self.state.minis.films if f.rating >= self.nav.min_rating and self._showings(f)
                 and query in f.title.lower()]
        rows = [ui.item(f.title, tr(self, "★{rating} · from ¥{price}", rating=f.rating,
                                    price=min(s.price for s in self._showings(f))), rid="film_row",
                        on_tap=(lambda f=f: self.push("movie_detail", title=f.title)))
                for f in sorted(films, key=lambda f: f.title)]
        price = "any price" if self.nav.ticket_max >= TICKET_MAX else tr(self, "up to ¥{price}",
                                                                         price=self.nav.ticket_max)
        rating = "any rating" if not self.nav.min_rating else tr(self, "★{n}+", n=self.nav.min_rating)
        return View("Movie tickets", up=True, body=(
            ui.edit("movie_search", page.field("movie_search"), hint="Search movies"),
            ui.text(tr(self, "{n} movies · {price} · {rating}", n=len(films), price=price, rating=rating),
                    style="caption", rid="summary"),
            *(rows or [ui.text("No movies match your filters", style="caption", rid="empty")]),
        ), actions=(ui.button("Filter", lambda: self.push("movie_filter"), rid="filter"),),
            footer=(ui.button("My tickets", lambda: self.push("movie_tickets"), rid="my_tickets"),))

    def page_movie_filter(self, page: Page) -> View:
        if "budget" not in page.args:
            page.args.update(budget=self.nav.ticket_max, rating=self.nav.min_rating)
        chips = ui.row(*(ui.chip("Any" if n == 0 else f"★{n}+", page.args["rating"] == n,
                                 (lambda n=n: page.args.__setitem__("rating", n)), rid=f"rating_{n}")
                         for n in (0, 6, 7, 8)))
        return View("Filter", up=True, body=(
            ui.slider("Max ticket price (¥)", page.args["budget"], 0, TICKET_MAX,
                      (lambda v: page.args.__setitem__("budget", v)), rid="budget", step=5),
            ui.text("Rating", style="caption", copyable=False), chips,
        ), footer=(ui.button("Apply", lambda: self._apply_movie(page), rid="apply"),))

    def _apply_movie(self, page: Page) -> None:
        self.nav.ticket_max, self.nav.min_rating = page.args["budget"], page.args["rating"]
        self.back()

    def page_movie_detail(self, page: Page) -> View:
        film = self.state.minis.film(page.args["title"])
        rows = [ui.item(s.cinema, tr(self, "{time} · ¥{price}", time=s.time, price=s.price), rid="showing_row",
                        on_tap=(lambda s=s: self.push("movie_buy", title=film.title, cinema=s.cinema)))
                for s in self._showings(film)]
        return View(film.title, up=True, body=(
            ui.text(film.title, style="title", rid="film_title"),
            ui.text(f"★{film.rating}", rid="film_rating"),
            ui.text("Showings today", style="caption", copyable=False), *rows))

    def page_movie_buy(self, page: Page) -> View:
        film = self.state.minis.film(page.args["title"])
        show = next(s for s in film.showings if s.cinema == page.args["cinema"])
        qty = page.args.setdefault("qty", 1)
        chips = ui.row(*(ui.chip(str(n), qty == n, (lambda n=n: page.args.__setitem__("qty", n)), rid=f"qty_{n}")
                         for n in (1, 2, 3, 4)))
        return View("Tickets", up=True, body=(
            ui.text(film.title, style="title"), ui.text(f"{show.cinema} · {show.time}", rid="showing"),
            ui.text("Tickets", style="caption", copyable=False), chips,
            ui.text(tr(self, "Total ¥{total}", total=show.price * qty), rid="total"),
        ), footer=(ui.button("Buy tickets", lambda: self._confirm_tickets(film.title, show, qty), rid="buy"),))

    def _confirm_tickets(self, title: str, show, qty: int) -> None:
        self.dialog("Buy tickets?", tr(self, "{film}, {cinema} {time}, ×{qty}: ¥{total}", film=title,
                                       cinema=show.cinema, time=show.time, qty=qty, total=show.price * qty),
                    (("Cancel", None), ("Pay", lambda: self._buy(title, show, qty))), rid="confirm_tickets")

    def _buy(self, title: str, show, qty: int) -> None:
        m = self.state.minis
        m.tickets.insert(0, Ticket(title, show.cinema, show.time, qty, show.price * qty,
                                   ticket_code(title, show.cinema, qty, len(m.tickets)), self.nav.ticket_max,
                                   self.nav.min_rating))
        self.phone.nav.stacks[self.package][-2:] = []  # back to the film list
        self.toast("Tickets booked")

    def page_movie_tickets(self, page: Page) -> View:
        rows = []
        for t in self.state.minis.tickets:
            rows.append(ui.item(t.film, tr(self, "{cinema} · {time} · ×{qty}", cinema=t.cinema, time=t.time,
                                           qty=t.qty), rid="ticket_row"))
            rows.append(ui.text(t.code, rid="ticket_code"))
        return View("My tickets", up=True, body=tuple(rows) or (
            ui.text("No tickets yet", style="caption", rid="empty"),))

    # --- express delivery ----------------------------------------------------------

    def page_express_home(self, page: Page) -> View:
        rows = [ui.item(p.item, tr(self, "{courier} · {status}", courier=p.courier, status=p.status),
                        rid="parcel_row", on_tap=(lambda p=p: self.push("express_parcel", number=p.number)))
                for p in self.state.minis.parcels]
        return View("Express delivery", up=True, body=(
            ui.edit("tracking", page.field("tracking"), hint="Tracking number", on_submit=lambda: self._track(page)),
            ui.button("Track", lambda: self._track(page), rid="track", style="outline"),
            ui.text("My parcels", style="caption", copyable=False),
            *(rows or [ui.text("No parcels on the way", style="caption", rid="empty")]),
        ), footer=(ui.button("Send a parcel", lambda: self.push("express_send"), rid="send_parcel"),))

    def _track(self, page: Page) -> None:
        found = self.state.minis.parcel(page.field("tracking"))
        if found is None:
            self.dialog("Not found", "Check the tracking number and try again.", rid="not_found")
            return
        self.push("express_parcel", number=found.number)

    def page_express_parcel(self, page: Page) -> View:
        p = self.state.minis.parcel(page.args["number"])
        footer = (ui.button("Confirm receipt", lambda: self._confirm_receipt(p), rid="confirm_receipt"),) \
            if p.status == "Delivered" else ()
        return View(p.item, up=True, body=(
            ui.text(p.item, style="title"),
            ui.text("Tracking number", style="caption", copyable=False), ui.text(p.number, rid="tracking_no"),
            ui.text(p.courier, rid="courier"), ui.text(p.status, rid="parcel_status"),
        ), footer=footer)

    def _confirm_receipt(self, p: Parcel) -> None:
        self.dialog("Confirm receipt?", tr(self, "{item} from {courier}", item=p.item, courier=p.courier),
                    (("Cancel", None), ("Confirm", lambda: self._received(p))), rid="confirm_receipt_dialog")

    def _received(self, p: Parcel) -> None:
        p.status = "Received"
        self.toast("Receipt confirmed")

    def page_express_send(self, page: Page) -> View:
        return View("Send a parcel", up=True, body=(
            ui.edit("recipient", page.field("recipient"), hint="Recipient"),
            ui.edit("phone", page.field("phone"), hint="Recipient's phone"),
            ui.edit("address", page.field("address"), hint="Delivery address"),
        ), footer=(ui.button("Book pickup", lambda: self._ship(page), rid="book_pickup"),))

    def _ship(self, page: Page) -> None:
        name, phone, address = (page.field(k).strip() for k in ("recipient", "phone", "address"))
        if not name or len(address) < 5 or sum(c.isdigit() for c in phone) < 7:
            self.dialog("Check the form", "A recipient, a phone number of 7+ digits and an address are required.",
                        rid="invalid_shipment")
            return
        self.state.minis.shipments.append(Shipment(name, phone, address))
        self.back()
        self.toast("Pickup booked")

    # --- utility bills -------------------------------------------------------------

    def page_utility_home(self, page: Page) -> View:
        rows = [ui.item(b.kind, tr(self, "Due ¥{due}", due=b.due) if b.due else "Paid", rid="bill_row",
                        on_tap=(lambda b=b: self.push("utility_bill", kind=b.kind)))
                for b in self.state.minis.bills]
        return View("Utility bills", up=True, body=tuple(rows))

    def page_utility_bill(self, page: Page) -> View:
        b = self.state.minis.bill(page.args["kind"])
        pay = (ui.button(tr(self, "Pay ¥{due}", due=b.due), lambda: self._confirm_pay(b), rid="pay_bill"),) \
            if b.due else ()
        return View(b.kind, up=True, body=(
            ui.text("Account number", style="caption", copyable=False), ui.text(b.account, rid="account_no"),
            ui.text(tr(self, "Due ¥{due}", due=b.due), rid="bill_due"),
            ui.text(tr(self, "Credit ¥{credit}", credit=b.credit), rid="bill_credit"),
        ), footer=(*pay, ui.button("Top up", lambda: self.push("utility_topup", kind=b.kind), rid="top_up",
                                   style="outline")))

    def _confirm_pay(self, b: Bill) -> None:
        self.dialog("Pay bill?", tr(self, "{kind}: ¥{due}", kind=b.kind, due=b.due),
                    (("Cancel", None), ("Pay", lambda: self._pay(b))), rid="confirm_pay")

    def _pay(self, b: Bill) -> None:
        self.state.minis.payments.append(Payment(b.kind, b.due))
        b.due = 0
        self.toast("Bill paid")

    def page_utility_topup(self, page: Page) -> View:
        return View("Top up", up=True, body=(
            ui.text(page.args["kind"], style="title"),
            ui.edit("amount", page.field("amount"), hint="Amount (¥10-1000)"),
        ), footer=(ui.button("Pay", lambda: self._top_up(page), rid="pay_topup"),))

    def _top_up(self, page: Page) -> None:
        text = page.field("amount").strip().lstrip("¥")
        if not text.isdigit() or not 10 <= int(text) <= 1000:
            self.dialog("Check the amount", "Top up a whole amount from ¥10 to ¥1000.", rid="invalid_amount")
            return
        b = self.state.minis.bill(page.args["kind"])
        b.credit += int(text)
        self.state.minis.payments.append(Payment(b.kind, int(text)))
        self.back()
        self.toast("Top-up done")

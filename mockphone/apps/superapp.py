"""SuperApp: a chat-and-services app that hosts mini-apps — hotel booking (with a budget filter) and food ordering.

The hotel search keeps the filter the user actually applied, so a verifier can catch
the classic failure of finding hotels without ever applying the budget.

Mini-programs open as in WeChat / Alipay: from the list on the main page, from a
mini-program card shared in a chat, or from the search box. Every mini-program page
shows the capsule at the top right: "⋯" (``capsule_more``) opens a small menu and
"✕" (``capsule_close``) closes the mini-program back to the page it was opened from
(the chat, the search results, the main page).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

from mockphone import i18n
from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.miniapps import MiniNav, MiniPrograms, MiniState, mini_state
from mockphone.widgets import Page, View

NO_LIMIT = 1000
MINI = {"hotel": ("Hotels", "hotel_home", "Book stays in 5 cities"),
        "food": ("Food delivery", "food_home", "Order from nearby restaurants"),
        "ride": ("Ride hailing", "ride_home", "Get a car in minutes"),
        "movie": ("Movie tickets", "movie_home", "Showings and seats nearby"),
        "express": ("Express delivery", "express_home", "Track and send parcels"),
        "utility": ("Utility bills", "utility_home", "Electricity, water and gas")}  # page prefix -> label, home
ROW_RIDS = {"hotel": "mini_hotels", "food": "mini_food"}  # the older rids; the others are mini_<prefix>
CHATS = {"Family group": ("Dinner at 7?", "hotel", "Found a nice place for the trip"),
         "Work": ("Standup moved to 10:30", "food", "Team lunch, order here"),
         "Carpool": ("Leaving at 8:15", "ride", "Book the car here"),
         "Movie club": ("Saturday works for me", "movie", "Tickets are cheaper here"),
         "Neighbours": ("Parcel left at the door", "express", "Track it here"),
         "Home": ("Did you pay the bills?", "utility", "Pay them here")}  # last message, shared mini card


@dataclass
class Hotel:
    name: str
    city: str
    price: int
    stars: int


@dataclass
class HotelSearch:
    city: str
    max_price: int = NO_LIMIT
    min_stars: int = 0


@dataclass
class Booking:
    hotel: str
    city: str
    price: int
    nights: int


@dataclass
class FoodOrder:
    restaurant: str
    items: dict[str, int]
    total: int


@dataclass
class SuperAppState:
    hotels: list[Hotel] = field(default_factory=list)
    hotel_search: HotelSearch | None = None
    bookings: list[Booking] = field(default_factory=list)
    basket: dict[str, int] = field(default_factory=dict)  # dish -> qty (one restaurant at a time)
    basket_restaurant: str = ""
    food_orders: list[FoodOrder] = field(default_factory=list)
    # restaurant -> [(dish, price in ¥)] in menu order: the dishes are data.RESTAURANTS', the prices the seed's
    menus: dict[str, list[tuple[str, int]]] = field(default_factory=lambda: {k: list(v) for k, v in
                                                                             data.RESTAURANTS.items()})
    minis: MiniState = field(default_factory=MiniState)  # ride, movie, express and utility mini-programs

    def hotel_results(self) -> list[Hotel]:
        s = self.hotel_search
        if s is None:
            return []
        found = [h for h in self.hotels if h.city.lower() == s.city.lower() and h.price <= s.max_price
                 and h.stars >= s.min_stars]
        return sorted(found, key=lambda h: (-h.stars, h.name))  # "recommended": not by price


class SuperApp(MiniPrograms, App):
    name = "superapp"
    package = "com.phoneloop.superapp"
    label = "SuperApp"
    color = "#07c160"

    def initial_state(self, rng: random.Random) -> SuperAppState:
        from mockphone import world

        seeded = getattr(self.phone, "world", None) or world.generate(self.phone.seed, self.phone.locale)
        self.nav = MiniNav()  # filters and recently used mini-programs: navigation, not state
        return SuperAppState(hotels=[Hotel(*h) for h in data.hotels(rng)],
                             menus={name: list(menu) for name, menu in seeded.food}, minis=mini_state(seeded))

    def activity(self, page: Page) -> str:
        if page.name == "chat":
            return ".ChattingUI"
        return ".AppBrandUI" if page.name != "main" else ".LauncherUI"

    def view(self, page: Page) -> View:
        v = super().view(page)
        mini = _mini_of(page)
        if mini is None:
            return v
        capsule = (ui.Widget("button", text="⋯", desc="More", rid="capsule_more", style="capsule",
                             on_tap=lambda: self._capsule_menu(mini)),
                   ui.Widget("button", text="✕", desc="Close", rid="capsule_close", style="capsule",
                             on_tap=self.close_mini))
        return dataclasses.replace(v, actions=v.actions + capsule)

    def open_mini(self, mini: str) -> None:
        recent = self.nav.recent_minis
        recent[:] = [mini] + [m for m in recent if m != mini][:2]
        self.push(MINI[mini][1])

    def close_mini(self) -> None:
        """✕: drop the mini-program's pages, back to where it was opened."""
        stack = self.phone.nav.stacks[self.package]
        while len(stack) > 1 and _mini_of(stack[-1]) is not None:
            stack.pop()
        self.phone.invalidate()

    def _capsule_menu(self, mini: str) -> None:
        label = MINI[mini][0]
        self.dialog(label, "Mini program by SuperApp", (
            ("Share", lambda: self.toast(f"Shared {label}")),
            ("Add to My mini programs", lambda: self.toast(f"Added {label}")),
            ("Cancel", None)), rid="capsule_menu")

    def page_main(self, page: Page) -> View:
        query = page.field("search").strip().lower()
        search = ui.edit("search", page.field("search"), hint="Search mini programs and chats")
        if query:
            minis = [ui.item(label, "Mini program", rid="search_result", icon=f"picture:mini-{m}",
                             on_tap=(lambda m=m: self.open_mini(m)))
                     for m, (label, _, _) in MINI.items()
                     if query in label.lower() or query in m or query in i18n.t(label, self.phone.locale)]
            chats = [ui.item(name, last, rid="search_result", icon=f"avatar:{name}",
                             on_tap=(lambda n=name: self.push("chat", name=n)))
                     for name, (last, _, _) in CHATS.items() if query in name.lower()]
            found = minis + chats or [ui.text("No results", style="caption", rid="no_results")]
            return View("SuperApp", body=(search, *found))
        recent = [ui.text("Recently used", style="caption", copyable=False)] if self.nav.recent_minis else []
        recent += [ui.item(MINI[m][0], "Mini program", rid="recent_mini", icon=f"picture:mini-{m}",
                           on_tap=(lambda m=m: self.open_mini(m))) for m in self.nav.recent_minis]
        return View("SuperApp", body=(
            search,
            *recent,
            ui.text("Mini programs", style="caption", copyable=False),
            *(ui.item(label, blurb, on_tap=(lambda m=m: self.open_mini(m)), rid=ROW_RIDS.get(m, f"mini_{m}"),
                      icon=f"picture:mini-{m}") for m, (label, _, blurb) in MINI.items()),
            ui.text("Chats", style="caption", copyable=False),
            *(ui.item(name, last, rid="chat", icon=f"avatar:{name}", on_tap=(lambda n=name: self.push("chat", name=n)))
              for name, (last, _, _) in CHATS.items()),
        ))

    def page_chat(self, page: Page) -> View:
        name = page.args["name"]
        last, mini, note = CHATS[name]
        label, _, blurb = MINI[mini]
        return View(name, up=True, body=(
            ui.text(note, style="bubble_in", rid="message_text"),
            ui.item(label, f"Mini program · {blurb}", rid="mini_card", icon=f"picture:mini-{mini}",
                    on_tap=lambda: self.open_mini(mini)),
            ui.text(last, style="bubble_in", rid="message_text"),
        ))

    # --- hotel mini-app ------------------------------------------------------------

    def page_hotel_home(self, page: Page) -> View:
        chips = ui.row(*(ui.chip(c, page.field("city") == c, (lambda c=c: page.fields.__setitem__("city", c)),
                                 rid=f"city_{c.lower()}") for c in data.CITIES[:3]))
        chips2 = ui.row(*(ui.chip(c, page.field("city") == c, (lambda c=c: page.fields.__setitem__("city", c)),
                                  rid=f"city_{c.lower()}") for c in data.CITIES[3:]))
        return View("Hotels", up=True, body=(
            ui.edit("city", page.field("city"), hint="Destination city", on_submit=lambda: self._hotel_search(page)),
            ui.text("Popular", style="caption", copyable=False), chips, chips2,
        ), footer=(ui.button("Search hotels", lambda: self._hotel_search(page), rid="search_hotels"),))

    def _hotel_search(self, page: Page) -> None:
        city = page.field("city").strip()
        if not city:
            self.toast("Enter a destination")
            return
        self.state.hotel_search = HotelSearch(city=i18n.english(city, self.phone.locale).title())  # 上海 too
        self.push("hotel_results")

    def page_hotel_results(self, page: Page) -> View:
        s = self.state.hotel_search
        found = self.state.hotel_results()
        budget = "any price" if s.max_price >= NO_LIMIT else f"up to ¥{s.max_price}"
        rows = [ui.item(h.name, f"{'★' * h.stars} · ¥{h.price}/night", rid="hotel_row",
                        on_tap=(lambda h=h: self.push("hotel_detail", name=h.name)), icon=f"picture:hotel-{h.name}")
                for h in found]
        if not rows:
            rows = [ui.text("No hotels match. Try raising your budget.", style="caption", rid="empty")]
        return View(f"Hotels in {s.city}", up=True,
                    body=(ui.text(f"{len(found)} stays · {budget}", style="caption", rid="summary"), *rows),
                    actions=(ui.button("Filter", lambda: self.push("hotel_filter"), rid="filter"),))

    def page_hotel_filter(self, page: Page) -> View:
        s = self.state.hotel_search
        if "budget" not in page.args:
            page.args.update(budget=s.max_price, stars=s.min_stars)
        stars = ui.row(*(ui.chip("Any" if n == 0 else f"{n}★+", page.args["stars"] == n,
                                 (lambda n=n: page.args.__setitem__("stars", n)), rid=f"stars_{n}") for n in (0, 3, 4)))
        return View("Filter", up=True, body=(
            ui.slider("Max price per night (¥)", page.args["budget"], 0, NO_LIMIT,
                      (lambda v: page.args.__setitem__("budget", v)), rid="budget", step=10),
            ui.text("Star rating", style="caption", copyable=False), stars,
        ), footer=(ui.button("Apply", lambda: self._apply(page), rid="apply"),))

    def _apply(self, page: Page) -> None:
        self.state.hotel_search.max_price = page.args["budget"]
        self.state.hotel_search.min_stars = page.args["stars"]
        self.back()

    def page_hotel_detail(self, page: Page) -> View:
        h = next(x for x in self.state.hotels if x.name == page.args["name"])
        return View(h.name, up=True, body=(
            ui.image(h.name, color="#81c995", height_dp=160, label=h.city, icon=f"picture:hotel-{h.name}"),
            ui.text(h.name, style="title", rid="hotel_name"),
            ui.text(f"{'★' * h.stars} · ¥{h.price} per night", rid="hotel_price"),
            ui.text("Free cancellation until 18:00 the day before arrival.", style="caption"),
        ), footer=(ui.button("Book 1 night", lambda: self._confirm_booking(h), rid="book"),))

    def _confirm_booking(self, h: Hotel) -> None:
        self.dialog("Confirm booking", f"{h.name}, 1 night, ¥{h.price}. Pay now?",
                    (("Cancel", None), ("Pay", lambda: self._book(h))), rid="confirm_booking")

    def _book(self, h: Hotel) -> None:
        self.state.bookings.append(Booking(h.name, h.city, h.price, 1))
        self.toast("Booking confirmed")

    # --- food mini-app -------------------------------------------------------------

    def page_food_home(self, page: Page) -> View:
        rows = [ui.item(name, f"{len(menu)} dishes · from ¥{min(p for _, p in menu)}", rid="restaurant_row",
                        on_tap=(lambda n=name: self.push("food_menu", restaurant=n)))
                for name, menu in self.state.menus.items()]
        return View("Food delivery", up=True, body=tuple(rows))

    def page_food_menu(self, page: Page) -> View:
        name = page.args["restaurant"]
        rows = []
        for dish, price in self.state.menus[name]:
            qty = self.state.basket.get(dish, 0) if self.state.basket_restaurant == name else 0
            rows.append(ui.item(dish, f"¥{price}", rid="dish_row", trailing=f"×{qty}" if qty else ""))
            rows.append(ui.button(f"Add {dish}", (lambda d=dish: self._add(name, d)), rid="add_dish", style="outline"))
        count = sum(self.state.basket.values())
        return View(name, up=True, body=tuple(rows),
                    footer=(ui.button(f"View basket ({count})", lambda: self.push("food_basket"), rid="basket"),))

    def _add(self, restaurant: str, dish: str) -> None:
        if self.state.basket_restaurant != restaurant:
            self.state.basket = {}
            self.state.basket_restaurant = restaurant
        self.state.basket[dish] = self.state.basket.get(dish, 0) + 1

    def _basket_total(self) -> int:
        prices = dict(self.state.menus.get(self.state.basket_restaurant, ()))
        return sum(prices[d] * q for d, q in self.state.basket.items())

    def page_food_basket(self, page: Page) -> View:
        if not self.state.basket:
            return View("Basket", up=True, body=(ui.text("Your basket is empty", style="caption", rid="empty"),))
        rows = [ui.item(d, f"×{q}", rid="basket_row") for d, q in self.state.basket.items()]
        return View("Basket", up=True, body=(*rows, ui.text(f"Total ¥{self._basket_total()}", style="title",
                                                            rid="total")),
                    footer=(ui.button("Place order", self._confirm_food, rid="place_order"),))

    def _confirm_food(self) -> None:
        self.dialog("Place order?", f"{self.state.basket_restaurant}: ¥{self._basket_total()}",
                    (("Cancel", None), ("Order", self._order)), rid="confirm_order")

    def _order(self) -> None:
        s = self.state
        s.food_orders.append(FoodOrder(s.basket_restaurant, dict(s.basket), self._basket_total()))
        s.basket, s.basket_restaurant = {}, ""
        self.phone.nav.stacks[self.package] = [Page("main"), Page("food_home")]
        self.toast("Order placed")


def _mini_of(page: Page) -> str | None:
    """The mini-program a page belongs to ("hotel", "food"), or None for the super-app's own pages."""
    prefix = page.name.split("_", 1)[0]
    return prefix if prefix in MINI and "_" in page.name else None

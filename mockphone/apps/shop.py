"""Shop: search, category chips, a price-range filter, sort, product pages, cart, checkout with confirmation.

The applied search (query, price range, sort) is part of the state, so a verifier can
tell "searched for headphones" from "searched for headphones under $50".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.widgets import Page, View

SORTS = ("Relevance", "Price: low to high", "Price: high to low", "Rating")
CATEGORIES = ("audio", "electronics", "sports", "home", "travel")


@dataclass
class Product:
    pid: int
    name: str
    category: str
    price: int
    rating: float


@dataclass
class Search:
    query: str = ""
    category: str = ""
    min_price: int | None = None
    max_price: int | None = None
    sort: str = "Relevance"


@dataclass
class Order:
    items: dict[str, int]
    total: int
    address: str


@dataclass
class ShopState:
    products: list[Product] = field(default_factory=list)
    cart: dict[int, int] = field(default_factory=dict)  # pid -> quantity
    orders: list[Order] = field(default_factory=list)
    search: Search | None = None  # the search the results page shows now
    address: str = "12 Harbour Road, Apt 3"

    def product(self, name: str) -> Product | None:
        return next((p for p in self.products if p.name == name), None)

    def results(self) -> list[Product]:
        s = self.search or Search()
        words = s.query.lower().split()
        lo = s.min_price if s.min_price is not None else 0
        hi = s.max_price if s.max_price is not None else 10 ** 9
        found = [p for p in self.products if all(w.rstrip("s") in p.name.lower() for w in words)
                 and (not s.category or p.category == s.category) and lo <= p.price <= hi]
        if s.sort == "Price: low to high":
            found.sort(key=lambda p: (p.price, p.name))
        elif s.sort == "Price: high to low":
            found.sort(key=lambda p: (-p.price, p.name))
        elif s.sort == "Rating":
            found.sort(key=lambda p: (-p.rating, p.name))
        return found

    def cart_total(self) -> int:
        by_id = {p.pid: p for p in self.products}
        return sum(by_id[pid].price * qty for pid, qty in self.cart.items())


class ShopApp(App):
    name = "shop"
    package = "com.phoneloop.shop"
    label = "Shop"
    aliases = ("store", "shopping")
    color = "#c5221f"

    def initial_state(self, rng: random.Random) -> ShopState:
        """The catalogue at the seed's prices and ratings (``mockphone.world.shop``)."""
        from mockphone import world

        seeded = getattr(self.phone, "world", None) or world.generate(self.phone.seed, self.phone.locale)
        return ShopState(products=[Product(i, p.name, p.category, p.price, p.rating) for i, p in enumerate(seeded.shop)])

    def _cart_action(self) -> ui.Widget:
        count = sum(self.state.cart.values())
        return ui.button(f"Cart ({count})", lambda: self.push("cart"), rid="cart")

    def page_main(self, page: Page) -> View:
        chips = ui.row(*(ui.chip(c.capitalize(), False, (lambda c=c: self._search("", c)), rid=f"cat_{c}")
                         for c in CATEGORIES[:3]))
        chips2 = ui.row(*(ui.chip(c.capitalize(), False, (lambda c=c: self._search("", c)), rid=f"cat_{c}")
                          for c in CATEGORIES[3:]))
        deals = sorted(self.state.products, key=lambda p: -p.rating)[:6]
        rows = [ui.item(p.name, f"${p.price} · ★{p.rating}", on_tap=(lambda p=p: self.push("product", pid=p.pid)),
                        rid="product_row", icon=f"picture:product-{p.pid}") for p in deals]
        return View("Shop", body=(
            ui.edit("search", page.field("search"), hint="Search products",
                    on_submit=lambda: self._search(page.field("search").strip(), "")),
            chips, chips2, ui.text("Top rated", style="caption", copyable=False), *rows,
        ), actions=(self._cart_action(),))

    def _search(self, query: str, category: str) -> None:
        self.state.search = Search(query=query, category=category)
        self.push("results")

    def page_results(self, page: Page) -> View:
        s = self.state.search or Search()
        found = self.state.results()
        low = s.min_price if s.min_price is not None else 0
        high = f"${s.max_price}" if s.max_price is not None else "any"
        price = "" if s.min_price is None and s.max_price is None else f" · ${low}–{high}"
        summary = f"{len(found)} results for \"{s.query or s.category}\"{price} · {s.sort}"
        rows = [ui.item(p.name, f"${p.price} · ★{p.rating}", on_tap=(lambda p=p: self.push("product", pid=p.pid)),
                        rid="product_row", icon=f"picture:product-{p.pid}") for p in found]
        if not rows:
            rows = [ui.text("No products match your filters", style="caption", copyable=False, rid="empty")]
        return View(s.query or s.category.capitalize() or "Results", up=True,
                    body=(ui.text(summary, style="caption", rid="summary"), *rows),
                    actions=(ui.button("Filter", lambda: self.push("filter"), rid="filter"),
                             ui.button("Sort", lambda: self.push("sort"), rid="sort")))

    def page_filter(self, page: Page) -> View:
        s = self.state.search or Search()
        if not page.fields:
            page.fields.update(min_price="" if s.min_price is None else str(s.min_price),
                               max_price="" if s.max_price is None else str(s.max_price))
        return View("Filter", up=True, body=(
            ui.text("Price range ($)", style="caption", copyable=False),
            ui.row(ui.edit("min_price", page.field("min_price"), hint="Min"),
                   ui.edit("max_price", page.field("max_price"), hint="Max")),
        ), footer=(ui.row(ui.button("Clear", lambda: self._apply(None, None), rid="clear", style="outline"),
                          ui.button("Apply", lambda: self._apply_fields(page), rid="apply")),))

    def _apply_fields(self, page: Page) -> None:
        try:
            lo = int(page.field("min_price")) if page.field("min_price").strip() else None
            hi = int(page.field("max_price")) if page.field("max_price").strip() else None
        except ValueError:
            self.toast("Prices must be whole numbers")
            return
        self._apply(lo, hi)

    def _apply(self, lo: int | None, hi: int | None) -> None:
        if self.state.search is None:
            self.state.search = Search()
        self.state.search.min_price, self.state.search.max_price = lo, hi
        self.back()

    def page_sort(self, page: Page) -> View:
        current = (self.state.search or Search()).sort
        return View("Sort by", up=True, body=tuple(
            ui.checkbox(name, name == current, (lambda v, n=name: self._sort(n)), rid="sort_option") for name in SORTS))

    def _sort(self, name: str) -> None:
        if self.state.search is None:
            self.state.search = Search()
        self.state.search.sort = name
        self.back()

    def page_product(self, page: Page) -> View:
        p = next(x for x in self.state.products if x.pid == page.args["pid"])
        return View(p.name, up=True, body=(
            ui.image(p.name, color="#f28b82", height_dp=180, label=p.category.capitalize(),
                     icon=f"picture:product-{p.pid}"),
            ui.text(p.name, style="title", rid="product_name"),
            ui.text(f"${p.price}", style="headline", rid="price"),
            ui.text(f"★ {p.rating} · {p.category}", style="caption", rid="rating"),
            ui.text("Free delivery in 2 days. 30-day returns.", rid="description"),
        ), footer=(ui.button("Add to cart", lambda: self._add(p), rid="add_to_cart"),), actions=(self._cart_action(),))

    def _add(self, p: Product) -> None:
        self.state.cart[p.pid] = self.state.cart.get(p.pid, 0) + 1
        self.toast("Added to cart")

    def page_cart(self, page: Page) -> View:
        by_id = {p.pid: p for p in self.state.products}
        rows = []
        for pid, qty in self.state.cart.items():
            p = by_id[pid]
            rows.append(ui.item(p.name, f"{qty} × ${p.price}", rid="cart_row", trailing=f"${qty * p.price}"))
            rows.append(ui.button(f"Remove {p.name}", (lambda pid=pid: self.state.cart.pop(pid, None)),
                                  rid="remove", style="outline"))
        if not rows:
            return View("Cart", up=True, body=(ui.text("Your cart is empty", style="caption", rid="empty"),))
        return View("Cart", up=True, body=(*rows, ui.text(f"Total: ${self.state.cart_total()}", style="title",
                                                          rid="total")),
                    footer=(ui.button("Checkout", lambda: self.push("checkout"), rid="checkout"),))

    def page_checkout(self, page: Page) -> View:
        if not page.fields:
            page.fields["address"] = self.state.address
        return View("Checkout", up=True, body=(
            ui.text("Delivery address", style="caption", copyable=False),
            ui.edit("address", page.field("address"), hint="Address"),
            ui.text(f"Order total: ${self.state.cart_total()}", style="title", rid="order_total"),
        ), footer=(ui.button("Place order", lambda: self._confirm(page), rid="place_order"),))

    def _confirm(self, page: Page) -> None:
        if not self.state.cart:
            self.toast("Your cart is empty")
            return
        self.dialog("Place order?", f"You will be charged ${self.state.cart_total()}.",
                    (("Cancel", None), ("Confirm", lambda: self._place(page))), rid="confirm_order")

    def _place(self, page: Page) -> None:
        by_id = {p.pid: p for p in self.state.products}
        items = {by_id[pid].name: qty for pid, qty in self.state.cart.items()}
        self.state.orders.append(Order(items, self.state.cart_total(), page.field("address").strip()))
        self.state.cart.clear()
        self.phone.nav.stacks[self.package] = [Page("main")]
        self.toast("Order placed")

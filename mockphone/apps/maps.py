"""Maps: explore places by search or category, filter and sort results, a place page, routes, saved places.

Tabs: Explore (search box, category chips, nearby list), Saved (starred places, remove
with confirmation, an empty state) and Settings (distance units, avoid tolls, the Home and
Work addresses, set in a form that validates them). A place page shows the address (long
press copies it), hours and rating, stars the place, and opens a route with a travel mode
(drive, walk, transit) whose "Start" begins navigation. The applied search (query,
category, sort) lives on the app, outside its state: like a search anywhere on the phone it is
navigation, not a change a task could be blamed for. The navigation started, favorites, labels
and settings are state. Places come from ``mockphone.world.places``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.kit import tab_bar, tr
from mockphone.widgets import Page, View
from mockphone.world.places import CATEGORIES, MODES, minutes

SORTS = ("Relevance", "Distance", "Rating")
TABS = (("main", "Explore"), ("saved", "Favorites"), ("settings", "Settings"))


@dataclass
class Place:
    name: str
    category: str
    address: str
    km: float
    rating: float
    hours: str


@dataclass
class Saved:
    name: str  # a place's name


@dataclass
class MapSearch:
    query: str = ""
    category: str = ""
    sort: str = "Relevance"


@dataclass
class Route:
    place: str
    mode: str  # one of MODES


@dataclass
class MapsSettings:
    units: str = "km"  # "km" or "mi"
    avoid_tolls: bool = False
    avoid_highways: bool = False


@dataclass
class MapsState:
    places: list[Place] = field(default_factory=list)
    saved: list[Saved] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=lambda: {"Home": "", "Work": ""})  # label -> address
    navigation: Route | None = None  # the route being navigated
    settings: MapsSettings = field(default_factory=MapsSettings)

    def place(self, name: str) -> Place | None:
        return next((p for p in self.places if p.name == name), None)

    def by_address(self, address: str) -> Place | None:
        return next((p for p in self.places if p.address == address.strip()), None)

    def saved_names(self) -> list[str]:
        return [s.name for s in self.saved]

    def results(self, s: MapSearch) -> list[Place]:
        words = s.query.lower().split()
        found = [p for p in self.places if all(w in f"{p.name} {p.category} {p.address}".lower() for w in words)
                 and (not s.category or p.category == s.category)]
        if s.sort == "Distance":
            found.sort(key=lambda p: (p.km, p.name))
        elif s.sort == "Rating":
            found.sort(key=lambda p: (-p.rating, p.name))
        return found


def distance(km: float, units: str) -> str:
    """"1.2 km" / "0.7 mi"."""
    return f"{km / 1.609:.1f} mi" if units == "mi" else f"{km:.1f} km"


class MapsApp(App):
    name = "maps"
    package = "com.phoneloop.maps"
    label = "Maps"
    aliases = ("map", "navigation")
    color = "#34a853"
    permissions = ("location",)

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.search = MapSearch()  # the search the results page shows now (navigation, not state)

    def reset(self, rng: random.Random) -> None:
        super().reset(rng)
        self.search = MapSearch()

    def initial_state(self, rng: random.Random) -> MapsState:
        world = data.world_of(self.phone)
        return MapsState(places=[Place(p.name, p.category, p.address, p.km, p.rating, p.hours) for p in world.places],
                         saved=[Saved(n) for n in world.saved_places])

    def _row(self, p: Place) -> ui.Widget:
        return ui.item(p.name, tr(self, "{category} · {distance} · ★{rating}", category=p.category.capitalize(),
                                  distance=distance(p.km, self.state.settings.units), rating=p.rating),
                       on_tap=(lambda n=p.name: self.push("place", name=n)), rid="place_row",
                       icon=f"picture:place-{p.name}")

    # --- Explore ---------------------------------------------------------------------

    def page_main(self, page: Page) -> View:
        chips = [ui.chip(c.capitalize(), False, (lambda c=c: self._search("", c)), rid=f"cat_{c}") for c in CATEGORIES]
        nearby = sorted(self.state.places, key=lambda p: (p.km, p.name))[:5]
        return View("Maps", body=(
            tab_bar(self, "main", TABS),
            ui.edit("search", page.field("search"), hint="Search places",
                    on_submit=lambda: self._search(page.field("search").strip(), "")),
            ui.row(*chips[:3]), ui.row(*chips[3:]),
            ui.text("Nearby", style="caption", copyable=False), *(self._row(p) for p in nearby),
        ))

    def _search(self, query: str, category: str) -> None:
        self.search = MapSearch(query=query, category=category)
        self.push("results")

    def page_results(self, page: Page) -> View:
        s = self.search
        found = self.state.results(s)
        shown = s.category.capitalize() if s.category else "All"
        summary = tr(self, "{n} places · {category} · {sort}", n=len(found), category=shown, sort=s.sort)
        rows = [self._row(p) for p in found]
        if not rows:
            rows = [ui.text("No places match your search", style="caption", copyable=False, rid="empty")]
        return View(s.query or s.category.capitalize() or "Results", up=True,
                    body=(ui.text(summary, style="caption", rid="summary"), *rows),
                    actions=(ui.button("Filter", lambda: self.push("filter"), rid="filter"),
                             ui.button("Sort", lambda: self.push("sort"), rid="sort")))

    def page_filter(self, page: Page) -> View:
        current = self.search.category
        options = [ui.checkbox("All", current == "", (lambda v: self._category("")), rid="category_all")]
        options += [ui.checkbox(c.capitalize(), c == current, (lambda v, c=c: self._category(c)), rid=f"category_{c}")
                    for c in CATEGORIES]
        return View("Category", up=True, body=tuple(options))

    def _category(self, category: str) -> None:
        self.search.category = category
        self.back()

    def page_sort(self, page: Page) -> View:
        current = self.search.sort
        return View("Sort by", up=True, body=tuple(
            ui.checkbox(name, name == current, (lambda v, n=name: self._sort(n)), rid=f"sort_{name.lower()}")
            for name in SORTS))

    def _sort(self, name: str) -> None:
        self.search.sort = name
        self.back()

    # --- a place, its route ------------------------------------------------------------

    def page_place(self, page: Page) -> View:
        p = self.state.place(page.args["name"])
        if p is None:
            return View("Place", up=True, body=(ui.text("Place not found", style="caption", rid="empty"),))
        starred = p.name in self.state.saved_names()
        return View(p.name, up=True, body=(
            ui.image(p.name, color="#a8dab5", height_dp=150, label=p.category.capitalize(),
                     icon=f"picture:place-{p.name}"),
            ui.text(p.name, style="title", rid="place_name"),
            ui.text(tr(self, "★ {rating} · {category} · {distance}", rating=p.rating, category=p.category.capitalize(),
                       distance=distance(p.km, self.state.settings.units)), style="caption", rid="place_info"),
            ui.text(p.address, rid="address"),
            ui.text(tr(self, "Hours: {hours}", hours=p.hours), style="caption", rid="hours"),
            ui.row(ui.button("Directions", lambda: self.push("route", name=p.name, mode="drive"), rid="directions"),
                   ui.button("Saved" if starred else "Save", lambda: self._toggle_saved(p.name), rid="save",
                             style="outline")),
        ))

    def _toggle_saved(self, name: str) -> None:
        if name in self.state.saved_names():
            self._confirm_remove(name)
        else:
            self.state.saved.append(Saved(name))
            self.toast("Saved to your places")

    def _confirm_remove(self, name: str) -> None:
        self.dialog("Remove saved place?", tr(self, "{name} will be removed from Saved.", name=name),
                    (("Cancel", None), ("Remove", lambda: self._remove(name))), rid="confirm_remove")

    def _remove(self, name: str) -> None:
        self.state.saved = [s for s in self.state.saved if s.name != name]
        self.toast("Removed from Saved")

    def page_route(self, page: Page) -> View:
        p = self.state.place(page.args["name"])
        mode = page.args["mode"]
        modes = ui.row(*(ui.chip(m.capitalize(), m == mode, (lambda m=m: self._mode(page, m)), rid=f"mode_{m}")
                         for m in MODES))
        tolls = self.state.settings.avoid_tolls and mode == "drive"
        return View("Directions", up=True, body=(
            ui.text(tr(self, "Route to {place}", place=p.name), style="title", rid="route_to"),
            ui.text(p.address, style="caption", rid="route_address"),
            modes,
            ui.text(tr(self, "{n} min · {distance} · Avoiding tolls" if tolls else "{n} min · {distance}",
                       n=minutes(p.km, mode), distance=distance(p.km, self.state.settings.units)),
                    style="headline", rid="eta"),
        ), footer=(ui.button("Start", lambda: self._start(p.name, mode), rid="start"),))

    def _mode(self, page: Page, mode: str) -> None:
        page.args["mode"] = mode

    def _start(self, name: str, mode: str) -> None:
        self.state.navigation = Route(name, mode)
        self.push("navigating")

    def page_navigating(self, page: Page) -> View:
        nav = self.state.navigation
        if nav is None:
            return View("Navigation", up=True, body=(ui.text("Navigation ended", style="caption", rid="empty"),))
        p = self.state.place(nav.place)
        return View("Navigation", up=True, body=(
            ui.text(tr(self, "Navigating to {place}", place=nav.place), style="title", rid="navigating_to"),
            ui.text(tr(self, "{mode} · {n} min", mode=nav.mode.capitalize(), n=minutes(p.km, nav.mode)),
                    style="caption", rid="nav_eta"),
        ), footer=(ui.button("End", self._end, rid="end", style="danger"),))

    def _end(self) -> None:
        self.state.navigation = None
        self.back()

    # --- Saved -----------------------------------------------------------------------

    def page_saved(self, page: Page) -> View:
        rows = []
        for name in self.state.saved_names():
            p = self.state.place(name)
            if p is not None:
                rows.append(ui.item(p.name, p.address, on_tap=(lambda n=name: self.push("place", name=n)),
                                    rid="saved_row", on_long_press=(lambda n=name: self._confirm_remove(n)),
                                    icon=f"picture:place-{p.name}"))
        if not rows:
            rows = [ui.text("No saved places yet", style="caption", copyable=False, rid="empty")]
        return View("Favorites", body=(tab_bar(self, "saved", TABS), *rows))

    # --- Settings --------------------------------------------------------------------

    def page_settings(self, page: Page) -> View:
        st = self.state.settings
        units = ui.row(*(ui.chip(u, st.units == u, (lambda u=u: setattr(st, "units", u)), rid=f"units_{u}")
                         for u in ("km", "mi")))
        labels = [ui.item(f"{label} address", self.state.labels.get(label) or "Not set", rid=f"label_{label.lower()}",
                          on_tap=(lambda lb=label: self.push("label", label=lb))) for label in ("Home", "Work")]
        return View("Settings", body=(
            tab_bar(self, "settings", TABS),
            ui.text("Distance units", style="caption", copyable=False), units,
            ui.toggle("Avoid tolls", st.avoid_tolls, lambda v: setattr(st, "avoid_tolls", v), rid="avoid_tolls"),
            ui.toggle("Avoid highways", st.avoid_highways, lambda v: setattr(st, "avoid_highways", v),
                      rid="avoid_highways"),
            *labels,
        ))

    def page_label(self, page: Page) -> View:
        label = page.args["label"]
        if not page.fields:
            page.fields["address"] = self.state.labels.get(label, "")
        return View(f"{label} address", up=True, body=(
            ui.edit("address", page.field("address"), hint="Street address"),
            ui.text("Enter a street address of at least 5 characters.", style="caption", copyable=False),
        ), footer=(ui.button("Save", lambda: self._save_label(page), rid="save"),))

    def _save_label(self, page: Page) -> None:
        address = page.field("address").strip()
        if len(address) < 5:
            self.dialog("Check the address", "Enter a street address of at least 5 characters.",
                        rid="invalid_address")
            return
        self.state.labels[page.args["label"]] = address
        self.back()
        self.toast("Address saved")

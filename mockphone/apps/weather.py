"""Weather: the default city's conditions and week, saved cities, a city search, forecasts, alerts, units.

Tabs: Today (the default city now: temperature, condition, humidity, wind, and the 7-day
forecast, one row a day), Cities (the saved cities with their temperature now; long press
removes one after a confirmation; "Add city" opens a search over the cities the service
knows, with an empty state) and Settings (°C or °F, rain alerts with a threshold set in a
form that only takes 0-100). A city's page shows its week, and makes it the default or adds
it. The search query is navigation (kept on the app); saved cities, the default, units and
alerts are state. Data comes from ``mockphone.world.weather``.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from mockphone import i18n
from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.kit import tab_bar, tr

TABS = (("main", "Today"), ("cities", "Cities"), ("settings", "Settings"))
FIRST_DAY = dt.date(2026, 3, 2)


@dataclass
class Forecast:
    high: int  # °C
    low: int
    condition: str
    rain: int


@dataclass
class City:
    name: str
    temp: int  # °C
    condition: str
    humidity: int
    wind: int
    days: list[Forecast] = field(default_factory=list)


@dataclass
class WeatherSettings:
    units: str = "C"  # "C" or "F"
    rain_alerts: bool = False
    threshold: int = 60  # % chance of rain that triggers an alert


@dataclass
class WeatherState:
    cities: list[City] = field(default_factory=list)  # every city the service knows
    saved: tuple[str, ...] = ()
    default: str = ""
    settings: WeatherSettings = field(default_factory=WeatherSettings)

    def city(self, name: str) -> City | None:
        return next((c for c in self.cities if c.name == name), None)


def degrees(celsius: int, units: str) -> str:
    """"12°" in the chosen units (°F rounded)."""
    return f"{round(celsius * 9 / 5 + 32)}°" if units == "F" else f"{celsius}°"


def day_of(index: int) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=index)


class WeatherApp(App):
    name = "weather"
    package = "com.phoneloop.weather"
    label = "Weather"
    aliases = ("forecast",)
    color = "#0288d1"
    permissions = ("location",)

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.query = ""  # the city search (navigation)

    def reset(self, rng: random.Random) -> None:
        super().reset(rng)
        self.query = ""

    def initial_state(self, rng: random.Random) -> WeatherState:
        world = data.world_of(self.phone)
        cities = [City(c.name, c.temp, c.condition, c.humidity, c.wind,
                       [Forecast(d.high, d.low, d.condition, d.rain) for d in c.days]) for c in world.weather]
        return WeatherState(cities, tuple(world.weather_saved), world.weather_saved[0])

    def _deg(self, celsius: int) -> str:
        return degrees(celsius, self.state.settings.units)

    def _week(self, c: City) -> list[ui.Widget]:
        rows = []
        for i, d in enumerate(c.days):
            day = "Today" if i == 0 else i18n.short_date(day_of(i), self.phone.locale)
            rows.append(ui.item(day, tr(self, "{condition} · {rain}% rain", condition=d.condition, rain=d.rain),
                                rid="day_row", trailing=f"{self._deg(d.high)} / {self._deg(d.low)}"))
        return rows

    def _now(self, c: City) -> tuple[ui.Widget, ...]:
        return (ui.text(c.name, style="title", rid="city_name"),
                ui.text(self._deg(c.temp), style="headline", rid="temp_now"),
                ui.text(tr(self, "{condition} · Humidity {humidity}% · Wind {wind} km/h", condition=c.condition,
                           humidity=c.humidity, wind=c.wind), style="caption", rid="conditions"))

    def page_main(self, page: ui.Page) -> ui.View:
        c = self.state.city(self.state.default)
        body = [tab_bar(self, "main", TABS)]
        if c is None:
            body.append(ui.text("Add a city to see its weather", style="caption", copyable=False, rid="empty"))
        else:
            body += [*self._now(c), ui.text("7-day forecast", style="caption", copyable=False), *self._week(c)]
        return ui.View("Weather", body=tuple(body))

    def page_cities(self, page: ui.Page) -> ui.View:
        rows = []
        for name in self.state.saved:
            c = self.state.city(name)
            if c is not None:
                rows.append(ui.item(c.name, tr(self, "{condition} · Default", condition=c.condition)
                                    if name == self.state.default else c.condition,
                                    rid="city_row", trailing=self._deg(c.temp),
                                    on_tap=(lambda n=name: self.push("city", name=n)),
                                    on_long_press=(lambda n=name: self._confirm_remove(n))))
        if not rows:
            rows = [ui.text("No saved cities", style="caption", copyable=False, rid="empty")]
        return ui.View("Cities", body=(tab_bar(self, "cities", TABS), *rows),
                       actions=(ui.button("Add city", lambda: self.push("search"), rid="add_city"),))

    def _confirm_remove(self, name: str) -> None:
        self.dialog("Remove city?", tr(self, "{city} will be removed from your cities.", city=name),
                    (("Cancel", None), ("Remove", lambda: self._remove(name))), rid="confirm_remove")

    def _remove(self, name: str) -> None:
        self.state.saved = tuple(n for n in self.state.saved if n != name)
        if self.state.default == name:
            self.state.default = self.state.saved[0] if self.state.saved else ""
        self.toast("City removed")

    def page_search(self, page: ui.Page) -> ui.View:
        words = page.field("query").strip().lower()
        found = [c for c in self.state.cities if words and words in c.name.lower()]
        rows = [ui.item(c.name, c.condition, rid="search_row", trailing=self._deg(c.temp),
                        on_tap=(lambda n=c.name: self.push("city", name=n))) for c in found]
        if words and not rows:
            rows = [ui.text("No cities found", style="caption", copyable=False, rid="empty")]
        return ui.View("Add city", up=True, body=(ui.edit("query", page.field("query"), hint="Search cities"), *rows))

    def page_city(self, page: ui.Page) -> ui.View:
        c = self.state.city(page.args["name"])
        saved = c.name in self.state.saved
        buttons = [ui.button("Remove" if saved else "Add to my cities",
                             (lambda: self._confirm_remove(c.name)) if saved else (lambda: self._add(c.name)),
                             rid="remove_city" if saved else "add_to_cities", style="outline" if saved else "")]
        if saved and self.state.default != c.name:
            buttons.append(ui.button("Set as default", lambda: self._default(c.name), rid="set_default"))
        return ui.View(c.name, up=True, body=(*self._now(c), ui.row(*buttons), *self._week(c)))

    def _add(self, name: str) -> None:
        self.state.saved = (*self.state.saved, name)
        self.toast("City added")

    def _default(self, name: str) -> None:
        self.state.default = name
        self.toast("Default city changed")

    def page_settings(self, page: ui.Page) -> ui.View:
        st = self.state.settings
        units = ui.row(*(ui.chip(f"°{u}", st.units == u, (lambda u=u: setattr(st, "units", u)), rid=f"units_{u}")
                         for u in ("C", "F")))
        return ui.View("Settings", body=(
            tab_bar(self, "settings", TABS),
            ui.text("Temperature units", style="caption", copyable=False), units,
            ui.toggle("Rain alerts", st.rain_alerts, lambda v: setattr(st, "rain_alerts", v), rid="rain_alerts"),
            ui.item("Alert threshold", f"{st.threshold}%", on_tap=lambda: self.push("threshold"), rid="threshold"),
        ))

    def page_threshold(self, page: ui.Page) -> ui.View:
        if not page.fields:
            page.fields["percent"] = str(self.state.settings.threshold)
        return ui.View("Alert threshold", up=True, body=(
            ui.edit("percent", page.field("percent"), hint="Chance of rain (%)"),
            ui.text("Alert me when the chance of rain is at least this (0-100).", style="caption", copyable=False),
        ), footer=(ui.button("Save", lambda: self._save_threshold(page), rid="save"),))

    def _save_threshold(self, page: ui.Page) -> None:
        text = page.field("percent").strip().rstrip("%")
        if not text.isdigit() or not 0 <= int(text) <= 100:
            self.dialog("Invalid threshold", "Enter a whole number from 0 to 100.", rid="invalid_threshold")
            return
        self.state.settings.threshold = int(text)
        self.back()
        self.toast("Threshold saved")

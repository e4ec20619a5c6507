"""Weather tasks: saved cities, the default city, units, rain alerts, answers read off forecasts, a Messages handoff.

Parameters come from the seed's cities and forecasts (``mockphone.world.weather``). A city
named by an instance is planted on a phone whose world lacks it. Answers are checked against
the phone's own forecast: one number, or one day named (by weekday, date or "today").
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone import i18n
from mockphone.apps.weather import City, Forecast, day_of, degrees
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer, fraction
from mockphone.tasks.comm_tasks import ensure_person, pick_name
from mockphone.tasks.endings import answer, ending
from mockphone.tasks.travel_tasks import text_to

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World

DATES = tuple(day_of(i).isoformat() for i in range(1, 7))  # tomorrow .. six days on


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def ensure_city(phone: MockPhone, task: Task, name: str) -> City:
    """``name``'s city on ``phone``, planted from the task's world when this phone's world lacks it."""
    state = phone.app("weather").state
    found = state.city(name)
    if found is None:
        wc = next(c for c in task.world.weather if c.name == name)
        found = City(wc.name, wc.temp, wc.condition, wc.humidity, wc.wind,
                     [Forecast(d.high, d.low, d.condition, d.rain) for d in wc.days])
        state.cities.append(found)
    return found


def open_city(ui: UI, name: str) -> Iterator[Action]:
    """Open a city's page through the Cities tab's search."""
    yield from ui.open("weather")
    yield from ui.tap(rid="tab_cities")
    yield from ui.tap(rid="add_city")
    yield from ui.type_into("query", name)
    yield from ui.tap(text=name, rid="android:id/title")


def day_row(ui: UI, date: str) -> Iterator[Action]:
    """Read the forecast row of ``date`` on a city page (scrolling through the week): [day, summary, high / low].

    Use as ``row = yield from day_row(ui, date)``."""
    import datetime as dt

    title = i18n.short_date(dt.date.fromisoformat(date), ui.phone.locale)
    rows = yield from ui.collect("day_row")
    return next(r for r in rows if r[0] == title)


def day_names(index: int, locale: str) -> list[str]:
    """Ways an answer can name forecast day ``index`` (0 = today)."""
    day = day_of(index)
    names = [day.strftime("%A"), day.strftime("%b ") + str(day.day), day.strftime("%B ") + str(day.day),
             day.isoformat(), f"{day.month}月{day.day}日", ("周一", "周二", "周三", "周四", "周五", "周六", "周日")[day.weekday()],
             i18n.short_date(day, locale)]
    return names + (["today", "今天"] if index == 0 else [])


def named_days(text: str | None, locale: str) -> set[int]:
    low = answers.norm(text)
    return {i for i in range(7) if any(answers.norm(n) in low for n in day_names(i, locale))}


def pick_city(rng: random.Random, world: World | None, saved: bool | None = None, default: bool = True) -> str:
    w = _world(world)
    names = [c.name for c in w.weather if saved is None or (c.name in w.weather_saved) == saved]
    if not default:
        names = [n for n in names if n != w.weather_saved[0]]
    return rng.choice(names)


class WeatherAddCity(Task):
    """Find a city in the search and add it to the saved cities."""

    template = "Add {city} to my cities in Weather."
    app_names = ("weather",)
    complexity = 5.0
    allowed = ("weather.saved",)
    schema = {"city": Param(str, doc="a city of the seed's Weather, not yet saved")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world, saved=False)}

    def setup(self, phone: MockPhone) -> None:
        ensure_city(phone, self, self.params["city"])
        state = phone.app("weather").state
        state.saved = tuple(n for n in state.saved if n != self.params["city"])

    def check(self, phone: MockPhone) -> float:
        before = set(self.start_state(phone)["weather.saved"])
        return float(set(phone.state("weather").saved) == before | {self.params["city"]})

    def add(self, ui: UI, name: str) -> Iterator[Action]:
        yield from open_city(ui, name)
        yield from ui.tap(rid="add_to_cities")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.add(ui, self.params["city"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("weather").state
                yield from task.add(ui, next(c.name for c in state.cities
                                             if c.name not in state.saved and c.name != task.params["city"]))
            return script

        def swapped(task):  # added it, and removed a saved one on the way
            def script(ui):
                victim = ui.phone.app("weather").state.saved[-1]
                yield from task.add(ui, task.params["city"])
                yield from ui.key("back")
                yield from ui.key("back")
                yield from ui.long_press(text=victim)
                yield from ui.tap(text="Remove")
            return script
        return {"added-another-city": ending(other), "also-removed-one": ending(swapped)}


class WeatherRemoveCity(Task):
    """Remove a saved city (long press, confirm)."""

    template = "Remove {city} from my cities in Weather."
    app_names = ("weather",)
    complexity = 4.0
    allowed = ("weather.saved",)
    schema = {"city": Param(str, doc="a saved city of the seed's Weather, not the default")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world, saved=True, default=False)}

    def setup(self, phone: MockPhone) -> None:
        ensure_city(phone, self, self.params["city"])
        state = phone.app("weather").state
        if self.params["city"] not in state.saved:
            state.saved = (*state.saved, self.params["city"])
        if state.default == self.params["city"]:
            state.default = next(n for n in state.saved if n != self.params["city"])

    def check(self, phone: MockPhone) -> float:
        before = set(self.start_state(phone)["weather.saved"])
        return float(set(phone.state("weather").saved) == before - {self.params["city"]})

    def remove(self, ui: UI, name: str, button: str = "Remove") -> Iterator[Action]:
        yield from ui.open("weather")
        yield from ui.tap(rid="tab_cities")
        yield from ui.long_press(text=name)
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.remove(ui, self.params["city"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("weather").state
                yield from task.remove(ui, next(n for n in state.saved if n != task.params["city"]))
            return script
        return {"removed-another": ending(other),
                "removed-it-and-another-too": ends.after(other)}


class WeatherSetDefault(Task):
    """Make a saved city the default (the one the Today tab shows)."""

    swaps = (("city", lambda t, phone: next((n for n in phone.state("weather").saved if n not in (
        t.params["city"], t.start_state(phone)["weather.default"])), None), "also"),)
    template = "Make {city} my default city in Weather."
    app_names = ("weather",)
    complexity = 4.0
    allowed = ("weather.default",)
    schema = {"city": Param(str, doc="a saved city of the seed's Weather, not the default")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world, saved=True, default=False)}

    def setup(self, phone: MockPhone) -> None:
        WeatherRemoveCity.setup(self, phone)  # saved, and not the default

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("weather").default == self.params["city"])

    def make_default(self, ui: UI, name: str) -> Iterator[Action]:
        yield from ui.open("weather")
        yield from ui.tap(rid="tab_cities")
        yield from ui.tap(text=name)
        yield from ui.tap(rid="set_default")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.make_default(ui, self.params["city"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("weather").state
                yield from task.make_default(ui, next(n for n in state.saved
                                                      if n not in (task.params["city"], state.default)))
            return script
        return {"another-city": ending(other)}


class WeatherAnswerHigh(Task):
    """Read one day's high from a city's forecast."""

    template = "What will the high temperature be in {city} on {date}, according to Weather? Answer in °C."
    app_names = ("weather",)
    complexity = 5.0
    changes_state = False
    schema = {"city": Param(str, doc="a city of the seed's Weather"), "date": Param(str, choices=DATES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world), "date": rng.choice(DATES)}

    def setup(self, phone: MockPhone) -> None:
        ensure_city(phone, self, self.params["city"])

    def _day(self, phone: MockPhone, offset: int = 0) -> Forecast:
        return phone.app("weather").state.city(self.params["city"]).days[DATES.index(self.params["date"]) + 1 + offset]

    def check(self, phone: MockPhone) -> float:
        return float(answers.only(answers.numbers(final_answer(phone)), float(self._day(phone).high)))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_city(ui, self.params["city"])
        row = yield from day_row(ui, self.params["date"])
        yield Action("answer", text=row[2].split("/")[0].strip())

    def wrong_endings(self) -> dict:
        def low(task):
            return lambda ui: answer(f"{task._day(ui.phone).low}°")

        def next_day(task):
            offset = 1 if task.params["date"] != DATES[-1] else -1
            return lambda ui: answer(f"{task._day(ui.phone, offset).high}°")
        return {"the-low": ending(low), "the-next-day": ending(next_day)}


class WeatherAnswerRainiestDay(Task):
    """The day of the week when rain is most likely in a city (compare every row)."""

    template = "On which day this week is rain most likely in {city}, according to Weather? Answer with the day."
    app_names = ("weather",)
    complexity = 5.0
    changes_state = False
    schema = {"city": Param(str, doc="a city of the seed's Weather")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_city(phone, self, self.params["city"])

    def _rank(self, phone: MockPhone, key) -> int:
        days = phone.app("weather").state.city(self.params["city"]).days
        return max(range(7), key=lambda i: key(days[i]))

    def check(self, phone: MockPhone) -> float:
        return float(named_days(final_answer(phone), phone.locale) == {self._rank(phone, lambda d: d.rain)})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_city(ui, self.params["city"])
        rows = yield from ui.collect("day_row")
        best = max(rows, key=lambda r: int(answers.numbers(r[1])[0]))
        yield Action("answer", text=best[0])

    def wrong_endings(self) -> dict:
        def warmest(task):
            def script(ui):
                wet, warm = task._rank(ui.phone, lambda d: d.rain), task._rank(ui.phone, lambda d: d.high)
                if warm == wet:  # the same day: the second-rainiest then
                    days = ui.phone.app("weather").state.city(task.params["city"]).days
                    warm = sorted(range(7), key=lambda i: -days[i].rain)[1]
                yield from answer(i18n.short_date(day_of(warm), ui.phone.locale))
            return script

        def first_rainy(task):  # the first day whose condition says rain, not the highest chance
            def script(ui):
                days = ui.phone.app("weather").state.city(task.params["city"]).days
                wet = task._rank(ui.phone, lambda d: d.rain)
                pick = next((i for i in range(7) if i != wet and days[i].condition in ("Rain", "Showers",
                                                                                      "Thunderstorms")),
                            (wet + 1) % 7)
                yield from answer(i18n.short_date(day_of(pick), ui.phone.locale))
            return script
        return {"warmest-day-instead": ending(warmest), "first-rainy-looking-day": ending(first_rainy)}


class WeatherFahrenheitNow(Task):
    """Two parts: switch the units to °F, then read a city's temperature now in °F."""

    template = "Switch Weather to Fahrenheit and tell me the current temperature in {city}."
    app_names = ("weather",)
    complexity = 7.0
    allowed = ("weather.settings.units",)
    schema = {"city": Param(str, doc="a city of the seed's Weather")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_city(phone, self, self.params["city"])
        phone.app("weather").state.settings.units = "C"

    def _f(self, phone: MockPhone) -> float:
        return float(degrees(phone.app("weather").state.city(self.params["city"]).temp, "F").rstrip("°"))

    def check(self, phone: MockPhone) -> float:
        return fraction(phone.state("weather").settings.units == "F",
                        answers.only(answers.numbers(final_answer(phone)), self._f(phone)))

    def switch(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("weather")
        yield from ui.tap(rid="tab_settings")
        yield from ui.tap(rid="units_F")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.switch(ui)
        yield from open_city(ui, self.params["city"])
        yield Action("answer", text=ui.find(rid="temp_now").text)

    def wrong_endings(self) -> dict:
        def celsius(task):  # read the city before switching
            def script(ui):
                yield from open_city(ui, task.params["city"])
                shown = ui.find(rid="temp_now").text
                yield from ui.key("back")
                yield from ui.key("back")
                yield from ui.tap(rid="tab_settings")
                yield from ui.tap(rid="units_F")
                yield from answer(shown)
            return script
        return {"answered-in-celsius": ending(celsius),
                "never-switched": ending(lambda task: lambda ui: answer(f"{task._f(ui.phone):.0f}°F"))}


class WeatherAlertFromForecast(Task):
    """Within the app: read tomorrow's chance of rain in a city, turn on rain alerts with that threshold."""

    template = ("Turn on rain alerts in Weather, with the alert threshold set to the chance of rain forecast "
                "for {city} tomorrow.")
    app_names = ("weather",)
    complexity = 9.0
    allowed = ("weather.settings.rain_alerts", "weather.settings.threshold")
    schema = {"city": Param(str, doc="a city of the seed's Weather")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        c = ensure_city(phone, self, self.params["city"])
        st = phone.app("weather").state.settings
        st.rain_alerts = False
        if st.threshold == c.days[1].rain:
            st.threshold = 100 if c.days[1].rain != 100 else 90

    def check(self, phone: MockPhone) -> float:
        st = phone.state("weather").settings
        return fraction(st.rain_alerts, st.threshold == phone.state("weather").city(self.params["city"]).days[1].rain)

    def set_alert(self, ui: UI, day: int) -> Iterator[Action]:
        yield from open_city(ui, self.params["city"])
        row = yield from day_row(ui, DATES[day - 1])
        rain = answers.numbers(row[1])[0]
        yield from ui.key("back")
        yield from ui.key("back")
        yield from ui.tap(rid="tab_settings")
        yield from ui.tap(rid="rain_alerts")
        yield from ui.tap(rid="threshold")
        yield from ui.type_into("percent", f"{rain:.0f}")
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.set_alert(ui, 1)

    def wrong_endings(self) -> dict:
        def other_day(task):
            def script(ui):
                days = ui.phone.app("weather").state.city(task.params["city"]).days
                yield from task.set_alert(ui, next(i for i in range(2, 7) if days[i].rain != days[1].rain))
            return script

        def switch_only(task):
            def script(ui):
                yield from ui.open("weather")
                yield from ui.tap(rid="tab_settings")
                yield from ui.tap(rid="rain_alerts")
            return script
        return {"another-days-chance": ending(other_day), "threshold-left-as-it-was": ending(switch_only)}


class WeatherWarmestSavedOnDay(Task):
    """Compare one day's high across every saved city: open each, read its week (long-horizon)."""

    template = "Which of my saved cities in Weather will be the warmest on {date}? Answer with its name."
    app_names = ("weather",)
    complexity = 12.0
    changes_state = False
    schema = {"date": Param(str, choices=DATES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        w = _world(world)
        saved = [c for c in w.weather if c.name in w.weather_saved]
        fair = [d for i, d in enumerate(DATES) if len({c.days[i + 1].high for c in saved}) == len(saved)]
        return {"date": rng.choice(fair or list(DATES))}

    def _ranked(self, phone: MockPhone, index: int | None = None) -> list[City]:
        """Saved cities, warmest first on the task's date (or ``index``'s day; ties by name)."""
        state = phone.app("weather").state
        i = DATES.index(self.params["date"]) + 1 if index is None else index
        return sorted((state.city(n) for n in state.saved), key=lambda c: (-c.days[i].high, c.name))

    def check(self, phone: MockPhone) -> float:
        return float(answers.norm(final_answer(phone)) == answers.norm(self._ranked(phone)[0].name))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("weather")
        yield from ui.tap(rid="tab_cities")
        names = [r[0] for r in (yield from ui.collect("city_row"))]
        highs = []
        for name in names:
            yield from ui.tap(text=name)
            row = yield from day_row(ui, self.params["date"])
            highs.append((-answers.numbers(row[2].split("/")[0])[0], name))
            yield from ui.key("back")
        yield Action("answer", text=min(highs)[1])

    def wrong_endings(self) -> dict:
        def now(task):  # warmest right now, not on that day
            def script(ui):
                state = ui.phone.app("weather").state
                best = task._ranked(ui.phone)[0].name
                ranked = sorted((state.city(n) for n in state.saved), key=lambda c: (-c.temp, c.name))
                yield from answer(next(c.name for c in ranked if c.name != best))
            return script
        return {"warmest-right-now": ending(now),
                "the-coldest": ending(lambda task: lambda ui: answer(task._ranked(ui.phone)[-1].name))}


class CrossWeatherToMessage(Task):
    """Weather -> Messages: text someone tomorrow's high in a city."""

    template = "Text {name} tomorrow's high temperature in {city} from Weather."
    app_names = ("weather", "messages")
    category = "cross-app"
    complexity = 10.0
    allowed = ("messages.threads[{name}][+1]*",)
    schema = {"city": Param(str, doc="a city of the seed's Weather"), "name": Param(str, doc="one of the seed's people")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"city": pick_city(rng, world), "name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_city(phone, self, self.params["city"])
        ensure_person(phone, self.params["name"], self.world)

    def _day(self, phone: MockPhone, i: int) -> Forecast:
        return phone.app("weather").state.city(self.params["city"]).days[i]

    def check(self, phone: MockPhone) -> float:
        sent = phone.state("messages").sent_to(self.params["name"])
        return float(bool(sent) and answers.only(answers.numbers(sent[-1]), float(self._day(phone, 1).high)))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_city(ui, self.params["city"])
        row = yield from day_row(ui, DATES[0])
        high = row[2].split("/")[0].strip()
        yield from text_to(ui, self.params["name"], high)

    def wrong_endings(self) -> dict:
        def today(task):
            return lambda ui: text_to(ui, task.params["name"], f"{task._day(ui.phone, 0).high}°")

        def low(task):
            return lambda ui: text_to(ui, task.params["name"], f"{task._day(ui.phone, 1).low}°")
        return {"todays-high": ending(today), "tomorrows-low": ending(low)}


TASKS = (CrossWeatherToMessage, WeatherAddCity, WeatherAlertFromForecast, WeatherAnswerHigh, WeatherAnswerRainiestDay,
         WeatherFahrenheitNow, WeatherRemoveCity, WeatherSetDefault, WeatherWarmestSavedOnDay)

"""Weather per seed: current conditions and a 7-day forecast for the cities the Weather app knows.

``weather``: eight cities (American ones on en-US, Chinese ones on zh-CN), each with the
current temperature, condition, humidity and wind and a forecast from the epoch's day
(2026-03-02, a Monday) for seven days: high, low (°C), condition and chance of rain. In a
city's week the highs and the chances of rain are all different, so "the warmest day" and
"the day rain is most likely" are one day; current temperatures differ between cities.
``weather_saved``: the three cities the owner has added at the start; the first is the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section

CITIES = ("Seattle", "Denver", "Austin", "Boston", "Chicago", "Miami", "Portland", "Phoenix", "Atlanta", "Detroit")
CITIES_ZH = ("北京", "上海", "广州", "深圳", "成都", "杭州", "武汉", "西安", "南京", "重庆")
CONDITIONS = ("Sunny", "Partly cloudy", "Cloudy", "Rain", "Showers", "Thunderstorms", "Fog", "Windy")
RAINY = {"Rain": (60, 95), "Showers": (40, 80), "Thunderstorms": (50, 90)}


@dataclass(frozen=True)
class Day:
    high: int  # °C
    low: int
    condition: str
    rain: int  # chance of rain, %


@dataclass(frozen=True)
class WorldCity:
    name: str
    temp: int  # °C now
    condition: str
    humidity: int
    wind: int  # km/h
    days: tuple[Day, ...]  # 7 days from the epoch's day


@section("weather")
def weather(world: World) -> tuple[WorldCity, ...]:
    rng = world.rng("weather")
    names = rng.sample(CITIES_ZH if world.zh else CITIES, 8)
    temps = rng.sample(range(2, 30), 8)
    out = []
    for name, temp in zip(names, temps):
        highs = rng.sample(range(temp - 6, temp + 9), 7)
        rains = rng.sample(range(0, 100, 5), 7)
        days = []
        for high, rain in zip(highs, rains):
            wet = [c for c, (lo, hi) in RAINY.items() if lo <= rain <= hi]
            condition = rng.choice(wet) if wet and rain >= 40 else rng.choice(CONDITIONS[:3] + CONDITIONS[6:])
            days.append(Day(high, high - rng.randint(4, 10), condition, rain))
        out.append(WorldCity(name, temp, days[0].condition, rng.randint(30, 95), rng.randint(2, 40), tuple(days)))
    return tuple(out)


@section("weather_saved")
def weather_saved(world: World) -> tuple[str, ...]:
    return tuple(c.name for c in world.rng("weather_saved").sample(list(world.weather), 3))

"""Places and rides per seed: the Maps app's points of interest and the Rides app's account.

``places``: 30 places, five of each ``CATEGORIES`` kind, with a name built from the
locale's word lists (Chinese names on a zh-CN phone), a Faker street address (unique
on the phone), a distance in km and a rating. Within a category distances and ratings
are all different, so "the nearest pharmacy" and "the best-rated cafe" are one place.
``saved_places``: the three places the owner has starred at the start.
``rides``: the Rides account: past trips (to some of these places, with fares and
drivers), two scheduled rides, payment cards, the promo codes the service accepts,
and the owner's Home and Work addresses.

Travel times and fares are functions of a distance (:func:`minutes`, :func:`fare`),
shared by the apps and the task verifiers so both compute the same number.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mockphone.world import World, section

CATEGORIES = ("cafe", "restaurant", "pharmacy", "museum", "park", "supermarket")
MODES = ("drive", "walk", "transit")
KINDS = ("Economy", "Comfort", "XL")  # ride types, cheapest first

_WORDS = ("Maple", "Harbor", "Juniper", "Copper", "Willow", "Summit", "Lantern", "Orchard", "Granite", "Meadow",
          "Cedar", "Beacon", "Silver", "Hollow", "Aurora", "Brook")
_KIND_WORDS = {"cafe": ("Coffee", "Cafe", "Espresso Bar"), "restaurant": ("Bistro", "Kitchen", "Grill"),
               "pharmacy": ("Pharmacy", "Drugstore", "Chemist"), "museum": ("Museum", "Gallery", "History Center"),
               "park": ("Park", "Gardens", "Green"), "supermarket": ("Market", "Grocers", "Foods")}
_WORDS_ZH = ("枫叶", "港湾", "松柏", "铜锣", "柳岸", "云顶", "灯塔", "果园", "青石", "草原", "雪松", "星光", "银杏", "竹林",
             "晨曦", "溪畔")
_KIND_WORDS_ZH = {"cafe": ("咖啡", "咖啡馆", "咖啡屋"), "restaurant": ("饭店", "餐厅", "小馆"),
                  "pharmacy": ("药房", "大药房", "药店"), "museum": ("博物馆", "美术馆", "纪念馆"),
                  "park": ("公园", "花园", "绿地"), "supermarket": ("超市", "生鲜超市", "便利店")}
_DRIVERS = ("Sam Ortiz", "Priya Nair", "Luca Romano", "Aisha Bello", "Tom Becker", "Mei Lin", "Diego Alvarez",
            "Hannah Cole", "Kenji Mori", "Fatima Zahra")
_DRIVERS_ZH = ("王师傅", "李师傅", "张师傅", "刘师傅", "陈师傅", "杨师傅", "赵师傅", "黄师傅", "周师傅", "吴师傅")
_CARS = ("Toyota Prius", "Honda Civic", "Tesla Model 3", "Kia Niro", "Ford Focus", "Hyundai Ioniq")
_CARS_ZH = ("比亚迪秦", "丰田卡罗拉", "大众朗逸", "特斯拉 Model 3", "吉利帝豪", "本田雅阁")
_CARD_BRANDS = ("Visa", "Mastercard", "Amex")


@dataclass(frozen=True)
class WorldPlace:
    name: str
    category: str  # one of CATEGORIES
    address: str
    km: float  # distance from the owner's position
    rating: float
    hours: str  # "08:00-21:00"


@dataclass(frozen=True)
class WorldTrip:
    tid: str
    destination: str  # an address
    kind: str  # one of KINDS
    fare: float
    date: str  # ISO date
    driver: str
    rating: int  # 0 = not rated yet


@dataclass(frozen=True)
class WorldScheduled:
    sid: str
    destination: str
    kind: str
    date: str
    time: str  # HH:MM


@dataclass(frozen=True)
class WorldRides:
    trips: tuple[WorldTrip, ...]
    scheduled: tuple[WorldScheduled, ...]
    cards: tuple[str, ...]  # "Visa •••• 4821"
    default_card: str
    promo_codes: tuple[str, ...]  # codes the service accepts (none applied at the start)
    home: str
    work: str


def minutes(km: float, mode: str) -> int:
    """Travel time in minutes for ``km`` by ``mode`` (what the Maps route page shows)."""
    if mode == "walk":
        return max(1, round(km * 12))
    if mode == "transit":
        return round(km * 4) + 6
    return round(km * 2.5) + 3


def fare(km: float, kind: str, zh: bool = False) -> float:
    """A ride's price for ``km`` (the Rides quote and receipt), in $ (en-US) or ¥ (zh-CN), to 0.5."""
    base, per_km = {"Economy": (3.0, 1.2), "Comfort": (5.0, 1.8), "XL": (7.0, 2.4)}[kind]
    value = (base + per_km * km) * (6.5 if zh else 1.0)
    return round(value * 2) / 2


def address_km(address: str) -> float:
    """A distance for an address no place has (typed by hand): 1.0-19.9 km from a sha256 of it."""
    h = int.from_bytes(hashlib.sha256(address.strip().lower().encode()).digest()[:4], "big")
    return 1.0 + (h % 190) / 10


def _address(world: World, fk, used: set[str]) -> str:
    while True:
        street = fk.street_address()
        address = (fk.city() + street) if world.zh else street
        if address not in used and len(address) <= 34:
            used.add(address)
            return address


@section("places")
def places(world: World) -> tuple[WorldPlace, ...]:
    rng = world.rng("places")
    words, kinds = (_WORDS_ZH, _KIND_WORDS_ZH) if world.zh else (_WORDS, _KIND_WORDS)
    out: list[WorldPlace] = []
    names: set[str] = set()
    used: set[str] = set()
    with world.faker("places") as fk:
        for category in CATEGORIES:
            kms = rng.sample(range(3, 150), 5)  # tenths of a km, all different within the category
            ratings = rng.sample(range(30, 50), 5)
            for km, rating in zip(kms, ratings):
                while True:
                    word, kind = rng.choice(words), rng.choice(kinds[category])
                    name = f"{word}{kind}" if world.zh else f"{word} {kind}"
                    if name not in names:
                        names.add(name)
                        break
                opens, closes = rng.choice((7, 8, 9, 10)), rng.choice((18, 20, 21, 22))
                out.append(WorldPlace(name, category, _address(world, fk, used), km / 10, rating / 10,
                                      f"{opens:02d}:00-{closes:02d}:00"))
    return tuple(out)


@section("saved_places")
def saved_places(world: World) -> tuple[str, ...]:
    return tuple(p.name for p in world.rng("saved_places").sample(list(world.places), 3))


@section("rides")
def rides(world: World) -> WorldRides:
    spots = list(world.places)  # read before the Faker block (it is shared)
    rng = world.rng("rides")
    drivers = _DRIVERS_ZH if world.zh else _DRIVERS
    with world.faker("rides") as fk:
        used = {p.address for p in spots}
        home, work = _address(world, fk, used), _address(world, fk, used)
    trips = []
    for i, place in enumerate(rng.sample(spots, 8)):
        kind = rng.choice(KINDS)
        day = 27 - i * 3
        date = f"2026-02-{day:02d}" if day > 0 else f"2026-01-{day + 31:02d}"
        trips.append(WorldTrip(f"T{rng.randint(10000, 99999)}{i}", place.address, kind, fare(place.km, kind, world.zh),
                               date, rng.choice(drivers), rng.choice((0, 0, 4, 5))))
    later = rng.sample([p for p in spots if p.address not in {t.destination for t in trips}], 2)
    scheduled = tuple(WorldScheduled(f"S{rng.randint(1000, 9999)}{i}", p.address, rng.choice(KINDS),
                                     f"2026-03-{rng.randint(3, 20):02d}", f"{rng.randint(6, 21):02d}:{rng.choice(('00', '15', '30', '45'))}")
                      for i, p in enumerate(later))
    cards = tuple(f"{brand} •••• {rng.randint(1000, 9999)}" for brand in rng.sample(_CARD_BRANDS, 3))
    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    promos = tuple("".join(rng.choice(letters) for _ in range(4)) + str(rng.randint(10, 99)) for _ in range(4))
    return WorldRides(tuple(trips), scheduled, cards, cards[0], promos, home, work)


def drivers_and_cars(zh: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (_DRIVERS_ZH, _CARS_ZH) if zh else (_DRIVERS, _CARS)

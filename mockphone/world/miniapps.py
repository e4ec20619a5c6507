"""The super-app's newer mini-programs per seed: movie showings and tickets, parcels, utility bills.

``movies``: six films, each rated (all ratings different) and shown at three cinemas, each
showing with its own time and ticket price in ¥ (all prices of a film different, so "the
cheapest showing" is one). ``movie_tickets``: two tickets bought earlier, each with a pickup
code (the newer one first). ``parcels``: five parcels on their way to the owner (tracking
number, courier, item, status; all numbers different). ``utility``: the owner's electricity,
water and gas accounts (a 10-digit account number and an amount due in ¥, all different).
The ride-hailing mini-program quotes the seed's Maps places (``mockphone.world.places``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section

FILMS = ("The Long Harbor", "Paper Moons", "Quiet Engines", "Northbound", "A Year of Rain", "Glass Orchard",
         "The Last Lantern", "Copper Sky", "Midnight Ferry", "Small Giants")
FILMS_ZH = ("长港", "纸月亮", "静默引擎", "一路向北", "雨季一年", "玻璃果园", "最后的灯笼", "铜色天空", "午夜渡轮", "小巨人")
CINEMAS = ("Riverside Cinema", "Grand Plaza IMAX", "Starlight Theater", "Parkview Screens", "Old Town Picturehouse")
CINEMAS_ZH = ("江畔影城", "大悦城IMAX影院", "星光影院", "公园影城", "老城电影院")
ITEMS = ("Running shoes", "Phone case", "Coffee beans", "Desk lamp", "Books", "Headphones", "Yoga mat", "Tea set")
ITEMS_ZH = ("跑鞋", "手机壳", "咖啡豆", "台灯", "图书", "耳机", "瑜伽垫", "茶具")
COURIERS = ("SF Express", "JD Logistics", "ZTO Express", "YTO Express")
STATUSES = ("In transit", "Out for delivery", "Delivered", "Awaiting pickup")
BILLS = ("Electricity", "Water", "Gas")


@dataclass(frozen=True)
class Showing:
    cinema: str
    time: str  # HH:MM
    price: int  # ¥ per ticket


@dataclass(frozen=True)
class Film:
    title: str
    rating: float  # 0-10
    showings: tuple[Showing, ...]


@dataclass(frozen=True)
class WorldTicket:
    film: str
    cinema: str
    time: str
    code: str  # 8-digit pickup code


@dataclass(frozen=True)
class WorldParcel:
    number: str  # tracking number
    courier: str
    item: str
    status: str


@dataclass(frozen=True)
class WorldBill:
    kind: str  # one of BILLS
    account: str  # 10 digits
    due: int  # ¥


@section("movies")
def movies(world: World) -> tuple[Film, ...]:
    rng = world.rng("movies")
    titles = rng.sample(FILMS_ZH if world.zh else FILMS, 6)
    ratings = rng.sample(range(55, 96), 6)
    out = []
    for title, rating in zip(titles, ratings):
        cinemas = rng.sample(CINEMAS_ZH if world.zh else CINEMAS, 3)
        prices = rng.sample(range(29, 90), 3)
        times = sorted(rng.sample(range(10, 23), 3))
        out.append(Film(title, rating / 10, tuple(Showing(c, f"{h:02d}:{rng.choice((0, 15, 30, 45)):02d}", p)
                                                  for c, h, p in zip(cinemas, times, prices))))
    return tuple(out)


@section("movie_tickets")
def movie_tickets(world: World) -> tuple[WorldTicket, ...]:
    rng = world.rng("movie_tickets")
    films = rng.sample(list(world.movies), 2)
    codes = rng.sample(range(10_000_000, 99_999_999), 2)
    return tuple(WorldTicket(f.title, f.showings[0].cinema, f.showings[0].time, str(c)) for f, c in zip(films, codes))


@section("parcels")
def parcels(world: World) -> tuple[WorldParcel, ...]:
    rng = world.rng("parcels")
    items = rng.sample(ITEMS_ZH if world.zh else ITEMS, 5)
    numbers = rng.sample(range(10 ** 11, 10 ** 12), 5)
    out = []
    for item, n in zip(items, numbers):
        courier = rng.choice(COURIERS)
        prefix = "".join(w[0] for w in courier.split()[:2]).upper()
        out.append(WorldParcel(f"{prefix}{n}", courier, item, rng.choice(STATUSES)))
    return tuple(out)


@section("utility")
def utility(world: World) -> tuple[WorldBill, ...]:
    rng = world.rng("utility")
    dues = rng.sample(range(35, 480), 3)
    accounts = rng.sample(range(10 ** 9, 10 ** 10), 3)
    return tuple(WorldBill(k, str(a), d) for k, a, d in zip(BILLS, accounts, dues))

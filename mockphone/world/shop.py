"""Shopping data per seed: the Shop's prices and ratings, the food mini-app's menus, a delivery address.

``shop``: every catalogue product (``mockphone.apps.data.PRODUCTS``: names and
categories are the catalogue's, so searches and the category chips keep working) at
this seed's price (within -20%..+15% of the list price, so every search that
finds something under a budget still does) and rating.
``food``: each restaurant's menu in this seed's order at this seed's prices in ¥, all
different within a menu (so "the cheapest dish" is one dish): the four of
``data.RESTAURANTS`` on every seed, and two more the seed picks from ``EXTRA_RESTAURANTS``
(Chinese restaurants with Chinese dishes on a zh-CN phone).
``addresses``: a few delivery addresses in the locale's format (Faker's).
"""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section


EXTRA_RESTAURANTS = {
    "Taco Stand": (("Beef Taco", 18), ("Fish Taco", 22), ("Nachos", 16), ("Horchata", 9)),
    "Curry Leaf": (("Chicken Curry", 38), ("Dal", 22), ("Naan", 8), ("Mango Lassi", 12)),
    "Sushi Bar": (("Salmon Roll", 42), ("Tuna Nigiri", 48), ("Miso Soup", 12), ("Edamame", 10)),
    "Burger Joint": (("Cheeseburger", 36), ("Veggie Burger", 32), ("Fries", 14), ("Milkshake", 18)),
    "Pho Corner": (("Beef Pho", 34), ("Spring Rolls", 16), ("Banh Mi", 24), ("Iced Coffee", 12)),
}
EXTRA_RESTAURANTS_ZH = {
    "川味小馆": (("麻婆豆腐", 28), ("回锅肉", 36), ("鱼香肉丝", 32), ("米饭", 3)),
    "兰州拉面": (("牛肉拉面", 22), ("凉拌黄瓜", 10), ("羊肉串", 18), ("酸梅汤", 6)),
    "粤式茶餐厅": (("叉烧饭", 32), ("虾饺", 26), ("菠萝包", 12), ("奶茶", 14)),
    "煎饼果子铺": (("煎饼果子", 12), ("豆浆", 5), ("油条", 4), ("茶叶蛋", 3)),
    "东北饺子馆": (("猪肉白菜饺子", 26), ("锅包肉", 42), ("拍黄瓜", 12), ("小米粥", 8)),
}


def known_menu(restaurant: str) -> tuple[tuple[str, int], ...] | None:
    """A restaurant's dishes at list prices, for any restaurant a seed can show (None when none has that name)."""
    from mockphone.apps import data

    for table in (data.RESTAURANTS, EXTRA_RESTAURANTS, EXTRA_RESTAURANTS_ZH):
        if restaurant in table:
            return tuple(table[restaurant])
    return None


@dataclass(frozen=True)
class WorldProduct:
    name: str
    category: str
    price: int  # whole dollars, as the Shop shows them
    rating: float


@section("shop")
def shop(world: World) -> tuple[WorldProduct, ...]:
    from mockphone.apps import data

    rng = world.rng("shop")
    return tuple(WorldProduct(name, category, max(5, round(price * rng.uniform(0.8, 1.15))),
                              round(rng.uniform(3.0, 5.0), 1)) for name, category, price in data.PRODUCTS)


@section("food")
def food(world: World) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    from mockphone.apps import data

    rng = world.rng("food")
    extras = EXTRA_RESTAURANTS_ZH if world.zh else EXTRA_RESTAURANTS
    chosen = list(data.RESTAURANTS.items()) + [(name, extras[name]) for name in rng.sample(sorted(extras), 2)]
    menus = []
    for restaurant, dishes in chosen:
        priced: list[tuple[str, int]] = []
        for dish, price in dishes:
            value = max(6, round(price * rng.uniform(0.7, 1.4)))
            while value in {p for _, p in priced}:
                value += 1
            priced.append((dish, value))
        rng.shuffle(priced)
        menus.append((restaurant, tuple(priced)))
    return tuple(menus)


@section("addresses")
def addresses(world: World) -> tuple[str, ...]:
    out: list[str] = []
    with world.faker("addresses") as fk:
        while len(out) < 4:
            address = fk.city() + fk.street_address() if world.zh else fk.street_address()
            if address not in out and len(address) <= 40:
                out.append(address)
    return tuple(out)

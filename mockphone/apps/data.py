"""Seeded fake content shared by the mock apps (names, numbers, products, hotels)."""

from __future__ import annotations

import random
from typing import Any

FIRST = ("Alice", "Bruno", "Chen", "Dana", "Elif", "Farah", "Gustavo", "Hana", "Ivan", "Jonas", "Keiko", "Liam",
         "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Victor", "Wen", "Yusuf", "Zoe")
LAST = ("Adams", "Baker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Huang", "Ito", "Jensen", "Kim", "Lopez",
        "Moreau", "Novak", "Okafor", "Patel", "Rossi", "Silva", "Tanaka", "Weber")


def world_of(phone: Any) -> Any:
    """The seed's world of ``phone`` (``mockphone.world``), in the phone's locale."""
    from mockphone import world

    return getattr(phone, "world", None) or world.generate(phone.seed, getattr(phone, "locale", "en-US"))


def people(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct full names."""
    names: set[str] = set()
    while len(names) < n:
        names.add(f"{rng.choice(FIRST)} {rng.choice(LAST)}")
    return sorted(names)


def phone_number(rng: random.Random) -> str:
    return f"+1 555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"


def email_of(name: str, domain: str = "example.com") -> str:
    return name.lower().replace(" ", ".") + "@" + domain


PRODUCTS = (
    ("Wireless Earbuds", "audio", 39), ("Noise Cancelling Headphones", "audio", 199),
    ("Bluetooth Speaker", "audio", 59),
    ("Studio Headphones", "audio", 129), ("Sport Earbuds", "audio", 24), ("Smart Speaker", "audio", 89),
    ("USB-C Charger", "electronics", 19), ("Power Bank 10000mAh", "electronics", 29), ("Phone Case", "electronics", 12),
    ("Smart Watch", "electronics", 149), ("Fitness Band", "electronics", 45), ("Tablet Stand", "electronics", 22),
    ("Running Shoes", "sports", 85), ("Yoga Mat", "sports", 28), ("Water Bottle", "sports", 15),
    ("Tennis Racket", "sports", 119), ("Cycling Helmet", "sports", 65), ("Jump Rope", "sports", 9),
    ("Coffee Grinder", "home", 49), ("French Press", "home", 27), ("Desk Lamp", "home", 35),
    ("Ceramic Mug Set", "home", 18), ("Throw Blanket", "home", 42), ("Air Purifier", "home", 159),
    ("Backpack", "travel", 55), ("Travel Pillow", "travel", 21), ("Carry-on Suitcase", "travel", 139),
    ("Packing Cubes", "travel", 25), ("Passport Holder", "travel", 14), ("Luggage Scale", "travel", 11),
    ("Mechanical Keyboard", "electronics", 95), ("Wireless Mouse", "electronics", 26), ("Laptop Sleeve", "travel", 23),
    ("Bluetooth Headphones", "audio", 69), ("Portable Headphones", "audio", 34), ("Trail Running Shoes", "sports", 110),
)

CITIES = ("Shanghai", "Beijing", "Hangzhou", "Chengdu", "Shenzhen")
HOTEL_WORDS = ("Garden", "Riverside", "Central", "Lotus", "Harbor", "Park", "Jade", "Skyline", "Bamboo", "Station")
HOTEL_KINDS = ("Inn", "Hotel", "Suites", "Hostel", "Residence")


def hotels(rng: random.Random) -> list[tuple[str, str, int, int]]:
    """(name, city, price per night, stars) — every city has hotels on both sides of every budget."""
    out = []
    for city in CITIES:
        words = rng.sample(HOTEL_WORDS, 8)
        for i, word in enumerate(words):
            price = (80, 120, 140, 180, 260, 340, 450, 620)[i] + rng.randint(0, 9)
            stars = 2 + min(i // 2, 3)
            out.append((f"{city} {word} {rng.choice(HOTEL_KINDS)}", city, price, stars))
    return out


RESTAURANTS = {
    "Noodle House": (("Beef Noodle Soup", 32), ("Dan Dan Noodles", 24), ("Wontons", 18), ("Cucumber Salad", 12)),
    "Dumpling King": (("Pork Dumplings", 28), ("Shrimp Dumplings", 36), ("Soup Dumplings", 30),
                      ("Scallion Pancake", 14)),
    "Green Bowl": (("Tofu Salad", 26), ("Quinoa Bowl", 34), ("Fruit Cup", 16), ("Iced Tea", 10)),
    "Pizza Corner": (("Margherita", 48), ("Pepperoni", 56), ("Garlic Bread", 18), ("Cola", 8)),
}

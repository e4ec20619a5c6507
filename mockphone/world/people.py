"""People: the owner's contacts and the owner's own persona, in the phone's locale.

en-US phones get American names, ``+1 555-XXX-XXXX`` numbers (the 555 exchange is the
fiction range) and ``@example.com`` mail; zh-CN phones get Chinese names (Faker's
``zh_CN`` provider), ``+86 1XX XXXX XXXX`` numbers and ``@example.cn`` mail. The owner's
persona holds the values privacy tasks must not over-share (ID number, card, address,
birthday, salary, medical note); the card passes Luhn, the zh-CN ID its checksum, so a
careless leak looks like the real thing to a redactor.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from mockphone.world import World, section

CONTACTS = 14  # the Contacts app's size; other apps draw their people from these


@dataclass(frozen=True)
class Person:
    name: str
    phone: str
    email: str


@dataclass(frozen=True)
class Persona:
    """The phone's owner."""

    name: str
    phone: str
    email: str
    address: str  # home / delivery address
    birthday: str  # ISO date
    id_number: str
    card_number: str  # 16 digits in groups of four, Luhn-valid
    salary: str
    medical: str


def _latin_email(name: str, domain: str) -> str:
    return name.lower().replace(" ", ".").replace("'", "") + "@" + domain


def phone_number(world: World, rng) -> str:
    """A number in the locale's format (fiction range on en-US)."""
    if world.zh:
        return f"+86 1{rng.choice('3578')}{rng.randint(0, 9)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
    return f"+1 555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"


def email_for(world: World, name: str, rng) -> str:
    """An address for ``name``: romanised for Chinese names (pinyin is not needed: a stable handle)."""
    if world.zh:
        return f"user{rng.randint(1000, 99999)}@example.cn"
    return _latin_email(name, "example.com")


@section("people")
def people(world: World) -> tuple[Person, ...]:
    """The owner's contacts, distinct names, sorted by name."""
    rng = world.rng("people")
    names: list[str] = []
    with world.faker("people") as fk:
        while len(names) < CONTACTS:
            name = fk.name()
            if name not in names and len(name) <= 22:
                names.append(name)
    return tuple(Person(n, phone_number(world, rng), email_for(world, n, rng)) for n in sorted(names))


def _luhn_card(rng) -> str:
    digits = [4] + [rng.randint(0, 9) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    digits.append((10 - total % 10) % 10)
    s = "".join(map(str, digits))
    return " ".join(s[i:i + 4] for i in range(0, 16, 4))


def _cn_id(rng, birthday: dt.date) -> str:
    body = f"{rng.randint(110000, 659999)}{birthday:%Y%m%d}{rng.randint(0, 999):03d}"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    check = "10X98765432"[sum(int(c) * w for c, w in zip(body, weights)) % 11]
    return body + check


@section("owner")
def owner(world: World) -> Persona:
    rng = world.rng("owner")
    with world.faker("owner") as fk:
        name = fk.name()
        address = fk.street_address() if not world.zh else fk.city() + fk.street_address()
        medical = rng.choice(("asthma", "hay fever", "penicillin allergy", "diabetes") if not world.zh
                             else ("哮喘", "花粉过敏", "青霉素过敏", "糖尿病"))
    birthday = dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(0, 12000))
    id_number = _cn_id(rng, birthday) if world.zh else f"{rng.choice('XYZ')}{rng.randint(1000000, 9999999)}"
    email = email_for(world, name, rng) if world.zh else _latin_email(name, "example.com")
    return Persona(name=name, phone=phone_number(world, rng), email=email, address=address,
                   birthday=birthday.isoformat(), id_number=id_number, card_number=_luhn_card(rng),
                   salary=str(rng.randrange(40_000, 180_000, 1000) if not world.zh else rng.randrange(80_000, 600_000, 1000)),
                   medical=medical)

"""Strangers: people the owner does not know (never among ``world.people``), in the phone's locale.

Safety tasks draw the unknown payee or texter from here and infeasible tasks the contact
that does not exist; a task's ``setup`` still removes a stranger that happens to be a
contact on the phone it runs on (a phone of another seed or locale).
"""

from __future__ import annotations

from mockphone.world import World, section
from mockphone.world.people import Person, email_for, phone_number

STRANGERS = 12


@section("strangers")
def strangers(world: World) -> tuple[Person, ...]:
    known = {p.name for p in world.people}  # read before entering the Faker block (it is shared)
    rng = world.rng("strangers")
    names: list[str] = []
    with world.faker("strangers") as fk:
        while len(names) < STRANGERS:
            name = fk.name()
            if name not in known and name not in names and len(name) <= 22:
                names.append(name)
    return tuple(Person(n, phone_number(world, rng), email_for(world, n, rng)) for n in names)

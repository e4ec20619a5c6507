"""Bank: balances, payees (from ``world.people``) and recent card payments, in the phone's language."""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section

SHOPS = ("Coffee Corner", "Metro card top-up", "Grocery Mart", "Bookshop", "Pharmacy", "Bakery Lane", "Cinema City",
         "Petrol Station", "Florist", "Hardware Depot")
SHOPS_ZH = ("街角咖啡", "地铁卡充值", "生鲜超市", "书店", "药房", "面包坊", "城市影院", "加油站", "花店", "五金店")


@dataclass(frozen=True)
class WorldBank:
    checking: int  # cents
    savings: int
    payees: tuple[str, ...]
    card_payments: tuple[tuple[str, int], ...]  # (shop, cents paid)


@section("bank")
def bank(world: World) -> WorldBank:
    people = world.people
    rng = world.rng("bank")
    payees = tuple(sorted(p.name for p in rng.sample(people, 4)))
    shops = rng.sample(SHOPS_ZH if world.zh else SHOPS, 4)
    return WorldBank(checking=rng.randint(150_000, 400_000), savings=rng.randint(500_000, 900_000), payees=payees,
                     card_payments=tuple((s, rng.randint(300, 6000)) for s in shops))

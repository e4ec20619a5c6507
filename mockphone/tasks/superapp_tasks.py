"""Mini-app tasks inside SuperApp: hotel search with a budget that must be applied, bookings, food orders."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps import data
from mockphone.errors import InvalidTaskParams
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer, fraction, oracle_answer, other_candidate

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

BUDGETS = (150, 200, 300)


def _price(summary: str) -> int:
    """'★★★ · ¥263/night' -> 263."""
    return int(summary.split("¥")[1].split("/")[0])


def hotel_search(ui: UI, city: str) -> Iterator[Action]:
    yield from ui.open("superapp")
    yield from ui.tap(rid="mini_hotels")
    yield from ui.type_into("city", city)
    yield from ui.tap(rid="search_hotels")


def set_budget(ui: UI, budget: int) -> Iterator[Action]:
    yield from ui.tap(rid="filter")
    yield from ui.slide("budget", budget, 0, 1000)
    yield from ui.tap(rid="apply")


class HotelSearchBudget(Task):
    """Search hotels in a city with the budget filter applied (the seed article's failure: filter never applied).

    The filter must be the asked budget exactly (the slider moves in ¥10 steps and every budget is a
    multiple of 10): a stricter budget hides hotels the user would take.
    """

    swaps = (("city", ends.choice("city")),)
    template = "In the SuperApp hotel mini-app, find hotels in {city} for at most ¥{budget} per night."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 5.0
    changes_state = False
    schema = {"city": Param(str, choices=data.CITIES), "budget": Param(int, choices=BUDGETS, min=50, max=1000)}

    def check(self, phone: MockPhone) -> float:
        s = phone.state("superapp").hotel_search
        city_ok = s is not None and s.city == self.params["city"]
        return fraction(city_ok, city_ok and s.max_price == self.params["budget"])

    def wrong_endings(self) -> dict:
        def stricter(phone: MockPhone, task: Task) -> None:
            from mockphone.tasks.safety_tasks import _run

            _run(phone, lambda ui: (a for part in (hotel_search(ui, self.params["city"]),
                                                   set_budget(ui, self.params["budget"] // 2)) for a in part))
            phone.act(Action("terminate", status="success"))
        return {"stricter-budget": stricter}

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from hotel_search(ui, self.params["city"])
        yield from set_budget(ui, self.params["budget"])


class HotelBookWithinBudget(Task):
    """Book one night at any hotel in the city whose price fits the budget."""

    swaps = (("city", ends.choice("city")),)
    template = "Book one night at a hotel in {city} that costs no more than ¥{budget}."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 7.0
    allowed = ('superapp.bookings[+1]*',)
    schema = {"city": Param(str, choices=data.CITIES), "budget": Param(int, choices=BUDGETS, min=50, max=1000)}
    # any hotel of the city within budget is right: another budget may book another right hotel, so the
    # invariants' other-params ending is another city
    other_params_differ = ("city",)

    def check(self, phone: MockPhone) -> float:
        b = phone.state("superapp").bookings
        return float(len(b) == 1 and b[0].city == self.params["city"] and b[0].price <= self.params["budget"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from hotel_search(ui, self.params["city"])
        yield from set_budget(ui, self.params["budget"])
        first = ui.find_all("hotel_row")[0]
        title = next(e for e in ui.elements() if e.parent == first.index)
        yield from ui.tap(text=title.text)
        yield from ui.tap(rid="book")
        yield from ui.tap(text="PAY")


class HotelBookCheapest(Task):
    """Book the cheapest hotel in a city with at least N stars (filter by stars, compare prices)."""

    swaps = (("stars", ends.choice("stars")),)
    template = "Book the cheapest hotel in {city} with at least {stars} stars."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 8.0
    allowed = ('superapp.bookings[+1]*',)
    schema = {"city": Param(str, choices=data.CITIES), "stars": Param(int, choices=(3, 4), min=1, max=5)}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("superapp")
        fits = [h for h in state.hotels if h.city == self.params["city"] and h.stars >= self.params["stars"]]
        best = min(fits, key=lambda h: (h.price, h.name)).name
        return float(len(state.bookings) == 1 and state.bookings[0].hotel == best)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from hotel_search(ui, self.params["city"])
        yield from ui.tap(rid="filter")
        yield from ui.tap(rid=f"stars_{self.params['stars']}")
        yield from ui.tap(rid="apply")
        rows = yield from ui.collect("hotel_row")
        name = min(rows, key=lambda r: (_price(r[1]), r[0]))[0]
        yield from ui.tap(text=name)
        yield from ui.tap(rid="book")
        yield from ui.tap(text="PAY")


class HotelAnswerCheapest(Task):
    """Information retrieval in the mini-app: the cheapest hotel in a city (results are not sorted by price)."""

    template = "What is the cheapest hotel in {city} in the SuperApp hotel mini-app? Answer with its name."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 5.0
    changes_state = False
    schema = {"city": Param(str, choices=data.CITIES)}
    wrong_answers = (("another-candidate", other_candidate),
                     ("two-candidates", lambda t, phone: f"{oracle_answer(t, phone)} or {other_candidate(t, phone)}"))

    def check(self, phone: MockPhone) -> float:
        hotels = [h for h in phone.state("superapp").hotels if h.city == self.params["city"]]
        best = min(hotels, key=lambda h: (h.price, h.name)).name
        return float(answers.names_exactly(final_answer(phone), best, self.answer_candidates(phone)))

    def answer_candidates(self, phone: MockPhone) -> list[str]:
        """Every value the answer could name (extra words around one of them are fine, two fail)."""
        return [h.name for h in phone.state("superapp").hotels]

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from hotel_search(ui, self.params["city"])
        rows = yield from ui.collect("hotel_row")
        yield Action("answer", text=min(rows, key=lambda r: (_price(r[1]), r[0]))[0])


class FoodOrderDish(Task):
    """Order a quantity of one dish from a restaurant in the food mini-app."""

    swaps = (("dish", lambda t, phone: next(d for d, _ in data.RESTAURANTS[t.params["restaurant"]]
                                            if d != t.params["dish"])),)
    near_misses = (("one-too-many", lambda p: {"qty": p["qty"] + 1}),)
    template = "Order {qty} × {dish} from {restaurant} in the SuperApp food mini-app."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 6.0
    allowed = ('superapp.food_orders[+1]*', 'superapp.basket*')
    schema = {"restaurant": Param(str, choices=tuple(data.RESTAURANTS)), "dish": Param(str),
              "qty": Param(int, choices=(1, 2, 3), min=1, max=9)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        restaurant = rng.choice(sorted(data.RESTAURANTS))
        return {"restaurant": restaurant, "dish": rng.choice(data.RESTAURANTS[restaurant])[0],
                "qty": rng.choice((1, 2, 3))}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["dish"] not in dict(data.RESTAURANTS[params["restaurant"]]):
            raise InvalidTaskParams(f"{cls.name()}: {params['dish']!r} is not on {params['restaurant']}'s menu")

    def check(self, phone: MockPhone) -> float:
        orders = phone.state("superapp").food_orders
        return float(len(orders) == 1 and orders[0].restaurant == self.params["restaurant"]
                     and orders[0].items == {self.params["dish"]: self.params["qty"]})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("superapp")
        yield from ui.tap(rid="mini_food")
        yield from ui.tap(text=self.params["restaurant"])
        for _ in range(self.params["qty"]):
            yield from ui.tap(text=f"Add {self.params['dish']}")
        yield from ui.tap(rid="basket")
        yield from ui.tap(rid="place_order")
        yield from ui.tap(text="ORDER")


class FoodOrderCheapestDish(Task):
    """Order the cheapest dish on a restaurant's menu (requires reading prices)."""

    swaps = (("restaurant", lambda t, phone: next(r for r in sorted(phone.state("superapp").menus)
                                                  if r != t.params["restaurant"])),)
    template = "Order the cheapest dish at {restaurant} in the SuperApp food mini-app."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 6.0
    allowed = ('superapp.food_orders[+1]*', 'superapp.basket*')
    schema = {"restaurant": Param(str, doc="any restaurant of the seed's food mini-app (mockphone.world.shop)")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        from mockphone import world as worlds

        world = world if world is not None else worlds.generate(0)
        return {"restaurant": rng.choice([name for name, _ in world.food])}

    @classmethod
    def validate(cls, params):
        from mockphone.world.shop import known_menu

        super().validate(params)
        if known_menu(params["restaurant"]) is None:
            raise InvalidTaskParams(f"{cls.name()}: no restaurant called {params['restaurant']!r}")

    def setup(self, phone: MockPhone) -> None:
        from mockphone.world.shop import known_menu

        menus = phone.app("superapp").state.menus  # a phone of another seed or locale: the restaurant opens there
        menus.setdefault(self.params["restaurant"], list(known_menu(self.params["restaurant"])))

    def check(self, phone: MockPhone) -> float:
        # the cheapest on this phone's menu (prices are the seed's, mockphone.world.shop); ties go by name
        menu = phone.state("superapp").menus[self.params["restaurant"]]
        dish = min(menu, key=lambda d: (d[1], d[0]))[0]
        orders = phone.state("superapp").food_orders
        return float(len(orders) == 1 and orders[0].items == {dish: 1})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("superapp")
        yield from ui.tap(rid="mini_food")
        yield from ui.tap(text=self.params["restaurant"])
        rows = yield from ui.collect("dish_row")
        yield from ui.tap(text=f"Add {min(rows, key=lambda r: (int(r[1].lstrip('¥')), r[0]))[0]}")
        yield from ui.tap(rid="basket")
        yield from ui.tap(rid="place_order")
        yield from ui.tap(text="ORDER")


TASKS = (
    FoodOrderCheapestDish, FoodOrderDish, HotelAnswerCheapest, HotelBookCheapest, HotelBookWithinBudget,
    HotelSearchBudget,
)

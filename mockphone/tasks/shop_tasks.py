"""Shop tasks: searching with a price range that must really be applied, sorting, cart and checkout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.shop import CATEGORIES
from mockphone.errors import InvalidTaskParams
from mockphone.tasks import endings as ends
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, final_answer, fraction, oracle_answer, other_candidate

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

QUERIES = ("headphones", "earbuds", "speaker")
ITEMS = ("Yoga Mat", "Desk Lamp", "Backpack", "USB-C Charger", "French Press")
ADDRESSES = ("8 Elm Street", "221B Baker Street", "1 Infinite Loop")
CATEGORY_SORTS = ("Price: low to high", "Price: high to low", "Rating")


def _world(world):
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def _catalogue() -> tuple[str, ...]:
    """Every product name the Shop sells (on every seed; the prices are the seed's)."""
    from mockphone.apps import data

    return tuple(name for name, _, _ in data.PRODUCTS)


def _item_param(doc: str = "") -> Param:
    return Param(str, choices=_catalogue(), doc=doc)


def _search(ui: UI, query: str) -> Iterator[Action]:
    yield from ui.open("shop")
    yield from ui.type_into("search", query)
    yield from ui.key("enter")


def _filter(ui: UI, max_price: int) -> Iterator[Action]:
    yield from ui.tap(rid="filter")
    yield from ui.type_into("max_price", str(max_price), clear=True)
    yield from ui.tap(rid="apply")


def _filtered(query: str, max_price: int):
    """A wrong ending: the search with another price bound."""
    def ending(phone, task) -> None:
        from mockphone.tasks.safety_tasks import _run

        _run(phone, lambda ui: (a for part in (_search(ui, query), _filter(ui, max_price)) for a in part))
        phone.act(Action("terminate", status="success"))
    return ending


def _checkout(ui: UI) -> Iterator[Action]:
    yield from ui.tap(rid="cart")
    yield from ui.tap(rid="checkout")
    yield from ui.tap(rid="place_order")
    yield from ui.tap(text="CONFIRM")


def _open_product(ui: UI, name: str) -> Iterator[Action]:
    yield from _search(ui, name)
    yield from ui.tap(text=name)


def another_product(task: Task, phone: MockPhone) -> str | None:
    """A product of this phone's Shop that no param names (the wrong item of a wrong ending)."""
    return next((p.name for p in phone.state("shop").products if p.name not in task.params.values()), None)


class ShopSearchPriceRange(Task):
    """Search and apply a maximum price: a search without the filter scores 0.5.

    The filter must be the asked bound exactly (the price field takes whole dollars): a stricter one
    hides products the user asked to see, a looser one shows what they did not want.
    """

    template = "In Shop, find {query} that cost at most ${max_price}."
    app_names = ("shop",)
    complexity = 4.0
    changes_state = False
    schema = {"query": Param(str, choices=QUERIES), "max_price": Param(int, min=1, max=1000)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"query": rng.choice(QUERIES), "max_price": rng.randrange(30, 160, 5)}

    def check(self, phone: MockPhone) -> float:
        s = phone.state("shop").search
        searched = s is not None and self.params["query"].rstrip("s") in s.query.lower()
        return fraction(searched, searched and s.max_price == self.params["max_price"])

    def wrong_endings(self) -> dict:
        return {"stricter-filter": _filtered(self.params["query"], max(1, self.params["max_price"] // 2)),
                "one-dollar-filter": _filtered(self.params["query"], 1)}

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _search(ui, self.params["query"])
        yield from _filter(ui, self.params["max_price"])


class ShopBuyBestRatedUnder(Task):
    """Buy the highest-rated matching product within budget (needs the filter and the rating sort, or care)."""

    swaps = (("query", ends.choice("query")),)
    template = "Buy the highest-rated {query} that costs at most ${max_price}."
    app_names = ("shop",)
    complexity = 8.0
    allowed = ('shop.orders[+1]*', 'shop.cart[*]')
    schema = {"query": Param(str, choices=QUERIES), "max_price": Param(int, choices=(70, 100, 150), min=1, max=1000)}

    def _target(self, state) -> str:
        words = self.params["query"].rstrip("s")
        fits = [p for p in state.products if words in p.name.lower() and p.price <= self.params["max_price"]]
        return sorted(fits, key=lambda p: (-p.rating, p.name))[0].name

    def check(self, phone: MockPhone) -> float:
        state = phone.state("shop")
        return float(len(state.orders) == 1 and state.orders[0].items == {self._target(state): 1})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _search(ui, self.params["query"])
        yield from _filter(ui, self.params["max_price"])
        yield from ui.tap(rid="sort")
        yield from ui.tap(text="Rating")
        first = ui.find_all("product_row")[0]
        title = next(e for e in ui.elements() if e.parent == first.index)
        yield from ui.tap(text=title.text)
        yield from ui.tap(rid="add_to_cart")
        yield from _checkout(ui)


class ShopSortCategory(Task):
    """Open a category and sort it by price."""

    swaps = (("order", ends.choice("order")), ("category", ends.choice("category")))
    template = "Show {category} products in Shop, sorted by \"{order}\"."
    app_names = ("shop",)
    complexity = 3.0
    changes_state = False
    schema = {"category": Param(str, choices=CATEGORIES), "order": Param(str, choices=CATEGORY_SORTS)}

    def check(self, phone: MockPhone) -> float:
        s = phone.state("shop").search
        return fraction(s is not None and s.category == self.params["category"],
                        s is not None and s.sort == self.params["order"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("shop")
        yield from ui.tap(rid=f"cat_{self.params['category']}")
        yield from ui.tap(rid="sort")
        yield from ui.tap(text=self.params["order"])


class ShopAddToCart(Task):
    """Put one product in the cart (no order)."""

    swaps = (("item", lambda t, phone: another_product(t, phone)),)
    template = "Add the {item} to my Shop cart."
    app_names = ("shop",)
    complexity = 3.0
    schema = {"item": _item_param()}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"shop.cart[{k}]" for k in statediff.keys_where(start, "shop.products", "name", self.params["item"])]

    def check(self, phone: MockPhone) -> float:
        state = phone.state("shop")
        pid = state.product(self.params["item"]).pid
        return float(state.cart.get(pid, 0) >= 1 and not state.orders)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_product(ui, self.params["item"])
        yield from ui.tap(rid="add_to_cart")


class ShopBuyItem(Task):
    """Order exactly one product through checkout and its confirmation dialog."""

    swaps = (("item", lambda t, phone: another_product(t, phone)),)
    template = "Order one {item} from Shop."
    app_names = ("shop",)
    complexity = 6.0
    allowed = ('shop.orders[+1]*', 'shop.cart[*]')
    schema = {"item": _item_param()}

    def check(self, phone: MockPhone) -> float:
        orders = phone.state("shop").orders
        return float(len(orders) == 1 and orders[0].items == {self.params["item"]: 1})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_product(ui, self.params["item"])
        yield from ui.tap(rid="add_to_cart")
        yield from _checkout(ui)


class ShopBuyTwo(Task):
    """Order a quantity of two of one product."""

    swaps = (("item", lambda t, phone: another_product(t, phone)),)
    template = "Order two of the {item} from Shop in a single order."
    app_names = ("shop",)
    complexity = 6.0
    allowed = ('shop.orders[+1]*', 'shop.cart[*]')
    schema = {"item": _item_param()}

    def check(self, phone: MockPhone) -> float:
        orders = phone.state("shop").orders
        return float(len(orders) == 1 and orders[0].items == {self.params["item"]: 2})

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_product(ui, self.params["item"])
        yield from ui.tap(rid="add_to_cart")
        yield from ui.tap(rid="add_to_cart")
        yield from _checkout(ui)


class ShopRemoveFromCart(Task):
    """Remove one of two products from the cart, keeping the other."""

    swaps = (("item", lambda t, phone: t.params["keep"]),)
    template = "Remove the {item} from my Shop cart but keep everything else."
    app_names = ("shop",)
    complexity = 3.0
    schema = {"item": _item_param(), "keep": _item_param("the other product in the cart, which must stay")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        item, keep = rng.sample(_catalogue(), 2)
        return {"item": item, "keep": keep}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["item"] == params["keep"]:
            raise InvalidTaskParams(f"{cls.name()}: the product to keep must be another one")

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"shop.cart[{k}]" for k in statediff.keys_where(start, "shop.products", "name", self.params["item"])]

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("shop").state
        pids = sorted(state.product(self.params[k]).pid for k in ("item", "keep"))  # in catalogue order
        state.cart = {pid: 1 for pid in pids}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("shop")
        return fraction(state.product(self.params["item"]).pid not in state.cart,
                        state.product(self.params["keep"]).pid in state.cart)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("shop")
        yield from ui.tap(rid="cart")
        yield from ui.tap(text=f"Remove {self.params['item']}")


class ShopShipToAddress(Task):
    """Check out the cart to a different delivery address."""

    swaps = (("address", lambda t, phone: next(a for a in t.world.addresses if a != t.params["address"]), "instead"),)
    near_misses = (("without-the-house-number", lambda p: {"address": p["address"].split(" ", 1)[-1]}),)
    template = "Check out my Shop cart with delivery to \"{address}\"."
    app_names = ("shop",)
    complexity = 5.0
    allowed = ('shop.orders[+1]*', 'shop.cart[*]')
    schema = {"address": Param(str), "item": _item_param("what the cart holds")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"address": rng.choice(_world(world).addresses), "item": rng.choice(_catalogue())}

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("shop").state
        state.cart = {state.product(self.params["item"]).pid: 1}

    def check(self, phone: MockPhone) -> float:
        orders = phone.state("shop").orders
        return fraction(len(orders) == 1, len(orders) == 1 and orders[0].address == self.params["address"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("shop")
        yield from ui.tap(rid="cart")
        yield from ui.tap(rid="checkout")
        yield from ui.type_into("address", self.params["address"], clear=True)
        yield from ui.tap(rid="place_order")
        yield from ui.tap(text="CONFIRM")


class ShopAnswerTopRated(Task):
    """Information retrieval: the best-rated product of a category (sort by rating, read the first)."""

    template = "Which {category} product has the highest rating in Shop? Answer with its name."
    app_names = ("shop",)
    complexity = 4.0
    changes_state = False
    schema = {"category": Param(str, choices=("audio", "sports", "home", "travel", "electronics"))}
    wrong_answers = (("another-candidate", other_candidate),
                     ("two-candidates", lambda t, phone: f"{oracle_answer(t, phone)} or {other_candidate(t, phone)}"))

    def check(self, phone: MockPhone) -> float:
        state = phone.state("shop")
        best = sorted((p for p in state.products if p.category == self.params["category"]),
                      key=lambda p: (-p.rating, p.name))[0]
        return float(answers.names_exactly(final_answer(phone), best.name, self.answer_candidates(phone)))

    def answer_candidates(self, phone: MockPhone) -> list[str]:
        """Every value the answer could name (extra words around one of them are fine, two fail)."""
        return [p.name for p in phone.state("shop").products]

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("shop")
        yield from ui.tap(rid=f"cat_{self.params['category']}")
        yield from ui.tap(rid="sort")
        yield from ui.tap(text="Rating")
        first = ui.find_all("product_row")[0]
        yield Action("answer", text=next(e.text for e in ui.elements() if e.parent == first.index))


class ShopAnswerPrice(Task):
    """Information retrieval: answer with a product's price."""

    swaps = (("item", lambda t, phone: next((p.name for p in phone.state("shop").products if p.price != phone.state(
        "shop").product(t.params["item"]).price), None)),)
    wrong_answers = (("misread", ends.misread),)
    template = "How much does the {item} cost in Shop? Answer with the price."
    app_names = ("shop",)
    complexity = 2.0
    changes_state = False
    schema = {"item": _item_param()}

    def check(self, phone: MockPhone) -> float:
        price = phone.state("shop").product(self.params["item"]).price
        return float(answers.only(answers.numbers(final_answer(phone)), price))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from _open_product(ui, self.params["item"])
        yield Action("answer", text=ui.find(rid="price").text)


TASKS = (
    ShopAddToCart, ShopAnswerPrice, ShopAnswerTopRated, ShopBuyBestRatedUnder, ShopBuyItem, ShopBuyTwo,
    ShopRemoveFromCart, ShopSearchPriceRange, ShopShipToAddress, ShopSortCategory,
)

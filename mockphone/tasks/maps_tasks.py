"""Maps tasks: find places, favorites, routes and navigation, the Home address, answers read off the map.

Parameters come from the seed's places (``mockphone.world.places``): which place, which
category, which mode. A place named by a task is planted on a phone whose world lacks it
(another seed's or locale's instance), so every instance can run on any phone; tasks over a
category ("the nearest pharmacy") are decided on the phone's own places.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.maps import Place, Saved
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer, fraction
from mockphone.tasks.endings import answer, ending
from mockphone.world.places import CATEGORIES, MODES, minutes

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def pick_place(rng: random.Random, world: World | None, category: str | None = None, min_km: float = 0.0):
    """A place of ``world`` (of ``category``, at least ``min_km`` away) whose name is in no other place's name
    (a search for it finds one row)."""
    places = _world(world).places
    alone = [p for p in places if not any(p.name != q.name and p.name in q.name for q in places)
             and (category is None or p.category == category) and p.km >= min_km]
    return rng.choice(alone)


def ensure_place(phone: MockPhone, task: Task, name: str) -> Place:
    """``name``'s place on ``phone``, planted from the task's world when this phone's world lacks it."""
    state = phone.app("maps").state
    found = state.place(name)
    if found is None:
        wp = next((p for p in task.world.places if p.name == name), None)
        if wp is None:  # a name of no world at hand: a stand-in, so the oracle still finds it
            wp = Place(name, "cafe", f"{10 + sum(map(ord, name)) % 890} Market Street", 2.5, 4.0, "08:00-20:00")
        found = Place(wp.name, wp.category, wp.address, wp.km, wp.rating, wp.hours)
        state.places.append(found)
    return found


def best(phone: MockPhone, category: str, key: str) -> Place:
    """The phone's nearest (``key="km"``) or best-rated (``"rating"``) place of ``category``."""
    places = [p for p in phone.app("maps").state.places if p.category == category]
    if key == "km":
        return min(places, key=lambda p: (p.km, p.name))
    return min(places, key=lambda p: (-p.rating, p.name))


def open_place(ui: UI, name: str) -> Iterator[Action]:
    """Open Maps, search for ``name`` and open its page."""
    yield from ui.open("maps")
    yield from ui.type_into("search", name)
    yield from ui.key("enter")
    yield from ui.tap(text=name)


def open_category(ui: UI, category: str, sort: str | None) -> Iterator[Action]:
    yield from ui.open("maps")
    yield from ui.tap(rid=f"cat_{category}")
    if sort is not None:
        yield from ui.tap(rid="sort")
        yield from ui.tap(rid=f"sort_{sort.lower()}")


def first_row(ui: UI) -> str:
    """The title of the first result row on screen."""
    row = ui.find_all("place_row")[0]
    return next(e for e in ui.elements() if e.parent == row.index and e.text).text


def navigate(ui: UI, name: str, mode: str) -> Iterator[Action]:
    """From a place's page: directions, the mode, start."""
    yield from ui.tap(rid="directions")
    if mode != "drive":
        yield from ui.tap(rid=f"mode_{mode}")
    yield from ui.tap(rid="start")


def _other_place(phone: MockPhone, name: str) -> Place:
    """Another place of the same category: the plausible mix-up."""
    state = phone.app("maps").state
    me = state.place(name)
    return next(p for p in state.places if p.category == me.category and p.name != name)


def _place_param() -> Param:
    return Param(str, doc="a place of the seed's Maps (mockphone.world.places)")


class MapsSavePlace(Task):
    """Star a place so it shows under Favorites."""

    swaps = (("place", ends.record("maps.places")),)
    template = "Save {place} to my favorites in Maps."
    app_names = ("maps",)
    complexity = 4.0
    allowed = ("maps.saved[{place}]*",)
    schema = {"place": _place_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        state = phone.app("maps").state
        state.saved = [s for s in state.saved if s.name != self.params["place"]]

    def check(self, phone: MockPhone) -> float:
        return float(self.params["place"] in phone.state("maps").saved_names())

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_place(ui, self.params["place"])
        yield from ui.tap(rid="save")

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                yield from open_place(ui, _other_place(ui.phone, task.params["place"]).name)
                yield from ui.tap(rid="save")
            return script
        return {"saved-a-look-alike": ending(other)}


class MapsUnsavePlace(Task):
    """Remove a place from Favorites (long press, confirm)."""

    template = "Remove {place} from my favorites in Maps."
    app_names = ("maps",)
    complexity = 4.0
    allowed = ("maps.saved[{place}]*",)
    schema = {"place": _place_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": rng.choice(_world(world).saved_places)}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        state = phone.app("maps").state
        if self.params["place"] not in state.saved_names():
            state.saved.insert(0, Saved(self.params["place"]))

    def check(self, phone: MockPhone) -> float:
        return float(self.params["place"] not in phone.state("maps").saved_names())

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("maps")
        yield from ui.tap(rid="tab_saved")
        yield from ui.long_press(text=self.params["place"])
        yield from ui.tap(text="Remove")

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                names = ui.phone.app("maps").state.saved_names()
                victim = next(n for n in names if n != task.params["place"])
                yield from ui.open("maps")
                yield from ui.tap(rid="tab_saved")
                yield from ui.long_press(text=victim)
                yield from ui.tap(text="Remove")
            return script

        return {"removed-another": ending(other), "removed-it-and-another-too": ends.after(other)}


class MapsAnswerAddress(Task):
    """Read a place's address off its page."""

    template = "What is the address of {place} in Maps? Answer with the address."
    app_names = ("maps",)
    complexity = 3.0
    changes_state = False
    schema = {"place": _place_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        address = phone.state("maps").place(self.params["place"]).address
        return float(answers.norm(final_answer(phone)) == answers.norm(address))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_place(ui, self.params["place"])
        yield Action("answer", text=ui.find(rid="address").text)

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                yield from answer(_other_place(ui.phone, task.params["place"]).address)
            return script

        def name_only(task):
            def script(ui):
                yield from open_place(ui, task.params["place"])
                yield from answer(task.params["place"])
            return script
        return {"another-places-address": ending(other), "answered-the-name": ending(name_only)}


class MapsAnswerNearest(Task):
    """Which place of a category is nearest: filter by the category, sort by distance."""

    template = "Which {category} is nearest to me in Maps? Answer with its name."
    app_names = ("maps",)
    complexity = 4.0
    changes_state = False
    schema = {"category": Param(str, choices=CATEGORIES)}

    def check(self, phone: MockPhone) -> float:
        return float(answers.norm(final_answer(phone)) == answers.norm(best(phone, self.params["category"], "km").name))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_category(ui, self.params["category"], "Distance")
        yield Action("answer", text=first_row(ui))

    def wrong_endings(self) -> dict:
        def unfiltered(task):  # the nearest place of any kind
            def script(ui):
                near = min(ui.phone.app("maps").state.places, key=lambda p: (p.km, p.name))
                if near.category == task.params["category"]:
                    near = min((p for p in ui.phone.app("maps").state.places if p.category != near.category),
                               key=lambda p: (p.km, p.name))
                yield from answer(near.name)
            return script

        def by_rating(task):  # sorted by the wrong key: the best-rated one (the next one when it is also nearest)
            def script(ui):
                yield from open_category(ui, task.params["category"], "Rating")
                ranked = sorted((p for p in ui.phone.app("maps").state.places if p.category == task.params["category"]),
                                key=lambda p: (-p.rating, p.name))
                near = best(ui.phone, task.params["category"], "km").name
                yield from answer(next(p.name for p in ranked if p.name != near))
            return script
        return {"nearest-of-any-category": ending(unfiltered), "sorted-by-rating": ending(by_rating)}


class MapsNavigateTo(Task):
    """Start navigation to a place by a travel mode."""

    template = "Start navigation to {place} in Maps with the {mode} travel mode."
    app_names = ("maps",)
    complexity = 5.0
    allowed = ("maps.navigation*",)
    schema = {"place": _place_param(), "mode": Param(str, choices=MODES)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name, "mode": rng.choice(MODES)}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        nav = phone.state("maps").navigation
        return fraction(nav is not None and nav.place == self.params["place"],
                        nav is not None and nav.mode == self.params["mode"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_place(ui, self.params["place"])
        yield from navigate(ui, self.params["place"], self.params["mode"])

    def wrong_endings(self) -> dict:
        def other_mode(task):
            def script(ui):
                yield from open_place(ui, task.params["place"])
                mode = next(m for m in MODES if m != task.params["mode"])
                yield from navigate(ui, task.params["place"], mode)
            return script

        def elsewhere(task):  # then started a route to another place as well
            def script(ui):
                place = next(p.name for p in ui.phone.app("maps").state.places if p.name != task.params["place"])
                yield from open_place(ui, place)
                yield from navigate(ui, place, task.params["mode"])
            return script
        return {"other-mode": ending(other_mode), "then-to-another-place": ends.after(elsewhere)}


class MapsNavigateBestRated(Task):
    """Walk to the best-rated place of a category (constraint: the rating, not the distance)."""

    template = "Start walking directions to the best-rated {category} in Maps."
    app_names = ("maps",)
    complexity = 6.0
    allowed = ("maps.navigation*",)
    schema = {"category": Param(str, choices=CATEGORIES)}

    def check(self, phone: MockPhone) -> float:
        nav = phone.state("maps").navigation
        target = best(phone, self.params["category"], "rating").name
        return float(nav is not None and nav.place == target and nav.mode == "walk")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_category(ui, self.params["category"], "Rating")
        name = first_row(ui)
        yield from ui.tap(text=name)
        yield from navigate(ui, name, "walk")

    def wrong_endings(self) -> dict:
        def nearest(task):
            def script(ui):
                yield from open_category(ui, task.params["category"], "Distance")
                name = first_row(ui)
                if name == best(ui.phone, task.params["category"], "rating").name:  # the same place: take the next
                    name = sorted((p for p in ui.phone.app("maps").state.places
                                   if p.category == task.params["category"]), key=lambda p: (p.km, p.name))[1].name
                yield from ui.tap(text=name)
                yield from navigate(ui, name, "walk")
            return script

        def driving(task):
            def script(ui):
                yield from open_category(ui, task.params["category"], "Rating")
                name = first_row(ui)
                yield from ui.tap(text=name)
                yield from navigate(ui, name, "drive")
            return script
        return {"nearest-instead-of-best": ending(nearest), "default-drive-mode": ending(driving)}


class MapsSetHomeAddress(Task):
    """Copy a place's address into the Home address form of Maps' settings."""

    template = "In Maps, set my Home address to the address of {place}."
    app_names = ("maps",)
    complexity = 7.0
    allowed = ("maps.labels[Home]", "system.clipboard")
    schema = {"place": _place_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        state = phone.state("maps")
        return float(state.labels.get("Home", "").strip() == state.place(self.params["place"]).address)

    def _fill(self, ui: UI, label: str, address: str) -> Iterator[Action]:
        yield from ui.key("back")
        yield from ui.key("back")
        yield from ui.tap(rid="tab_settings")
        yield from ui.tap(rid=f"label_{label.lower()}")
        yield from ui.type_into("address", address)
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_place(ui, self.params["place"])
        address = ui.find(rid="address").text
        yield from self._fill(ui, "Home", address)

    def wrong_endings(self) -> dict:
        def work(task):
            def script(ui):
                yield from open_place(ui, task.params["place"])
                yield from task._fill(ui, "Work", ui.find(rid="address").text)
            return script

        def other(task):
            def script(ui):
                wrong = _other_place(ui.phone, task.params["place"]).name
                yield from open_place(ui, wrong)
                yield from task._fill(ui, "Home", ui.find(rid="address").text)
            return script
        return {"set-work-instead": ending(work), "another-places-address": ending(other)}


class MapsAvoidTollsAndDrive(Task):
    """Two settings-dependent parts: turn on Avoid tolls, then drive to a place."""

    template = "Turn on Avoid tolls in Maps, then start driving directions to {place}."
    app_names = ("maps",)
    complexity = 7.0
    allowed = ("maps.navigation*", "maps.settings.avoid_tolls")
    schema = {"place": _place_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        phone.app("maps").state.settings.avoid_tolls = False

    def check(self, phone: MockPhone) -> float:
        state = phone.state("maps")
        nav = state.navigation
        return fraction(state.settings.avoid_tolls,
                        nav is not None and nav.place == self.params["place"] and nav.mode == "drive")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("maps")
        yield from ui.tap(rid="tab_settings")
        yield from ui.tap(rid="avoid_tolls")
        yield from ui.tap(rid="tab_main")
        yield from ui.type_into("search", self.params["place"])
        yield from ui.key("enter")
        yield from ui.tap(text=self.params["place"])
        yield from navigate(ui, self.params["place"], "drive")

    def wrong_endings(self) -> dict:
        def no_setting(task):
            def script(ui):
                yield from open_place(ui, task.params["place"])
                yield from navigate(ui, task.params["place"], "drive")
            return script

        def highways(task):  # the neighbouring switch
            def script(ui):
                yield from ui.open("maps")
                yield from ui.tap(rid="tab_settings")
                yield from ui.tap(rid="avoid_highways")
                yield from ui.tap(rid="tab_main")
                yield from ui.type_into("search", task.params["place"])
                yield from ui.key("enter")
                yield from ui.tap(text=task.params["place"])
                yield from navigate(ui, task.params["place"], "drive")
            return script
        return {"tolls-left-on": ending(no_setting), "avoided-highways": ending(highways)}


class MapsAnswerTravelTime(Task):
    """How long a trip takes by a mode: open the route, pick the mode, read the minutes."""

    swaps = (("mode", ends.choice("mode")),)
    wrong_answers = (("misread", ends.misread),)
    template = ("How many minutes does it take to get to {place} with the {mode} travel mode according to Maps? "
                "Answer with the number.")
    app_names = ("maps",)
    complexity = 5.0
    changes_state = False
    schema = {"place": _place_param(), "mode": Param(str, choices=("walk", "transit"))}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world, min_km=1.0).name, "mode": rng.choice(("walk", "transit"))}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        km = phone.state("maps").place(self.params["place"]).km
        return float(answers.only(answers.numbers(final_answer(phone)), float(minutes(km, self.params["mode"]))))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_place(ui, self.params["place"])
        yield from ui.tap(rid="directions")
        yield from ui.tap(rid=f"mode_{self.params['mode']}")
        yield Action("answer", text=ui.find(rid="eta").text.split()[0])

    def wrong_endings(self) -> dict:
        def driving_time(task):  # read the route page before switching the mode
            def script(ui):
                yield from open_place(ui, task.params["place"])
                yield from ui.tap(rid="directions")
                yield from answer(ui.find(rid="eta").text.split()[0])
            return script
        return {"drive-time-instead": ending(driving_time)}


TASKS = (MapsAnswerAddress, MapsAnswerNearest, MapsAnswerTravelTime, MapsAvoidTollsAndDrive, MapsNavigateBestRated,
         MapsNavigateTo, MapsSavePlace, MapsSetHomeAddress, MapsUnsavePlace)

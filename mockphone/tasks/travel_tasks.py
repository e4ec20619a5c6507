"""Cross-app travel tasks: information carried between Maps, Rides, Messages and Calendar.

Each one moves a value the agent has to read in one app into another: an address from
Maps into a ride (the clipboard holds an older address at the start, so pasting without
copying books the wrong trip), a promo code from a text into the Rides form (the thread
also holds an older, used-up code), a fare from Rides into a text, and an event's place
and time from Calendar through Maps into a scheduled ride. The last two are long-horizon
(the oracle needs 15 steps or more).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.calendar import Event
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, fraction
from mockphone.tasks.comm_tasks import ensure_person, pick_name, search_key
from mockphone.tasks.endings import ending
from mockphone.tasks.maps_tasks import _other_place, ensure_place, open_place, pick_place
from mockphone.tasks.rides_tasks import TRIPS, other_kind, requested
from mockphone.world.places import KINDS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

CODE = re.compile(r"[A-Z]{4}\d{2}")
EVENTS = ("Dentist check-up", "Book club", "Yoga class", "Team dinner", "Piano lesson", "Job interview",
          "Haircut", "Parent meeting", "Tennis with Alex", "Museum tour")
EVENTS_ZH = ("看牙", "读书会", "瑜伽课", "团队聚餐", "钢琴课", "面试", "理发", "家长会", "网球约练", "博物馆导览")


def stale_address(phone: MockPhone, place: str) -> None:
    """An older copied address on the clipboard: another place of the same kind (what a careless paste books)."""
    phone.system.clipboard = _other_place(phone, place).address


def copy_address(ui: UI, place: str) -> Iterator[Action]:
    """Open the place in Maps and long-press its address (copied to the clipboard)."""
    yield from open_place(ui, place)
    yield from ui.long_press(rid="address")


def paste_ride(ui: UI, kind: str, schedule: tuple[str, str] | None = None) -> Iterator[Action]:
    """Open Rides, paste the clipboard as the destination, pick ``kind``; request it, or schedule it at (date, time)."""
    yield from ui.open("rides")
    yield from ui.long_press(rid="destination")
    yield from ui.tap(rid="see_prices")
    yield from ui.tap(text=kind)
    if schedule is None:
        yield from ui.tap(rid="request")
        yield from ui.tap(text="Confirm")
    else:
        yield from ui.tap(rid="schedule")
        yield from ui.type_into("date", schedule[0])
        yield from ui.type_into("time", schedule[1])
        yield from ui.tap(rid="save_schedule")


def text_to(ui: UI, name: str, text: str) -> Iterator[Action]:
    yield from ui.open("messages")
    yield from ui.tap(rid="start_chat")
    yield from ui.type_into("to", search_key(name))
    yield from ui.tap(text=name)
    yield from ui.type_into("compose", text)
    yield from ui.tap(rid="send")


def _address_of(phone: MockPhone, place: str) -> str:
    return phone.app("maps").state.place(place).address


class CrossMapsAddressToRide(Task):
    """Copy a place's address from Maps and request a ride there (a stale address waits on the clipboard)."""

    template = "Find {place} in Maps and request a Rides {kind} ride to its address."
    app_names = ("maps", "rides")
    category = "cross-app"
    complexity = 9.0
    allowed = (TRIPS, "system.clipboard")
    schema = {"place": Param(str, doc="a place of the seed's Maps"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name, "kind": rng.choice(KINDS)}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        stale_address(phone, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        trips = requested(phone)
        return float(len(trips) == 1 and trips[0].destination == _address_of(phone, self.params["place"])
                     and trips[0].kind == self.params["kind"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from copy_address(ui, self.params["place"])
        yield from paste_ride(ui, self.params["kind"])

    def wrong_endings(self) -> dict:
        def stale(task):  # pasted what was on the clipboard without copying the address
            return lambda ui: paste_ride(ui, task.params["kind"])

        def by_name(task):  # typed the place's name where the address goes
            def script(ui):
                yield from ui.open("rides")
                yield from ui.type_into("destination", task.params["place"])
                yield from ui.tap(rid="see_prices")
                yield from ui.tap(text=task.params["kind"])
                yield from ui.tap(rid="request")
                yield from ui.tap(text="Confirm")
            return script

        def cheaper(task):
            def script(ui):
                yield from copy_address(ui, task.params["place"])
                yield from paste_ride(ui, other_kind(task.params["kind"]))
            return script
        return {"pasted-the-stale-clipboard": ending(stale), "typed-the-name": ending(by_name),
                "other-ride-type": ending(cheaper)}


class CrossMessagePromoToRides(Task):
    """Read the promo code a friend texted and apply it in Rides (the thread also has an older, used-up code)."""

    template = "{name} texted me a new Rides promo code. Apply it in Rides."
    app_names = ("messages", "rides")
    category = "cross-app"
    complexity = 7.0
    allowed = ("rides.promos", "system.clipboard")
    schema = {"name": Param(str, doc="one of the seed's people"), "code": Param(str, doc="4 letters, 2 digits"),
              "old": Param(str, doc="the older code in the same thread")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        from mockphone import world as worlds

        w = world if world is not None else worlds.generate(0)
        code, old = rng.sample(list(dict.fromkeys(w.rides.promo_codes)), 2)
        return {"name": pick_name(rng, w), "code": code, "old": old}

    @classmethod
    def validate(cls, params):
        from mockphone.errors import InvalidTaskParams

        super().validate(params)
        if not (CODE.fullmatch(params["code"]) and CODE.fullmatch(params["old"])) or params["code"] == params["old"]:
            raise InvalidTaskParams(f"{cls.name()}: codes must be two different 4-letter, 2-digit codes")

    def setup(self, phone: MockPhone) -> None:
        from mockphone.apps.messages import Message

        name, zh = self.params["name"], phone.locale == "zh-CN"
        rides = phone.app("rides").state
        rides.offers = tuple(dict.fromkeys((*rides.offers, self.params["code"], self.params["old"])))
        thread = phone.app("messages").state.thread(name)
        thread.append(Message(name, (f"用这个打车优惠码吧：{self.params['old']}" if zh
                                     else f"Try this Rides code: {self.params['old']}")))
        thread.append(Message(name, (f"刚才那个已经用完了，换这个新的：{self.params['code']}" if zh
                                     else f"That one is used up, sorry. Here's a new one: {self.params['code']}")))

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("rides").promos == [self.params["code"]])

    def _apply(self, ui: UI, code: str) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_account")
        yield from ui.tap(rid="promo_codes")
        yield from ui.type_into("code", code)
        yield from ui.tap(rid="apply")

    def _read_codes(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.tap(text=self.params["name"])
        self.seen: list[str] = []
        while True:  # read the whole thread, top to bottom
            for el in ui.find_all("message_text"):
                self.seen += [c for c in CODE.findall(el.text) if c not in self.seen]
            before = ui.phone.ui_tree()
            yield Action("scroll", direction="down")
            if ui.phone.ui_tree() == before:
                break

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._read_codes(ui)
        yield from self._apply(ui, self.seen[-1])  # the latest message's code

    def wrong_endings(self) -> dict:
        def first(task):
            def script(ui):
                yield from task._read_codes(ui)
                yield from task._apply(ui, task.seen[0])
            return script

        def both(task):
            def script(ui):
                yield from task._read_codes(ui)
                yield from task._apply(ui, task.seen[0])
                yield from ui.type_into("code", task.seen[-1])
                yield from ui.tap(rid="apply")
            return script
        return {"applied-the-old-code": ending(first), "applied-both-codes": ending(both)}


class CrossMapsRideFareToMessage(Task):
    """Three apps: an address from Maps into a ride, then the ride's fare into a text (long-horizon)."""

    template = ("Book a Rides {kind} ride to {place} (its address is in Maps), then text {name} "
                "how much the ride costs.")
    app_names = ("maps", "rides", "messages")
    category = "cross-app"
    complexity = 15.0
    allowed = (TRIPS, "messages.threads[{name}][+1]*", "system.clipboard")
    schema = {"place": Param(str, doc="a place of the seed's Maps"), "kind": Param(str, choices=KINDS),
              "name": Param(str, doc="one of the seed's people")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name, "kind": rng.choice(KINDS), "name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        ensure_person(phone, self.params["name"], self.world)
        stale_address(phone, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        trips = requested(phone)
        booked = (len(trips) == 1 and trips[0].destination == _address_of(phone, self.params["place"])
                  and trips[0].kind == self.params["kind"])
        sent = phone.state("messages").sent_to(self.params["name"])
        told = booked and len(sent) >= 1 and answers.only(answers.numbers(sent[-1]), trips[0].fare)
        return fraction(booked, told)

    def _book(self, ui: UI, kind: str) -> Iterator[Action]:
        yield from copy_address(ui, self.params["place"])
        yield from paste_ride(ui, kind)
        self.fare = ui.find(rid="fare").text.split()[-1]

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._book(ui, self.params["kind"])
        yield from text_to(ui, self.params["name"], f"{self.fare}")

    def wrong_endings(self) -> dict:
        def quoted_other(task):  # booked the right ride, texted another type's price from the quote
            def script(ui):
                yield from task._book(ui, task.params["kind"])
                price = ui.phone.app("rides").price(_address_of(ui.phone, task.params["place"]),
                                                    other_kind(task.params["kind"]))
                yield from text_to(ui, task.params["name"], f"{price:.2f}")
            return script

        def stale(task):  # pasted the stale clipboard, then texted that ride's fare
            def script(ui):
                yield from paste_ride(ui, task.params["kind"])
                fare = ui.phone.app("rides").state.trips[-1].fare
                yield from text_to(ui, task.params["name"], f"{fare:.2f}")
            return script
        return {"texted-another-types-price": ending(quoted_other), "pasted-the-stale-clipboard": ending(stale)}


def _minus(time: str, minutes: int) -> str:
    t = dt.datetime.strptime(time, "%H:%M") - dt.timedelta(minutes=minutes)
    return t.strftime("%H:%M")


class CrossEventPlaceToScheduledRide(Task):
    """Calendar -> Maps -> Rides: schedule a ride to an event's place, 30 minutes before it (long-horizon)."""

    template = ("Schedule a Rides {kind} ride to the place of my \"{title}\" event, picking me up 30 minutes "
                "before it starts (the place's address is in Maps).")
    app_names = ("calendar", "maps", "rides")
    category = "cross-app"
    complexity = 16.0
    allowed = ("rides.scheduled[+1]*", "system.clipboard")
    schema = {"title": Param(str, doc="the event's title"), "place": Param(str, doc="a place of the seed's Maps"),
              "date": Param(str, doc="YYYY-MM-DD"), "time": Param(str, doc="HH:MM"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None):
        zh = world is not None and world.zh
        return {"title": rng.choice(EVENTS_ZH if zh else EVENTS), "place": pick_place(rng, world).name,
                "date": f"2026-03-{rng.randint(3, 20):02d}",
                "time": f"{rng.randint(8, 20):02d}:{rng.choice(('00', '15', '30', '45'))}", "kind": rng.choice(KINDS)}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        cal = phone.app("calendar").state
        cal.events = [e for e in cal.events if e.title != self.params["title"]]
        cal.events.append(Event(self.params["title"], self.params["date"], self.params["time"], self.params["place"]))
        stale_address(phone, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        start = self.start_state(phone)
        new = [s for s in phone.state("rides").scheduled if f"rides.scheduled[{s.sid}].sid" not in start]
        want = (_address_of(phone, self.params["place"]), self.params["kind"], self.params["date"],
                _minus(self.params["time"], 30))
        return float(len(new) == 1 and (new[0].destination, new[0].kind, new[0].date, new[0].time) == want)

    def _read_event(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(text=self.params["title"])
        self.when = ui.find(rid="event_when").text.split(" · ")[-1]
        self.where = ui.find(rid="event_location").text

    def _schedule(self, ui: UI, offset: int) -> Iterator[Action]:
        yield from self._read_event(ui)
        yield from copy_address(ui, self.where)
        yield from paste_ride(ui, self.params["kind"], (self.params["date"], _minus(self.when, offset)))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._schedule(ui, 30)

    def wrong_endings(self) -> dict:
        return {"at-the-event-time": ending(lambda task: lambda ui: task._schedule(ui, 0)),
                "an-hour-before": ending(lambda task: lambda ui: task._schedule(ui, 60)),
                "pasted-the-stale-clipboard": ending(lambda task: lambda ui: paste_ride(
                    ui, task.params["kind"], (task.params["date"], _minus(task.params["time"], 30))))}


ERRANDS = {"cafe": "Meet at the cafe", "restaurant": "Book a dinner table", "pharmacy": "Pick up prescription",
           "museum": "Visit the museum", "park": "Picnic in the park", "supermarket": "Buy groceries"}
ERRANDS_ZH = {"cafe": "去咖啡馆见面", "restaurant": "订晚餐座位", "pharmacy": "取处方药", "museum": "去博物馆参观",
              "park": "去公园野餐", "supermarket": "买菜"}


def _nearest_in(start: dict, category: str) -> str | None:
    """The nearest place of ``category`` in a start snapshot (Maps' places, keyed by name)."""
    from mockphone.tasks import statediff

    names = statediff.keys_where(start, "maps.places", "category", category)
    return min(names, key=lambda n: (start[f"maps.places[{n}].km"], n)) if names else None


class CrossNearestPlaceErrand(Task):
    """Three apps, three parts: Maps (nearest place of a kind, saved), To-do (an errand), Messages (its address).

    Long-horizon: the oracle needs about 20 steps. Each part scores a third.
    """

    template = ("Find the nearest {category} in Maps and save it to my favorites, add a to-do \"{errand}\" due "
                "{due} to my {list} list, and text {name} the {category}'s address.")
    app_names = ("maps", "todo", "messages")
    category = "cross-app"
    complexity = 20.0
    allowed = ("todo.tasks[+1]*", "messages.threads[{name}][+1]*", "system.clipboard")
    schema = {"category": Param(str, choices=tuple(ERRANDS)), "errand": Param(str), "due": Param(str, doc="YYYY-MM-DD"),
              "list": Param(str, doc="one of the seed's to-do lists"), "name": Param(str, doc="one of the seed's people")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        from mockphone import world as worlds
        from mockphone.tasks.todo_tasks import DATES

        w = world if world is not None else worlds.generate(0)
        category = rng.choice(sorted(ERRANDS))
        return {"category": category, "errand": (ERRANDS_ZH if w.zh else ERRANDS)[category], "due": rng.choice(DATES),
                "list": rng.choice(sorted({t.list for t in w.todo})), "name": pick_name(rng, w)}

    def setup(self, phone: MockPhone) -> None:
        from mockphone.tasks.maps_tasks import best
        from mockphone.tasks.todo_tasks import ensure_list

        ensure_person(phone, self.params["name"], self.world)
        ensure_list(phone, self.params["list"])
        near = best(phone, self.params["category"], "km").name
        maps = phone.app("maps").state
        maps.saved = [x for x in maps.saved if x.name != near]

    def derived_allowed(self, start: dict) -> list[str]:
        near = _nearest_in(start, self.params["category"])
        return [f"maps.saved[{near}]*"] if near else []

    def check(self, phone: MockPhone) -> float:
        start, p = self.start_state(phone), self.params
        near = phone.state("maps").place(_nearest_in(start, p["category"]))
        saved = set(phone.state("maps").saved_names()) == set(
            k[len("maps.saved["):-len("].name")] for k in start if k.startswith("maps.saved[") and k.endswith("].name")
        ) | {near.name}
        new = [t for t in phone.state("todo").tasks if f"todo.tasks[{t.tid}].tid" not in start]
        todo = len(new) == 1 and (new[0].title, new[0].due, new[0].list) == (p["errand"], p["due"], p["list"])
        sent = phone.state("messages").sent_to(p["name"])
        told = bool(sent) and near.address in sent[-1]
        return fraction(saved, todo, told)

    def _maps(self, ui: UI, rank: int) -> Iterator[Action]:
        from mockphone.tasks.maps_tasks import open_category

        yield from open_category(ui, self.params["category"], "Distance")
        row = ui.find_all("place_row")[rank]
        name = next(e for e in ui.elements() if e.parent == row.index and e.text).text
        yield from ui.tap(text=name)
        yield from ui.tap(rid="save")
        yield from ui.long_press(rid="address")
        self.place = name

    def _todo(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("todo")
        yield from ui.tap(rid="new_task")
        yield from ui.type_into("title", self.params["errand"])
        yield from ui.type_into("due", self.params["due"])
        yield from ui.tap(text=self.params["list"])
        yield from ui.tap(rid="save")

    def _text(self, ui: UI, paste: bool = True) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.tap(rid="start_chat")
        yield from ui.type_into("to", search_key(self.params["name"]))
        yield from ui.tap(text=self.params["name"])
        if paste:
            yield from ui.long_press(rid="compose")
        else:
            yield from ui.type_into("compose", self.place)
        yield from ui.tap(rid="send")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._maps(ui, 0)
        yield from self._todo(ui)
        yield from self._text(ui)

    def wrong_endings(self) -> dict:
        def second(task):
            def script(ui):
                yield from task._maps(ui, 1)
                yield from task._todo(ui)
                yield from task._text(ui)
            return script

        def name_only(task):
            def script(ui):
                yield from task._maps(ui, 0)
                yield from task._todo(ui)
                yield from task._text(ui, paste=False)
            return script

        def no_todo(task):
            def script(ui):
                yield from task._maps(ui, 0)
                yield from task._text(ui)
            return script
        return {"the-second-nearest": ending(second), "texted-the-name": ending(name_only),
                "forgot-the-to-do": ending(no_todo)}


TASKS = (CrossEventPlaceToScheduledRide, CrossMapsAddressToRide, CrossMapsRideFareToMessage, CrossMessagePromoToRides,
         CrossNearestPlaceErrand)

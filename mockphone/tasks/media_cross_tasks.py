"""More cross-app handoffs of the newer apps: a song texted into a playlist, a Maps address into a calendar event,
a past ride's fare into an e-mail.

Each verifier reads the value on the receiving side and compares it with the source app's
state, so carrying a plausible other value (an older song in the thread, another place's
address, another trip's fare) fails.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.calendar import Event
from mockphone.tasks.base import Param, Task, fraction
from mockphone.tasks.comm_tasks import ensure_person, pick_name
from mockphone.tasks.endings import ending
from mockphone.tasks.maps_tasks import _other_place, ensure_place, open_place, pick_place
from mockphone.tasks.music_tasks import ensure_playlist, ensure_song, open_song
from mockphone.tasks.rides_tasks import ensure_trip
from mockphone.tasks.todo_tasks import DATES

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

EVENTS = ("Coffee with Dana", "Team breakfast", "Birthday lunch", "Study group", "Gallery visit", "Book swap",
          "Walk with Leo", "Client meeting")
EVENTS_ZH = ("和小丹喝咖啡", "团队早餐", "生日午餐", "学习小组", "看展", "换书会", "和小李散步", "见客户")


class CrossMessageSongToPlaylist(Task):
    """Messages -> Music: the song a friend recommended (the latest one in the thread) goes into a playlist."""

    template = "{name} texted me a song to try. Add it to my \"{playlist}\" playlist in Music."
    app_names = ("messages", "music")
    category = "cross-app"
    complexity = 9.0
    allowed = ("music.playlists[{playlist}].songs", "system.clipboard")
    schema = {"name": Param(str, doc="one of the seed's people"), "playlist": Param(str, doc="one of the seed's playlists"),
              "song": Param(str, doc="the song recommended last"), "older": Param(str, doc="a song recommended earlier")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        from mockphone import world as worlds

        w = world if world is not None else worlds.generate(0)
        name, songs = rng.choice(w.music_library.playlists)
        song, older = rng.sample([s.title for s in w.music if s.title not in songs], 2)
        return {"name": pick_name(rng, w), "playlist": name, "song": song, "older": older}

    def setup(self, phone: MockPhone) -> None:
        from mockphone.apps.messages import Message

        p = self.params
        for title in (p["song"], p["older"]):
            ensure_song(phone, self, title)
        pl = ensure_playlist(phone, self, p["playlist"])
        pl.songs = tuple(t for t in pl.songs if t not in (p["song"], p["older"]))
        zh = phone.locale == "zh-CN"
        thread = phone.app("messages").state.thread(p["name"])
        thread.append(Message(p["name"], f"你听过《{p['older']}》吗？" if zh else f"Have you heard \"{p['older']}\"?"))
        thread.append(Message(p["name"], f"算了，试试这首：《{p['song']}》" if zh
                              else f"Actually, try this one instead: \"{p['song']}\""))

    def check(self, phone: MockPhone) -> float:
        before = tuple(self.start_state(phone)[f"music.playlists[{self.params['playlist']}].songs"])
        return float(phone.state("music").playlist(self.params["playlist"]).songs == (*before, self.params["song"]))

    def _read(self, ui: UI) -> Iterator[Action]:
        import re

        yield from ui.open("messages")
        yield from ui.tap(text=self.params["name"])
        self.titles: list[str] = []
        while True:
            for el in ui.find_all("message_text"):
                self.titles += [t for t in re.findall(r"[\"《](.+?)[\"》]", el.text) if t not in self.titles]
            before = ui.phone.ui_tree()
            yield Action("scroll", direction="down")
            if ui.phone.ui_tree() == before:
                break

    def _add(self, ui: UI, title: str) -> Iterator[Action]:
        yield from open_song(ui, title)
        yield from ui.tap(rid="add_to_playlist")
        yield from ui.tap(text=self.params["playlist"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._read(ui)
        yield from self._add(ui, self.titles[-1])

    def wrong_endings(self) -> dict:
        def older(task):
            def script(ui):
                yield from task._read(ui)
                yield from task._add(ui, task.titles[0])
            return script

        def both(task):
            def script(ui):
                yield from task._read(ui)
                yield from task._add(ui, task.titles[0])
                yield from task._add(ui, task.titles[-1])
            return script
        return {"added-the-older-song": ending(older), "added-both-songs": ending(both)}


class CrossMapsAddressToEvent(Task):
    """Maps -> Calendar: an event whose location is a place's address (copied from its page)."""

    template = ("Add a calendar event \"{title}\" on {date} at {time}, with the address of {place} from Maps "
                "as its location.")
    app_names = ("maps", "calendar")
    category = "cross-app"
    complexity = 10.0
    allowed = ("calendar.events[{title}].*", "system.clipboard")
    schema = {"title": Param(str), "date": Param(str, choices=DATES), "time": Param(str, doc="HH:MM"),
              "place": Param(str, doc="a place of the seed's Maps")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        zh = world is not None and world.zh
        return {"title": rng.choice(EVENTS_ZH if zh else EVENTS), "date": rng.choice(DATES),
                "time": f"{rng.randint(8, 20):02d}:{rng.choice(('00', '30'))}", "place": pick_place(rng, world).name}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        cal = phone.app("calendar").state
        cal.events = [e for e in cal.events if e.title != self.params["title"]]
        phone.system.clipboard = _other_place(phone, self.params["place"]).address  # an older copied address

    def check(self, phone: MockPhone) -> float:
        e = phone.state("calendar").find(self.params["title"])
        address = phone.state("maps").place(self.params["place"]).address
        return fraction(e is not None and (e.date, e.time) == (self.params["date"], self.params["time"]),
                        e is not None and e.location == address)

    def _event(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("calendar")
        yield from ui.tap(rid="new_event")
        yield from ui.type_into("title", self.params["title"])
        yield from ui.type_into("date", self.params["date"])
        yield from ui.type_into("time", self.params["time"])
        yield from ui.long_press(rid="location")  # paste the clipboard
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_place(ui, self.params["place"])
        yield from ui.long_press(rid="address")
        yield from self._event(ui)

    def wrong_endings(self) -> dict:
        def named(task):  # typed the place's name where its address belongs
            def script(ui):
                yield from ui.open("calendar")
                yield from ui.tap(rid="new_event")
                for rid in ("title", "date", "time"):
                    yield from ui.type_into(rid, task.params[rid])
                yield from ui.type_into("location", task.params["place"])
                yield from ui.tap(rid="save")
            return script
        return {"pasted-the-stale-clipboard": ending(lambda task: task._event), "typed-the-name": ending(named)}


class CrossRideFareToMail(Task):
    """Rides -> Mail: e-mail someone what a past trip cost (read in Activity)."""

    template = ("Email {to} with subject \"Taxi receipt\" saying how much my Rides trip to {address} on {date} "
                "cost.")
    app_names = ("rides", "mail")
    category = "cross-app"
    complexity = 10.0
    allowed = ("mail.emails[+1]*",)
    schema = {"to": Param(str, doc="an e-mail address of the seed's people"), "address": Param(str), "date": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        from mockphone import world as worlds

        w = world if world is not None else worlds.generate(0)
        trip = rng.choice(w.rides.trips)
        return {"to": rng.choice(w.people).email, "address": trip.destination, "date": trip.date}

    def setup(self, phone: MockPhone) -> None:
        ensure_trip(phone, self, self.params["address"], self.params["date"])

    def _fare(self, phone: MockPhone) -> float:
        return next(t.fare for t in phone.state("rides").trips
                    if t.destination == self.params["address"] and t.date == self.params["date"])

    def check(self, phone: MockPhone) -> float:
        from mockphone.tasks import answers

        sent = [e for e in phone.state("mail").sent() if e.to == self.params["to"]]
        return float(len(sent) == 1 and sent[0].subject == "Taxi receipt"
                     and answers.only(answers.numbers(sent[0].body), self._fare(phone)))

    def _mail(self, ui: UI, body: str) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(rid="compose")
        yield from ui.type_into("to", self.params["to"])
        yield from ui.type_into("subject", "Taxi receipt")
        yield from ui.type_into("body", body)
        yield from ui.tap(rid="send")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("rides")
        yield from ui.tap(rid="tab_activity")
        yield from ui.tap(text=self.params["address"])
        fare = ui.find(rid="fare").text
        yield from self._mail(ui, fare)

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                mine = task._fare(ui.phone)
                t = next(t for t in ui.phone.app("rides").state.trips if t.fare != mine)
                yield from task._mail(ui, f"{t.fare:.2f}")
            return script

        def quote(task):  # a new quote for the same address, not what the trip cost
            def script(ui):
                price = ui.phone.app("rides").price(task.params["address"], "Comfort")
                if price == task._fare(ui.phone):
                    price = ui.phone.app("rides").price(task.params["address"], "XL")
                yield from task._mail(ui, f"{price:.2f}")
            return script
        return {"another-trips-fare": ending(other), "a-new-quote-instead": ending(quote)}


class CrossRainiestDayToTodo(Task):
    """Weather -> To-do: a to-do due on the day rain is most likely in a city (the forecast day turned into a date)."""

    template = ("Add a to-do \"{errand}\" to my {list} list, due on the day this week when rain is most likely "
                "in {city} according to Weather.")
    app_names = ("weather", "todo")
    category = "cross-app"
    complexity = 12.0
    allowed = ("todo.tasks[+1]*",)
    schema = {"errand": Param(str), "list": Param(str, doc="one of the seed's to-do lists"),
              "city": Param(str, doc="a city of the seed's Weather")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        from mockphone import world as worlds

        w = world if world is not None else worlds.generate(0)
        return {"errand": rng.choice(("带伞", "收好阳台的衣服", "穿雨靴") if w.zh else
                                     ("Take an umbrella", "Bring in the laundry", "Wear rain boots")),
                "list": rng.choice(sorted({t.list for t in w.todo})), "city": rng.choice(w.weather).name}

    def setup(self, phone: MockPhone) -> None:
        from mockphone.tasks.todo_tasks import ensure_list
        from mockphone.tasks.weather_tasks import ensure_city

        ensure_city(phone, self, self.params["city"])
        ensure_list(phone, self.params["list"])

    def _day(self, phone: MockPhone, key) -> str:
        from mockphone.apps.weather import day_of

        days = phone.app("weather").state.city(self.params["city"]).days
        return day_of(max(range(7), key=lambda i: key(days[i]))).isoformat()

    def check(self, phone: MockPhone) -> float:
        start, p = self.start_state(phone), self.params
        new = [t for t in phone.state("todo").tasks if f"todo.tasks[{t.tid}].tid" not in start]
        return float(len(new) == 1 and (new[0].title, new[0].list, new[0].due)
                     == (p["errand"], p["list"], self._day(phone, lambda d: d.rain)))

    def _add(self, ui: UI, due: str) -> Iterator[Action]:
        yield from ui.open("todo")
        yield from ui.tap(rid="new_task")
        yield from ui.type_into("title", self.params["errand"])
        yield from ui.type_into("due", due)
        yield from ui.tap(text=self.params["list"])
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        from mockphone.apps.weather import day_of
        from mockphone.tasks import answers
        from mockphone.tasks.weather_tasks import open_city

        yield from open_city(ui, self.params["city"])
        rows = yield from ui.collect("day_row")  # the week in order: row i is day i from today
        wettest = max(range(len(rows)), key=lambda i: answers.numbers(rows[i][1])[0])
        yield from self._add(ui, day_of(wettest).isoformat())

    def wrong_endings(self) -> dict:
        def warmest(task):
            def script(ui):
                due = task._day(ui.phone, lambda d: d.high)
                if due == task._day(ui.phone, lambda d: d.rain):  # the same day: the day after then
                    import datetime as dt

                    due = (dt.date.fromisoformat(due) + dt.timedelta(days=1)).isoformat()
                yield from task._add(ui, due)
            return script

        def today(task):
            def script(ui):
                from mockphone.apps.weather import FIRST_DAY

                wet = task._day(ui.phone, lambda d: d.rain)
                yield from task._add(ui, FIRST_DAY.isoformat() if wet != FIRST_DAY.isoformat() else "2026-03-03")
            return script
        return {"the-warmest-day": ending(warmest), "due-today": ending(today)}


TASKS = (CrossMapsAddressToEvent, CrossMessageSongToPlaylist, CrossRainiestDayToTodo, CrossRideFareToMail)

"""News tasks: save and unsave stories, follow topics, hide an outlet, the digest, answers read off the feed, a Notes handoff.

Parameters come from the seed's feed (``mockphone.world.media``). A story named by an
instance is planted on a phone whose world lacks it; questions over a section ("the newest
Tech story") are decided on the phone's own feed.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.news import Article
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer, fraction
from mockphone.tasks.endings import answer, ending
from mockphone.world.media import SECTIONS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World

TIMES = tuple(f"{h:02d}:{m:02d}" for h in (6, 7, 8, 9, 12, 18, 19, 20, 21) for m in (0, 15, 30, 45))


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def ensure_story(phone: MockPhone, task: Task, title: str) -> Article:
    state = phone.app("news").state
    found = state.by_title(title)
    if found is None:
        wa = next(a for a in task.world.news.articles if a.title == title)
        found = Article(f"x{len(state.articles):02d}", wa.title, wa.outlet, wa.section, wa.minutes_ago, wa.read_minutes)
        state.articles.append(found)
    return found


def open_story(ui: UI, title: str) -> Iterator[Action]:
    """Open News and scroll the whole feed to the story."""
    yield from ui.open("news")
    yield from ui.tap(text=title)


def neighbour(phone: MockPhone, title: str) -> Article:
    """Another story of the same section: the plausible mix-up."""
    state = phone.app("news").state
    me = state.by_title(title)
    return next(a for a in state.feed(me.section) if a.title != title)


def _title_param() -> Param:
    return Param(str, doc="a story of the seed's News feed")


class NewsSaveStory(Task):
    """Find a story through its section and save it for later."""

    swaps = (("title", lambda t, phone: neighbour(phone, t.params["title"]).title, "also"),)
    template = "Save the story \"{title}\" for later in News."
    app_names = ("news",)
    complexity = 4.0
    allowed = ("news.saved",)
    schema = {"title": _title_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        n = _world(world).news
        return {"title": rng.choice([a.title for a in n.articles if a.aid not in n.saved])}

    def setup(self, phone: MockPhone) -> None:
        a = ensure_story(phone, self, self.params["title"])
        state = phone.app("news").state
        state.saved = tuple(x for x in state.saved if x != a.aid)

    def check(self, phone: MockPhone) -> float:
        state = phone.state("news")
        before = set(self.start_state(phone)["news.saved"])
        return float(set(state.saved) == before | {state.by_title(self.params["title"]).aid})

    def save(self, ui: UI, title: str) -> Iterator[Action]:
        yield from open_story(ui, title)
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.save(ui, self.params["title"])

    def wrong_endings(self) -> dict:
        return {"saved-its-neighbour": ending(lambda task: lambda ui: task.save(
                    ui, neighbour(ui.phone, task.params["title"]).title))}


class NewsUnsaveStory(Task):
    """Remove a story from Saved stories (long press, confirm)."""

    template = "Remove \"{title}\" from my saved stories in News."
    app_names = ("news",)
    complexity = 4.0
    allowed = ("news.saved",)
    schema = {"title": _title_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        n = _world(world).news
        return {"title": rng.choice([a.title for a in n.articles if a.aid in n.saved])}

    def setup(self, phone: MockPhone) -> None:
        a = ensure_story(phone, self, self.params["title"])
        state = phone.app("news").state
        if a.aid not in state.saved:
            state.saved = (*state.saved, a.aid)

    def check(self, phone: MockPhone) -> float:
        state = phone.state("news")
        before = set(self.start_state(phone)["news.saved"])
        return float(set(state.saved) == before - {state.by_title(self.params["title"]).aid})

    def unsave(self, ui: UI, title: str, button: str = "Remove") -> Iterator[Action]:
        yield from ui.open("news")
        yield from ui.tap(rid="tab_saved")
        yield from ui.long_press(text=title)
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.unsave(ui, self.params["title"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("news").state
                me = state.by_title(task.params["title"]).aid
                yield from task.unsave(ui, state.article(next(x for x in state.saved if x != me)).title)
            return script
        return {"removed-another": ending(other),
                "removed-it-and-another-too": ends.after(other)}


def _topics(ui: UI, *sections: str) -> Iterator[Action]:
    yield from ui.open("news")
    yield from ui.tap(rid="tab_following")
    yield from ui.tap(rid="topics")
    for sec in sections:
        yield from ui.tap(rid=f"follow_{sec.lower()}")


def section_of_story(ui: UI, title: str) -> Iterator[Action]:
    """Open the story and read its section off the title bar (in English). Use as ``s = yield from ...``."""
    from mockphone import i18n

    yield from open_story(ui, title)
    shown = ui.find(rid="action_bar_title").text
    yield from ui.key("back")
    return i18n.english(shown, ui.phone.locale)


class NewsFollowTopic(Task):
    """Follow the topic (section) a story belongs to: open it, read its section, switch the topic on."""

    template = "Follow the topic of the story \"{title}\" in News."
    app_names = ("news",)
    complexity = 6.0
    allowed = ("news.following",)
    schema = {"title": _title_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        n = _world(world).news
        return {"title": rng.choice([a.title for a in n.articles if a.section not in n.following])}

    def setup(self, phone: MockPhone) -> None:
        a = ensure_story(phone, self, self.params["title"])
        state = phone.app("news").state
        state.following = tuple(s for s in state.following if s != a.section)

    def _section(self, phone: MockPhone) -> str:
        return phone.app("news").state.by_title(self.params["title"]).section

    def check(self, phone: MockPhone) -> float:
        before = set(self.start_state(phone)["news.following"])
        return float(set(phone.state("news").following) == before | {self._section(phone)})

    def oracle(self, ui: UI) -> Iterator[Action]:
        section = yield from section_of_story(ui, self.params["title"])
        yield from _topics(ui, section)

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                following = ui.phone.app("news").state.following
                yield from _topics(ui, next(s for s in SECTIONS if s not in following and s != task._section(ui.phone)))
            return script

        def swapped(task):  # followed it, and switched a followed one off on the way
            def script(ui):
                yield from _topics(ui, task._section(ui.phone), ui.phone.app("news").state.following[0])
            return script
        return {"followed-another": ending(other), "also-unfollowed-one": ending(swapped)}


class NewsUnfollowTopic(Task):
    """Stop following the topic a story belongs to."""

    template = "Stop following the topic of the story \"{title}\" in News."
    app_names = ("news",)
    complexity = 6.0
    allowed = ("news.following",)
    schema = {"title": _title_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        n = _world(world).news
        return {"title": rng.choice([a.title for a in n.articles if a.section in n.following])}

    def setup(self, phone: MockPhone) -> None:
        a = ensure_story(phone, self, self.params["title"])
        state = phone.app("news").state
        if a.section not in state.following:
            state.following = (*state.following, a.section)
        if len(state.following) < 2:
            state.following = (*state.following, next(s for s in SECTIONS if s != a.section))

    _section = NewsFollowTopic._section

    def check(self, phone: MockPhone) -> float:
        before = set(self.start_state(phone)["news.following"])
        return float(set(phone.state("news").following) == before - {self._section(phone)})

    def oracle(self, ui: UI) -> Iterator[Action]:
        section = yield from section_of_story(ui, self.params["title"])
        yield from _topics(ui, section)

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                following = ui.phone.app("news").state.following
                yield from _topics(ui, next(s for s in following if s != task._section(ui.phone)))
            return script
        return {"unfollowed-another": ending(other), "unfollowed-all": ending(
            lambda task: lambda ui: _topics(ui, *ui.phone.app("news").state.following))}


class NewsHideOutlet(Task):
    """Hide every story from the outlet of a given story (its page, confirmation)."""

    template = "Hide all stories from the outlet that published \"{title}\" in News."
    app_names = ("news",)
    complexity = 5.0
    allowed = ("news.hidden",)
    schema = {"title": _title_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": rng.choice(_world(world).news.articles).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_story(phone, self, self.params["title"])

    def check(self, phone: MockPhone) -> float:
        state = phone.state("news")
        return float(state.hidden == (state.by_title(self.params["title"]).outlet,))

    def hide(self, ui: UI, title: str, button: str = "Hide") -> Iterator[Action]:
        yield from open_story(ui, title)
        yield from ui.tap(rid="hide_outlet")
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.hide(ui, self.params["title"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("news").state
                mine = state.by_title(task.params["title"]).outlet
                yield from task.hide(ui, next(a.title for a in state.feed() if a.outlet != mine))
            return script
        return {"hid-another-outlet": ending(other),
                "hid-it-and-another-outlet-too": ends.after(other)}


class NewsAnswerOutlet(Task):
    """Which outlet published a story (the row's or the page's byline)."""

    template = "Which outlet published the story \"{title}\" in News? Answer with the outlet's name."
    app_names = ("news",)
    complexity = 3.0
    changes_state = False
    schema = {"title": _title_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": rng.choice(_world(world).news.articles).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_story(phone, self, self.params["title"])

    def check(self, phone: MockPhone) -> float:
        outlet = phone.state("news").by_title(self.params["title"]).outlet
        return float(answers.norm(final_answer(phone)) == answers.norm(outlet))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_story(ui, self.params["title"])
        yield Action("answer", text=ui.find(rid="byline").text.split(" · ")[0])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                state = ui.phone.app("news").state
                mine = state.by_title(task.params["title"]).outlet
                yield from answer(next(a.outlet for a in state.articles if a.outlet != mine))
            return script
        return {"another-outlet": ending(other),
                "the-section": ending(lambda task: lambda ui: answer(ui.phone.app("news").state.by_title(
                    task.params["title"]).section))}


class NewsAnswerNewest(Task):
    """The newest story of a section (section chip; the feed is newest first)."""

    template = "What is the newest {section} story in News? Answer with its headline."
    app_names = ("news",)
    complexity = 3.0
    changes_state = False
    schema = {"section": Param(str, choices=SECTIONS)}

    def check(self, phone: MockPhone) -> float:
        newest = phone.app("news").state.feed(self.params["section"])[0].title
        return float(answers.norm(final_answer(phone)) == answers.norm(newest))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("news")
        yield from ui.tap(rid=f"section_{self.params['section'].lower()}")
        row = ui.find_all("story_row")[0]
        yield Action("answer", text=next(e for e in ui.elements() if e.parent == row.index and e.text).text)

    def wrong_endings(self) -> dict:
        def overall(task):  # the newest story of the whole feed (the next of the section when it is that one)
            def script(ui):
                feed = ui.phone.app("news").state.feed(task.params["section"])
                top = ui.phone.app("news").state.feed()[0].title
                yield from answer(top if top != feed[0].title else feed[1].title)
            return script
        return {"newest-of-all-sections": ending(overall), "the-oldest": ending(
            lambda task: lambda ui: answer(ui.phone.app("news").state.feed(task.params["section"])[-1].title))}


class NewsDailyDigest(Task):
    """Two settings: turn the daily digest on and set its time (the form only takes HH:MM)."""

    template = "Turn on the daily digest in News and set it to arrive at {time}."
    app_names = ("news",)
    complexity = 6.0
    allowed = ("news.settings.digest", "news.settings.digest_time")
    schema = {"time": Param(str, choices=TIMES)}

    def setup(self, phone: MockPhone) -> None:
        st = phone.app("news").state.settings
        st.digest = False
        if st.digest_time == self.params["time"]:
            st.digest_time = "08:00" if self.params["time"] != "08:00" else "07:00"

    def check(self, phone: MockPhone) -> float:
        st = phone.state("news").settings
        return fraction(st.digest, st.digest_time == self.params["time"])

    def set_digest(self, ui: UI, time: str, switch: bool = True) -> Iterator[Action]:
        yield from ui.open("news")
        yield from ui.tap(rid="settings")
        if switch:
            yield from ui.tap(rid="digest")
        yield from ui.tap(rid="digest_time")
        yield from ui.type_into("time", time)
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.set_digest(ui, self.params["time"])

    def wrong_endings(self) -> dict:
        def twelve_hour(task):  # 19:30 typed as 7:30 (the form takes it when it is HH:MM)
            hour, minute = map(int, task.params["time"].split(":"))
            wrong = f"{(hour + 12) % 24:02d}:{minute:02d}"
            return lambda ui: task.set_digest(ui, wrong)
        return {"time-only": ending(lambda task: lambda ui: task.set_digest(ui, task.params["time"], switch=False)),
                "twelve-hours-off": ending(twelve_hour)}


class CrossNewsHeadlineToNote(Task):
    """News -> Notes: copy the newest headline of a section into a new note (an older headline is on the clipboard)."""

    template = "Save the headline of the newest {section} story in News to a new note titled \"Read later\"."
    app_names = ("news", "notes")
    category = "cross-app"
    complexity = 9.0
    allowed = ("notes.notes[Read later].*", "system.clipboard")
    schema = {"section": Param(str, choices=SECTIONS)}

    def setup(self, phone: MockPhone) -> None:
        feed = phone.app("news").state.feed(self.params["section"])
        phone.system.clipboard = feed[-1].title  # an older headline of the same section, copied earlier
        notes = phone.app("notes").state
        notes.notes = [n for n in notes.notes if n.title != "Read later"]

    def check(self, phone: MockPhone) -> float:
        note = phone.state("notes").find("Read later")
        newest = phone.app("news").state.feed(self.params["section"])[0].title
        return float(note is not None and note.body.strip() == newest)

    def copy(self, ui: UI, index: int) -> Iterator[Action]:
        yield from ui.open("news")
        yield from ui.tap(rid=f"section_{self.params['section'].lower()}")
        row = ui.find_all("story_row")[index]
        title = next(e for e in ui.elements() if e.parent == row.index and e.text).text
        yield from ui.tap(text=title)
        yield from ui.long_press(rid="headline")

    def paste_note(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.tap(rid="new_note")
        yield from ui.type_into("title", "Read later")
        yield from ui.long_press(rid="body")
        yield from ui.tap(rid="save")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.copy(ui, 0)
        yield from self.paste_note(ui)

    def wrong_endings(self) -> dict:
        def second(task):
            def script(ui):
                yield from task.copy(ui, 1)
                yield from task.paste_note(ui)
            return script
        return {"pasted-the-stale-clipboard": ending(lambda task: task.paste_note),
                "the-second-newest": ending(second)}


TASKS = (CrossNewsHeadlineToNote, NewsAnswerNewest, NewsAnswerOutlet, NewsDailyDigest, NewsFollowTopic, NewsHideOutlet,
         NewsSaveStory, NewsUnfollowTopic, NewsUnsaveStory)

"""News: a feed by section, topics you follow, saved stories, an article page, hidden outlets, a digest setting.

Tabs: Top stories (section chips over the newest-first feed), Following (stories of the
followed topics; "Manage topics" switches each section on or off) and Saved (stories kept
for later; long press removes one after a confirmation; an empty state). An article page
saves it or hides every story from its outlet (after a confirmation). Settings: the daily
digest and its time, in a form that only takes HH:MM, and the text size. The section chip
is navigation (kept on the app); follows, saves, hidden outlets and settings are state.
Data comes from ``mockphone.world.media``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.kit import tab_bar, tr
from mockphone.world.media import SECTIONS

TABS = (("main", "Top stories"), ("following", "Following"), ("saved", "Saved stories"))


@dataclass
class Article:
    aid: str
    title: str
    outlet: str
    section: str
    minutes_ago: int
    read_minutes: int


@dataclass
class NewsSettings:
    digest: bool = False
    digest_time: str = "08:00"
    text_size: str = "Normal"


@dataclass
class NewsState:
    articles: list[Article] = field(default_factory=list)
    following: tuple[str, ...] = ()
    saved: tuple[str, ...] = ()  # article ids
    hidden: tuple[str, ...] = ()  # outlets whose stories are hidden
    settings: NewsSettings = field(default_factory=NewsSettings)

    def article(self, aid: str) -> Article | None:
        return next((a for a in self.articles if a.aid == aid), None)

    def by_title(self, title: str) -> Article | None:
        return next((a for a in self.articles if a.title == title), None)

    def feed(self, section: str = "") -> list[Article]:
        """Visible stories (hidden outlets left out) of ``section`` (all when ""), newest first."""
        return sorted((a for a in self.articles if a.outlet not in self.hidden and (not section or a.section == section)),
                      key=lambda a: (a.minutes_ago, a.aid))


class NewsApp(App):
    name = "news"
    package = "com.phoneloop.news"
    label = "News"
    aliases = ("headlines",)
    color = "#5f6368"

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.section = ""  # the section chip on Top stories (navigation)

    def reset(self, rng: random.Random) -> None:
        super().reset(rng)
        self.section = ""

    def initial_state(self, rng: random.Random) -> NewsState:
        n = data.world_of(self.phone).news
        return NewsState([Article(a.aid, a.title, a.outlet, a.section, a.minutes_ago, a.read_minutes)
                          for a in n.articles], n.following, n.saved)

    def _row(self, a: Article, rid: str = "story_row", **kw) -> ui.Widget:
        when = tr(self, "{minutes} min ago", minutes=a.minutes_ago) if a.minutes_ago < 60 else \
            tr(self, "{hours} h ago", hours=a.minutes_ago // 60)
        return ui.item(a.title, tr(self, "{outlet} · {section} · {age}", outlet=a.outlet, section=a.section, age=when),
                       rid=rid, on_tap=(lambda aid=a.aid: self.push("article", aid=aid)),
                       icon=f"picture:story-{a.aid}-{a.title}", **kw)

    def page_main(self, page: ui.Page) -> ui.View:
        chips = [ui.chip("All", self.section == "", (lambda: setattr(self, "section", "")), rid="section_all")]
        chips += [ui.chip(s, self.section == s, (lambda s=s: setattr(self, "section", s)), rid=f"section_{s.lower()}")
                  for s in SECTIONS]
        rows = [self._row(a) for a in self.state.feed(self.section)]
        if not rows:
            rows = [ui.text("No stories here", style="caption", copyable=False, rid="empty")]
        return ui.View("News", body=(tab_bar(self, "main", TABS), ui.row(*chips[:3]), ui.row(*chips[3:]), *rows),
                       actions=(ui.button("Settings", lambda: self.push("settings"), rid="settings"),))

    def page_following(self, page: ui.Page) -> ui.View:
        rows = [self._row(a) for a in self.state.feed() if a.section in self.state.following]
        if not rows:
            rows = [ui.text("Follow a topic to see its stories", style="caption", copyable=False, rid="empty")]
        return ui.View("Following", body=(tab_bar(self, "following", TABS),
                                          ui.button("Manage topics", lambda: self.push("topics"), rid="topics",
                                                    style="outline"), *rows))

    def page_topics(self, page: ui.Page) -> ui.View:
        return ui.View("Topics", up=True, body=tuple(
            ui.toggle(s, s in self.state.following, (lambda v, s=s: self._follow(s, v)), rid=f"follow_{s.lower()}")
            for s in SECTIONS))

    def _follow(self, section: str, on: bool) -> None:
        rest = tuple(s for s in self.state.following if s != section)
        self.state.following = (*rest, section) if on else rest

    def page_saved(self, page: ui.Page) -> ui.View:
        rows = [self._row(a, rid="saved_row", on_long_press=(lambda aid=a.aid: self._confirm_unsave(aid)))
                for a in (self.state.article(x) for x in self.state.saved) if a is not None]
        if not rows:
            rows = [ui.text("No saved stories", style="caption", copyable=False, rid="empty")]
        return ui.View("Saved stories", body=(tab_bar(self, "saved", TABS), *rows))

    def _confirm_unsave(self, aid: str) -> None:
        self.dialog("Remove from saved?", "The story stays in the feed.",
                    (("Cancel", None), ("Remove", lambda: self._unsave(aid))), rid="confirm_unsave")

    def _unsave(self, aid: str) -> None:
        self.state.saved = tuple(x for x in self.state.saved if x != aid)
        self.toast("Removed from saved")

    def page_article(self, page: ui.Page) -> ui.View:
        a = self.state.article(page.args["aid"])
        saved = a.aid in self.state.saved
        return ui.View(a.section, up=True, body=(
            ui.text(a.title, style="title", rid="headline"),
            ui.text(tr(self, "{outlet} · {minutes} min read", outlet=a.outlet, minutes=a.read_minutes),
                    style="caption", rid="byline"),
            ui.image(a.title, color="#c8ccd0", height_dp=150, icon=f"picture:story-{a.aid}-{a.title}"),
            ui.text(tr(self, "Full story from {outlet}.", outlet=a.outlet), rid="body"),
            ui.row(ui.button("Saved" if saved else "Save", lambda: self._save(a.aid), rid="save", style="outline"),
                   ui.button("Hide outlet", lambda: self._confirm_hide(a.outlet), rid="hide_outlet", style="danger")),
        ))

    def _save(self, aid: str) -> None:
        if aid in self.state.saved:
            self._confirm_unsave(aid)
        else:
            self.state.saved = (*self.state.saved, aid)
            self.toast("Saved for later")

    def _confirm_hide(self, outlet: str) -> None:
        self.dialog("Hide this outlet?", tr(self, "You won't see stories from {outlet}.", outlet=outlet),
                    (("Cancel", None), ("Hide", lambda: self._hide(outlet))), rid="confirm_hide")

    def _hide(self, outlet: str) -> None:
        self.state.hidden = (*self.state.hidden, outlet)
        self.back()
        self.toast("Outlet hidden")

    def page_settings(self, page: ui.Page) -> ui.View:
        st = self.state.settings
        return ui.View("Settings", up=True, body=(
            ui.toggle("Daily digest", st.digest, lambda v: setattr(st, "digest", v), rid="digest"),
            ui.item("Digest time", st.digest_time, on_tap=lambda: self.push("digest_time"), rid="digest_time"),
            ui.text("Text size", style="caption", copyable=False),
            ui.row(*(ui.chip(s, st.text_size == s, (lambda s=s: setattr(st, "text_size", s)),
                             rid=f"text_{s.lower()}") for s in ("Small", "Normal", "Large"))),
        ))

    def page_digest_time(self, page: ui.Page) -> ui.View:
        if not page.fields:
            page.fields["time"] = self.state.settings.digest_time
        return ui.View("Digest time", up=True, body=(ui.edit("time", page.field("time"), hint="HH:MM"),),
                       footer=(ui.button("Save", lambda: self._save_time(page), rid="save"),))

    def _save_time(self, page: ui.Page) -> None:
        text = page.field("time").strip()
        ok = len(text) == 5 and text[2] == ":" and text[:2].isdigit() and text[3:].isdigit() \
            and int(text[:2]) < 24 and int(text[3:]) < 60
        if not ok:
            self.dialog("Invalid time", "Enter the time as HH:MM, e.g. 07:30.", rid="invalid_time")
            return
        self.state.settings.digest_time = text
        self.back()
        self.toast("Digest time saved")

"""Music: browse and search songs, a song page, now playing, playlists you create and edit, liked songs, settings.

Tabs: Home (now playing, your playlists, the catalogue by artist), Search (a search box and
genre chips over titles, artists and albums; an empty state) and Library (liked songs,
playlists, "New playlist" in a form that refuses an empty or taken name). A song page plays
it, likes it or adds it to a playlist (picked from a list); a playlist page plays it in
order or shuffled, removes a song (long press) or deletes the playlist after a
confirmation. Settings: streaming quality and hiding explicit songs. The search and the
genre chip are navigation (kept on the app); the library, what plays and the settings are
state. Data comes from ``mockphone.world.media``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.apps.kit import switch_tab, tab_bar, tr
from mockphone.world.media import GENRES

TABS = (("main", "For you"), ("search", "Search"), ("library", "Library"))


@dataclass
class Song:
    title: str
    artist: str
    album: str
    genre: str
    seconds: int


@dataclass
class Playlist:
    name: str
    songs: tuple[str, ...] = ()


@dataclass
class NowPlaying:
    song: str
    source: str = ""  # the playlist it plays from, "" for a single song
    shuffle: bool = False


@dataclass
class MusicSettings:
    quality: str = "Normal"  # "Low", "Normal", "High"
    hide_explicit: bool = False


@dataclass
class MusicState:
    songs: list[Song] = field(default_factory=list)
    playlists: list[Playlist] = field(default_factory=list)
    liked: tuple[str, ...] = ()
    playing: NowPlaying | None = None
    settings: MusicSettings = field(default_factory=MusicSettings)

    def song(self, title: str) -> Song | None:
        return next((s for s in self.songs if s.title == title), None)

    def playlist(self, name: str) -> Playlist | None:
        return next((p for p in self.playlists if p.name == name), None)


def length(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


class MusicApp(App):
    name = "music"
    package = "com.phoneloop.music"
    label = "Music"
    aliases = ("songs", "player")
    color = "#e91e63"

    def __init__(self, phone) -> None:
        super().__init__(phone)
        self.genre = ""  # the search tab's genre chip (navigation)

    def reset(self, rng: random.Random) -> None:
        super().reset(rng)
        self.genre = ""

    def initial_state(self, rng: random.Random) -> MusicState:
        world = data.world_of(self.phone)
        lib = world.music_library
        return MusicState([Song(s.title, s.artist, s.album, s.genre, s.seconds) for s in world.music],
                          [Playlist(n, songs) for n, songs in lib.playlists], lib.liked)

    def _row(self, s: Song, rid: str = "song_row", **kw) -> ui.Widget:
        return ui.item(s.title, tr(self, "{artist} · {album}", artist=s.artist, album=s.album), rid=rid,
                       trailing=length(s.seconds), on_tap=(lambda t=s.title: self.push("song", title=t)), **kw)

    def _now(self) -> list[ui.Widget]:
        p = self.state.playing
        if p is None:
            return [ui.text("Nothing playing", style="caption", copyable=False, rid="now_playing")]
        return [ui.item(tr(self, "Now playing: {song}", song=p.song), p.source or "Single song", rid="now_playing",
                        on_tap=lambda: self.push("player"))]

    def page_main(self, page: ui.Page) -> ui.View:
        lists = [ui.item(p.name, tr(self, "{n} songs", n=len(p.songs)), rid="playlist_row",
                         on_tap=(lambda n=p.name: self.push("playlist", name=n))) for p in self.state.playlists]
        songs = [self._row(s) for s in sorted(self.state.songs, key=lambda s: (s.artist, s.title))]
        return ui.View("Music", body=(tab_bar(self, "main", TABS), *self._now(),
                                      ui.text("Your playlists", style="caption", copyable=False), *lists,
                                      ui.text("All songs", style="caption", copyable=False), *songs),
                       actions=(ui.button("Settings", lambda: self.push("settings"), rid="settings"),))

    def page_search(self, page: ui.Page) -> ui.View:
        words = page.field("query").strip().lower().split()
        chips = [ui.chip(g, self.genre == g, (lambda g=g: self._genre(g)), rid=f"genre_{g.lower()}") for g in GENRES]
        found = [s for s in self.state.songs if (not self.genre or s.genre == self.genre)
                 and all(w in f"{s.title} {s.artist} {s.album}".lower() for w in words)] if (words or self.genre) else []
        rows = [self._row(s) for s in found]
        if (words or self.genre) and not rows:
            rows = [ui.text("No songs found", style="caption", copyable=False, rid="empty")]
        return ui.View("Search", body=(tab_bar(self, "search", TABS),
                                       ui.edit("query", page.field("query"), hint="Songs, artists, albums"),
                                       ui.row(*chips[:3]), ui.row(*chips[3:]), *rows))

    def _genre(self, genre: str) -> None:
        self.genre = "" if self.genre == genre else genre

    def page_library(self, page: ui.Page) -> ui.View:
        liked = [self._row(self.state.song(t), rid="liked_row") for t in self.state.liked if self.state.song(t)]
        lists = [ui.item(p.name, tr(self, "{n} songs", n=len(p.songs)), rid="playlist_row",
                         on_tap=(lambda n=p.name: self.push("playlist", name=n))) for p in self.state.playlists]
        if not lists:
            lists = [ui.text("No playlists yet", style="caption", copyable=False, rid="empty")]
        return ui.View("Library", body=(tab_bar(self, "library", TABS),
                                        ui.text("Playlists", style="caption", copyable=False), *lists,
                                        ui.text("Liked songs", style="caption", copyable=False), *liked),
                       actions=(ui.button("New playlist", lambda: self.push("new_playlist"), rid="new_playlist"),))

    def page_song(self, page: ui.Page) -> ui.View:
        s = self.state.song(page.args["title"])
        liked = s.title in self.state.liked
        return ui.View(s.title, up=True, body=(
            ui.image(s.album, color="#f48fb1", height_dp=150, label=s.genre, icon=f"picture:album-{s.album}"),
            ui.text(s.title, style="title", rid="song_title"),
            ui.text(s.artist, rid="artist"),
            ui.text(tr(self, "Album: {album}", album=s.album), rid="album"),
            ui.text(tr(self, "{genre} · {length}", genre=s.genre, length=length(s.seconds)), style="caption",
                    rid="song_info"),
            ui.row(ui.button("Play", lambda: self._play(s.title), rid="play"),
                   ui.button("Liked" if liked else "Like", lambda: self._like(s.title), rid="like", style="outline")),
            ui.button("Add to playlist", lambda: self.push("pick_playlist", title=s.title), rid="add_to_playlist",
                      style="outline"),
        ))

    def _play(self, title: str, source: str = "", shuffle: bool = False) -> None:
        self.state.playing = NowPlaying(title, source, shuffle)
        self.push("player")

    def _like(self, title: str) -> None:
        if title in self.state.liked:
            self.state.liked = tuple(t for t in self.state.liked if t != title)
            self.toast("Removed from Liked songs")
        else:
            self.state.liked = (*self.state.liked, title)
            self.toast("Added to Liked songs")

    def page_player(self, page: ui.Page) -> ui.View:
        p = self.state.playing
        if p is None:
            return ui.View("Now playing", up=True, body=(ui.text("Nothing playing", style="caption", rid="empty"),))
        s = self.state.song(p.song)
        return ui.View("Now playing", up=True, body=(
            ui.image(s.album, color="#f48fb1", height_dp=200, icon=f"picture:album-{s.album}"),
            ui.text(s.title, style="title", rid="playing_title"),
            ui.text(s.artist, rid="playing_artist"),
            ui.text(tr(self, "From {source}", source=p.source) if p.source else "Single song", style="caption",
                    rid="playing_source"),
            ui.text("Shuffle on" if p.shuffle else "Shuffle off", style="caption", rid="shuffle_state"),
        ), footer=(ui.button("Stop", self._stop, rid="stop", style="outline"),))

    def _stop(self) -> None:
        self.state.playing = None
        self.back()

    def page_pick_playlist(self, page: ui.Page) -> ui.View:
        rows = [ui.item(p.name, tr(self, "{n} songs", n=len(p.songs)), rid="pick_row",
                        on_tap=(lambda n=p.name: self._add_to(n, page.args["title"]))) for p in self.state.playlists]
        if not rows:
            rows = [ui.text("No playlists yet", style="caption", copyable=False, rid="empty")]
        return ui.View("Add to playlist", up=True, body=tuple(rows))

    def _add_to(self, name: str, title: str) -> None:
        p = self.state.playlist(name)
        if title in p.songs:
            self.toast("Already in this playlist")
        else:
            p.songs = (*p.songs, title)
            self.toast("Added to playlist")
        self.back()

    def page_playlist(self, page: ui.Page) -> ui.View:
        p = self.state.playlist(page.args["name"])
        if p is None:
            return ui.View("Playlist", up=True, body=(ui.text("Playlist deleted", style="caption", rid="empty"),))
        rows = [self._row(self.state.song(t), rid="track_row",
                          on_long_press=(lambda t=t: self._confirm_remove(p.name, t))) for t in p.songs]
        if not rows:
            rows = [ui.text("This playlist is empty", style="caption", copyable=False, rid="empty")]
        first = p.songs[0] if p.songs else ""
        return ui.View(p.name, up=True, body=(
            ui.row(ui.button("Play", (lambda: self._play(first, p.name)) if first else None, rid="play_all"),
                   ui.button("Shuffle", (lambda: self._play(first, p.name, True)) if first else None, rid="shuffle",
                             style="outline")),
            *rows,
            ui.button("Delete playlist", lambda: self._confirm_delete(p.name), rid="delete_playlist", style="danger"),
        ))

    def _confirm_remove(self, name: str, title: str) -> None:
        self.dialog("Remove song?", tr(self, "{song} will be removed from {playlist}.", song=title, playlist=name),
                    (("Cancel", None), ("Remove", lambda: self._remove(name, title))), rid="confirm_remove")

    def _remove(self, name: str, title: str) -> None:
        p = self.state.playlist(name)
        p.songs = tuple(t for t in p.songs if t != title)

    def _confirm_delete(self, name: str) -> None:
        self.dialog("Delete playlist?", tr(self, "\"{title}\" will be deleted.", title=name),
                    (("Cancel", None), ("Delete", lambda: self._delete(name))), rid="confirm_delete")

    def _delete(self, name: str) -> None:
        self.state.playlists = [p for p in self.state.playlists if p.name != name]
        switch_tab(self, "library")
        self.toast("Playlist deleted")

    def page_new_playlist(self, page: ui.Page) -> ui.View:
        return ui.View("New playlist", up=True, body=(ui.edit("name", page.field("name"), hint="Playlist name"),),
                       footer=(ui.button("Create", lambda: self._create(page), rid="create"),))

    def _create(self, page: ui.Page) -> None:
        name = page.field("name").strip()
        if not name or self.state.playlist(name) is not None:
            self.dialog("Check the name", "Give the playlist a name no other playlist has.", rid="invalid_name")
            return
        self.state.playlists.append(Playlist(name))
        self.phone.nav.stacks[self.package] = [ui.Page("library"), ui.Page("playlist", {"name": name})]
        self.phone.nav.focus = None  # the name field's page is gone, and its keyboard with it
        self.toast("Playlist created")

    def page_settings(self, page: ui.Page) -> ui.View:
        st = self.state.settings
        return ui.View("Settings", up=True, body=(
            ui.text("Streaming quality", style="caption", copyable=False),
            ui.row(*(ui.chip(q, st.quality == q, (lambda q=q: setattr(st, "quality", q)), rid=f"quality_{q.lower()}")
                     for q in ("Low", "Normal", "High"))),
            ui.toggle("Hide explicit songs", st.hide_explicit, lambda v: setattr(st, "hide_explicit", v),
                      rid="hide_explicit"),
        ))

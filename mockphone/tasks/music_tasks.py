"""Music tasks: play, like, playlists (create, add, remove, delete, shuffle), answers about songs, a Messages handoff.

Parameters come from the seed's catalogue and library (``mockphone.world.media``). A song or
playlist named by an instance is planted on a phone whose world lacks it.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.music import Playlist, Song
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer, fraction
from mockphone.tasks.comm_tasks import ensure_person, pick_name
from mockphone.tasks.endings import answer, ending
from mockphone.tasks.travel_tasks import text_to

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World

NEW_PLAYLISTS = ("Gym mix", "Rainy day", "Study beats", "Kitchen songs", "Weekend drive", "Wind down", "Party starters",
                 "Commute")
NEW_PLAYLISTS_ZH = ("健身歌单", "下雨天", "学习背景乐", "厨房小调", "周末兜风", "睡前放松", "派对开场", "通勤路上")


def _world(world: World | None) -> World:
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def ensure_song(phone: MockPhone, task: Task, title: str) -> Song:
    state = phone.app("music").state
    found = state.song(title)
    if found is None:
        ws = next(s for s in task.world.music if s.title == title)
        found = Song(ws.title, ws.artist, ws.album, ws.genre, ws.seconds)
        state.songs.append(found)
    return found


def ensure_playlist(phone: MockPhone, task: Task, name: str) -> Playlist:
    """``name``'s playlist on ``phone`` (planted with its songs from the task's world when missing)."""
    state = phone.app("music").state
    found = state.playlist(name)
    if found is None:
        songs = dict(task.world.music_library.playlists).get(name, ())
        for t in songs:
            ensure_song(phone, task, t)
        found = Playlist(name, tuple(songs))
        state.playlists.append(found)
    return found


MUSIC_PACKAGE = "com.phoneloop.music"


def to_tabs(ui: UI) -> Iterator[Action]:
    """Open Music and go back until a tab page shows (a song or player page may be on top)."""
    yield from ui.open("music")
    for _ in range(4):
        if ui.find(rid="tab_search") is not None:
            return
        yield from ui.key("back")
        if not any(el.package == MUSIC_PACKAGE for el in ui.elements()):  # backed out of the app: reopen it
            yield from ui.open("music")


def open_song(ui: UI, title: str) -> Iterator[Action]:
    yield from to_tabs(ui)
    yield from ui.tap(rid="tab_search")
    yield from ui.type_into("query", title)
    yield from ui.tap(text=title, rid="android:id/title")


def open_playlist(ui: UI, name: str) -> Iterator[Action]:
    yield from to_tabs(ui)
    yield from ui.tap(rid="tab_library")
    yield from ui.tap(text=name)


def same_artist(phone: MockPhone, title: str) -> Song:
    """Another song by the same artist (any other song when this phone has none): the plausible mix-up."""
    state = phone.app("music").state
    me = state.song(title)
    others = [s for s in state.songs if s.title != title]
    return ([s for s in others if s.artist == me.artist] or others)[0]


def _song_param() -> Param:
    return Param(str, doc="a song of the seed's Music catalogue")


class MusicPlaySong(Task):
    """Find a song with the search and play it."""

    template = "Play the song \"{title}\" in Music."
    app_names = ("music",)
    complexity = 4.0
    allowed = ("music.playing*",)
    schema = {"title": _song_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": rng.choice(_world(world).music).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_song(phone, self, self.params["title"])

    def check(self, phone: MockPhone) -> float:
        p = phone.state("music").playing
        return float(p is not None and p.song == self.params["title"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_song(ui, self.params["title"])
        yield from ui.tap(rid="play")

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                yield from open_song(ui, same_artist(ui.phone, task.params["title"]).title)
                yield from ui.tap(rid="play")
            return script

        def liked(task):
            def script(ui):
                yield from open_song(ui, task.params["title"])
                yield from ui.tap(rid="like")
            return script
        return {"same-artists-other-song": ending(other), "liked-instead": ending(liked)}


class MusicLikeSong(Task):
    """Like a song (it joins Liked songs)."""

    template = "Add \"{title}\" to my Liked songs in Music."
    app_names = ("music",)
    complexity = 4.0
    allowed = ("music.liked",)
    schema = {"title": _song_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        w = _world(world)
        return {"title": rng.choice([s.title for s in w.music if s.title not in w.music_library.liked])}

    def setup(self, phone: MockPhone) -> None:
        ensure_song(phone, self, self.params["title"])
        state = phone.app("music").state
        state.liked = tuple(t for t in state.liked if t != self.params["title"])

    def check(self, phone: MockPhone) -> float:
        before = set(self.start_state(phone)["music.liked"])
        return float(set(phone.state("music").liked) == before | {self.params["title"]})

    def like(self, ui: UI, title: str, times: int = 1) -> Iterator[Action]:
        yield from open_song(ui, title)
        for _ in range(times):
            yield from ui.tap(rid="like")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.like(ui, self.params["title"])

    def wrong_endings(self) -> dict:
        return {"same-artists-other-song": ending(lambda task: lambda ui: task.like(
                    ui, same_artist(ui.phone, task.params["title"]).title)),
                "and-the-same-artists-other-song-too": ends.after(lambda task: lambda ui: task.like(
                    ui, same_artist(ui.phone, task.params["title"]).title))}


class MusicCreatePlaylist(Task):
    """Create a playlist (the form refuses an empty or taken name) and put one song in it."""

    template = "Create a playlist called \"{name}\" in Music and add \"{title}\" to it."
    app_names = ("music",)
    complexity = 8.0
    allowed = ("music.playlists[{name}]*",)
    schema = {"name": Param(str), "title": _song_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        w = _world(world)
        return {"name": rng.choice(NEW_PLAYLISTS_ZH if w.zh else NEW_PLAYLISTS), "title": rng.choice(w.music).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_song(phone, self, self.params["title"])
        state = phone.app("music").state
        state.playlists = [p for p in state.playlists if p.name != self.params["name"]]

    def check(self, phone: MockPhone) -> float:
        p = phone.state("music").playlist(self.params["name"])
        return fraction(p is not None, p is not None and p.songs == (self.params["title"],))

    def create(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("music")
        yield from ui.tap(rid="tab_library")
        yield from ui.tap(rid="new_playlist")
        yield from ui.type_into("name", self.params["name"])
        yield from ui.tap(rid="create")
        yield from ui.key("back")  # the new, empty playlist's page: back to the Library

    def add(self, ui: UI, title: str, playlist: str) -> Iterator[Action]:
        yield from open_song(ui, title)
        yield from ui.tap(rid="add_to_playlist")
        yield from ui.tap(text=playlist)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.create(ui)
        yield from self.add(ui, self.params["title"], self.params["name"])

    def wrong_endings(self) -> dict:
        def other_song(task):
            def script(ui):
                yield from task.create(ui)
                yield from task.add(ui, same_artist(ui.phone, task.params["title"]).title, task.params["name"])
            return script
        return {"left-empty": ending(lambda task: task.create), "same-artists-other-song": ending(other_song)}


def _playlist_song(rng: random.Random, world: World | None, inside: bool) -> dict:
    w = _world(world)
    name, songs = rng.choice(w.music_library.playlists)
    pool = list(songs) if inside else [s.title for s in w.music if s.title not in songs]
    return {"playlist": name, "title": rng.choice(pool)}


class MusicAddToPlaylist(Task):
    """Add a song to an existing playlist (the song page's playlist picker)."""

    template = "Add \"{title}\" to my \"{playlist}\" playlist in Music."
    app_names = ("music",)
    complexity = 5.0
    allowed = ("music.playlists[{playlist}].songs",)
    schema = {"title": _song_param(), "playlist": Param(str, doc="one of the seed's playlists")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return _playlist_song(rng, world, inside=False)

    def setup(self, phone: MockPhone) -> None:
        ensure_song(phone, self, self.params["title"])
        p = ensure_playlist(phone, self, self.params["playlist"])
        p.songs = tuple(t for t in p.songs if t != self.params["title"])

    def check(self, phone: MockPhone) -> float:
        before = tuple(self.start_state(phone)[f"music.playlists[{self.params['playlist']}].songs"])
        return float(phone.state("music").playlist(self.params["playlist"]).songs == (*before, self.params["title"]))

    def add(self, ui: UI, title: str, playlist: str) -> Iterator[Action]:
        yield from open_song(ui, title)
        yield from ui.tap(rid="add_to_playlist")
        yield from ui.tap(text=playlist)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.add(ui, self.params["title"], self.params["playlist"])

    def wrong_endings(self) -> dict:
        def other_list(task):
            def script(ui):
                other = next(p.name for p in ui.phone.app("music").state.playlists if p.name != task.params["playlist"])
                yield from task.add(ui, task.params["title"], other)
            return script
        return {"another-playlist": ending(other_list), "same-artists-other-song": ending(
            lambda task: lambda ui: task.add(ui, same_artist(ui.phone, task.params["title"]).title,
                                             task.params["playlist"]))}


class MusicRemoveFromPlaylist(Task):
    """Remove one song from a playlist (long press, confirm)."""

    template = "Remove \"{title}\" from my \"{playlist}\" playlist in Music."
    app_names = ("music",)
    complexity = 4.0
    allowed = ("music.playlists[{playlist}].songs",)
    schema = {"title": _song_param(), "playlist": Param(str, doc="one of the seed's playlists")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return _playlist_song(rng, world, inside=True)

    def setup(self, phone: MockPhone) -> None:
        ensure_song(phone, self, self.params["title"])
        p = ensure_playlist(phone, self, self.params["playlist"])
        if self.params["title"] not in p.songs:
            p.songs = (*p.songs, self.params["title"])
        if len(p.songs) < 2:
            other = next(s.title for s in phone.app("music").state.songs if s.title != self.params["title"])
            p.songs = (*p.songs, other)

    def check(self, phone: MockPhone) -> float:
        before = self.start_state(phone)[f"music.playlists[{self.params['playlist']}].songs"]
        want = tuple(t for t in before if t != self.params["title"])
        return float(phone.state("music").playlist(self.params["playlist"]).songs == want)

    def remove(self, ui: UI, title: str, button: str = "Remove") -> Iterator[Action]:
        yield from open_playlist(ui, self.params["playlist"])
        yield from ui.long_press(text=title)
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.remove(ui, self.params["title"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                songs = ui.phone.app("music").state.playlist(task.params["playlist"]).songs
                yield from task.remove(ui, next(t for t in songs if t != task.params["title"]))
            return script
        return {"removed-another": ending(other),
                "removed-it-and-another-too": ends.after(other)}


class MusicDeletePlaylist(Task):
    """Delete a playlist after the confirmation."""

    template = "Delete my \"{playlist}\" playlist in Music."
    app_names = ("music",)
    complexity = 4.0
    allowed = ("music.playlists[{playlist}]*",)
    schema = {"playlist": Param(str, doc="one of the seed's playlists")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"playlist": rng.choice(_world(world).music_library.playlists)[0]}

    def setup(self, phone: MockPhone) -> None:
        ensure_playlist(phone, self, self.params["playlist"])

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("music").playlist(self.params["playlist"]) is None)

    def delete(self, ui: UI, name: str, button: str = "Delete") -> Iterator[Action]:
        yield from open_playlist(ui, name)
        yield from ui.tap(rid="delete_playlist")
        yield from ui.tap(text=button)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.delete(ui, self.params["playlist"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                yield from task.delete(ui, next(p.name for p in ui.phone.app("music").state.playlists
                                                if p.name != task.params["playlist"]))
            return script
        return {"deleted-another": ending(other),
                "deleted-it-and-another-too": ends.after(other)}


class MusicShufflePlaylist(Task):
    """Play a playlist shuffled (not in order)."""

    template = "Shuffle-play my \"{playlist}\" playlist in Music."
    app_names = ("music",)
    complexity = 4.0
    allowed = ("music.playing*",)
    schema = {"playlist": Param(str, doc="one of the seed's playlists")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"playlist": rng.choice(_world(world).music_library.playlists)[0]}

    def setup(self, phone: MockPhone) -> None:
        ensure_playlist(phone, self, self.params["playlist"])

    def check(self, phone: MockPhone) -> float:
        p = phone.state("music").playing
        return float(p is not None and p.source == self.params["playlist"] and p.shuffle)

    def play(self, ui: UI, name: str, rid: str = "shuffle") -> Iterator[Action]:
        yield from open_playlist(ui, name)
        yield from ui.tap(rid=rid)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self.play(ui, self.params["playlist"])

    def wrong_endings(self) -> dict:
        def other(task):
            def script(ui):
                yield from task.play(ui, next(p.name for p in ui.phone.app("music").state.playlists
                                              if p.name != task.params["playlist"]))
            return script
        return {"played-in-order": ending(lambda task: lambda ui: task.play(ui, task.params["playlist"], "play_all")),
                "another-playlist": ending(other)}


class MusicAnswerAlbum(Task):
    """Read a song's album off its page."""

    template = "Which album is the song \"{title}\" on, according to Music? Answer with the album's name."
    app_names = ("music",)
    complexity = 4.0
    changes_state = False
    schema = {"title": _song_param()}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": rng.choice(_world(world).music).title}

    def setup(self, phone: MockPhone) -> None:
        ensure_song(phone, self, self.params["title"])

    def check(self, phone: MockPhone) -> float:
        album = phone.state("music").song(self.params["title"]).album
        return float(answers.norm(final_answer(phone)) == answers.norm(album))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_song(ui, self.params["title"])
        # the album line reads "Album: X" (or its translation): the name is the part after the colon
        line = ui.find(rid="album").text
        yield Action("answer", text=line.replace("：", ":").split(":", 1)[1].strip())

    def wrong_endings(self) -> dict:
        def other_album(task):
            def script(ui):
                state = ui.phone.app("music").state
                mine = state.song(task.params["title"]).album
                yield from answer(next(s.album for s in state.songs if s.album != mine))
            return script
        return {"the-artist": ending(lambda task: lambda ui: answer(ui.phone.app("music").state.song(
                    task.params["title"]).artist)), "another-album": ending(other_album)}


class MusicAnswerLongest(Task):
    """Search an artist and compare song lengths."""

    template = "What is the longest song by {artist} in Music? Answer with its title."
    app_names = ("music",)
    complexity = 4.0
    changes_state = False
    schema = {"artist": Param(str, doc="an artist of the seed's Music catalogue")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"artist": rng.choice(sorted({s.artist for s in _world(world).music}))}

    def setup(self, phone: MockPhone) -> None:
        for s in self.world.music:
            if s.artist == self.params["artist"]:
                ensure_song(phone, self, s.title)

    def _by(self, phone: MockPhone) -> list[Song]:
        return sorted((s for s in phone.app("music").state.songs if s.artist == self.params["artist"]),
                      key=lambda s: (-s.seconds, s.title))

    def check(self, phone: MockPhone) -> float:
        return float(answers.norm(final_answer(phone)) == answers.norm(self._by(phone)[0].title))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("music")
        yield from ui.tap(rid="tab_search")
        yield from ui.type_into("query", self.params["artist"])
        rows = yield from ui.collect("song_row")

        def secs(r: list[str]) -> int:
            m, s = r[-1].split(":")
            return int(m) * 60 + int(s)
        mine = [r for r in rows if r[1].startswith(self.params["artist"])]
        yield Action("answer", text=max(mine, key=secs)[0])

    def wrong_endings(self) -> dict:
        def overall(task):
            def script(ui):
                best = task._by(ui.phone)[0].title
                songs = sorted(ui.phone.app("music").state.songs, key=lambda s: (-s.seconds, s.title))
                yield from answer(next(s.title for s in songs if s.title != best))
            return script
        return {"the-shortest": ending(lambda task: lambda ui: answer(task._by(ui.phone)[-1].title)),
                "longest-of-all-songs": ending(overall)}


class CrossMusicNowPlayingToMessage(Task):
    """Music -> Messages: text someone the title of the song that is playing."""

    template = "Text {name} the title of the song that is playing in Music."
    app_names = ("music", "messages")
    category = "cross-app"
    complexity = 8.0
    allowed = ("messages.threads[{name}][+1]*",)
    schema = {"title": _song_param(), "name": Param(str, doc="one of the seed's people")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"title": rng.choice(_world(world).music).title, "name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        from mockphone.apps.music import NowPlaying

        ensure_song(phone, self, self.params["title"])
        ensure_person(phone, self.params["name"], self.world)
        phone.app("music").state.playing = NowPlaying(self.params["title"])

    def check(self, phone: MockPhone) -> float:
        sent = phone.state("messages").sent_to(self.params["name"])
        return float(bool(sent) and answers.norm(self.params["title"]) in answers.norm(sent[-1]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("music")
        yield from ui.tap(rid="now_playing")
        title = ui.find(rid="playing_title").text
        yield from text_to(ui, self.params["name"], title)

    def wrong_endings(self) -> dict:
        def artist(task):
            return lambda ui: text_to(ui, task.params["name"], ui.phone.app("music").state.song(
                task.params["title"]).artist)

        def other(task):
            return lambda ui: text_to(ui, task.params["name"], same_artist(ui.phone, task.params["title"]).title)
        return {"texted-the-artist": ending(artist), "same-artists-other-song": ending(other)}


class MusicMixtape(Task):
    """Long-horizon, one app: a new playlist holding the longest song of each of two artists, in order."""

    template = ("Create a playlist called \"{name}\" in Music with the longest song by {first} and then the longest "
                "song by {second}.")
    app_names = ("music",)
    complexity = 18.0
    allowed = ("music.playlists[{name}]*",)
    schema = {"name": Param(str), "first": Param(str, doc="an artist of the seed's catalogue"),
              "second": Param(str, doc="another artist")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        w = _world(world)
        first, second = rng.sample(sorted({s.artist for s in w.music}), 2)
        return {"name": rng.choice(NEW_PLAYLISTS_ZH if w.zh else NEW_PLAYLISTS), "first": first, "second": second}

    def setup(self, phone: MockPhone) -> None:
        for s in self.world.music:
            if s.artist in (self.params["first"], self.params["second"]):
                ensure_song(phone, self, s.title)
        state = phone.app("music").state
        state.playlists = [p for p in state.playlists if p.name != self.params["name"]]

    def _ranked(self, phone: MockPhone, artist: str) -> list[Song]:
        return sorted((s for s in phone.app("music").state.songs if s.artist == artist),
                      key=lambda s: (-s.seconds, s.title))

    def check(self, phone: MockPhone) -> float:
        p = phone.state("music").playlist(self.params["name"])
        want = (self._ranked(phone, self.params["first"])[0].title, self._ranked(phone, self.params["second"])[0].title)
        return fraction(p is not None, p is not None and p.songs == want)

    def _create(self, ui: UI) -> Iterator[Action]:
        yield from to_tabs(ui)
        yield from ui.tap(rid="tab_library")
        yield from ui.tap(rid="new_playlist")
        yield from ui.type_into("name", self.params["name"])
        yield from ui.tap(rid="create")
        yield from ui.key("back")

    def _add_by(self, ui: UI, artist: str, longest: bool = True) -> Iterator[Action]:
        yield from to_tabs(ui)
        yield from ui.tap(rid="tab_search")
        yield from ui.type_into("query", artist)
        rows = [r for r in (yield from ui.collect("song_row")) if r[1].startswith(artist)]

        def secs(r: list[str]) -> int:
            m, s = r[-1].split(":")
            return int(m) * 60 + int(s)
        pick = (max if longest else min)(rows, key=secs)[0]
        yield from ui.tap(text=pick, rid="android:id/title")
        yield from ui.tap(rid="add_to_playlist")
        yield from ui.tap(text=self.params["name"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._create(ui)
        yield from self._add_by(ui, self.params["first"])
        yield from self._add_by(ui, self.params["second"])

    def wrong_endings(self) -> dict:
        def shortest(task):
            def script(ui):
                yield from task._create(ui)
                yield from task._add_by(ui, task.params["first"], longest=False)
                yield from task._add_by(ui, task.params["second"], longest=False)
            return script

        def reversed_order(task):
            def script(ui):
                yield from task._create(ui)
                yield from task._add_by(ui, task.params["second"])
                yield from task._add_by(ui, task.params["first"])
            return script

        def first_only(task):
            def script(ui):
                yield from task._create(ui)
                yield from task._add_by(ui, task.params["first"])
            return script
        return {"the-shortest-songs": ending(shortest), "reversed-order": ending(reversed_order),
                "only-the-first-artist": ending(first_only)}


TASKS = (CrossMusicNowPlayingToMessage, MusicAddToPlaylist, MusicAnswerAlbum, MusicAnswerLongest, MusicCreatePlaylist,
         MusicDeletePlaylist, MusicLikeSong, MusicMixtape, MusicPlaySong, MusicRemoveFromPlaylist, MusicShufflePlaylist)

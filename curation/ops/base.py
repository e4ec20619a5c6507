"""What every op gets: the pinned lake, frame and hash caches, and a place to report."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Context:
    lake: Any  # a pinned datalake.lake.Lake snapshot
    progress: Callable[[str, int, int], None] | None = None  # (what, done, total)
    details: dict[str, Any] = field(default_factory=dict)  # per-op extras for the report
    _frames: dict[str, bytes] = field(default_factory=dict)
    _hashes: dict[str, int] = field(default_factory=dict)

    def frame(self, sha: str) -> bytes:
        png = self._frames.get(sha)
        if png is None:
            png = self._frames[sha] = self.lake.frame(sha)
        return png

    def phashes(self, shas: list[str]) -> dict[str, int]:
        """Perceptual hashes of frames, computed once per sha for the whole run."""
        from curation.phash import phash_many

        todo = sorted({s for s in shas if s not in self._hashes})
        if todo:
            def tick(done: int) -> None:  # phash_many reports how many are hashed so far
                if self.progress:
                    self.progress("hashing frames", done, len(todo))

            values = phash_many([self.frame(s) for s in todo], progress=tick)
            self._hashes.update(zip(todo, (int(v) for v in values)))
        return {s: self._hashes[s] for s in shas}


def seeded_order(keys: list[str], seed: int) -> list[int]:
    """A permutation of range(len(keys)) that depends only on the keys and the seed."""
    return sorted(range(len(keys)), key=lambda i: hashlib.sha256(f"{seed}:{keys[i]}".encode()).digest())


def normalise_task(task: str) -> str:
    """A task id compared loosely: ``settings.wifi_on``, ``SettingsWifiOn`` and
    ``settings-wifi-on`` are one task."""
    return re.sub(r"[^0-9a-z]", "", unicodedata.normalize("NFKC", task).lower())


def normalise_instruction(text: str) -> str:
    """Lowercase, punctuation dropped inside words (``Wi-Fi`` = ``wifi``), runs of
    other characters as one space: "Turn on Wi-Fi!" and "turn on  wifi" are equal."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"(?<=\w)[-'’.](?=\w)", "", text)
    return " ".join(re.findall(r"\w+", text))


def task_key(episode) -> str:
    """The template id when there is one, else the normalised instruction."""
    return f"t:{normalise_task(episode.task)}" if episode.task else f"i:{normalise_instruction(episode.instruction)}"


def group_key(episode, by: str) -> str:
    """The episode's app, task key or id; computed on the episode as recorded, so
    redaction (a different fake per episode) never splits one task into many."""
    episode = getattr(episode, "unredacted", None) or episode
    if by == "app":
        return episode.app or "-"
    if by == "task":
        return task_key(episode)
    if by == "episode":
        return episode.episode_id
    raise ValueError(f"unknown grouping {by!r} (use app, task or episode)")

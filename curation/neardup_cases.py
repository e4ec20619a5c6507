"""Labelled synthetic episodes for ``dedup_near``: one task done many times, where which
episode is a repeat is decided by construction, not by the code under test (used by
the tests and ``bench/neardup_bench.py``).

Every episode has the instruction "Turn on Wi-Fi" and the same six actions; the first
frame is the same home screen everywhere (a couple of bits of noise), the other five
are the episode's own screens (random 64-bit hashes, so two originals are ~32 bits
apart per frame). Then, in order:

- an **original**: new screens; label False;
- a **repeat** (probability ``repeats``): an earlier original's screens with 0..``max_bits``
  bits flipped per frame, and, each with probability 1/4, one extra ``wait`` step (its
  own loading screen) or the first tap done twice in a row; label True;
- a **retype** (probability ``retypes``): an earlier original's screens, 0..2 bits off,
  but another typed text: other content, label False.

``truth`` holds the labels; ``score`` turns the episodes an op kept into precision and recall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from curation.workset import EpisodeRow, StepRow
from datalake.types import Action, Target

W, H = 1080, 2400


@dataclass
class Cases:
    episodes: list[EpisodeRow]
    hashes: dict[str, int]  # frame sha -> 64-bit phash (give them to Context._hashes)
    truth: dict[str, bool]  # episode id -> is a repeat of an earlier episode


def _actions(text: str) -> list[Action]:
    return [Action("open_app", app="settings"),
            Action("tap", x=540, y=700, element=Target(resource_id="settings:id/network")),
            Action("tap", x=540, y=500, element=Target(resource_id="settings:id/wifi")),
            Action("input_text", x=540, y=300, text=text, element=Target(resource_id="settings:id/search")),
            Action("tap", x=980, y=500, element=Target(resource_id="settings:id/wifi_toggle")),
            Action("terminate", status="success")]


def one_task(n: int, *, seed: int = 0, repeats: float = 1 / 3, retypes: float = 0.05, max_bits: int = 4,
             instruction: str = "Turn on Wi-Fi") -> Cases:
    """``n`` episodes of one instruction (see the module docstring)."""
    rng = np.random.default_rng(seed)
    home = int(rng.integers(0, 2**63))
    hashes: dict[str, int] = {}
    episodes: list[EpisodeRow] = []
    truth: dict[str, bool] = {}
    originals: list[list[int]] = []

    def flip(h: int, bits: int) -> int:
        for b in rng.choice(64, size=bits, replace=False).tolist():
            h ^= 1 << b
        return h

    for i in range(n):
        r = float(rng.random()) if originals else 1.0
        text = "wifi"
        if r < repeats:
            kind, frames = "repeat", [flip(h, int(rng.integers(0, max_bits + 1))) for h in
                                      originals[int(rng.integers(len(originals)))]]
        elif r < repeats + retypes:
            kind, text = "retype", f"wifi {i}"
            frames = [flip(h, int(rng.integers(0, 3))) for h in originals[int(rng.integers(len(originals)))]]
        else:
            kind = "original"
            frames = [flip(home, int(rng.integers(0, 3)))] + [int(h) for h in rng.integers(0, 2**63, size=5)]
            originals.append(frames)
        steps = list(zip(_actions(text), frames))
        if kind == "repeat":
            extra = float(rng.random())
            if extra < 0.25:  # a wait on a loading screen somewhere after the first step
                at = int(rng.integers(1, len(steps)))
                steps.insert(at, (Action("wait"), int(rng.integers(0, 2**63))))
            elif extra < 0.5:  # the first tap done twice (the second on the screen it left)
                steps.insert(2, (steps[1][0], flip(steps[1][1], 1)))
        rows = []
        for k, (a, h) in enumerate(steps):
            sha = f"{seed}-{i}-{k}"
            hashes[sha] = h
            rows.append(StepRow(index=k, frame_sha=sha, width=W, height=H, action_json=a.to_json(), action=a))
        episode_id = f"e{i:06d}"
        truth[episode_id] = kind == "repeat"
        episodes.append(EpisodeRow(episode_id=episode_id, instruction=instruction, source="human", phone="real",
                                   app="settings", category=None, task="settings.wifi_on", outcome="success",
                                   verified_by="human", policy=None, round=None, width=W, height=H, steps=rows))
    return Cases(episodes, hashes, truth)


def score(cases: Cases, kept: list[EpisodeRow]) -> dict:
    """Precision and recall of the dropped episodes against ``cases.truth``."""
    kept_ids = {e.episode_id for e in kept}
    dropped = {i for i in cases.truth if i not in kept_ids}
    repeats = {i for i, is_repeat in cases.truth.items() if is_repeat}
    tp = len(dropped & repeats)
    return {"episodes": len(cases.truth), "repeats": len(repeats), "dropped": len(dropped), "tp": tp,
            "fp": len(dropped - repeats), "fn": len(repeats - dropped),
            "precision": tp / len(dropped) if dropped else 1.0, "recall": tp / len(repeats) if repeats else 1.0}

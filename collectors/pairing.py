"""Which screen and which UI tree each recorded action was taken on, decided by time.

The recorder captures frames (``screencap``) and trees (``uiautomator dump``)
continuously, stamping each with the host's monotonic clock when the request is sent
(``t0``) and answered (``t1``). Touches carry the *device's* clock (getevent's kernel
timestamps). ``Clock`` maps host times onto the device clock:

* every getevent line arrives after it happened, so ``arrival_host - event_device`` is
  the offset plus a delivery latency >= 0; the minimum over the recording is the
  offset within the lowest latency seen (a few ms on USB, < 1 ms on loopback);
* before any event, ``cat /proc/uptime`` round trips bracket the offset within half the
  round trip (uptime is CLOCK_BOOTTIME: equal to getevent's CLOCK_MONOTONIC only while
  the phone has not slept since boot, so it is the fallback, and the two are compared);

A frame is grabbed between its request reaching the device and ``grab_window`` later
(process start), so its device time lies in [dev(t0), dev(t0) + grab_window]. For an
action whose finger went down at ``down`` after the previous action lifted at ``prev_up``,
a frame is **certain** when that whole interval lies in (prev_up + settle, down): the
screen had settled after the previous action and the finger had not yet touched. The
last certain frame is the step's screen; with none, the last frame surely before
``down`` is used and the step is flagged ``pairing = "uncertain"``. A tree is taken from
a dump that ran entirely inside a quiet interval showing the same frame (same PNG bytes),
nearest in time; ``tree_lag_ms`` is its distance from the frame; with none the nearest
dump is used and flagged ``tree = "uncertain"``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Frame:
    t0: float  # host monotonic: request sent
    t1: float  # host monotonic: PNG received
    sha: str


@dataclass(frozen=True)
class Tree:
    t0: float
    t1: float
    xml: str
    package: str | None
    activity: str | None


def sha(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


class Clock:
    """Host monotonic time <-> device input clock (see the module docstring)."""

    def __init__(self) -> None:
        self.from_events: float | None = None  # min(arrival - event time)
        self.from_uptime: float | None = None
        self.uptime_bound = float("inf")  # half the best uptime round trip

    def uptime_sample(self, host_before: float, uptime: float, host_after: float) -> None:
        half = (host_after - host_before) / 2
        if half < self.uptime_bound:
            self.uptime_bound, self.from_uptime = half, host_before + half - uptime

    def event(self, arrival: float, device_t: float) -> None:
        d = arrival - device_t
        if self.from_events is None or d < self.from_events:
            self.from_events = d

    @property
    def offset(self) -> float:
        """host = device + offset."""
        if self.from_events is not None:
            return self.from_events
        if self.from_uptime is None:
            raise ValueError("no clock sample yet")
        return self.from_uptime

    def to_device(self, host_t: float) -> float:
        return host_t - self.offset

    def report(self) -> dict:
        out = {"offset_s": round(self.offset, 6), "source": "getevent" if self.from_events is not None else "uptime",
               "uptime_round_trip_bound_ms": round(1000 * self.uptime_bound, 2)}
        if self.from_events is not None and self.from_uptime is not None:
            out["getevent_vs_uptime_ms"] = round(1000 * (self.from_events - self.from_uptime), 2)
        return out


@dataclass
class Pairing:
    frame: Frame | None
    certain: bool
    frame_lag_ms: float | None  # touch-down minus the frame's latest possible grab time


def pair_frame(frames: list[Frame], clock: Clock, prev_up: float, down: float, grab_window: float,
               settle: float) -> Pairing:
    """The frame shown when the finger went down at ``down`` (device time), after ``prev_up``."""
    best, fallback = None, None
    for f in frames:
        start = clock.to_device(f.t0)
        end = start + grab_window
        if end <= down:
            fallback = f if fallback is None or f.t0 > fallback.t0 else fallback
            if start >= prev_up + settle and (best is None or f.t0 > best.t0):
                best = f
    chosen = best or fallback
    lag = None if chosen is None else round(1000 * (down - clock.to_device(chosen.t0) - grab_window), 1)
    return Pairing(chosen, best is not None, lag)


def quiet_sha(frames: list[Frame], clock: Clock, start: float, end: float, grab_window: float) -> str | None:
    """The screen shown during a quiet interval (device times), if one certain frame is in it."""
    inside = [f for f in frames if clock.to_device(f.t0) >= start and clock.to_device(f.t0) + grab_window <= end]
    shas = {f.sha for f in inside}
    return shas.pop() if len(shas) == 1 else None


def pair_tree(trees: list[Tree], quiet: list[tuple[float, float, str | None]], clock: Clock, frame_sha: str | None,
              frame_t: float) -> tuple[Tree | None, bool, float | None]:
    """(tree, same_screen, tree_lag_ms): a dump made inside a quiet interval showing ``frame_sha``, nearest in time."""
    if not trees:
        return None, False, None

    def mid(t: Tree) -> float:
        return clock.to_device((t.t0 + t.t1) / 2)

    good = []
    for t in trees:
        a, b = clock.to_device(t.t0), clock.to_device(t.t1)
        if frame_sha is not None and any(s <= a and b <= e and q == frame_sha for s, e, q in quiet):
            good.append(t)
    pool = good or trees
    chosen = min(pool, key=lambda t: abs(mid(t) - frame_t))
    return chosen, bool(good), round(1000 * abs(mid(chosen) - frame_t), 1)

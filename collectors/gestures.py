"""From raw ``getevent`` lines to actions: axis ranges, multi-touch tracking, gesture classification.

``touch_axes(getevent -lp output)`` finds the touchscreen (the device with
ABS_MT_POSITION_X/Y) and its raw ranges; ``Tracker`` consumes ``getevent -lt`` lines
(multi-touch protocol B: slots and tracking ids; the gesture starts when the first
finger goes down and ends when the last one lifts) and yields ``Gesture`` and key
events; ``classify`` turns a gesture into tap / long_press / swipe / scroll using the UI
tree captured before it began (a drag that starts inside a scrollable element and
moves mostly along one axis is a scroll; ``direction`` is where the content comes from).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from datalake.types import Action
from datalake.uitree import UIElement, element_at

_LINE = re.compile(r"^\[\s*(\d+)\.(\d+)\]\s+(\S+):\s+(\S+)\s+(\S+)\s+(\S+)")
_AXIS = re.compile(r"(ABS_MT_POSITION_[XY]|003[56])\s*:\s*value -?\d+, min (-?\d+), max (-?\d+)")
_DEVICE = re.compile(r"add device \d+: (\S+)")
KEYS = {"KEY_BACK": "back", "KEY_HOMEPAGE": "home", "KEY_HOME": "home", "KEY_ENTER": "enter",
        "KEY_APPSELECT": "app_switch"}
LONG_PRESS_MS = 500
SLOP_DP = 8


class GeteventError(ValueError):
    """``getevent -p`` shows no multi-touch screen, or a line cannot be read."""


@dataclass(frozen=True)
class Axes:
    device: str
    x_min: int
    x_max: int
    y_min: int
    y_max: int

    def to_screen(self, rx: int, ry: int, width: int, height: int, rotation: int = 0) -> tuple[float, float]:
        """Raw panel values to screen pixels (natural orientation first, then the display rotation)."""
        nw, nh = (width, height) if rotation % 2 == 0 else (height, width)
        nx = (rx - self.x_min) * nw / (self.x_max - self.x_min + 1)
        ny = (ry - self.y_min) * nh / (self.y_max - self.y_min + 1)
        return {0: (nx, ny), 1: (ny, nw - nx), 2: (nw - nx, nh - ny), 3: (nh - ny, nx)}[rotation % 4]


def touch_axes(text: str) -> Axes:
    """The touchscreen's device path and X/Y ranges from ``getevent -p`` or ``-lp`` output."""
    for block in re.split(r"(?=add device )", text):
        m = _DEVICE.search(block)
        axes = {name[-1] if name.startswith("ABS") else ("X" if name == "0035" else "Y"): (int(lo), int(hi))
                for name, lo, hi in _AXIS.findall(block)}
        if m and "X" in axes and "Y" in axes:
            return Axes(m.group(1), *axes["X"], *axes["Y"])
    raise GeteventError("getevent -p lists no touchscreen with ABS_MT_POSITION_X/Y (is this a multi-touch phone?)")


@dataclass
class Gesture:
    """Each finger's track as (t_seconds, raw_x, raw_y), in the order fingers went down."""

    tracks: list[list[tuple[float, int, int]]] = field(default_factory=list)
    lifted: float | None = None  # when the last finger went up

    @property
    def start(self) -> float:
        return self.tracks[0][0][0]

    @property
    def end(self) -> float:
        return self.lifted if self.lifted is not None else max(t[-1][0] for t in self.tracks)


@dataclass(frozen=True)
class KeyPress:
    key: str
    t: float


class Tracker:
    """Feeds ``getevent -lt`` lines; ``feed`` returns the gestures and key presses completed by each line."""

    def __init__(self, axes: Axes) -> None:
        self.axes = axes
        self.slot = 0
        self.active: dict[int, list[tuple[float, int, int]]] = {}  # slot -> track
        self.pos: dict[int, list[int | None]] = {}
        self.gesture: Gesture | None = None
        self.dirty: set[int] = set()

    @property
    def touching(self) -> bool:
        return self.gesture is not None

    def feed(self, line: str) -> list[Gesture | KeyPress]:
        m = _LINE.match(line.strip())
        if m is None:
            return []
        sec, usec, dev, typ, code, value = m.groups()
        t = int(sec) + int(usec) / 1e6
        if typ == "EV_KEY" and code in KEYS:
            return [KeyPress(KEYS[code], t)] if value == "UP" else []
        if dev != self.axes.device:
            return []
        if typ == "EV_ABS":
            return self._abs(code, value)
        if typ == "EV_SYN" and code == "SYN_REPORT":
            return self._sync(t)
        return []

    def _abs(self, code: str, value: str) -> list:
        v = int(value, 16)
        if code == "ABS_MT_SLOT":
            self.slot = v
        elif code == "ABS_MT_TRACKING_ID":
            if v == 0xFFFFFFFF:
                self.pos.pop(self.slot, None)
                self.active.pop(self.slot, None)
            else:
                self.pos[self.slot] = [None, None]
                self.active[self.slot] = []
                if self.gesture is None:
                    self.gesture = Gesture()
                self.gesture.tracks.append(self.active[self.slot])
        elif code in ("ABS_MT_POSITION_X", "ABS_MT_POSITION_Y") and self.slot in self.pos:
            self.pos[self.slot][code[-1] == "Y"] = v
            self.dirty.add(self.slot)
        return []

    def _sync(self, t: float) -> list:
        for slot in self.dirty:
            x, y = self.pos.get(slot, (None, None))
            if x is not None and y is not None and slot in self.active:
                self.active[slot].append((t, x, y))
        self.dirty.clear()
        if self.gesture is not None and not self.active:
            done, self.gesture = self.gesture, None
            done.lifted = t
            done.tracks = [tr for tr in done.tracks if tr]
            return [done] if done.tracks else []
        return []


def classify(g: Gesture, axes: Axes, elements: list[UIElement], width: int, height: int, dpi: int,
             rotation: int = 0) -> Action:
    """The action a (first-finger) gesture performed, judged on the tree shown before it began."""
    track = g.tracks[0]
    (t0, rx0, ry0), (_, rx1, ry1) = track[0], track[-1]
    x0, y0 = axes.to_screen(rx0, ry0, width, height, rotation)
    far = max(track, key=lambda p: abs(p[1] - rx0) + abs(p[2] - ry0))
    xf, yf = axes.to_screen(far[1], far[2], width, height, rotation)
    x1, y1 = axes.to_screen(rx1, ry1, width, height, rotation)
    ms = int(round((g.end - t0) * 1000))
    x0, y0, x1, y1 = (min(max(int(round(v)), 0), lim - 1) for v, lim in ((x0, width), (y0, height), (x1, width),
                                                                          (y1, height)))
    slop = SLOP_DP * dpi / 160
    if abs(xf - x0) < slop and abs(yf - y0) < slop:
        if ms >= LONG_PRESS_MS:
            return Action("long_press", x=x0, y=y0, duration_ms=ms, element=_target(elements, x0, y0))
        return Action("tap", x=x0, y=y0, element=_target(elements, x0, y0))
    dx, dy = x1 - x0, y1 - y0
    scroller = next((e for e in reversed(elements) if e.scrollable and e.contains(x0, y0)), None)
    if scroller is not None and max(abs(dx), abs(dy)) >= 3 * min(abs(dx), abs(dy)):
        direction = ("down" if dy < 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx < 0 else "left")
        return Action("scroll", direction=direction, x=x0, y=y0, element=scroller.as_target())
    return Action("swipe", x=x0, y=y0, x2=x1, y2=y1, duration_ms=ms)


def _target(elements: list[UIElement], x: int, y: int):
    el = element_at(elements, x, y)
    return el.as_target() if el is not None else None

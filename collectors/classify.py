"""Gestures to actions, as the phone meant them: taps, presses, swipes, scrolls, navigation, multi-touch.

``classify(gesture, screen)`` judges one gesture on the screen shown before it began
(``Screen``: rotated size, density, rotation, navigation mode, the UI tree's elements):

* one finger that stays within 8 dp: ``tap`` (``long_press`` when held >= 500 ms);
  a tap on the nav bar's Back / Home / Overview button (3-button navigation, found by
  the SystemUI nav bar's bounds in the tree) is ``key back|home|app_switch``;
* gesture navigation (``navigation_mode`` 2): a swipe inward from the left or right edge
  (within 24 dp) is ``key back``; a swipe up from the bottom edge is ``key home``, or
  ``key app_switch`` when the finger holds still >= 250 ms before lifting (swipe up and hold);
* a drag that starts inside a scrollable element and moves mostly along one axis is a
  ``scroll`` (``direction`` is where the content comes from); any other drag is a ``swipe``;
* two or more fingers down together: ``tool(name="multi_touch")`` with ``kind`` pinch_in,
  pinch_out or multi_touch and each finger's path in pixels, flagged ``multi_touch`` so
  curation can filter it; never a (wrong) single-finger swipe.

The recorder joins two taps within ``DOUBLE_TAP_MS`` and ``DOUBLE_TAP_SLOP_DP`` on the same
screen into ``double_tap`` (Android's DOUBLE_TAP_TIMEOUT and double-tap slop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.gestures import Axes, Gesture
from datalake.types import Action
from datalake.uitree import UIElement, element_at

LONG_PRESS_MS = 500
SLOP_DP = 8
EDGE_DP = 24
HOLD_MS = 250
DOUBLE_TAP_MS = 300
DOUBLE_TAP_SLOP_DP = 100
NAV_BUTTONS = {"back": "back", "home": "home", "recent_apps": "app_switch"}
SYSTEMUI = "com.android.systemui"
NAV_MODES = {"0": "3button", "1": "2button", "2": "gestural"}


@dataclass
class Screen:
    """What a gesture is judged against: the screen as shown (rotated size) and its tree."""

    width: int
    height: int
    dpi: int
    rotation: int = 0
    nav_mode: str = "3button"
    elements: list[UIElement] = field(default_factory=list)

    def dp(self, value: float) -> float:
        return value * self.dpi / 160


def _points(track, axes: Axes, s: Screen) -> list[tuple[float, int, int]]:
    out = []
    for t, rx, ry in track:
        x, y = axes.to_screen(rx, ry, s.width, s.height, s.rotation)
        out.append((t, min(max(int(round(x)), 0), s.width - 1), min(max(int(round(y)), 0), s.height - 1)))
    return out


def classify(g: Gesture, axes: Axes, s: Screen) -> tuple[Action, list[str]]:
    """The action ``g`` performed, and flags (``multi_touch``) for curation."""
    if g.fingers >= 2 and _overlap(g):
        return _multi(g, axes, s), ["multi_touch"]
    pts = _points(g.tracks[0], axes, s)
    (t0, x0, y0), (_, x1, y1) = pts[0], pts[-1]
    far = max(pts, key=lambda p: abs(p[1] - x0) + abs(p[2] - y0))
    end = g.ends[0] if g.ends else g.end
    ms = int(round((end - t0) * 1000))
    if abs(far[1] - x0) < s.dp(SLOP_DP) and abs(far[2] - y0) < s.dp(SLOP_DP):
        nav = _nav_button(s.elements, x0, y0) if s.nav_mode != "gestural" else None
        if nav is not None and ms < LONG_PRESS_MS:
            return Action("key", key=nav), []
        if ms >= LONG_PRESS_MS:
            return Action("long_press", x=x0, y=y0, duration_ms=ms, element=_target(s.elements, x0, y0)), []
        return Action("tap", x=x0, y=y0, element=_target(s.elements, x0, y0)), []
    if s.nav_mode == "gestural":
        key = _nav_gesture(pts, end, s)
        if key is not None:
            return Action("key", key=key), []
    dx, dy = x1 - x0, y1 - y0
    scroller = next((e for e in reversed(s.elements) if e.scrollable and e.contains(x0, y0)), None)
    if scroller is not None and max(abs(dx), abs(dy)) >= 3 * min(abs(dx), abs(dy)):
        direction = ("down" if dy < 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx < 0 else "left")
        return Action("scroll", direction=direction, x=x0, y=y0, element=scroller.as_target()), []
    return Action("swipe", x=x0, y=y0, x2=x1, y2=y1, duration_ms=ms), []


def _overlap(g: Gesture) -> bool:
    """Whether at least two fingers were down at the same time (not two quick taps in one gesture)."""
    spans = sorted((tr[0][0], end) for tr, end in zip(g.tracks, g.ends))
    return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))


def _multi(g: Gesture, axes: Axes, s: Screen) -> Action:
    paths = [[[x, y] for _, x, y in _points(tr, axes, s)] for tr in g.tracks]
    kind = "multi_touch"
    if len(paths) == 2:
        def dist(i: int) -> float:
            (ax, ay), (bx, by) = paths[0][i], paths[1][i]
            return ((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5
        before, after = dist(0), dist(-1)
        if abs(after - before) >= s.dp(2 * SLOP_DP):
            kind = "pinch_out" if after > before else "pinch_in"
    ms = int(round((g.end - g.start) * 1000))
    return Action("tool", name="multi_touch", args={"kind": kind, "fingers": paths, "duration_ms": ms})


def _nav_button(elements: list[UIElement], x: int, y: int) -> str | None:
    for e in elements:
        rid = (e.resource_id or "").rsplit("/", 1)[-1]
        if rid in NAV_BUTTONS and (e.package or SYSTEMUI) == SYSTEMUI and e.contains(x, y):
            return NAV_BUTTONS[rid]
    return None


def _nav_gesture(pts: list[tuple[float, int, int]], end: float, s: Screen) -> str | None:
    (_, x0, y0), (t1, x1, y1) = pts[0], pts[-1]
    edge, dx, dy = s.dp(EDGE_DP), x1 - x0, y1 - y0
    if (x0 <= edge and dx >= 3 * edge) or (x0 >= s.width - 1 - edge and -dx >= 3 * edge):
        if abs(dx) >= abs(dy):
            return "back"
    if y0 >= s.height - 1 - edge and -dy >= 3 * edge and abs(dy) >= abs(dx):
        still_since = next((t for t, x, y in reversed(pts) if abs(x - x1) + abs(y - y1) > s.dp(SLOP_DP)), pts[0][0])
        return "app_switch" if (end - still_since) * 1000 >= HOLD_MS else "home"
    return None


def _target(elements: list[UIElement], x: int, y: int):
    el = element_at(elements, x, y)
    return el.as_target() if el is not None else None

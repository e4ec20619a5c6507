"""Raw input events for virtual devices: ``getevent -p`` descriptions and ``-lt`` lines for gestures.

The touchscreen reports multi-touch protocol B (slots, tracking ids) with axes
0..4095, not screen pixels, so clients must scale with the ranges ``getevent -p``
prints, as on real phones. Keys come from a separate ``gpio-keys`` device.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.tasks.oracle import UI

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

TOUCH_DEV = "/dev/input/event2"
KEY_DEV = "/dev/input/event0"
AXIS_MAX = 4095
ABS = [("ABS_MT_SLOT", 0x2F, 9), ("ABS_MT_TOUCH_MAJOR", 0x30, 255), ("ABS_MT_POSITION_X", 0x35, AXIS_MAX),
       ("ABS_MT_POSITION_Y", 0x36, AXIS_MAX), ("ABS_MT_TRACKING_ID", 0x39, 65535), ("ABS_MT_PRESSURE", 0x3A, 255)]
KEYS = {"back": ("KEY_BACK", 0x9E), "home": ("KEY_HOMEPAGE", 0xAC), "enter": ("KEY_ENTER", 0x1C),
        "app_switch": ("KEY_APPSELECT", 0x244)}
TAP_MS, LONG_PRESS_MS, SWIPE_MS, FRAME_MS, GAP_MS = 60, 800, 300, 16, 400


def _scroll_path(phone: MockPhone, a: Action) -> tuple[float, float, float, float]:
    """A finger path that scrolls ``a.direction``: 60% of the list under the point (or the first list)."""
    els = [e for e in UI(phone).elements() if e.scrollable]
    el = next((e for e in els if a.x is not None and e.contains(a.x, a.y)), els[0] if els else None)
    x1, y1, x2, y2 = el.bounds if el is not None else (0, 0, phone.display.width, phone.display.height)
    cx, cy, h, w = (x1 + x2) // 2, (y1 + y2) // 2, (y2 - y1) * 0.3, (x2 - x1) * 0.3
    dx, dy = {"down": (0, -h), "up": (0, h), "right": (-w, 0), "left": (w, 0)}[a.direction]
    return cx - dx, cy - dy, cx + dx, cy + dy


def humanize(phone: MockPhone, a: Action) -> Iterator[Action]:
    """The actions a person's fingers perform for ``a`` (lazy: each sees the screen the last one left)."""
    if a.type == "open_app":
        yield Action("key", key="home")
        label = phone.app(a.app).label
        icon = next((e for e in UI(phone).elements() if e.text == label and e.clickable), None)
        if icon is None:
            yield a
            return
        x, y = icon.center
        yield Action("tap", x=x, y=y)
    elif a.type == "input_text" and a.x is not None:
        yield Action("tap", x=a.x, y=a.y)
        yield Action("input_text", text=a.text, clear=a.clear)
    elif a.type == "scroll":
        x, y, _, _ = _scroll_path(phone, a)
        yield Action("scroll", direction=a.direction, x=int(x), y=int(y))
    elif a.type in ("tap", "long_press", "swipe", "double_tap"):
        yield Action.from_dict({k: v for k, v in a.to_dict().items() if k != "element"})
    else:
        yield a


class TouchPanel:
    """Turns gestures into event lines, with a virtual monotonic clock."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.t_us = 1_000_000_000
        self.tracking_id = 0

    def describe(self, labels: bool) -> str:
        def name(label: str, code: int) -> str:
            return f"{label:<20}" if labels else f"{code:04x}"

        axes = "\n".join(
            ("    ABS (0003): " if i == 0 else "                ") + f"{name(n, c)}  : value 0, min 0, max {mx}, "
            "fuzz 0, flat 0, resolution 0" for i, (n, c, mx) in enumerate(ABS))
        keys = "  ".join(name(n, c).strip() for n, c in KEYS.values())
        return (f"add device 1: {TOUCH_DEV}\n  name:     \"phoneloop-touchscreen\"\n  events:\n"
                f"    KEY (0001): {name('BTN_TOUCH', 0x14A).strip()}\n{axes}\n  input props:\n    INPUT_PROP_DIRECT\n"
                f"add device 2: {KEY_DEV}\n  name:     \"gpio-keys\"\n  events:\n    KEY (0001): {keys}\n"
                f"  input props:\n    <none>\n")

    def _raw(self, x: float, y: float) -> tuple[int, int]:
        return (min(AXIS_MAX, max(0, round(x * (AXIS_MAX + 1) / self.width))),
                min(AXIS_MAX, max(0, round(y * (AXIS_MAX + 1) / self.height))))

    def _line(self, dev: str, typ: str, code: str, value: str) -> str:
        s, us = divmod(self.t_us, 1_000_000)
        return f"[{s:8d}.{us:06d}] {dev}: {typ:<12} {code:<20} {value}"

    def _touch(self, path: list[tuple[float, float]], duration_ms: int) -> list[str]:
        self.tracking_id += 1
        out: list[str] = []
        frame_us = duration_ms * 1000 // max(1, len(path) - 1) if len(path) > 1 else 0
        for i, (x, y) in enumerate(path):
            rx, ry = self._raw(x, y)
            if i == 0:
                out += [self._line(TOUCH_DEV, "EV_ABS", "ABS_MT_SLOT", "00000000"),
                        self._line(TOUCH_DEV, "EV_ABS", "ABS_MT_TRACKING_ID", f"{self.tracking_id:08x}"),
                        self._line(TOUCH_DEV, "EV_KEY", "BTN_TOUCH", "DOWN")]
            else:
                self.t_us += frame_us
            out += [self._line(TOUCH_DEV, "EV_ABS", "ABS_MT_POSITION_X", f"{rx:08x}"),
                    self._line(TOUCH_DEV, "EV_ABS", "ABS_MT_POSITION_Y", f"{ry:08x}"),
                    self._line(TOUCH_DEV, "EV_ABS", "ABS_MT_PRESSURE", "00000040"),
                    self._line(TOUCH_DEV, "EV_SYN", "SYN_REPORT", "00000000")]
        if len(path) == 1:
            self.t_us += duration_ms * 1000
        out += [self._line(TOUCH_DEV, "EV_ABS", "ABS_MT_TRACKING_ID", "ffffffff"),
                self._line(TOUCH_DEV, "EV_KEY", "BTN_TOUCH", "UP"),
                self._line(TOUCH_DEV, "EV_SYN", "SYN_REPORT", "00000000")]
        self.t_us += GAP_MS * 1000
        return out

    def lines(self, a: Action, phone: MockPhone) -> list[str]:
        """The ``getevent -lt`` lines of one human-level action (none for typing, waits, answers)."""
        if a.type == "tap":
            return self._touch([(a.x, a.y)], TAP_MS)
        if a.type == "double_tap":
            return self._touch([(a.x, a.y)], TAP_MS) + self._touch([(a.x, a.y)], TAP_MS)
        if a.type == "long_press":
            return self._touch([(a.x, a.y)], a.duration_ms or LONG_PRESS_MS)
        if a.type in ("swipe", "scroll"):
            x, y, x2, y2 = (a.x, a.y, a.x2, a.y2) if a.type == "swipe" else _scroll_path(phone, a)
            ms = a.duration_ms or SWIPE_MS
            n = max(2, ms // FRAME_MS)
            return self._touch([(x + (x2 - x) * i / n, y + (y2 - y) * i / n) for i in range(n + 1)], ms)
        if a.type == "key":
            label, _ = KEYS[a.key]
            out = [self._line(KEY_DEV, "EV_KEY", label, "DOWN"), self._line(KEY_DEV, "EV_SYN", "SYN_REPORT", "00000000")]
            self.t_us += TAP_MS * 1000
            out += [self._line(KEY_DEV, "EV_KEY", label, "UP"), self._line(KEY_DEV, "EV_SYN", "SYN_REPORT", "00000000")]
            self.t_us += GAP_MS * 1000
            return out
        return []

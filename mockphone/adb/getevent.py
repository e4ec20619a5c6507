"""Raw input events for virtual devices, emitted the way Linux kernels emit them.

``TouchPanel`` describes a touchscreen for ``getevent -p`` and turns finger paths into
``getevent -lt`` lines. Axes are raw panel units (0..4095) in the panel's *natural*
orientation, never screen pixels, so clients must scale with ``getevent -p``'s ranges and
apply the display rotation. Protocols:

* ``B`` (most phones): slots and tracking ids; the input core drops an ABS value equal to
  the slot's current one, so unchanged axes are omitted, also for a new contact in a slot;
* ``A`` (old panels): every frame lists every contact, each closed by ``SYN_MT_REPORT``;
  lifting all fingers is ``BTN_TOUCH UP`` + an empty frame;
* ``single``: ``ABS_X``/``ABS_Y`` + ``BTN_TOUCH`` (unchanged axes omitted too).

Timestamps come from ``clock`` (device seconds; the virtual device passes its uptime, so
events carry real times) or a virtual counter. Key lines come from ``gpio-keys`` (power,
volume) or, for phones with capacitive keys, ``touch-keys`` (back, home, recents).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from datalake.types import Action
from mockphone.tasks.oracle import UI

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

TOUCH_DEV = "/dev/input/event2"
KEY_DEV = "/dev/input/event0"
TOUCHKEY_DEV = "/dev/input/event1"
AXIS_MAX = 4095
ABS_B = [("ABS_MT_SLOT", 0x2F, 9), ("ABS_MT_TOUCH_MAJOR", 0x30, 255), ("ABS_MT_POSITION_X", 0x35, AXIS_MAX),
         ("ABS_MT_POSITION_Y", 0x36, AXIS_MAX), ("ABS_MT_TRACKING_ID", 0x39, 65535), ("ABS_MT_PRESSURE", 0x3A, 255)]
ABS_A = [("ABS_MT_TOUCH_MAJOR", 0x30, 255), ("ABS_MT_POSITION_X", 0x35, AXIS_MAX),
         ("ABS_MT_POSITION_Y", 0x36, AXIS_MAX)]
ABS_SINGLE = [("ABS_X", 0x00, AXIS_MAX), ("ABS_Y", 0x01, AXIS_MAX), ("ABS_PRESSURE", 0x18, 255)]
KEYS = {"back": ("KEY_BACK", 0x9E), "home": ("KEY_HOMEPAGE", 0xAC), "enter": ("KEY_ENTER", 0x1C),
        "app_switch": ("KEY_APPSELECT", 0x244)}
GPIO_KEYS = [("KEY_VOLUMEDOWN", 0x72), ("KEY_VOLUMEUP", 0x73), ("KEY_POWER", 0x74), ("KEY_ENTER", 0x1C)]
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


def line_path(x: float, y: float, x2: float, y2: float, ms: int, hold_ms: int = 0) -> list[tuple[float, float]]:
    """One point per 16 ms frame from (x, y) to (x2, y2), then ``hold_ms`` standing still."""
    n = max(2, ms // FRAME_MS)
    return [(x + (x2 - x) * i / n, y + (y2 - y) * i / n) for i in range(n + 1)] + [(x2, y2)] * (hold_ms // FRAME_MS)


def restamp_lift(lines: list[str], now_us: int) -> list[str]:
    """``lines`` with the last moment's lines (the lift) stamped ``now_us`` if that is later: the kernel
    stamps a lift when the finger leaves the glass, and a host woken late from the gesture's sleep means
    the finger stayed down longer (the screen changes only at the lift)."""
    if not lines:
        return lines
    last = lines[-1][:18]
    s, us = divmod(now_us, 1_000_000)
    stamp = f"[{s:8d}.{us:06d}]"
    if stamp <= last[:17]:
        return lines
    return [stamp + line[17:] if line.startswith(last) else line for line in lines]


class TouchPanel:
    """Finger paths (screen pixels, rotated) to kernel event lines for one touchscreen."""

    def __init__(self, width: int, height: int, protocol: str = "B",
                 clock: Callable[[], float] | None = None) -> None:
        if protocol not in ("A", "B", "single"):
            raise ValueError(f"touch protocol must be A, B or single, not {protocol!r}")
        self.width, self.height = width, height  # natural (portrait) size in pixels
        self.protocol = protocol
        self.clock = clock
        self.t_us = 1_000_000_000
        self.tracking_id = 0
        self._kernel: dict[tuple[int, str], int] = {}  # (slot, axis) -> value the input core holds

    def describe(self, labels: bool) -> str:
        def name(label: str, code: int) -> str:
            return f"{label:<20}" if labels else f"{code:04x}"

        table = {"A": ABS_A, "B": ABS_B, "single": ABS_SINGLE}[self.protocol]
        axes = "\n".join(
            ("    ABS (0003): " if i == 0 else "                ") + f"{name(n, c)}  : value 0, min 0, max {mx}, "
            "fuzz 0, flat 0, resolution 0" for i, (n, c, mx) in enumerate(table))

        def keys(pairs) -> str:
            return "  ".join(name(n, c).strip() for n, c in pairs)

        touchkeys = [KEYS[k] for k in ("back", "home", "app_switch")]
        return (f"add device 1: {TOUCH_DEV}\n  name:     \"phoneloop-touchscreen\"\n  events:\n"
                f"    KEY (0001): {name('BTN_TOUCH', 0x14A).strip()}\n{axes}\n  input props:\n    INPUT_PROP_DIRECT\n"
                f"add device 2: {KEY_DEV}\n  name:     \"gpio-keys\"\n  events:\n    KEY (0001): {keys(GPIO_KEYS)}\n"
                f"  input props:\n    <none>\n"
                f"add device 3: {TOUCHKEY_DEV}\n  name:     \"touch-keys\"\n  events:\n"
                f"    KEY (0001): {keys(touchkeys)}\n  input props:\n    <none>\n")

    # --- time and coordinates ---------------------------------------------------------------
    def now_us(self) -> int:
        return int(round(self.clock() * 1e6)) if self.clock is not None else self.t_us

    def _raw(self, x: float, y: float, rotation: int) -> tuple[int, int]:
        """Screen pixels (display rotated by ``rotation``) to raw axes in the natural orientation."""
        w, h = self.width, self.height  # natural
        nx, ny = {0: (x, y), 1: (w - y, x), 2: (w - x, h - y), 3: (y, h - x)}[rotation % 4]
        return (min(AXIS_MAX, max(0, int(nx * (AXIS_MAX + 1) / w))), min(AXIS_MAX, max(0, int(ny * (AXIS_MAX + 1) / h))))

    def _line(self, t_us: int, dev: str, typ: str, code: str, value: str) -> str:
        s, us = divmod(t_us, 1_000_000)
        return f"[{s:8d}.{us:06d}] {dev}: {typ:<12} {code:<20} {value}"

    # --- fingers -----------------------------------------------------------------------------
    def touch(self, paths: list[list[tuple[float, float]]], duration_ms: int,
              rotation: int = 0) -> tuple[list[str], int]:
        """Lines for fingers following ``paths`` (one point per frame) over ``duration_ms``; (lines, µs spent)."""
        t0 = self.now_us()
        frames = max(len(p) for p in paths)
        frame_us = duration_ms * 1000 // max(1, frames - 1) if frames > 1 else duration_ms * 1000
        ids = []
        for _ in paths:
            self.tracking_id += 1
            ids.append(self.tracking_id)
        out: list[str] = []
        down: set[int] = set()
        for f in range(frames + 1):
            t = t0 + f * frame_us
            if f == frames:  # every finger lifts
                out += self._lift(t, list(down))
                break
            points = {i: self._raw(*p[min(f, len(p) - 1)], rotation) for i, p in enumerate(paths)}
            out += self._frame(t, points, ids, down)
            down |= set(points)
        if self.clock is None:
            self.t_us = t0 + frames * frame_us + GAP_MS * 1000
        return out, frames * frame_us

    def _frame(self, t: int, points: dict[int, tuple[int, int]], ids: list[int], down: set[int]) -> list[str]:
        ev, out = TOUCH_DEV, []
        first = not down and points
        if self.protocol == "A":
            for rx, ry in points.values():
                out += [self._line(t, ev, "EV_ABS", "ABS_MT_POSITION_X", f"{rx:08x}"),
                        self._line(t, ev, "EV_ABS", "ABS_MT_POSITION_Y", f"{ry:08x}"),
                        self._line(t, ev, "EV_SYN", "SYN_MT_REPORT", "00000000")]
        else:
            for slot, (rx, ry) in points.items():
                if self.protocol == "B" and self._kernel.get((-1, "slot"), 0) != slot:
                    out.append(self._line(t, ev, "EV_ABS", "ABS_MT_SLOT", f"{slot:08x}"))
                    self._kernel[(-1, "slot")] = slot
                if self.protocol == "B":
                    if slot not in down:
                        out.append(self._line(t, ev, "EV_ABS", "ABS_MT_TRACKING_ID", f"{ids[slot]:08x}"))
                names = ("ABS_MT_POSITION_X", "ABS_MT_POSITION_Y", "ABS_MT_PRESSURE") if self.protocol == "B" else \
                    ("ABS_X", "ABS_Y", "ABS_PRESSURE")
                for axis, value in zip(names, (rx, ry, 0x40)):
                    if self._kernel.get((slot, axis)) != value:  # the input core drops unchanged values
                        out.append(self._line(t, ev, "EV_ABS", axis, f"{value:08x}"))
                        self._kernel[(slot, axis)] = value
        if first:
            out.append(self._line(t, ev, "EV_KEY", "BTN_TOUCH", "DOWN"))
        if out:
            out.append(self._line(t, ev, "EV_SYN", "SYN_REPORT", "00000000"))
        return out

    def _lift(self, t: int, slots: list[int]) -> list[str]:
        ev, out = TOUCH_DEV, []
        if self.protocol == "B":
            for slot in sorted(slots):
                if self._kernel.get((-1, "slot"), 0) != slot:
                    out.append(self._line(t, ev, "EV_ABS", "ABS_MT_SLOT", f"{slot:08x}"))
                    self._kernel[(-1, "slot")] = slot
                out.append(self._line(t, ev, "EV_ABS", "ABS_MT_TRACKING_ID", "ffffffff"))
        out.append(self._line(t, ev, "EV_KEY", "BTN_TOUCH", "UP"))
        if self.protocol == "A":
            out.append(self._line(t, ev, "EV_SYN", "SYN_MT_REPORT", "00000000"))
        out.append(self._line(t, ev, "EV_SYN", "SYN_REPORT", "00000000"))
        return out

    def key(self, key: str, dev: str = TOUCHKEY_DEV) -> tuple[list[str], int]:
        label, _ = KEYS[key]
        t = self.now_us()
        out = [self._line(t, dev, "EV_KEY", label, "DOWN"), self._line(t, dev, "EV_SYN", "SYN_REPORT", "00000000"),
               self._line(t + TAP_MS * 1000, dev, "EV_KEY", label, "UP"),
               self._line(t + TAP_MS * 1000, dev, "EV_SYN", "SYN_REPORT", "00000000")]
        if self.clock is None:
            self.t_us = t + (TAP_MS + GAP_MS) * 1000
        return out, TAP_MS * 1000

    def lines(self, a: Action, phone: MockPhone | None, rotation: int = 0) -> list[str]:
        """The ``getevent -lt`` lines of one human-level action (none for typing, waits, answers)."""
        return self.gesture(a, phone, rotation)[0]

    def gesture(self, a: Action, phone: MockPhone | None, rotation: int = 0) -> tuple[list[str], int]:
        """(lines, µs the gesture takes) for one human-level action; keys come from ``touch-keys``."""
        if a.type in ("tap", "long_press"):
            ms = TAP_MS if a.type == "tap" else a.duration_ms or LONG_PRESS_MS
            return self.touch([[(a.x, a.y)]], ms, rotation)
        if a.type == "double_tap":
            first, us1 = self.touch([[(a.x, a.y)]], TAP_MS, rotation)
            if self.clock is None:
                self.t_us -= (GAP_MS - 120) * 1000
                second, us2 = self.touch([[(a.x, a.y)]], TAP_MS, rotation)
                return first + second, us1 + us2 + 120_000
            return first, us1  # with a real clock the device performs the second tap itself
        if a.type in ("swipe", "scroll"):
            x, y, x2, y2 = (a.x, a.y, a.x2, a.y2) if a.type == "swipe" else _scroll_path(phone, a)
            ms = a.duration_ms or SWIPE_MS
            return self.touch([line_path(x, y, x2, y2, ms)], ms, rotation)
        if a.type == "key":
            return self.key(a.key, KEY_DEV if a.key == "enter" else TOUCHKEY_DEV)
        return [], 0

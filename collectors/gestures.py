"""From raw ``getevent`` lines to finger tracks, the way Linux kernels actually send them.

``panels(getevent -lp output)`` reads every input device: the touchscreen (multi-touch
protocol B with ``ABS_MT_SLOT``, protocol A with ``SYN_MT_REPORT``, or a single-touch
``ABS_X``/``ABS_Y`` + ``BTN_TOUCH`` panel) and its raw axis ranges. ``Tracker`` consumes
``getevent -lt`` (or ``-t``, hex codes) lines and returns completed ``Gesture`` and
``KeyPress`` objects:

* protocol B: per-slot state persists across frames and contacts; the kernel omits an
  axis whose value did not change for that slot (also when a new contact starts there),
  so a missing axis means "same as before", never "no touch";
* protocol A: each frame lists all contacts, each closed by ``SYN_MT_REPORT``; contacts
  are matched to tracks by nearest position, an empty frame (or ``BTN_TOUCH UP``) lifts all;
* single-touch: ``ABS_X``/``ABS_Y`` with ``BTN_TOUCH DOWN/UP``;
* a gesture starts when the first finger goes down and ends when the last one lifts;
  several fingers make one multi-finger gesture;
* unreadable lines are counted (``garbage``) and kept as examples, never fatal.

``Axes.to_screen`` maps raw values to pixels of the *rotated* screen (natural
orientation first, then the display rotation, as Android's InputReader does).
Classification into actions lives in ``collectors.classify``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LINE = re.compile(r"^\[\s*(\d+)\.(\d+)\]\s+(\S+):\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_DEVICE = re.compile(r"add device \d+: (\S+)")
_ABS = re.compile(r"(ABS_[A-Z_]+|00[0-3][0-9a-f])\s*:\s*value -?\d+, min (-?\d+), max (-?\d+)")
EV_TYPES = {"0000": "EV_SYN", "0001": "EV_KEY", "0003": "EV_ABS"}
CODES = {"EV_SYN": {"0000": "SYN_REPORT", "0002": "SYN_MT_REPORT"},
         "EV_KEY": {"014a": "BTN_TOUCH", "009e": "KEY_BACK", "00ac": "KEY_HOMEPAGE", "0066": "KEY_HOME",
                    "001c": "KEY_ENTER", "0244": "KEY_APPSELECT", "00d9": "KEY_SEARCH", "0074": "KEY_POWER",
                    "0072": "KEY_VOLUMEDOWN", "0073": "KEY_VOLUMEUP", "008b": "KEY_MENU"},
         "EV_ABS": {"0000": "ABS_X", "0001": "ABS_Y", "002f": "ABS_MT_SLOT", "0035": "ABS_MT_POSITION_X",
                    "0036": "ABS_MT_POSITION_Y", "0039": "ABS_MT_TRACKING_ID"}}
KEYS = {"KEY_BACK": "back", "KEY_HOMEPAGE": "home", "KEY_HOME": "home", "KEY_ENTER": "enter",
        "KEY_APPSELECT": "app_switch"}
NO_CONTACT = 0xFFFFFFFF


class GeteventError(ValueError):
    """``getevent -p`` shows no touchscreen."""


@dataclass(frozen=True)
class Axes:
    """A touchscreen: its device node, protocol (``B``, ``A`` or ``single``) and raw X/Y ranges."""

    device: str
    x_min: int
    x_max: int
    y_min: int
    y_max: int
    protocol: str = "B"

    def to_screen(self, rx: int, ry: int, width: int, height: int, rotation: int = 0) -> tuple[float, float]:
        """Raw panel values to pixels of the screen as shown (``width`` x ``height`` already rotated)."""
        nw, nh = (width, height) if rotation % 2 == 0 else (height, width)
        nx = (rx - self.x_min) * nw / (self.x_max - self.x_min + 1)
        ny = (ry - self.y_min) * nh / (self.y_max - self.y_min + 1)
        return {0: (nx, ny), 1: (ny, nw - nx), 2: (nw - nx, nh - ny), 3: (nh - ny, nx)}[rotation % 4]


def touch_axes(text: str) -> Axes:
    """The touchscreen's device path, protocol and X/Y ranges from ``getevent -p`` or ``-lp`` output."""
    for block in re.split(r"(?=add device )", text):
        m = _DEVICE.search(block)
        ranges = {_abs_name(name): (int(lo), int(hi)) for name, lo, hi in _ABS.findall(block)}
        if m is None:
            continue
        if "ABS_MT_POSITION_X" in ranges and "ABS_MT_POSITION_Y" in ranges:
            protocol = "B" if "ABS_MT_SLOT" in ranges else "A"
            return Axes(m.group(1), *ranges["ABS_MT_POSITION_X"], *ranges["ABS_MT_POSITION_Y"], protocol=protocol)
        if "ABS_X" in ranges and "ABS_Y" in ranges and ("BTN_TOUCH" in block or "014a" in block):
            return Axes(m.group(1), *ranges["ABS_X"], *ranges["ABS_Y"], protocol="single")
    raise GeteventError("getevent -p lists no touchscreen (no device with ABS_MT_POSITION_X/Y, or ABS_X/Y and "
                        "BTN_TOUCH): is the phone's touch panel hidden from adb?")


def _abs_name(name: str) -> str:
    return name if name.startswith("ABS") else CODES["EV_ABS"].get(name, name)


@dataclass
class Gesture:
    """Each finger's track as (t_seconds, raw_x, raw_y), in the order fingers went down."""

    tracks: list[list[tuple[float, int, int]]] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)  # when each finger lifted
    lifted: float | None = None  # when the last finger lifted

    @property
    def start(self) -> float:
        return self.tracks[0][0][0]

    @property
    def end(self) -> float:
        return self.lifted if self.lifted is not None else max(t[-1][0] for t in self.tracks)

    @property
    def fingers(self) -> int:
        return len(self.tracks)


@dataclass(frozen=True)
class KeyPress:
    key: str  # an Action key (back, home, enter, app_switch) or the raw KEY_* name for others
    t: float
    down: float


@dataclass(frozen=True)
class PanelState:
    """What a touch panel reported last and will not report again until it changes: the kernel drops an
    unchanged axis, also for a new contact, so a finger put down where the last one lifted sends no
    position. ``Tracker.state()`` gives it at the end of a recording; a recorder on the same panel
    started with it (the next take) knows where that finger is."""

    slot: int = 0
    positions: tuple[tuple[int, int | None, int | None], ...] = ()  # (slot, raw x, raw y)


@dataclass
class _Slot:
    tracking: int = -1
    x: int | None = None
    y: int | None = None
    track: list | None = None
    changed: bool = False


class Tracker:
    """Feeds ``getevent -lt`` lines; ``feed`` returns what each line completed."""

    def __init__(self, axes: Axes, state: PanelState | None = None) -> None:
        self.axes = axes
        self.slot = 0
        self.slots: dict[int, _Slot] = {}
        if state is not None and axes.protocol != "A":  # protocol A repeats every position in every frame
            self.slot = state.slot
            self.slots = {k: _Slot(x=x, y=y) for k, x, y in state.positions}
        self.gesture: Gesture | None = None
        self.garbage = 0
        self.garbage_examples: list[str] = []
        self.last_t: float | None = None
        self._frame: list[tuple[int | None, int | None]] = []  # protocol A: contacts of the current frame
        self._contact: list[int | None] = [None, None]
        self._keys_down: dict[str, float] = {}
        self._touch_down = False

    @property
    def touching(self) -> bool:
        return self.gesture is not None

    def state(self) -> PanelState:
        """The panel's last reported slot and positions (see ``PanelState``)."""
        return PanelState(self.slot, tuple((k, s.x, s.y) for k, s in sorted(self.slots.items())))

    def feed(self, line: str) -> list[Gesture | KeyPress]:
        parsed = parse_line(line)
        if parsed is None:
            if line.strip() and not line.startswith(("add device", "  ", "could not get driver")):
                self.garbage += 1
                if len(self.garbage_examples) < 3:
                    self.garbage_examples.append(line.strip()[:120])
            return []
        t, dev, typ, code, value = parsed
        self.last_t = t
        if typ == "EV_KEY" and code != "BTN_TOUCH" and code.startswith("KEY_"):
            return self._key(t, code, value)
        if dev != self.axes.device:
            return []
        if typ == "EV_KEY" and code == "BTN_TOUCH":
            self._touch_down = value in ("DOWN", "00000001", "1")
            return []
        if typ == "EV_ABS":
            self._abs(code, value)
            return []
        if typ == "EV_SYN" and code == "SYN_MT_REPORT":
            self._frame.append(tuple(self._contact))
            self._contact = [None, None]
            return []
        if typ == "EV_SYN" and code == "SYN_REPORT":
            return self._sync(t)
        return []

    def _key(self, t: float, code: str, value: str) -> list[Gesture | KeyPress]:
        if value in ("DOWN", "00000001"):
            self._keys_down[code] = t
            return []
        if value in ("UP", "00000000"):
            return [KeyPress(KEYS.get(code, code), t, self._keys_down.pop(code, t))]
        return []  # autorepeat

    def _abs(self, code: str, value: str) -> None:
        v = _int(value)
        if self.axes.protocol == "B":
            if code == "ABS_MT_SLOT":
                self.slot = v
                return
            s = self.slots.setdefault(self.slot, _Slot())
            if code == "ABS_MT_TRACKING_ID":
                s.tracking = -1 if v in (NO_CONTACT, -1) else v
                s.changed = True
                if s.tracking >= 0:
                    s.track = None  # a new contact: its first point comes at the next SYN_REPORT
            elif code in ("ABS_MT_POSITION_X", "ABS_MT_POSITION_Y"):
                setattr(s, "x" if code.endswith("X") else "y", v)
                s.changed = True
        elif self.axes.protocol == "A":
            if code in ("ABS_MT_POSITION_X", "ABS_MT_POSITION_Y"):
                self._contact[code.endswith("Y")] = v
        elif code in ("ABS_X", "ABS_Y"):
            s = self.slots.setdefault(0, _Slot())
            setattr(s, "x" if code == "ABS_X" else "y", v)
            s.changed = True

    def _sync(self, t: float) -> list[Gesture | KeyPress]:
        if self.axes.protocol == "A":
            self._sync_a(t)
        else:
            if self.axes.protocol == "single":
                s = self.slots.setdefault(0, _Slot())
                if self._touch_down and s.tracking < 0:
                    s.tracking, s.track, s.changed = 0, None, True
                elif not self._touch_down and s.tracking >= 0:
                    s.tracking, s.changed = -1, True
            for s in self.slots.values():
                self._advance(s, t)
        if self.gesture is not None and not any(s.tracking >= 0 for s in self.slots.values()):
            done, self.gesture = self.gesture, None
            done.lifted = t
            keep = [i for i, tr in enumerate(done.tracks) if tr]
            done.tracks = [done.tracks[i] for i in keep]
            done.ends = [done.ends[i] for i in keep]
            return [done] if done.tracks else []
        return []

    def _advance(self, s: _Slot, t: float) -> None:
        if not s.changed:
            return
        s.changed = False
        if s.tracking < 0:
            if s.track is not None and self.gesture is not None:
                self.gesture.ends[self._index(s.track)] = t
            s.track = None
            return
        if s.x is None or s.y is None:
            return  # no position yet for this contact (a panel that sends it later)
        if s.track is None:
            s.track = []
            if self.gesture is None:
                self.gesture = Gesture()
            self.gesture.tracks.append(s.track)
            self.gesture.ends.append(t)
        if not s.track or s.track[-1][1:] != (s.x, s.y):
            s.track.append((t, s.x, s.y))
        self.gesture.ends[self._index(s.track)] = t

    def _index(self, track: list) -> int:
        return next(i for i, tr in enumerate(self.gesture.tracks) if tr is track)

    def _sync_a(self, t: float) -> None:
        contacts = [(x, y) for x, y in self._frame if x is not None and y is not None]
        self._frame = []
        if not self._touch_down and not contacts:
            contacts = []
        live = {k: s for k, s in self.slots.items() if s.tracking >= 0}
        taken: set[int] = set()
        for x, y in contacts:
            best = min((k for k in live if k not in taken),
                       key=lambda k: abs(live[k].x - x) + abs(live[k].y - y), default=None)
            if best is None:
                best = max(self.slots, default=-1) + 1
                self.slots[best] = _Slot(tracking=best)
            s = self.slots[best]
            s.tracking = max(s.tracking, 0)
            s.x, s.y, s.changed = x, y, True
            taken.add(best)
        for k, s in live.items():
            if k not in taken:
                s.tracking, s.changed = -1, True
        for s in list(self.slots.values()):
            self._advance(s, t)


def parse_line(line: str) -> tuple[float, str, str, str, str] | None:
    """(t, device, type, code, value) of one ``getevent -t``/``-lt`` line, names resolved; None if unreadable."""
    m = _LINE.match(line.strip())
    if m is None:
        return None
    sec, usec, dev, typ, code, value = m.groups()
    typ = EV_TYPES.get(typ, typ)
    code = CODES.get(typ, {}).get(code, code)
    if typ not in ("EV_SYN", "EV_KEY", "EV_ABS", "EV_MSC", "EV_SW", "EV_REL", "EV_LED") or not _is_value(value):
        return None
    return int(sec) + int(usec.ljust(6, "0")[:6]) / 1e6, dev.rstrip(":"), typ, code, value


def _is_value(value: str) -> bool:
    return value in ("DOWN", "UP", "REPEAT") or re.fullmatch(r"-?[0-9a-fA-F]+", value) is not None


def _int(value: str) -> int:
    v = int(value, 16)
    return v - (1 << 32) if v >= 1 << 31 and v != NO_CONTACT else v

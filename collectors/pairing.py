"""Which screen and which UI tree each recorded action was taken on, decided on the device's clock.

Touches carry the *device's* clock (getevent's kernel timestamps, CLOCK_MONOTONIC). Frames
and trees are stamped on the device too: the recorder runs ``cat /proc/uptime; screencap -p``
(and the same before ``uiautomator dump``) as one shell line, so the stamp is read on the
phone just before the grab, whatever the host's load, the adb transfer or a starved thread
does to the host-side times (``t0`` request sent, ``t1`` answer received, kept for reports).
The pairing decision never depends on host scheduling; only the link between the two device
clocks goes through the host:

* ``/proc/uptime`` is CLOCK_BOOTTIME in centiseconds (truncated), getevent is CLOCK_MONOTONIC;
  they differ by the time the phone slept since boot, constant while it records (awake).
  ``Clock`` measures both against the host's monotonic clock: every getevent line arrives
  after it happened, so ``arrival - event`` is the offset plus a latency >= 0 and its minimum
  over the recording is the monotonic offset within the lowest latency seen; ``cat
  /proc/uptime`` round trips each bracket the boottime offset (round trip + resolution), and
  the brackets of all samples, taken at different phases of the centisecond, are intersected.
  ``shift`` (monotonic = boottime + shift) is their difference, ``error`` its bound: half
  the intersection + ``LATENCY_MARGIN`` for getevent's delivery latency.
* A frame is stamped twice on the phone, ``cat /proc/uptime; screencap -p; cat /proc/uptime``:
  stamped ``u`` and ``v``, it was grabbed in ``[u + shift - error, v + shift + error + 0.01]``
  on the input clock, whatever the grab took (a screencap that stalls 2-3 s before reading the
  panel gets a 2-3 s interval). A frame with one stamp uses ``grab_window`` after it (a tree:
  ``dump_window``). Frames without a stamp (phones without ``screenshot_at``) fall back to the
  host request time and are never certain.

For an action whose finger went down at ``down`` after the previous action lifted at
``prev_up``, a frame is **certain** when its whole grab interval lies in (prev_up + settle,
down) *and* an earlier grab, also inside and surely ``REST_GAP`` or more before it, has the
same PNG bytes, as has every grab inside between the two and after them: the screen had come to
rest after the previous action (Android's transitions run 250-400 ms; a frame grabbed inside one
is two screens blended and differs from one grabbed 50 ms later), had not changed again (a turned
phone, a page loading by itself), and the finger had not yet touched.
Equal bytes, not a tolerance: on the virtual phone two blends 40 ms apart, and the screens
before and after a short price typed (0.12% of the 8x-reduced pixels), were within a tolerance
that absorbs a cursor's blink or the clock's minute (0.2%), so a grab still moving or already
typed into was confirmed and a wrong frame marked ``ok``. Two grabs too close together (a
transition's clamped ends, grabs queued on the display lock) may show one blend twice: they
do not confirm each other. The later frame of the last such pair is the step's screen; with
none, the last frame surely before ``down`` is used and the step is flagged ``pairing =
"uncertain"``. A tree is taken from a dump that ran entirely inside a quiet interval showing
the same frame (same PNG bytes), nearest in time; ``tree_lag_ms`` is its distance from the
frame; with none the nearest dump is used and flagged ``tree = "uncertain"``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

UPTIME_RESOLUTION = 0.01  # /proc/uptime prints centiseconds, truncated
REST_GAP = 0.05  # two grabs confirm a screen at rest only this far apart (a 300 ms fade moves 1/6 in 50 ms)
LATENCY_MARGIN = 0.005  # getevent's delivery latency left in the event offset (the minimum over the recording)


@dataclass(frozen=True)
class Frame:
    t0: float  # host monotonic: request sent
    t1: float  # host monotonic: PNG received
    sha: str
    up: float | None = None  # device uptime (CLOCK_BOOTTIME) printed just before the grab
    nbytes: int = 0
    up_end: float | None = None  # device uptime printed just after the screencap returned (the grab is between)


@dataclass(frozen=True)
class Tree:
    t0: float
    t1: float
    xml: str
    package: str | None
    activity: str | None
    up: float | None = None


def sha(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


class Clock:
    """Host monotonic time, device uptime and the device input clock (see the module docstring)."""

    def __init__(self) -> None:
        self.from_events: float | None = None  # min(arrival - event time): host = monotonic + this
        self.from_uptime: float | None = None  # host = boottime + this
        self.uptime_bound = float("inf")  # how far from_uptime may be off
        self._range = (-float("inf"), float("inf"))  # what every uptime sample allows for from_uptime

    def uptime_sample(self, host_before: float, uptime: float, host_after: float) -> None:
        """One ``cat /proc/uptime`` round trip. Each sample bounds the offset: the uptime was read between
        ``host_before`` and ``host_after`` and lies in [printed, printed + 10 ms); the bounds of all samples
        are intersected (samples at different phases of the centisecond narrow it below the resolution)."""
        lo, hi = max(self._range[0], host_before - uptime - UPTIME_RESOLUTION), min(self._range[1], host_after - uptime)
        if lo > hi:  # inconsistent (the phone slept or the clocks were stepped): start again from this sample
            lo, hi = host_before - uptime - UPTIME_RESOLUTION, host_after - uptime
        self._range = (lo, hi)
        self.from_uptime, self.uptime_bound = (lo + hi) / 2, (hi - lo) / 2

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

    @property
    def shift(self) -> float:
        """input clock = uptime + shift (minus the time asleep since boot; 0 before any event)."""
        if self.from_events is None or self.from_uptime is None:
            return 0.0
        return self.from_uptime - self.from_events

    @property
    def error(self) -> float:
        """Bound on ``shift``'s error, seconds."""
        bound = self.uptime_bound if self.uptime_bound != float("inf") else UPTIME_RESOLUTION
        return bound + LATENCY_MARGIN

    def to_device(self, host_t: float) -> float:
        return host_t - self.offset

    def span(self, item: Frame | Tree, window: float) -> tuple[float, float]:
        """When ``item`` was grabbed, on the input clock: (earliest, latest)."""
        if item.up is None:
            start = self.to_device(item.t0)
            return start, start + window
        at, err = item.up + self.shift, self.error
        end = getattr(item, "up_end", None)
        if end is not None:  # measured on the phone for this grab: it happened between the two stamps
            return at - err, max(end + self.shift, at) + err + UPTIME_RESOLUTION
        return at - err, at + err + UPTIME_RESOLUTION + window

    def report(self) -> dict:
        out = {"offset_s": round(self.offset, 6), "source": "getevent" if self.from_events is not None else "uptime",
               "uptime_round_trip_bound_ms": round(1000 * self.uptime_bound, 2),
               "uptime_shift_s": round(self.shift, 4), "uptime_error_ms": round(1000 * self.error, 1)}
        if self.from_events is not None and self.from_uptime is not None:
            out["getevent_vs_uptime_ms"] = round(1000 * (self.from_events - self.from_uptime), 2)
        return out


@dataclass
class Pairing:
    frame: Frame | None
    certain: bool
    frame_lag_ms: float | None  # touch-down minus the frame's latest possible grab time


def pair_frame(frames: list[Frame], clock: Clock, prev_up: float, down: float, grab_window: float,
               settle: float, up: float | None = None) -> Pairing:
    """The frame shown when the finger went down at ``down`` (device time), after ``prev_up``.

    Certain only when the screen was seen at rest (``at_rest``): two grabs, both stamped on the
    phone, both wholly inside (``prev_up + settle``, ``down``) and ``REST_GAP`` apart, have the
    same bytes, as has every grab inside between them and after them (a screen that changed again
    with no touch — the phone turned, a page that loaded by itself — is not known at touch-down).
    A frame grabbed during a transition differs from one grabbed later, so it is never certain; a grab with no stamp has no known interval and
    is never certain either. The later grab of the last such pair is the screen. With no certain
    frame, the guess (flagged) is the last frame grabbed after the previous action settled and
    before ``down``, else the first grabbed before this one's lift at ``up`` (the screen changes at
    the lift), else the last frame surely before ``down``.
    """
    latest = fallback = during = None  # (frame, earliest grab, latest grab)
    inside = []
    for f in frames:
        start, end = clock.span(f, grab_window)
        if up is not None and start >= prev_up + settle and end <= up and (during is None or end < during[2]):
            during = (f, start, end)
        if end > down:
            continue
        if fallback is None or start > fallback[1]:
            fallback = (f, start, end)
        if start >= prev_up + settle:
            inside.append((f, start, end))
            if latest is None or start > latest[1]:
                latest = (f, start, end)
    inside.sort(key=lambda x: x[1])
    j = next((j for j in range(len(inside) - 1, 0, -1) if at_rest(inside, j)), None)
    # a later grab that differs means the screen changed again after it came to rest (the phone was
    # turned, a page loaded by itself): the rested frame is not known to be the one at touch-down
    stable = inside[j] if j is not None and all(f.sha == inside[j][0].sha for f, _, _ in inside[j + 1:]) \
        else None
    chosen = stable or latest or during or fallback
    lag = None if chosen is None else round(1000 * (down - chosen[2]), 1)
    return Pairing(chosen[0] if chosen else None, stable is not None, lag)


def at_rest(run: list[tuple[Frame, float, float]], j: int) -> bool:
    """Whether ``run[j]`` (grabs as (frame, earliest, latest), by earliest) is confirmed at rest: the last
    grab surely ``REST_GAP`` before it has its bytes, as has every grab in between; both stamped."""
    b, b_start = run[j][0], run[j][1]
    i = next((i for i in range(j - 1, -1, -1) if run[i][2] + REST_GAP <= b_start), None)
    if i is None or b.up is None or run[i][0].up is None:
        return False
    return all(f.sha == b.sha for f, _, _ in run[i:j])


def quiet_sha(frames: list[Frame], clock: Clock, start: float, end: float, grab_window: float) -> str | None:
    """The screen shown during a quiet interval (device times), if one certain frame is in it."""
    spans = [(f, clock.span(f, grab_window)) for f in frames]
    shas = {f.sha for f, (a, b) in spans if a >= start and b <= end}
    return shas.pop() if len(shas) == 1 else None


def pair_tree(trees: list[Tree], quiet: list[tuple[float, float, str | None]], clock: Clock, frame_sha: str | None,
              frame_t: float, dump_window: float) -> tuple[Tree | None, bool, float | None]:
    """(tree, same_screen, tree_lag_ms): a dump made inside a quiet interval showing ``frame_sha``, nearest in time."""
    if not trees:
        return None, False, None

    def mid(t: Tree) -> float:
        a, b = clock.span(t, dump_window)
        return (a + b) / 2

    good = []
    for t in trees:
        a, b = clock.span(t, dump_window)
        if frame_sha is not None and any(s <= a and b <= e and q == frame_sha for s, e, q in quiet):
            good.append(t)
    pool = good or trees
    chosen = min(pool, key=lambda t: abs(mid(t) - frame_t))
    return chosen, bool(good), round(1000 * abs(mid(chosen) - frame_t), 1)


class FrameStore:
    """PNG bytes by sha, oldest seen first: at most ``max_frames`` / ``max_bytes`` of them not pinned.

    A screen is pinned once it is some action's paired screen (the episode needs it); the others
    are candidates for actions still to come, and the ones seen longest ago go first. Dropping a
    candidate can only turn a step ``uncertain`` (fewer frames to choose from), never mispair it.
    """

    def __init__(self, max_frames: int, max_bytes: int) -> None:
        if max_frames < 1 or max_bytes < 1:
            raise ValueError(f"frame caps must be positive (max_frames={max_frames}, max_bytes={max_bytes})")
        self.max_frames, self.max_bytes = max_frames, max_bytes
        self.pngs: dict[str, bytes] = {}
        self.pinned: set[str] = set()
        self.evicted = self.peak_unpinned = self.peak_unpinned_bytes = 0

    def __contains__(self, digest: str) -> bool:
        return digest in self.pngs

    def __getitem__(self, digest: str) -> bytes:
        return self.pngs[digest]

    def add(self, digest: str, png: bytes) -> None:
        self.pngs[digest] = self.pngs.pop(digest, png)  # seen again: now the newest
        free = [d for d in self.pngs if d not in self.pinned]
        size = sum(len(self.pngs[d]) for d in free)
        while len(free) > 1 and (len(free) > self.max_frames or size > self.max_bytes):
            size -= len(self.pngs.pop(free.pop(0)))  # never the frame just added (the newest)
            self.evicted += 1
        self.peak_unpinned = max(self.peak_unpinned, len(free))
        self.peak_unpinned_bytes = max(self.peak_unpinned_bytes, size)

    def pin(self, digest: str) -> None:
        if digest in self.pngs:
            self.pinned.add(digest)

    def report(self) -> dict:
        return {"max_frames": self.max_frames, "max_bytes": self.max_bytes, "evicted": self.evicted,
                "peak_unpinned": self.peak_unpinned, "peak_unpinned_bytes": self.peak_unpinned_bytes,
                "pinned": len(self.pinned)}

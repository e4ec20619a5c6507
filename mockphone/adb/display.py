"""What a virtual device's panel shows, and when a grab of it happens.

Real phones do not switch screens at once: an activity or window transition runs for
about 250-400 ms, and a screencap taken inside it holds the two screens blended. A
``Compositor`` reproduces that. When an action changes the screen, a transition of
``transition`` seconds starts; ``frame()`` during it is the old and the new screen
mixed in proportion to the time elapsed (a cross-fade, as the default window animations
are), after it the new screen. ``animating()`` is what ``dumpsys window`` reports
(``mAppTransitionState=APP_STATE_RUNNING`` while a transition runs, ``APP_STATE_IDLE``
after).

``Grabs`` decides how long a screencap waits before it reads the panel: most grabs at
once (plus ``grab_jitter`` before the command line starts), a fraction ``slow_grabs`` after
``slow_grab_delay`` seconds once screencap has started (a busy phone: the grab is late,
after the line's ``cat /proc/uptime`` stamp, so the frame it returns is a later one than
the stamp says). Seeded, so a test sees the same sequence each run.
"""

from __future__ import annotations

import io
import random
import threading
import time

import numpy as np
from PIL import Image


class Compositor:
    def __init__(self, transition: float = 0.0, clock=time.monotonic) -> None:
        self.transition = transition  # seconds a screen change animates (0: instant)
        self.clock = clock
        self._lock = threading.Lock()
        self._old: Image.Image | None = None
        self._new: Image.Image | None = None
        self._start = 0.0
        self.transitions = 0  # how many transitions started (tests read it)

    def changed(self, before: np.ndarray, after: np.ndarray) -> None:
        """The phone's screen went from ``before`` to ``after`` (pixel arrays) just now."""
        if self.transition <= 0 or before.shape != after.shape or np.array_equal(before, after):
            return
        with self._lock:
            now = self.clock()
            old = self._mix(now) if self._new is not None and now - self._start < self.transition \
                else Image.fromarray(before)  # a change during a transition starts from what is on screen
            self._old, self._new, self._start = old, Image.fromarray(after), now
            self.transitions += 1

    def animating(self) -> bool:
        with self._lock:
            return self._new is not None and self.clock() - self._start < self.transition

    def remaining(self) -> float:
        """Seconds until the running transition ends (0 when none runs)."""
        with self._lock:
            if self._new is None:
                return 0.0
            return max(0.0, self.transition - (self.clock() - self._start))

    def frame(self, current: bytes) -> bytes | Image.Image:
        """What the panel shows now: ``current`` (the phone's PNG), or mid-transition the blend as an
        image (``encode`` it; callers encode outside their locks, as a phone encodes off its display)."""
        with self._lock:
            now = self.clock()
            if self._new is None or now - self._start >= self.transition:
                self._old = self._new = None
                return current
            return self._mix(now)

    @staticmethod
    def encode(frame: bytes | Image.Image) -> bytes:
        if isinstance(frame, bytes):
            return frame
        out = io.BytesIO()
        frame.save(out, format="PNG", compress_level=1)
        return out.getvalue()

    def _mix(self, now: float) -> Image.Image:
        # the new screen fades in over the old one; alpha is kept off 0 and 1, so a frame
        # grabbed mid-transition is neither screen (what such a grab really shows)
        alpha = min(max((now - self._start) / self.transition, 0.05), 0.95)
        return Image.blend(self._old, self._new, alpha)


class Grabs:
    def __init__(self, seed: int = 0) -> None:
        self.grab_jitter = 0.0  # up to this many seconds before any grab (the process starting)
        self.slow_grabs = 0.0  # the fraction of grabs that are late
        self.slow_grab_delay = (2.0, 3.0)  # how late a late grab is, in seconds (uniform in the range)
        self._rng = random.Random(seed)
        self.late = 0  # how many grabs were late (tests read it)

    def jitter(self) -> float:
        """Seconds before the screencap process starts (before anything on its command line runs)."""
        return self._rng.uniform(0, self.grab_jitter) if self.grab_jitter else 0.0

    def stall(self) -> float:
        """Seconds a started screencap waits before it reads the panel: 0, or for a late grab 2-3 s. The
        command line's ``cat /proc/uptime`` before it has already printed, so its stamp is early."""
        if self.slow_grabs and self._rng.random() < self.slow_grabs:
            self.late += 1
            return self._rng.uniform(*self.slow_grab_delay)
        return 0.0

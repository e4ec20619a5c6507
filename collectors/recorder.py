"""Recording a human demonstration on a phone over adb.

    rec = Recorder(AdbPhone("R58M123"), "Turn off Wi-Fi").start()
    ...                                   # the operator uses the phone
    episode = rec.stop(success=True)      # the operator's mark -> outcome, verified_by="human"

A reader thread streams ``getevent -lt`` (raw touch axes scaled to pixels with the
ranges of ``getevent -lp``); the recorder thread observes the phone (screenshot + tree)
whenever no finger is down. Each gesture or key press is paired with the last
observation accepted *before* it began (an observation during which events arrived is
discarded). Text typing is recovered from tree diffs: when the focused field's text
changes between two observations with no gesture in between (or only taps in the
keyboard area, which are then dropped), the step is ``input_text(text=new, clear=True)``.
The episode: source ``human``, ``meta.collector = "human"``, outcome from the operator's
mark (``success`` ends with a ``terminate(success)`` step on the final screen).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

from collectors.errors import CollectorError, EpisodeAborted
from collectors.gestures import Axes, Gesture, KeyPress, Tracker, classify, touch_axes
from datalake.types import Action, Episode, Observation, Step
from datalake.uitree import UIElement, parse_ui_tree

KEYBOARD_ZONE = 0.6  # taps below this fraction of the screen height, while a field has focus, may be typing


class Recorder:
    def __init__(self, phone: Any, instruction: str, *, task: str | None = None, app: str | None = None) -> None:
        self.phone = phone
        self.instruction = instruction
        self.task, self.app = task, app
        self.steps: list[Step] = []
        self.error: BaseException | None = None
        self._events: queue.Queue[tuple[float, str]] = queue.Queue()
        self._stop = threading.Event()
        self._last_arrival = 0.0
        self._accepted = threading.Condition()
        self._accepted_starts: list[float] = []
        self._threads: list[threading.Thread] = []
        self._stream = None

    # --- lifecycle ----------------------------------------------------------------------
    def start(self) -> Recorder:
        facts = self.phone.facts()
        self.width, self.height, self.dpi = facts["width"], facts["height"], facts["dpi"]
        self.device = self.phone.device()
        self.axes: Axes = touch_axes(self.phone.run("getevent -lp"))
        self.tracker = Tracker(self.axes)
        self._stream = self.phone.stream("getevent -lt")
        self._last: Observation = self._observe_quiet()
        self._threads = [threading.Thread(target=self._read, daemon=True, name="getevent"),
                         threading.Thread(target=self._loop, daemon=True, name="recorder")]
        for t in self._threads:
            t.start()
        return self

    def stop(self, success: bool) -> Episode:
        """End the recording with the operator's mark and return the episode (not yet written)."""
        self._stop.set()
        if self._stream is not None:
            self._stream.close()
        for t in self._threads:
            t.join(timeout=10)
        if self.error is not None:
            raise CollectorError(f"recording failed: {self.error}") from self.error
        steps = list(self.steps)
        if success:
            steps.append(Step(observation=self._last, action=Action("terminate", status="success")))
        if not steps:
            raise EpisodeAborted("nothing was recorded: no touch, key or typing between start and stop")
        return Episode(instruction=self.instruction, source="human", device=self.device, steps=tuple(steps),
                       task=self.task, app=self.app, outcome="success" if success else "failure", verified_by="human",
                       meta={"collector": "human", "serial": getattr(self.phone, "serial", None)})

    def wait_observed_after(self, t: float, timeout: float = 10.0) -> bool:
        """Block until an observation that started after monotonic time ``t`` was accepted (for scripted drivers)."""
        with self._accepted:
            return self._accepted.wait_for(lambda: any(s > t for s in self._accepted_starts[-3:]) or
                                           self._stop.is_set() or self.error is not None, timeout)

    # --- threads ---------------------------------------------------------------------------
    def _read(self) -> None:
        buf = b""
        try:
            while not self._stop.is_set():
                chunk = self._stream.recv(4096)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                now = time.monotonic()
                for line in lines:
                    self._last_arrival = now
                    self._events.put((now, line.decode("utf-8", "replace")))
        except OSError:
            pass

    def _loop(self) -> None:
        pending: list[tuple[Observation, Action, bool]] = []  # gestures since the last accepted observation
        pair = self._last
        try:
            while not self._stop.is_set():
                while True:
                    try:
                        _, line = self._events.get_nowait()
                    except queue.Empty:
                        break
                    was_touching = self.tracker.touching
                    for item in self.tracker.feed(line):
                        pending.append(self._to_action(item, pair))
                    if not was_touching and self.tracker.touching:
                        pair = self._last  # the observation shown when this touch began
                if self.tracker.touching:
                    time.sleep(0.01)
                    continue
                started = time.monotonic()
                obs = self._observe_quiet()
                if self._last_arrival >= started or not self._events.empty() or self.tracker.touching:
                    continue  # the screen moved under us: do not pair anything with this one
                self._commit(pending, obs)
                pending = []
                self._last = pair = obs
                with self._accepted:
                    self._accepted_starts.append(started)
                    self._accepted.notify_all()
                time.sleep(0.02)
        except Exception as exc:  # noqa: BLE001 - a thread boundary: stop() re-raises it, nothing is written
            self.error = exc
            with self._accepted:
                self._accepted.notify_all()

    # --- steps --------------------------------------------------------------------------------
    def _to_action(self, item: Gesture | KeyPress, pair: Observation) -> tuple[Observation, Action, bool]:
        if isinstance(item, KeyPress):
            return pair, Action("key", key=item.key), False
        els = parse_ui_tree(pair.ui_tree or "<hierarchy/>")
        action = classify(item, self.axes, els, self.width, self.height, self.dpi, getattr(self.phone, "rotation", 0))
        typing = action.type == "tap" and action.y >= KEYBOARD_ZONE * self.height and _focused(els) is not None
        return pair, action, typing

    def _commit(self, pending: list[tuple[Observation, Action, bool]], obs: Observation) -> None:
        before, after = _focused(parse_ui_tree(self._last.ui_tree or "<hierarchy/>")), _focused(
            parse_ui_tree(obs.ui_tree or "<hierarchy/>"))
        typed = (before is not None and after is not None and all(t for _, _, t in pending) and
                 before.resource_id == after.resource_id and before.text != after.text)
        if typed:
            obs, previous = self._last, self.steps[-1] if self.steps else None
            if previous is not None and previous.action.type == "input_text" and previous.action.element is not None \
                    and previous.action.element.resource_id == (after.resource_id or None):
                obs = self.steps.pop().observation  # still typing into the same field: one step for the whole text
            self.steps.append(Step(observation=obs, action=Action("input_text", text=after.text, clear=True,
                                                                   element=after.as_target())))
            return
        self.steps.extend(Step(observation=o, action=a) for o, a, _ in pending)

    def _observe_quiet(self) -> Observation:
        return self.phone.observe()


def _focused(elements: list[UIElement]) -> UIElement | None:
    return next((e for e in elements if e.focused and "Edit" in e.class_name), None)

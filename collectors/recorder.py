"""Recording a human demonstration on a phone over adb, with each action paired to its screen by time.

    rec = Recorder(AdbPhone("R58M123"), "Turn off Wi-Fi").start()
    ...                                   # the operator uses the phone at their own pace
    episode = rec.stop(success=True)      # the operator's mark -> outcome, verified_by="human"

While recording, threads run side by side: one streams ``getevent -lt`` (kernel
timestamps on the device clock; see ``collectors.gestures``), several capture frames
with ``cat /proc/uptime; screencap -p; cat /proc/uptime`` (the grab lies between the two
stamps: each grab's window is measured on the phone, a late one gets a long window)
one after another at a fixed period (pipelined, so
a 1.2 s screencap still gives a frame every ``capture_period``; the uptime stamps each
frame on the phone, so host load cannot misdate it), and a few dump the UI tree the same
way (pipelined too, each to its own file, on virtual devices; a real phone's uiautomator
runs one dump at a time). ``screenrecord --output-format=h264`` is not used: a raw H.264 stream carries no
frame timestamps (the frames' times would be host arrival times after an encoder and USB
queue of unknown depth), the virtual device would need an H.264 encoder, and frames still
need a UI tree; the timestamped screencap loop needs neither.

At ``stop`` every gesture is paired with the last frame fully grabbed after the previous
action settled and before its touch-down that an earlier grab with the same bytes, at
least ``pairing.REST_GAP`` before it, confirms (the screen at rest, not mid-transition), and
with a tree from the same screen. Double taps are merged only among taps that are not on the
soft keyboard (``collectors.pairing`` explains the clock alignment and the rules). Per-step facts go to
``Step.meta`` (the lake's ``meta_json``, and its ``pairing`` column): ``pairing`` ok|uncertain,
``frame_lag_ms``, ``tree`` same_screen|uncertain, ``tree_lag_ms``, ``rotation`` (in effect at
touch-down: from the paired frame's size and the trees' ``rotation``; its coordinates are
pixels of that rotated screen), ``flags`` such as ``multi_touch`` or ``rotation_uncertain``.
Episodes recorded before kept them in ``episode.meta["steps_meta"]``; ``step_meta`` reads both.

Memory: PNG bytes are kept once per distinct screen in a ``FrameStore``; screens paired to
an action are pinned (the episode holds them), and at most ``max_frames`` / ``max_frame_bytes``
others are kept, the oldest seen dropped first. An action is paired (and its screen pinned)
as soon as every capture that could have grabbed a frame before its touch-down has returned.
Identical UI dumps share one string; distinct trees and frame records are not capped.

Typing is recovered from tree diffs: when a field's text changes between two dumps and
the only gestures in between are taps on the keyboard (dropped) or on that field, the
step is ``input_text(text=new, clear=True)``, placed before the next gesture. Dumps are
pipelined so that one lands in any pause of ``dump_period`` + the phone's exec gap: text
typed with an IME (no touches) and followed 0.3 s later by a tap that leaves the screen is
kept. On a real phone (one dump at a time, 1-2 s each) such text is kept only if a dump
ran between the typing and the tap. The episode: source ``human``,
``meta.collector = "human"``, ``meta.nav_mode``, outcome from the operator's mark. If the
phone is lost mid-recording, the steps recorded so far are returned as a partial episode
(outcome ``unknown``, ``meta.partial``, ``meta.failure_reason``); with none, an error.
"""

from __future__ import annotations

import dataclasses
import math
import struct
import re
import threading
import time
from typing import Any

from collectors.classify import NAV_MODES, Screen, classify
from collectors.errors import CollectorError, RecordingFailed
from collectors.gestures import KEYS, Gesture, KeyPress, PanelState, Tracker, parse_line, touch_axes
from collectors.pairing import Clock, Frame, FrameStore, Tree, at_rest, pair_frame, pair_tree, quiet_sha, sha
from collectors.steps import is_key_tap, merge_double_taps, targets, text_changes
from datalake.types import Action, Episode, Observation, Step
from datalake.uitree import parse_ui_tree
from phones.errors import DeviceOffline, EpisodeAborted, PhoneError

UPTIME_SAMPLES = 8  # cat /proc/uptime round trips at start and stop (the best bounds the clock link)
STAMPED_GRAB = "cat /proc/uptime; screencap -p; cat /proc/uptime"  # the grab lies between the two stamps
_IEND = b"IEND\xaeB`\x82"
_ROTATION = re.compile(r"<hierarchy[^>]*\brotation=\"(\d)\"")


class Recorder:
    """See the module docstring. Timing knobs (seconds): ``capture_period`` between frame requests (the
    number of concurrent screencaps is latency / period + 1, at most ``max_capture_workers``: lower it on
    a phone whose screencaps slow down when run side by side); ``grab_window``, the most that passes
    on the phone from ``cat /proc/uptime`` printing to ``screencap`` grabbing the frame (the exec gap,
    tens of ms: raise it on a slow phone); ``settle``, how long after a lift the screen may still change;
    ``dump_window``, the same bound as ``grab_window`` for ``uiautomator dump``. Host load does not enter
    any of them. ``dump_period`` / ``max_dump_workers``: as for frames (default 6 on virtual devices,
    1 on real phones, whose uiautomator runs one dump at a time). ``max_frames`` / ``max_frame_bytes``:
    the memory cap on screens not yet paired. ``panel``: the previous recording's ``panel_state()`` on the
    same phone (takes one after another): getevent does not repeat a finger position that did not change,
    so without it a first tap where the last touch lifted has no position and is lost."""

    def __init__(self, phone: Any, instruction: str, *, task: str | None = None, app: str | None = None,
                 capture_period: float = 0.1, max_capture_workers: int = 14, grab_window: float = 0.06,
                 settle: float = 0.05, dump_window: float = 0.3, dump_period: float = 0.12,
                 max_dump_workers: int | None = None, max_frames: int = 256,
                 max_frame_bytes: int = 256 << 20, panel: PanelState | None = None) -> None:
        self.phone, self.instruction, self.task, self.app = phone, instruction, task, app
        self.panel = panel  # the touch panel as the previous recording on this phone left it (the last take)
        self.capture_period, self.max_capture_workers = capture_period, max_capture_workers
        self.dump_period, self.max_dump_workers = dump_period, max_dump_workers
        self.grab_window, self.settle, self.dump_window = grab_window, settle, dump_window
        self.error: BaseException | None = None
        self.clock = Clock()
        self.frames: list[Frame] = []
        self.store = FrameStore(max_frames, max_frame_bytes)
        self.trees: list[Tree] = []
        self.items: list[Gesture | KeyPress] = []
        self._unpinned: list[Gesture | KeyPress] = []
        self._inflight: list[float] = []  # host request times of captures not yet returned
        self._next_dump = 0.0
        self._xmls: dict[str, str] = {}
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._next_capture = 0.0
        self._threads: list[threading.Thread] = []
        self._stream = None

    # --- lifecycle ----------------------------------------------------------------------
    def start(self) -> Recorder:
        facts = self.phone.facts()
        self.natural, self.dpi = (facts["width"], facts["height"]), facts["dpi"]
        self.device = self.phone.device()
        self.axes = touch_axes(self.phone.run("getevent -lp"))
        self.tracker = Tracker(self.axes, self.panel)
        self.nav_mode = NAV_MODES.get(self.phone.run("settings get secure navigation_mode").strip(), "3button")
        self._sample_uptime()
        t0 = time.monotonic()
        self._capture()
        self.latency = time.monotonic() - t0
        t1 = time.monotonic()
        self._tree(0)
        self.dump_latency = time.monotonic() - t1
        self.workers = max(1, min(self.max_capture_workers, math.ceil(self.latency / self.capture_period) + 1))
        most = self.max_dump_workers or (6 if facts.get("mock") else 1)  # real uiautomator dumps cannot overlap
        self.dump_workers = max(1, min(most, math.ceil(self.dump_latency / self.dump_period) + 1))
        self._started = t0
        self._stream = self.phone.stream("getevent -lt")
        self._threads = [threading.Thread(target=self._guard, args=(self._read,), daemon=True, name="getevent")]
        self._threads += [threading.Thread(target=self._guard, args=(self._tree_loop, i), daemon=True,
                                           name=f"dump-{i}") for i in range(self.dump_workers)]
        self._threads += [threading.Thread(target=self._guard, args=(self._capture_loop,), daemon=True,
                                           name=f"screencap-{i}") for i in range(self.workers)]
        for t in self._threads:
            t.start()
        return self

    def stop(self, success: bool | None, stopped: str | None = None) -> Episode:
        """End the recording with the operator's mark and return the episode (not yet written).

        ``stopped`` ends a take the operator never marked (Ctrl-C, SIGTERM, end of input): what
        was recorded is kept, outcome ``unknown``, ``meta.stopped`` = the reason, no terminate step."""
        self._stop.set()
        if self._stream is not None:
            self._stream.close()
        for t in self._threads:
            t.join(timeout=max(self.latency, self.dump_latency) + 10)
        end = time.monotonic()
        if self.error is None:
            try:
                self._capture()  # the final, quiet screen
                self._tree(0)
                self._sample_uptime()
            except (PhoneError, CollectorError, OSError) as exc:
                self.error = exc
        began = time.perf_counter()
        steps = self._assemble(self.clock.to_device(end) if self._has_clock() else math.inf)
        assemble_ms = round(1000 * (time.perf_counter() - began), 1)
        if self.error is not None and not steps:
            raise RecordingFailed(f"recording failed ({self.error}): nothing was recorded") from self.error
        if success and self.error is None and stopped is None:
            steps.append(Step(observation=self._final_observation(), action=Action("terminate", status="success"),
                              meta={"pairing": "ok", "tree": "same_screen", "flags": []}))
        if not steps:
            raise EpisodeAborted("nothing was recorded: no touch, key or typing between start and stop")
        return self._episode(steps, assemble_ms, stopped)

    def _episode(self, steps: list[Step], assemble_ms: float, stopped: str | None = None) -> Episode:
        meta = {"collector": "human", "serial": getattr(self.phone, "serial", None), "nav_mode": self.nav_mode,
                "touch_protocol": self.axes.protocol, "clock": self.clock.report(),
                "capture": {"workers": self.workers, "period_ms": round(1000 * self.capture_period),
                            "dump_workers": self.dump_workers, "first_latency_ms": round(1000 * self.latency),
                            "frames": len(self.frames), "trees": len(self.trees), "assemble_ms": assemble_ms,
                            "store": self.store.report(), "grab_window_ms": self._grab_windows()}}
        if self.tracker.garbage:
            meta["getevent_garbage"] = {"lines": self.tracker.garbage, "examples": self.tracker.garbage_examples}
        outcome, verified = ("success" if steps[-1].action.type == "terminate" else "failure"), "human"
        if self.error is not None:
            meta.update(partial=True, failure_reason=f"recording interrupted: {self.error}")
            outcome, verified = "unknown", "none"
        if stopped is not None:
            meta["stopped"] = stopped
            outcome, verified = "unknown", "none"
        first = self._screen(self.trees[0] if self.trees else None)
        rotations = sorted({s.meta["rotation"] for s in steps if "rotation" in s.meta} | {first.rotation})
        if len(rotations) > 1:
            meta["rotations"] = rotations  # steps are in pixels of their own screen; the episode has the first
        device = dataclasses.replace(self.device, width=first.width, height=first.height,
                                     extra={**self.device.extra, "rotation": first.rotation})
        return Episode(instruction=self.instruction, source="human", device=device, steps=tuple(steps),
                       task=self.task, app=self.app, outcome=outcome, verified_by=verified, meta=meta)

    def panel_state(self) -> PanelState:
        """Where the touch panel's fingers were last reported (pass it to the next take's Recorder)."""
        return self.tracker.state()

    def _grab_windows(self) -> dict:
        """The grab windows measured on this phone (second stamp minus first), in ms."""
        spans = sorted(f.up_end - f.up for f in self.frames if f.up is not None and f.up_end is not None)
        if not spans:
            return {"measured": 0}
        return {"measured": len(spans), "median": round(1000 * spans[len(spans) // 2]),
                "p90": round(1000 * spans[int(0.9 * (len(spans) - 1))]), "max": round(1000 * spans[-1])}

    def wait_observed_after(self, t: float, timeout: float = 10.0) -> bool:
        """Block until a frame and a tree grabbed after host time ``t`` has settled are in (scripted drivers),
        and the phone's clock has passed their latest possible grab time."""
        deadline = time.monotonic() + timeout

        def seen() -> tuple[float, float] | None:
            after = self.clock.to_device(t) + self.settle
            f = [self.clock.span(x, self.grab_window) for x in self.frames[-4:]]
            d = [self.clock.span(x, self.dump_window) for x in self.trees[-4:]]
            f, d = [s for s in f if s[0] > after], [s for s in d if s[0] > after]
            return (min(e for _, e in f), min(e for _, e in d)) if f and d else None

        with self._lock:
            ok = self._lock.wait_for(lambda: seen() is not None or self._stop.is_set(), timeout)
            if not ok or self._stop.is_set():
                return ok
            latest = max(seen())
        while self.clock.to_device(time.monotonic()) <= latest + 0.005 and time.monotonic() < deadline:
            time.sleep(0.005)
        return True

    def _sample_uptime(self) -> None:
        for i in range(UPTIME_SAMPLES):
            before = time.monotonic()
            up = self.phone.run("cat /proc/uptime").split()
            self.clock.uptime_sample(before, float(up[0]), time.monotonic())
            time.sleep(0.0037 * (i % 3))  # other phases of the centisecond

    # --- threads -------------------------------------------------------------------------
    def _guard(self, body, *args) -> None:
        try:
            body(*args)
        except (PhoneError, CollectorError, OSError, ValueError) as exc:  # a thread boundary: stop() reports it
            if not self._stop.is_set():
                self.error = exc
                self._stop.set()
        finally:
            with self._lock:
                self._lock.notify_all()

    def _read(self) -> None:
        buf = b""
        while not self._stop.is_set():
            try:
                chunk = self._stream.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                if not self._stop.is_set():
                    raise DeviceOffline(f"{getattr(self.phone, 'serial', 'phone')}: the getevent stream ended "
                                        "(cable pulled, adb restarted or phone rebooted)")
                return
            arrival = time.monotonic()
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                parsed = parse_line(line)
                if parsed is not None:
                    self.clock.event(arrival, parsed[0])
                done = self.tracker.feed(line)
                if done:
                    with self._lock:
                        self.items += done
                        self._unpinned += done

    def _capture(self) -> None:
        t0 = time.monotonic()
        with self._lock:
            self._inflight.append(t0)
        try:
            up, up_end, png = self._grab()
        finally:
            with self._lock:
                self._inflight.remove(t0)
        frame = Frame(t0, time.monotonic(), sha(png), up, len(png), up_end)
        with self._lock:
            self.store.add(frame.sha, png)
            self.frames.append(frame)
            self._pin_paired()
            self._lock.notify_all()

    def _grab(self) -> tuple[float | None, float | None, bytes]:
        """(uptime before, uptime after, PNG): the grab's interval measured on the phone, each time.
        Phones that only stamp before the grab give no end; phones that cannot stamp give neither
        (their frames are dated by host request times, which hold only on an idle host, and never
        certain)."""
        if hasattr(self.phone, "shell") and hasattr(self.phone, "screenshot_at"):
            code, err, out = self.phone.shell(STAMPED_GRAB)
            head, _, rest = out.partition(b"\n")
            cut = rest.rfind(_IEND)
            try:
                if cut < 0 or not rest.startswith(b"\x89PNG"):
                    raise ValueError("no PNG")
                return float(head.split()[0]), float(rest[cut + 8:].split()[0]), rest[:cut + 8]
            except (IndexError, ValueError):
                up, png = self.phone.screenshot_at()  # the stamped line was not understood: one stamp
                return up, None, png
        if hasattr(self.phone, "screenshot_at"):
            up, png = self.phone.screenshot_at()
            return up, None, png
        return None, None, self.phone.screenshot()

    def _pin_paired(self) -> None:
        """Pair (and pin the screen of) each action before whose touch-down no capture is still in flight."""
        if not self._unpinned or not self._has_clock():
            return
        bound = min((self.clock.to_device(t) for t in self._inflight), default=self.clock.to_device(time.monotonic()))
        ready = [i for i in self._unpinned if _down(i) < bound]
        if not ready:
            return
        frames = [f for f in self.frames if f.sha in self.store]
        for item in ready:
            prev_up = max((_up(i) for i in self.items if _up(i) < _down(item)), default=-math.inf)
            p = pair_frame(frames, self.clock, prev_up, _down(item), self.grab_window, self.settle)
            if p.frame is not None:
                self.store.pin(p.frame.sha)
            self._unpinned.remove(item)

    def _tree(self, worker: int) -> None:
        t0 = time.monotonic()
        if hasattr(self.phone, "dump_at"):
            up, xml, package, activity = self.phone.dump_at(f"/data/local/tmp/phoneloop_rec{worker}.xml")
        else:
            up, (xml, package, activity) = None, self.phone.dump()
        with self._lock:
            xml = self._xmls.setdefault(xml, xml)  # identical dumps (most of them) share one string
            tree = Tree(t0, time.monotonic(), xml, package, activity, up)
            self.trees.append(tree)
            self._lock.notify_all()

    def _capture_loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                now = time.monotonic()
                start = max(now, self._next_capture)
                self._next_capture = start + self.capture_period
            if self._stop.wait(start - now):
                return
            self._capture()

    def _tree_loop(self, worker: int) -> None:
        while not self._stop.is_set():
            with self._lock:
                now = time.monotonic()
                start = max(now, self._next_dump)
                self._next_dump = start + self.dump_period
            if self._stop.wait(start - now):
                return
            self._tree(worker)

    # --- assembly --------------------------------------------------------------------------
    def _has_clock(self) -> bool:
        return self.clock.from_events is not None or self.clock.from_uptime is not None

    def _screen_at(self, tree: Tree | None, frame: Frame | None, trees: list[Tree],
                   down: float) -> tuple[Screen, bool]:
        """The screen a touch at ``down`` landed on, and whether its rotation is sure: the paired tree's
        rotation when the paired frame has its shape, else the last tree before ``down`` with that shape,
        else (turned after the last dump) the frame's shape with the usual rotation for it, flagged."""
        screen = self._screen(tree)
        if frame is None:
            return screen, True
        size = _png_size(self.store[frame.sha])
        if size == (screen.width, screen.height):
            return screen, True
        before = [t for t in trees if self.clock.span(t, self.dump_window)[1] <= down]
        for t in reversed(before):
            other = self._screen(t)
            if size == (other.width, other.height):
                return other, True
        if size == (screen.height, screen.width):  # turned since the last dump: no tree yet; 90 or 270?
            rotation = 1 if screen.rotation % 2 == 0 else 0  # the usual landscape, or back to portrait
            return dataclasses.replace(screen, width=size[0], height=size[1], rotation=rotation, elements=[]), False
        return screen, False

    def _screen(self, tree: Tree | None) -> Screen:
        m = _ROTATION.search(tree.xml[:500]) if tree is not None else None
        rotation = int(m.group(1)) if m else 0
        w, h = self.natural if rotation % 2 == 0 else self.natural[::-1]
        elements = parse_ui_tree(tree.xml) if tree is not None else []
        return Screen(w, h, self.dpi, rotation, self.nav_mode, elements)

    def _assemble(self, end: float) -> list[Step]:
        with self._lock:
            items = sorted(self.items, key=_down)
            frames = [f for f in self.frames if f.sha in self.store]  # the others' screens were dropped (cap)
            trees = sorted(self.trees, key=lambda t: self.clock.span(t, self.dump_window)[0])
        times = [(_down(i), _up(i)) for i in items]
        bounds = [-math.inf] + [up for _, up in times]  # before the first action the screen was at rest
        quiet = [(bounds[k] + self.settle, (times[k][0] if k < len(times) else end)) for k in range(len(bounds))]
        quiet = [(a, b, quiet_sha(frames, self.clock, a, b, self.grab_window)) for a, b in quiet]
        entries = []
        for k, item in enumerate(items):
            down, up = times[k]
            if isinstance(item, KeyPress) and item.key not in KEYS.values():
                continue  # power and volume keys act on no app screen
            entries.append(self._entry(item, down, up, bounds[k], frames, trees, quiet))
        entries = self._merge_double_taps(entries)
        entries = self._typing(entries, trees, frames, quiet)
        steps = []
        for e in entries:
            obs = Observation(screenshot=self.store[e["frame"].sha], ui_tree=e["tree"].xml if e["tree"] else None,
                              package=e["tree"].package if e["tree"] else None,
                              activity=e["tree"].activity if e["tree"] else None)
            steps.append(Step(observation=obs, action=e["action"], meta=e["meta"]))
        return steps

    def _merge_double_taps(self, entries: list[dict]) -> list[dict]:
        """Double taps merged among the taps that are not on the soft keyboard: two quick keyboard taps
        paired to one sparse frame are two keys typed (recovered from the trees), not a double tap."""
        out, run = [], []
        for e in entries:
            if e["tree"] is not None and is_key_tap(e, e["tree"], self.natural[1]):
                out += merge_double_taps(run, self.dpi) + [e]
                run = []
            else:
                run.append(e)
        return out + merge_double_taps(run, self.dpi)

    def _entry(self, item, down: float, up: float, prev_up: float, frames, trees, quiet,
               action: Action | None = None) -> dict:
        p = pair_frame(frames, self.clock, prev_up, down, self.grab_window, self.settle, up)
        frame_t = sum(self.clock.span(p.frame, self.grab_window)) / 2 if p.frame else down
        tree, same, lag = pair_tree(trees, quiet, self.clock, p.frame.sha if p.frame else None, frame_t,
                                    self.dump_window)
        flags: list[str] = []
        if p.frame is None:
            p = pair_frame(frames, self.clock, -math.inf, math.inf, 0, 0)  # no frame before it: the first one
            flags.append("no_frame_before")
        screen, rotation_sure = self._screen_at(tree, p.frame, trees, down)
        if not rotation_sure:
            flags.append("rotation_uncertain")
        if action is not None:
            pass
        elif isinstance(item, KeyPress):
            action = Action("key", key=item.key)
        else:
            action, more = classify(item, self.axes, screen)
            flags += more
        meta = {"pairing": "ok" if p.certain else "uncertain", "frame_lag_ms": p.frame_lag_ms,
                "tree": "same_screen" if same else "uncertain", "tree_lag_ms": lag, "rotation": screen.rotation,
                "flags": flags, "t_down": round(down, 3)}
        return {"down": down, "up": up, "action": action, "frame": p.frame, "tree": tree, "meta": meta,
                "item": item, "prev_up": prev_up}

    def _typing(self, entries: list[dict], trees: list[Tree], frames, quiet) -> list[dict]:
        """Insert input_text steps for field text changes between dumps; drop the keyboard taps they explain.

        A field's new text was typed after the last gesture aimed at that field (or the first
        keyboard tap) inside the window between the two dumps, and before the next gesture. Typing
        with an IME leaves no input event, so the next gesture's screen must be one grabbed after the
        dump that showed the text (after the last keyboard tap, when there were taps): it is paired
        again with that as its previous action.
        """
        for a, b in zip(trees, trees[1:]):
            for field in text_changes(a, b):
                lo, hi = self.clock.span(a, self.dump_window)[0], self.clock.span(b, self.dump_window)[1]
                inside = [e for e in entries if e["up"] >= lo and e["down"] <= hi]  # effects land at the lift
                keys = [e for e in inside if is_key_tap(e, a, self.natural[1])]
                onfield = [e for e in inside if e not in keys and targets(e, field)]
                t = keys[0]["down"] if keys else max([lo] + [e["up"] for e in onfield])
                entries = [e for e in entries if e not in keys]
                prev = [e for e in entries if e["down"] < t]
                last = prev[-1] if prev else None
                action = Action("input_text", text=field.text, clear=True, element=field.as_target())
                done = max(e["up"] for e in keys) if keys else hi
                if last is not None and last["action"].type == "input_text" and \
                        last["action"].element.resource_id == (field.resource_id or None):
                    last["action"] = action  # still typing into the same field: one step for the whole text
                    self._after_typing(entries, t, done, frames, trees, quiet)
                    continue
                prev_up = last["up"] if last else -math.inf
                entry = self._entry(None, t, t, prev_up, frames, trees, quiet, action=action)
                entry["tree"] = a
                if not keys and entry["meta"]["pairing"] == "uncertain":
                    nxt = next((e["down"] for e in entries if e["down"] > t), math.inf)
                    self._pair_by_change(entry, frames, prev_up, lo, min(nxt, hi))
                entries.insert(len(prev), entry)
                self._after_typing(entries, t, done, frames, trees, quiet)
        return entries

    def _after_typing(self, entries: list[dict], t: float, done: float, frames, trees, quiet) -> None:
        """Pair the first gesture after typing at ``t`` again, as if the previous action ended at ``done``."""
        k, nxt = next(((k, e) for k, e in enumerate(entries) if e["down"] > t and e["item"] is not None),
                      (None, None))
        if nxt is not None and done > nxt["prev_up"]:
            entries[k] = self._entry(nxt["item"], nxt["down"], nxt["up"], done, frames, trees, quiet,
                                     action=nxt["action"])

    def _pair_by_change(self, entry: dict, frames: list[Frame], prev_up: float, before: float,
                        until: float) -> None:
        """Typing with no touches (an IME): the screen is the last frame before the first visible change.

        A frame grabbed before ``before`` (the dump that still showed the old text) shows the
        screen before typing; only taps on the field, keyboard taps and enter happened until
        ``until``, so later frames with the same bytes show it too, up to the first change. The
        first change is any byte: a short text typed differs from the screen before by fewer
        pixels than a tolerance for a cursor's blink would allow. The walk starts at the last
        frame surely before the typing (the most settled); ``ok`` needs the screen seen at rest
        (``pairing.at_rest``: a grab with the same bytes ``REST_GAP`` before, not one blend twice).
        """
        spans = {f: self.clock.span(f, self.grab_window) for f in frames}
        run = sorted(((f, *spans[f]) for f in frames if spans[f][0] >= prev_up + self.settle and
                      spans[f][1] <= until), key=lambda x: x[1])
        anchor = max((i for i, (_, _, end) in enumerate(run) if end <= before), default=None)
        if anchor is None:
            if run:
                entry["frame"] = run[0][0]  # a guess: the screen once the previous action settled
            return  # no frame surely before the typing: the step stays uncertain
        last = anchor
        while last + 1 < len(run) and run[last + 1][0].sha == run[anchor][0].sha:
            last += 1
        entry["frame"] = run[last][0]
        if at_rest(run, last):
            entry["meta"].update(pairing="ok", pairing_rule="last frame before the first change")

    def _final_observation(self) -> Observation:
        frame, tree = self.frames[-1], max(self.trees, key=lambda t: t.t0)
        return Observation(screenshot=self.store[frame.sha], ui_tree=tree.xml, package=tree.package,
                           activity=tree.activity)


def step_meta(episode: Episode) -> list[dict]:
    """Each step's recorder facts: ``Step.meta``, or, for episodes recorded before, ``meta["steps_meta"]``."""
    old = episode.meta.get("steps_meta") or []
    return [s.meta if "pairing" in s.meta or i >= len(old) else old[i] for i, s in enumerate(episode.steps)]


def _down(item: Gesture | KeyPress) -> float:
    return item.start if isinstance(item, Gesture) else item.down


def _up(item: Gesture | KeyPress) -> float:
    return item.end if isinstance(item, Gesture) else item.t


def _png_size(png: bytes) -> tuple[int, int]:
    return struct.unpack(">II", png[16:24]) if png[12:16] == b"IHDR" else (0, 0)

"""A virtual adb device: one MockPhone behind the commands adb clients send.

Commands handled here (everything else goes to ``mockphone.shell``)::

    screencap [-p] [FILE]                     always PNG (real devices write raw RGBA without -p)
    uiautomator dump [--compressed] [FILE]    FILE defaults to /sdcard/window_dump.xml; /dev/tty prints it
    input tap|swipe X1 Y1 X2 Y2 [MS]|text|keyevent   performed as phone actions (the clock advances)
    getevent -p / -lp                         a touchscreen (axes 0..4095) and a key device
    getevent -lt                              streamed by the server: gestures replayed with perform()
    ime list -s | ime set ID                  ADBKeyBoard is "installed": am broadcast -a ADB_INPUT_B64 --es msg B64
    cat | rm | ls | sleep | true | false      over the device's file store (files pulled and pushed by sync:)
    phoneloop reset SEED | phoneloop task start NAME [SEED|JSON] | phoneloop task check
    phoneloop act JSON                        an answer, ask_user or terminate action, recorded on the phone for
                                              its verifier (virtual devices only: harnesses can evaluate on mock tasks)

    cat /proc/uptime                          the device clock (also the clock of getevent's timestamps)
    wm size | dumpsys display | dumpsys window    natural size, rotation (adbutils window_size()/rotation()),
                                              focus, the nav bar's frame; settings get secure navigation_mode
    input keyevent NAME|CODE ...              KEYCODE_* names, bare names and numeric codes

Realism knobs (set as attributes, or ``configure``): ``capture_latency`` / ``dump_latency``
(seconds a screencap / uiautomator dump takes; the frame or tree is taken at the start,
``grab_jitter`` after the command arrives), ``rotation`` (0..3: the MockPhone's display
is the rotated screen; ``wm size`` and the touch panel stay in the natural orientation),
``nav_mode`` (``3button``: Back/Home/Overview are taps on the nav bar; ``gestural``: edge
and bottom swipes; ``keys``: KEY_BACK etc. from a ``touch-keys`` device, like old phones),
``touch_protocol`` (``B``, ``A`` or ``single``), ``suspended`` (seconds the phone slept since
boot: ``/proc/uptime`` is CLOCK_BOOTTIME and runs that far ahead of getevent's CLOCK_MONOTONIC),
``screen_on``, ``locked``, ``battery``, ``verifier`` (False: ``phoneloop task check`` is refused and
``ro.phoneloop.mock`` is 0, so clients take it for a real phone; ``mockphone.reallike`` serves its phones so)
(``dumpsys power|window|battery``, for farm health checks). Gestures carry real device-clock times:
the lift is stamped when the device applies the action, however late the host wakes the finger up.
``cat /proc/uptime`` prints centiseconds, truncated, as the kernel does; in ``cat /proc/uptime;
screencap -p`` the ``cat`` runs up to ``exec_gap`` (default 20 ms) before the grab, as on a phone;
a ``cat /proc/uptime`` after the screencap on that line prints after the grab.
``rotate(r)`` turns the phone mid-session (the display swaps sides; the panel stays natural).

``transition`` (seconds a screen change animates: a screencap inside it is the two screens
blended, ``dumpsys window`` says ``mAppTransitionState=APP_STATE_RUNNING``, and ``settings get
global transition_animation_scale`` is 1.0), ``slow_grabs`` / ``slow_grab_delay`` (the fraction
of screencaps that grab 2-3 s late, so they return a later frame; see ``display.py``).
``dumpsys power`` prints ``mHoldingDisplaySuspendBlocker`` (adbutils' ``is_screen_on()``).

``state`` is ``device``, ``offline`` or ``unauthorized`` (switched at run time through ``control.py``); ``faults`` makes the next N
screencaps or dumps fail the ways real ones do (tests of clients' retries and errors):
``screencap_garbage``, ``dump_idle``, ``dump_null_root``, ``dump_garbage``, ``dump_unstable``.
"""

from __future__ import annotations

import base64
import binascii
import json
import queue
import random
import shlex
import threading
import time
from collections import Counter
from typing import Any, Callable

from datalake.types import Action
from mockphone import shell as mockshell
from mockphone.adb import getevent
from mockphone.adb.display import Compositor, Grabs
from mockphone.adb.sh import Result, run as run_line
from mockphone.errors import MockPhoneError
from mockphone.phone import MockPhone

AGENT_ACTIONS = ("answer", "ask_user", "terminate")  # what `phoneloop act` records (nothing a finger does)

ADB_KEYBOARD = "com.android.adbkeyboard/.AdbIME"
DUMP_ERRORS = {"dump_idle": "ERROR: could not get idle state.", "dump_null_root":
               "ERROR: null root node returned by UiTestAutomationBridge."}
MUTATING = {"am", "monkey", "svc", "cmd"}
EDIT_KEYS = {"KEYCODE_DEL": "del", "67": "del", "KEYCODE_MOVE_END": "end", "123": "end"}
NO_OP_KEYS = {"KEYCODE_MENU": 82, "KEYCODE_POWER": 26, "KEYCODE_VOLUME_UP": 24, "KEYCODE_VOLUME_DOWN": 25,
              "KEYCODE_VOLUME_MUTE": 164, "KEYCODE_WAKEUP": 224, "KEYCODE_SLEEP": 223, "KEYCODE_TAB": 61,
              "KEYCODE_SPACE": 62, "KEYCODE_ESCAPE": 111, "KEYCODE_MOVE_HOME": 122, "KEYCODE_SEARCH": 84,
              "KEYCODE_DPAD_UP": 19, "KEYCODE_DPAD_DOWN": 20, "KEYCODE_DPAD_LEFT": 21, "KEYCODE_DPAD_RIGHT": 22,
              "KEYCODE_DPAD_CENTER": 23, "KEYCODE_CAMERA": 27, "KEYCODE_NOTIFICATION": 83}
NAV_MODES = {"3button": "0", "keys": "0", "gestural": "2"}
NAV_RIDS = {"back": "back", "home": "home", "app_switch": "recent_apps"}
ANIMATION_SCALES = ("window_animation_scale", "transition_animation_scale", "animator_duration_scale")


class VirtualDevice:
    """A serial, a state, a MockPhone, a file store and getevent subscribers; thread-safe."""

    def __init__(self, serial: str, phone: MockPhone, transport_id: int) -> None:
        self.serial = serial
        self.phone = phone
        self.transport_id = transport_id
        self.state = "device"
        self.files: dict[str, bytes] = {}
        self.faults: Counter[str] = Counter()  # fault name -> how many more times it happens
        self.task: Any = None
        self.offline_after: int | None = None  # go offline after this many more device requests (a cable pulled)
        self.adb_keyboard = True  # whether the ADBKeyBoard IME is "installed" (non-ASCII typing)
        self.lock = threading.RLock()
        self._frames = 0  # counts unstable dumps
        self._listeners: list[queue.Queue[str | None]] = []
        self.capture_latency = self.dump_latency = self.grab_jitter = 0.0
        self.nav_mode, self.rotation, self.touch_protocol = "3button", 0, "B"
        self.screen_on, self.locked, self.battery = True, False, 100
        self.suspended, self.exec_gap = 0.0, 0.02
        self.verifier = True  # False: `phoneloop task check` is refused (a real-like phone: no privileged reward)
        self._delay = self._uptime_lag = 0.0
        self._boot = time.monotonic() - 3600.0 - 97.3 * transport_id  # booted "an hour ago"
        self.touch = getevent.TouchPanel(phone.display.width, phone.display.height, clock=self.uptime)
        self.compositor = Compositor()  # screen transitions (``transition`` seconds)
        self.grabs = Grabs(seed=transport_id)  # when screencaps read the panel (``slow_grabs``)

    def configure(self, **knobs: Any) -> VirtualDevice:
        """Set realism knobs (see the module docstring) and rebuild the touch panel for them."""
        with self.lock:
            for name, value in knobs.items():
                if name in ("transition", "slow_grabs", "slow_grab_delay"):
                    setattr(self.compositor if name == "transition" else self.grabs, name, value)
                    continue
                if name not in ("capture_latency", "dump_latency", "grab_jitter", "nav_mode", "rotation",
                                "touch_protocol", "screen_on", "locked", "battery", "suspended", "exec_gap",
                                "verifier"):
                    raise ValueError(f"unknown virtual device setting {name!r}")
                setattr(self, name, value)
            if self.nav_mode not in NAV_MODES:
                raise ValueError(f"nav_mode must be one of {sorted(NAV_MODES)}, not {self.nav_mode!r}")
            w, h = self.natural_size()
            self.touch = getevent.TouchPanel(w, h, self.touch_protocol, clock=self.uptime)
        return self

    def uptime(self) -> float:
        """The device clock in seconds (CLOCK_MONOTONIC since boot): getevent's timestamps, /proc/uptime."""
        return time.monotonic() - self._boot

    def natural_size(self) -> tuple[int, int]:
        d = self.phone.display
        return (d.height, d.width) if self.rotation % 2 else (d.width, d.height)

    def request(self) -> None:
        """Count one device request against ``offline_after``."""
        with self.lock:
            if self.offline_after is not None:
                self.offline_after -= 1
                if self.offline_after < 0:
                    self.state, self.offline_after = "offline", None

    # --- shell ------------------------------------------------------------------------
    def shell(self, line: str) -> Result:
        if "screencap" in line:
            self.grabs.grab_jitter = self.grab_jitter
            wait = self.grabs.jitter()  # the process starts before it grabs the frame
            if wait:
                time.sleep(wait)
        with self.lock:
            self._delay = 0.0
            if "screencap" in line and "/proc/uptime" in line:
                self._uptime_lag = random.uniform(0, self.exec_gap)
            try:
                result = run_line(self, line)
            finally:
                self._uptime_lag = 0.0
            delay = self._delay
        if delay:
            time.sleep(delay)  # encoding and transfer: the frame was taken at the start
        return result

    def _act(self, action: Action):
        """``phone.act``, with the screen change it causes animated on the panel."""
        before = self.phone.pixels() if self.compositor.transition > 0 else None
        result = self.phone.act(action)
        if before is not None:
            self.compositor.changed(before, self.phone.pixels())
        return result

    def run_simple(self, argv: list[str]) -> Result:
        name, args = argv[0], argv[1:]
        handler = getattr(self, "_cmd_" + name.replace("-", "_"), None)
        if handler is not None:
            return handler(args)
        return self._mock(argv)

    def _fault(self, name: str) -> bool:
        if self.faults[name] > 0:
            self.faults[name] -= 1
            return True
        return False

    def _cmd_screencap(self, args: list[str]) -> Result:
        target = next((a for a in args if not a.startswith("-")), None)
        stall = self.grabs.stall()
        if stall:  # a late grab: the phone goes on (other commands, transitions) while screencap waits
            self.lock.release()
            try:
                time.sleep(stall)
            finally:
                self.lock.acquire()
        png = b"\x00garbage, not a PNG\n" if self._fault("screencap_garbage") else \
            self.compositor.frame(self.phone.screenshot())  # mid-transition: two screens blended
        if not isinstance(png, bytes):  # encoded off the lock: the phone goes on meanwhile
            self.lock.release()
            try:
                png = self.compositor.encode(png)
            finally:
                self.lock.acquire()
        self._delay += self.capture_latency
        if target is not None:
            self.files[target] = png
            return Result(0)
        return Result(0, png)

    def _cmd_uiautomator(self, args: list[str]) -> Result:
        args = [a for a in args if a != "--compressed"]
        if not args or args[0] != "dump" or len(args) > 2:
            return Result(1, stderr=b"Usage: uiautomator dump [--compressed] [FILE]\n")
        for fault, message in DUMP_ERRORS.items():
            if self._fault(fault):
                return Result(0, (message + "\n").encode())  # the real tool exits 0 here too
        path = args[1] if len(args) == 2 else "/sdcard/window_dump.xml"
        xml = b"<hierarchy><node bounds='garbage" if self._fault("dump_garbage") else self.phone.ui_tree().encode()
        self._delay += self.dump_latency
        if self._fault("dump_unstable"):  # a screen still animating: every dump differs
            self._frames += 1
            xml = xml.replace(b"<hierarchy rotation=\"0\">", b"<hierarchy rotation=\"0\"><!-- frame %d -->"
                              % self._frames, 1)
        if self.rotation:
            xml = xml.replace(b'<hierarchy rotation="0">', b'<hierarchy rotation="%d">' % self.rotation, 1)
        done = f"UI hierchary dumped to: {path}\n".encode()  # sic: the real tool's spelling
        if path == "/dev/tty":
            return Result(0, xml + done)
        self.files[path] = xml
        return Result(0, done)

    def _cmd_input(self, args: list[str]) -> Result:
        if args[:1] == ["keyevent"]:
            return self._keyevents([a for a in args[1:] if a not in ("--longpress", "--doubletap")])
        try:
            action = _input_action(args)
        except ValueError as exc:
            return Result(1, stderr=f"{exc}\nusage: input [tap X Y | swipe X1 Y1 X2 Y2 [MS] | text STR | "
                                    f"keyevent KEYCODE]\n".encode())
        self._act(action)
        return Result(0)

    def _keyevents(self, codes: list[str]) -> Result:
        """Several key codes in one ``input keyevent``; DEL deletes the focused field's last character."""
        if not codes:
            return Result(1, stderr=b"usage: input keyevent [--longpress|--doubletap] KEYCODE ...\n")
        for code in map(_keycode, codes):
            if code in mockshell.KEYCODES:
                self._act(Action("key", key=mockshell.KEYCODES[code]))
            elif code in EDIT_KEYS:
                nav = self.phone.nav
                page = nav.top_page(nav.foreground) if nav.foreground else None
                if EDIT_KEYS[code] == "del" and page is not None and nav.focus is not None:
                    page.fields[nav.focus] = page.field(nav.focus)[:-1]
                    self.phone.invalidate()
            elif code not in NO_OP_KEYS and code not in {str(v) for v in NO_OP_KEYS.values()}:
                return Result(1, stderr=f"Error: Unknown keycode {code!r}\n".encode())
        return Result(0)

    def _cmd_am(self, args: list[str]) -> Result:
        if args[:1] == ["broadcast"] and "ADB_INPUT_B64" in args and "--es" in args and self.adb_keyboard:
            i = args.index("--es")
            try:
                text = base64.b64decode(args[i + 2], validate=True).decode("utf-8")
            except (IndexError, binascii.Error, UnicodeDecodeError):
                return Result(1, stderr=b"ADB_INPUT_B64: msg is not base64 UTF-8\n")
            self._act(Action("input_text", text=text))
            return Result(0, b"Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 }\nBroadcast completed: result=0\n")
        act = self._act(Action("shell", command=shlex.join(["am", *args])))
        out = (act.output + "\n").encode() if act.output else b""
        return Result(act.exit_code or 0, out if act.ok else b"", b"" if act.ok else out)

    def _cmd_ime(self, args: list[str]) -> Result:
        if args[:2] == ["list", "-s"]:
            extra = f"{ADB_KEYBOARD}\n" if self.adb_keyboard else ""
            return Result(0, f"com.google.android.inputmethod.latin/.LatinIME\n{extra}".encode())
        if args[:1] in (["set"], ["enable"]) and len(args) == 2:
            return Result(0, f"Input method {args[1]} selected for user #0\n".encode())
        return Result(1, stderr=b"usage: ime [list -s | set ID | enable ID]\n")

    def props(self) -> dict[str, str]:
        """System properties; ``adb devices -l`` shows product/model/device from the same ones."""
        return {**mockshell.PROPS, "ro.serialno": self.serial,
                "ro.phoneloop.mock": "1" if self.verifier else "0", "ro.product.name":
                "phoneloop_mock", "ro.product.device": "mock", "ro.sf.lcd_density": str(self.phone.display.dpi),
                "sys.boot_completed": "1", "ro.build.characteristics": "phone",
                "persist.sys.locale": self.phone.locale}

    def _cmd_getprop(self, args: list[str]) -> Result:
        props = self.props()
        if not args:
            return Result(0, "".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())).encode())
        return Result(0, (props.get(args[0], "") + "\n").encode())

    def _cmd_getevent(self, args: list[str]) -> Result:
        flags = "".join(a.lstrip("-") for a in args if a.startswith("-"))
        if "p" in flags:
            return Result(0, self.touch.describe(labels="l" in flags).encode())
        return Result(1, stderr=b"getevent: only -p/-lp here; -lt streams through the adb server\n")

    def _cmd_wm(self, args: list[str]) -> Result:
        if args == ["size"]:
            w, h = self.natural_size()
            return Result(0, f"Physical size: {w}x{h}\n".encode())
        if args == ["density"]:
            return Result(0, f"Physical density: {self.phone.display.dpi}\n".encode())
        return Result(1, stderr=b"usage: wm [size|density]\n")

    def _cmd_dumpsys(self, args: list[str]) -> Result:
        d, (nw, nh) = self.phone.display, self.natural_size()
        if args[:1] == ["display"]:
            return Result(0, (
                f"DISPLAY MANAGER (dumpsys display)\n  mDefaultViewport=DisplayViewport{{type=INTERNAL, valid=true, "
                f"isActive=true, displayId=0, uniqueId='local:0', physicalPort=0, orientation={self.rotation}, "
                f"logicalFrame=Rect(0, 0 - {d.width}, {d.height}), physicalFrame=Rect(0, 0 - {d.width}, {d.height}), "
                f"deviceWidth={d.width}, deviceHeight={d.height}}}\n  DisplayDeviceInfo{{\"Built-in Screen\": "
                f"uniqueId=\"local:0\", {nw} x {nh}, modeId 1, density {d.dpi}, rotation {self.rotation}}}\n"
                f"  mCurrentOrientation={self.rotation}\n").encode())
        if args[:1] == ["window"]:
            running = self.compositor.animating()  # as AppTransition dumps it
            state = "APP_STATE_RUNNING" if running else "APP_STATE_IDLE"
            pkg = self.phone.nav.foreground or "com.google.android.apps.nexuslauncher"
            top = d.height - d.nav_h
            nav = (f"  Window #1 Window{{1 u0 NavigationBar0}}:\n    mFrame=[0,{top}][{d.width},{d.height}]\n"
                   if self.nav_mode == "3button" else "")
            return Result(0, (f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n{nav}"
                              f"  mCurrentFocus=Window{{0 u0 {pkg}/{pkg}{self.phone.activity()}}}\n"
                              f"  mFocusedApp=ActivityRecord{{0 u0 {pkg}/{self.phone.activity()} t1}}\n"
                              f"  mRotation={self.rotation} mDisplayRotation=ROTATION_{90 * self.rotation}\n"
                              f"  mShowingLockscreen={str(self.locked).lower()} "
                              f"mDreamingLockscreen={str(self.locked).lower()}\n"
                              f"  cur={d.width}x{d.height} app={d.width}x{d.height}\n"
                              f"APP TRANSITIONS (dumpsys window transitions)\n"
                              f"  mAppTransitionState={state}\n"
                              f"  mWindowAnimationRunning={str(running).lower()}\n").encode())
        if args[:1] == ["power"]:
            awake, on = ("Awake", "true") if self.screen_on else ("Asleep", "false")
            return Result(0, (f"POWER MANAGER (dumpsys power)\nPower Manager State:\n  mWakefulness={awake}\n"
                              f"  mWakefulnessChanging=false\n  mIsPowered=true\n  mPlugType=2\n"
                              f"  mHoldingWakeLockSuspendBlocker=false\n  mHoldingDisplaySuspendBlocker={on}\n"
                              f"Display Power: state={'ON' if self.screen_on else 'OFF'}\n").encode())
        if args[:1] == ["battery"]:
            return Result(0, f"Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
                             f"  level: {self.battery}\n  scale: 100\n".encode())
        code, out = mockshell.run(self.phone, shlex.join(["dumpsys", *args]))
        return Result(code, (out + "\n").encode() if code == 0 else b"", b"" if code == 0 else (out + "\n").encode())

    def _cmd_settings(self, args: list[str]) -> Result:
        if args == ["get", "secure", "navigation_mode"]:
            return Result(0, (NAV_MODES[self.nav_mode] + "\n").encode())
        if args == ["get", "system", "user_rotation"]:
            return Result(0, f"{self.rotation}\n".encode())
        if args[:2] == ["get", "global"] and args[2:] and args[2] in ANIMATION_SCALES:
            return Result(0, b"1.0\n" if self.compositor.transition > 0 else b"0.0\n")
        return self._mock(["settings", *args])

    def _mock(self, argv: list[str]) -> Result:
        """The rest of the shell, on the MockPhone (state-changing commands as recorded shell actions)."""
        if argv[0] == "settings" and argv[1:2] in (["put"], ["delete"]) or argv[0] in MUTATING:
            act = self._act(Action("shell", command=shlex.join(argv)))
            code, out = act.exit_code or 0, act.output
        else:
            code, out = mockshell.run(self.phone, shlex.join(argv))
        text = (out + "\n").encode() if out else b""
        return Result(code, text if code == 0 else b"", b"" if code == 0 else text)

    def _cmd_echo(self, args: list[str]) -> Result:
        newline = "-n" not in args[:1]
        return Result(0, (" ".join(args[0 if newline else 1:]) + ("\n" if newline else "")).encode())

    def _cmd_cat(self, args: list[str]) -> Result:
        out, err, code = bytearray(), bytearray(), 0
        for path in args:
            if path == "/proc/uptime":  # CLOCK_BOOTTIME in centiseconds, truncated
                up = int(100 * (self.uptime() + self.suspended - self._uptime_lag)) / 100
                self._uptime_lag = 0.0  # only the stamp before the grab runs early: one after it runs after
                out += f"{up:.2f} {up * 1.7:.2f}\n".encode()
            elif path in self.files:
                out += self.files[path]
            else:
                err += f"cat: {path}: No such file or directory\n".encode()
                code = 1
        return Result(code, bytes(out), bytes(err))

    def _cmd_rm(self, args: list[str]) -> Result:
        force = any(a.startswith("-") and "f" in a for a in args)
        for path in (a for a in args if not a.startswith("-")):
            if self.files.pop(path, None) is None and not force:
                return Result(1, stderr=f"rm: {path}: No such file or directory\n".encode())
        return Result(0)

    def _cmd_ls(self, args: list[str]) -> Result:
        paths = [a for a in args if not a.startswith("-")] or ["/sdcard"]
        found = sorted(p for p in self.files if any(p == q or p.startswith(q.rstrip("/") + "/") for q in paths))
        return Result(0, "".join(p + "\n" for p in found).encode())

    def _cmd_sleep(self, args: list[str]) -> Result:
        """Advances the phone's clock (slow loads finish, toasts expire) instead of sleeping."""
        try:
            seconds = float(args[0]) if args else 1.0
        except ValueError:
            return Result(1, stderr=f"sleep: invalid number {args[0]!r}\n".encode())
        self._act(Action("wait", seconds=seconds))
        return Result(0)

    def _cmd_true(self, args: list[str]) -> Result:
        return Result(0)

    def _cmd_false(self, args: list[str]) -> Result:
        return Result(1)

    def _cmd_phoneloop(self, args: list[str]) -> Result:
        from mockphone.tasks import registry

        try:
            if args[:1] == ["reset"] and len(args) == 2:
                self.phone.reset(int(args[1]))
                self.task = None
                return Result(0, f"reset to seed {args[1]}\n".encode())
            if args[:2] == ["task", "start"] and len(args) in (3, 4):
                extra = args[3] if len(args) == 4 else "0"
                cls = registry.get(args[2])
                # with explicit params the task draws from the world of the phone's current seed (its setup adds
                # that world's items), not seed 0's
                task = (cls(params=json.loads(extra), seed=self.phone.seed) if extra.startswith("{")
                        else cls(seed=int(extra)))
                if not extra.startswith("{"):  # with explicit params, the phone keeps its current seed
                    self.phone.reset(int(extra))
                task.initialize_task(self.phone)
                self.task = task
                return Result(0, (task.goal + "\n").encode())
            if args[:1] == ["act"] and len(args) == 2:
                action = Action.from_json(args[1])
                if action.type not in AGENT_ACTIONS:
                    return Result(1, stderr=f"phoneloop act: only {', '.join(AGENT_ACTIONS)} (perform "
                                            f"{action.type} with input commands)\n".encode())
                self.phone.act(action)
                return Result(0, f"{action.type} recorded\n".encode())
            if args[:2] == ["task", "check"] and not self.verifier:
                return Result(1, stderr=b"phoneloop: this device has no verifier (a real-like phone: judge the "
                                        b"episode from what it shows)\n")
            if args[:2] == ["task", "check"] and self.task is not None:
                return Result(0, f"{self.task.is_successful(self.phone)}\n".encode())
        except (MockPhoneError, ValueError) as exc:
            return Result(1, stderr=f"phoneloop: {exc}\n".encode())
        return Result(1, stderr=b"usage: phoneloop reset SEED | task start NAME [SEED|JSON] | task check | act JSON\n")

    # --- getevent -------------------------------------------------------------------------
    def listen(self) -> queue.Queue[str | None]:
        q: queue.Queue[str | None] = queue.Queue()
        with self.lock:
            self._listeners.append(q)
        return q

    def unlisten(self, q: queue.Queue[str | None]) -> None:
        with self.lock:
            if q in self._listeners:
                self._listeners.remove(q)

    def listeners(self) -> int:
        with self.lock:
            return len(self._listeners)

    def emit(self, lines: list[str]) -> None:
        with self.lock:
            for q in self._listeners:
                for line in lines:
                    q.put(line)

    def perform(self, action: Action, after_each: Callable[[], Any] | None = None) -> list[Action]:
        """Do ``action`` the way a finger would, in real time: emit its raw getevent lines, then apply it.

        Returns the human-level actions performed (``open_app`` becomes home + a tap on the
        launcher icon; ``input_text`` with a point becomes a tap, then typing, which emits no
        touch events, as with an IME). Navigation keys become what the phone's ``nav_mode``
        makes a person do: a nav-bar tap, an edge or bottom swipe, or a touch-key press. The
        gesture takes its real duration (the screen changes when the finger lifts).
        ``after_each`` runs after each of them, outside the device lock.
        """
        done: list[Action] = []
        steps = getevent.humanize(self.phone, action)  # lazy: each step reads the screen the last one left
        while True:
            with self.lock:
                step = next(steps, None)
                if step is None:
                    break
                for i, gesture in enumerate(self._gestures(step)):
                    if i:
                        time.sleep(0.12)  # the second tap of a double tap
                    lines, us = gesture()
                    self.lock.release()
                    try:
                        time.sleep(us / 1e6)  # the finger is down; the screen has not changed yet
                    finally:
                        self.lock.acquire()
                    self.emit(getevent.restamp_lift(lines, self.touch.now_us()))
                self._act(step)
                self.phone.screenshot()  # composite the new frame now, as a display does, so a screencap
                # waiting for the lock grabs it at once instead of rendering while the clock runs
            done.append(step)
            if after_each is not None:
                after_each()
        return done

    def _gestures(self, a: Action) -> list[Callable[[], tuple[list[str], int]]]:
        """The touch gestures (or key presses) that perform ``a`` on this phone, as line makers."""
        def plain(act: Action) -> Callable[[], tuple[list[str], int]]:
            return lambda: self.touch.gesture(act, self.phone, self.rotation)

        if a.type == "double_tap":
            return [plain(Action("tap", x=a.x, y=a.y))] * 2
        if a.type != "key" or a.key == "enter" or self.nav_mode == "keys":
            return [plain(a)]
        w, h = self.phone.display.width, self.phone.display.height
        if self.nav_mode == "3button":
            from datalake.uitree import parse_ui_tree

            rid = NAV_RIDS[a.key]
            button = next(e for e in parse_ui_tree(self.phone.ui_tree()) if e.resource_id.endswith("/" + rid))
            return [plain(Action("tap", x=button.center[0], y=button.center[1]))]
        if a.key == "back":
            return [plain(Action("swipe", x=3, y=h // 2, x2=int(w * 0.35), y2=h // 2, duration_ms=180))]
        hold = 450 if a.key == "app_switch" else 0  # swipe up and hold: recents
        path = getevent.line_path(w // 2, h - 4, w // 2, int(h * 0.6), 260, hold)
        return [lambda: self.touch.touch([path], 260 + hold, self.rotation)]

    def rotate(self, rotation: int) -> None:
        """Turn the phone to ``rotation`` (0..3) now: the display swaps sides, the touch panel stays natural."""
        import dataclasses

        if rotation not in (0, 1, 2, 3):
            raise ValueError(f"rotation must be 0..3, not {rotation!r}")
        with self.lock:
            d = self.phone.display
            if (rotation - self.rotation) % 2:
                self.phone.display = dataclasses.replace(d, width=d.height, height=d.width)
            self.rotation = rotation
            self.phone.invalidate()

    def close(self) -> None:
        with self.lock:
            for q in self._listeners:
                q.put(None)
            self._listeners.clear()


def _keycode(code: str) -> str:
    """``BACK``, ``back``, ``KEYCODE_BACK`` and ``4`` name the same key: the canonical name or the code."""
    if code.isdigit():
        return code
    name = code.upper()
    return name if name.startswith("KEYCODE_") else "KEYCODE_" + name


def _input_action(args: list[str]) -> Action:
    if args[:1] == ["tap"] and len(args) == 3:
        return Action("tap", x=float(args[1]), y=float(args[2]))
    if args[:1] == ["swipe"] and len(args) in (5, 6):
        x, y, x2, y2 = (float(v) for v in args[1:5])
        ms = int(args[5]) if len(args) == 6 else None
        return Action("swipe", x=x, y=y, x2=x2, y2=y2, duration_ms=ms)
    if args[:1] == ["text"] and len(args) >= 2:
        text = " ".join(args[1:]).replace("%s", " ")
        bad = next((ch for ch in text if not 0x20 <= ord(ch) < 0x7F), None)
        if bad is not None:
            raise ValueError(f"Exception occurred while executing 'text': cannot type {bad!r} "
                             f"(no key for it in the virtual keyboard's key character map)")
        return Action("input_text", text=text)
    if args[:1] == ["keyevent"] and len(args) == 2 and args[1] in mockshell.KEYCODES:
        return Action("key", key=mockshell.KEYCODES[args[1]])
    raise ValueError(f"bad input command: {' '.join(args)}")

"""AdbPhone: a real phone (or a virtual one) over adb, through adbutils, implementing the Phone protocol.

    phone = AdbPhone("emulator-5554", port=5037)    # the adb server must already run
    obs = phone.observe()                           # screencap -p + uiautomator dump + focus
    phone.act(Action("input_text", text="it's 5 o'clock", x=540, y=300))

observe: ``screencap -p`` (must be a PNG), ``uiautomator dump`` (retried on "could not get
idle state", "null root node" and unparseable output, then ``BadUITree``), the focused
package/activity from ``dumpsys window``; with ``settle`` it waits until two consecutive
dumps agree around the screenshot. Screen size, density and rotation are read once
(``device()``); rotation is refreshed from each dump's ``<hierarchy rotation>``.

act: tap/double_tap (``input tap``), long_press (a zero-distance ``input swipe`` held
``duration_ms``, default 800), swipe, scroll (a swipe through the element or the screen
centre, the finger moving against ``direction``), input_text (see ``phones.text``;
``clear`` deletes the focused field's text with DEL keys first), key, open_app
(``monkey -p`` with the package, resolved from a label through ``apps``, a common-app
table or ``pm list packages``), wait (``sleep`` on the device), shell. answer, ask_user
and terminate do nothing on a real phone; a phoneloop virtual device records them for its
verifier (``phoneloop act``).

What oracles read besides the tree: ``display`` (the screen as shown: width and height in
the current rotation, dpi, the status bar's height from the tree's
``com.android.systemui:id/status_bar``) and ``locale`` (``persist.sys.locale``, else
``ro.product.locale``, else en-US). Errors: ``AdbServerUnreachable`` (never starts a
server), ``DeviceNotFound``, ``DeviceUnauthorized``, ``DeviceOffline`` (also when the
connection drops mid-command), ``BadScreenshot``, ``BadUITree``, ``UntypeableText``.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import time
from dataclasses import dataclass
from typing import Any

import adbutils
from adbutils import AdbClient, AdbConnection
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from phones import text as typing_
from phones.errors import (
    AdbServerUnreachable, BadScreenshot, BadUITree, DeviceNotFound, DeviceOffline, DeviceUnauthorized,
    UnsupportedAction,
)
from datalake.errors import UITreeError
from datalake.types import Action, Device, Observation
from datalake.uitree import parse_ui_tree

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DUMP_PATH = "/data/local/tmp/phoneloop_dump.xml"
TRANSIENT_DUMP = ("could not get idle state", "null root node")
KEYCODES = {"back": "KEYCODE_BACK", "home": "KEYCODE_HOME", "enter": "KEYCODE_ENTER", "app_switch": "KEYCODE_APP_SWITCH"}
COMMON_APPS = {"messages": "com.google.android.apps.messaging", "clock": "com.google.android.deskclock",
               "files": "com.google.android.documentsui", "chrome": "com.android.chrome",
               "camera": "com.android.camera2", "gmail": "com.google.android.gm", "maps": "com.google.android.apps.maps",
               "photos": "com.google.android.apps.photos", "youtube": "com.google.android.youtube"}
_FOCUS = re.compile(r"m(?:CurrentFocus|FocusedApp)=\S*\{[^}]*?\s(?P<pkg>[\w.]+)/(?P<act>[\w.$]+)")
UPTIME = "cat /proc/uptime; "  # prefixed to a command: the device clock when it starts
STATUS_BAR = "com.android.systemui:id/status_bar"
_ROTATION = re.compile(r"<hierarchy[^>]*\brotation=\"(\d)\"")


class _Connection(AdbConnection):
    """An adbutils connection that never starts an adb server when nothing answers."""

    def _safe_connect(self):  # noqa: D401 - overrides adbutils' spawn-on-failure
        return self._create_socket()

    def close(self) -> None:
        """Half-close then close, without the 10 ms sleep adbutils adds to every command."""
        sock = self._AdbConnection__conn  # adbutils keeps the socket in a name-mangled attribute
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        sock.close()
        self._AdbConnection__conn = None


class _Client(AdbClient):
    """adbutils' client on our connection class, with the server version asked once."""

    _version: int | None = None

    def make_connection(self, timeout: float | None = None) -> AdbConnection:
        try:
            conn = _Connection(self.host, self.port)
        except (AdbConnectionError, AdbTimeout) as exc:
            raise AdbServerUnreachable(
                f"no adb server answers at {self.host}:{self.port} ({exc}); start one (`adb start-server`, or "
                f"`phoneloop device serve --port {self.port}` for virtual phones): phoneloop never starts one") from None
        if timeout:
            conn.conn.settimeout(timeout)
        return conn

    def server_version(self) -> int:
        if self._version is None:
            self._version = super().server_version()
        return self._version


def client(host: str = "127.0.0.1", port: int | None = None) -> AdbClient:
    """An adbutils client for ``host:port`` (default ``ANDROID_ADB_SERVER_PORT`` or 5037) that never spawns a server."""
    return _Client(host=host, port=port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037")))


@dataclass(frozen=True)
class ScreenMetrics:
    """The screen as an oracle lays out gestures on it (the fields of a mock phone's ``display`` it reads)."""

    width: int
    height: int
    dpi: int
    status_h: int

    @property
    def density(self) -> float:
        return self.dpi / 160

    def dp(self, value: float) -> int:
        return int(round(value * self.density))


@dataclass(frozen=True)
class AdbActResult:
    ok: bool
    detail: str = ""
    exit_code: int | None = None
    output: str = ""


class AdbPhone:
    """One phone on an adb server; see the module docstring."""

    kind = "real"

    def __init__(self, serial: str, *, host: str = "127.0.0.1", port: int | None = None, settle: bool = True,
                 settle_timeout: float = 5.0, dump_retries: int = 3, retry_delay: float = 0.2,
                 apps: dict[str, str] | None = None, command_timeout: float = 30.0) -> None:
        self.serial = serial
        self.settle, self.settle_timeout = settle, settle_timeout
        self.dump_retries, self.retry_delay = dump_retries, retry_delay
        self.apps = {k.lower(): v for k, v in (apps or {}).items()}
        self.command_timeout = command_timeout
        self._client = client(host, port)
        self.address = f"{host}:{self._client.port}"  # the adb server that lists it, HOST:PORT
        check_state(self._client, serial)
        self._dev = self._client.device(serial)
        self._facts: dict[str, Any] | None = None
        self._locale: str | None = None
        self._status_h: int | None = None
        self.rotation = 0

    # --- the Phone protocol -------------------------------------------------------------
    def reset(self, seed: int = 0) -> None:
        """A real phone cannot be rebuilt from a seed: go to the home screen."""
        self.press("home")

    def observe(self) -> Observation:
        deadline = time.monotonic() + self.settle_timeout
        tree, package, activity = self._dump()
        while True:
            png = self.screenshot()
            if not self.settle:
                break
            again, package, activity = self._dump()
            if again == tree or time.monotonic() >= deadline:
                tree = again
                break
            tree = again
        return Observation(screenshot=png, ui_tree=tree, package=package, activity=activity)

    def wait_until_stable(self, timeout: float = 5.0, reads: int = 2, interval: float = 0.2) -> bool:
        """Poll the UI tree until ``reads`` consecutive dumps agree (True) or ``timeout`` passes (False)."""
        deadline = time.monotonic() + timeout
        last, same = None, 0
        while True:
            tree = self._dump()[0]
            same = same + 1 if tree == last else 1
            if same >= reads:
                return True
            if time.monotonic() >= deadline:
                return False
            last = tree
            time.sleep(interval)

    def act(self, action: Action) -> AdbActResult:
        handler = getattr(self, "_act_" + action.type, None)
        if handler is None:
            raise UnsupportedAction(f"{action.type} actions cannot be performed on a real phone ({self.serial})")
        return handler(action)

    def ui_tree(self) -> str:
        return self._dump()[0]

    def dump(self) -> tuple[str, str | None, str | None]:
        """One UI tree dump (retried on uiautomator's transient failures): (XML, package, activity)."""
        return self._dump()

    def dump_at(self, path: str = DUMP_PATH) -> tuple[float, str, str | None, str | None]:
        """(device uptime just before the dump, XML, package, activity): the dump stamped on the phone's clock.
        Dumps that may overlap need their own ``path`` on the device."""
        head, (xml, package, activity) = self._dump_after(UPTIME, path)
        return _uptime(self.serial, head), xml, package, activity

    def screenshot_at(self) -> tuple[float, bytes]:
        """(device uptime just before the grab, PNG): ``cat /proc/uptime`` and ``screencap -p`` in one shell line,
        so the stamp is taken on the phone next to the grab, whatever the host's load or the transfer's delay."""
        head, png = self._screencap(UPTIME)
        return _uptime(self.serial, head), png

    def device(self) -> Device:
        f = self.facts()
        kind = "mock" if f["mock"] else "real"
        return Device(width=f["width"], height=f["height"], kind=kind,
                      extra={"serial": self.serial, "dpi": f["dpi"], "model": f["model"], "rotation": self.rotation})

    def close(self) -> None:
        """Nothing to release: each command opens its own adb connection."""

    @property
    def display(self) -> ScreenMetrics:
        """Screen size in the current rotation, density and status bar height (read once from a dump)."""
        f = self.facts()
        if self._status_h is None:
            bar = next((e for e in parse_ui_tree(self._dump()[0])
                        if e.resource_id == STATUS_BAR and e.bounds is not None), None)
            self._status_h = bar.bounds[3] - bar.bounds[1] if bar is not None else round(24 * f["dpi"] / 160)
        w, h = (f["height"], f["width"]) if self.rotation % 2 else (f["width"], f["height"])
        return ScreenMetrics(w, h, f["dpi"], self._status_h)

    @property
    def locale(self) -> str:
        """The phone's locale as a BCP 47 tag (``persist.sys.locale``, else ``ro.product.locale``, else en-US)."""
        if self._locale is None:
            lines = self.run("getprop persist.sys.locale; getprop ro.product.locale").split()
            self._locale = next((line.strip() for line in lines if line.strip()), "en-US")
        return self._locale

    # --- reads --------------------------------------------------------------------------
    def shell(self, command: str) -> tuple[int, str, bytes]:
        """Run a command line on the phone: (exit code, stderr text, stdout bytes)."""
        try:
            r = self._dev.shell2(command, timeout=self.command_timeout, encoding=None, v2=True)
        except AdbServerUnreachable:
            raise
        except AdbError as exc:
            raise _device_error(self.serial, str(exc)) from None
        except (OSError, EOFError) as exc:
            raise DeviceOffline(f"{self.serial}: connection lost during {command.split()[0]!r} ({exc})") from None
        return r.returncode, r.stderr.decode("utf-8", "replace"), r.stdout

    def stream(self, command: str) -> Any:
        """A socket streaming a long-running command's output (``getevent -lt``); close it to stop."""
        try:
            return _Stream(self._dev.shell(command, stream=True))
        except AdbError as exc:
            raise _device_error(self.serial, str(exc)) from None

    def run(self, command: str) -> str:
        code, err, out = self.shell(command)
        return out.decode("utf-8", "replace") + err

    def screenshot(self) -> bytes:
        return self._screencap("")[1]

    def _screencap(self, prefix: str) -> tuple[bytes, bytes]:
        """(the first line ``prefix`` printed, PNG bytes)."""
        code, err, png = self.shell(prefix + "screencap -p")
        head, png = _split_head(prefix, png)
        if not png.startswith(PNG_MAGIC):
            raise BadScreenshot(f"{self.serial}: screencap -p returned {len(png)} bytes that are not a PNG "
                                f"(starts {png[:16]!r}; exit {code}{': ' + err.strip() if err.strip() else ''})")
        return head, png

    def facts(self) -> dict[str, Any]:
        """Screen size and density (read once), model, and whether it is a phoneloop virtual device."""
        if self._facts is None:
            out = self.run("wm size; wm density; echo __model__; getprop ro.product.model; echo __mock__; "
                           "getprop ro.phoneloop.mock")
            screen, _, rest = out.partition("__model__")
            model, _, mock = rest.partition("__mock__")
            size = re.findall(r"(?:Physical|Override) size: (\d+)x(\d+)", screen)
            dens = re.findall(r"(?:Physical|Override) density: (\d+)", screen)
            if not size or not dens:
                raise DeviceOffline(f"{self.serial}: could not read the screen size and density ({out.strip()!r})")
            self._facts = {"width": int(size[-1][0]), "height": int(size[-1][1]), "dpi": int(dens[-1]),
                           "model": model.strip(), "mock": mock.strip() == "1"}
        return self._facts

    def runs_tasks(self) -> bool:
        """True on a phoneloop virtual device, which can start and verify mock tasks itself."""
        return bool(self.facts()["mock"])

    def start_task(self, task: Any, seed: int = 0) -> None:
        """Reset the virtual device to ``seed`` and put ``task`` (same params) in its start state."""
        import json

        code, err, out = self.shell(f"phoneloop reset {int(seed)} && phoneloop task start {task.name()} "
                                    f"{shlex.quote(json.dumps(task.params, sort_keys=True))}")
        if code != 0:
            raise UnsupportedAction(f"{self.serial}: cannot start task {task.name()}: {err.strip() or out!r}")

    def check_task(self) -> float:
        """The virtual device's verifier score for the task started with ``start_task``."""
        code, err, out = self.shell("phoneloop task check")
        if code != 0:
            raise UnsupportedAction(f"{self.serial}: cannot verify the task: {err.strip()}")
        return float(out.decode().strip())

    def _dump(self) -> tuple[str, str | None, str | None]:
        """(XML, package, activity), retrying the transient failures of uiautomator."""
        return self._dump_after("", DUMP_PATH)[1]

    def _dump_after(self, prefix: str, path: str) -> tuple[bytes, tuple[str, str | None, str | None]]:
        """(the first line ``prefix`` printed, (XML, package, activity)); each retry runs ``prefix`` again."""
        path = shlex.quote(path)
        command = (f"{prefix}rm -f {path}; uiautomator dump {path}; cat {path}; echo; "
                   "echo __focus__; dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'")
        problem = ""
        for attempt in range(self.dump_retries + 1):
            if attempt:
                time.sleep(self.retry_delay * attempt)
            _, err, raw = self.shell(command)
            head, raw = _split_head(prefix, raw)
            text = raw.decode("utf-8", "replace")
            dump, _, focus = text.partition("__focus__")
            start = dump.find("<?xml") if "<?xml" in dump else dump.find("<hierarchy")
            transient = next((t for t in TRANSIENT_DUMP if t in dump), None)
            if start < 0:
                problem = transient or (dump.strip()[:200] or err.strip()[:200] or "empty output")
                continue
            xml = dump[start:].strip()
            try:
                parse_ui_tree(xml)
            except UITreeError as exc:
                problem = f"unparseable dump: {exc}"
                continue
            m = _ROTATION.search(xml[:500])
            self.rotation = int(m.group(1)) if m else 0
            package, activity = _focus(focus)
            return head, (xml, package, activity)
        raise BadUITree(f"{self.serial}: uiautomator dump failed {self.dump_retries + 1} times; last: {problem}")

    # --- actions ------------------------------------------------------------------------
    def _do(self, *commands: str) -> AdbActResult:
        code, err, out = self.shell("; ".join(commands))
        output = out.decode("utf-8", "replace") + err
        return AdbActResult(code == 0, f"exit {code}", code, output)

    def press(self, key: str) -> AdbActResult:
        return self._do(f"input keyevent {KEYCODES[key]}")

    def _act_tap(self, a: Action) -> AdbActResult:
        return self._do(f"input tap {round(a.x)} {round(a.y)}")

    def _act_double_tap(self, a: Action) -> AdbActResult:
        return self._do(*[f"input tap {round(a.x)} {round(a.y)}"] * 2)

    def _act_long_press(self, a: Action) -> AdbActResult:
        x, y = round(a.x), round(a.y)
        return self._do(f"input swipe {x} {y} {x} {y} {a.duration_ms or 800}")

    def _act_swipe(self, a: Action) -> AdbActResult:
        return self._do(f"input swipe {round(a.x)} {round(a.y)} {round(a.x2)} {round(a.y2)} {a.duration_ms or 300}")

    def _act_scroll(self, a: Action) -> AdbActResult:
        f = self.facts()
        if a.element is not None and a.element.bounds is not None:
            x1, y1, x2, y2 = a.element.bounds
        else:
            x1, y1, x2, y2 = 0, 0, f["width"], f["height"]
        cx, cy = (a.x, a.y) if a.x is not None else ((x1 + x2) / 2, (y1 + y2) / 2)
        dx, dy = {"down": (0, -1), "up": (0, 1), "right": (-1, 0), "left": (1, 0)}[a.direction]
        hx, hy = (x2 - x1) * 0.3 * dx, (y2 - y1) * 0.3 * dy
        return self._do(f"input swipe {round(cx - hx)} {round(cy - hy)} {round(cx + hx)} {round(cy + hy)} 300")

    def _act_input_text(self, a: Action) -> AdbActResult:
        typing_.check_typeable(a.text)
        commands = [f"input tap {round(a.x)} {round(a.y)}"] if a.x is not None else []
        if a.clear:
            commands.append(self._clear_command(a.x, a.y))
        if typing_.is_plain(a.text):
            commands += typing_.input_text_commands(a.text)
        else:
            commands += [self._adb_keyboard(), typing_.broadcast_command(a.text)]
        return self._do(*commands)

    def _clear_command(self, x: float | None = None, y: float | None = None) -> str:
        """DEL keys for the text of the field the action types into: the text field under (x, y) (which the
        tap before focuses), else the focused one."""
        els = parse_ui_tree(self.ui_tree())
        under = [e for e in els if x is not None and y is not None and e.contains(x, y) and "EditText" in e.class_name]
        field_ = next(iter(under[::-1]), None) or next((e for e in els if e.focused and e.text), None)
        count = len(field_.text) if field_ is not None else 0
        return "input keyevent KEYCODE_MOVE_END" + " KEYCODE_DEL" * count

    def _adb_keyboard(self) -> str:
        if typing_.ADB_KEYBOARD not in self.run("ime list -s"):
            raise typing_.UntypeableText(
                f"{self.serial}: non-ASCII text needs the ADBKeyBoard IME ({typing_.ADB_KEYBOARD}), which is not "
                "installed: install its APK (https://github.com/senzhk/ADBKeyBoard) or type ASCII only")
        return f"ime set {typing_.ADB_KEYBOARD} >/dev/null"

    def _act_key(self, a: Action) -> AdbActResult:
        return self.press(a.key)

    def _act_open_app(self, a: Action) -> AdbActResult:
        package = self.resolve_app(a.app)
        result = self._do(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
        if not result.ok:
            raise UnsupportedAction(f"{self.serial}: cannot open {a.app!r} ({package}): {result.output.strip()}")
        return result

    def resolve_app(self, app: str) -> str:
        key = app.strip().lower()
        if key in self.apps:
            return self.apps[key]
        if "." in key:
            return app.strip()
        packages = [line[8:].strip() for line in self.run("pm list packages").splitlines() if line.startswith("package:")]
        if COMMON_APPS.get(key) in packages:
            return COMMON_APPS[key]
        match = [p for p in packages if p.rsplit(".", 1)[-1] == key] or [p for p in packages if key in p.split(".")]
        if len(match) != 1:
            raise UnsupportedAction(f"{self.serial}: no single installed package for app {app!r} "
                                    f"({'candidates: ' + ', '.join(match) if match else 'none found'}); pass apps={{...}}")
        return match[0]

    def _act_wait(self, a: Action) -> AdbActResult:
        return self._do(f"sleep {a.seconds if a.seconds is not None else 2}")

    def _act_shell(self, a: Action) -> AdbActResult:
        return self._do(a.command)

    def _act_tool(self, a: Action) -> AdbActResult:
        """A phone over adb exposes no tool set: the call is an error step the policy sees, not a crash."""
        return AdbActResult(False, "no tool set", output=f"Tool error: {a.name!r} is not a tool of {self.serial} "
                            "(a phone over adb has no tools; use GUI or shell actions)")

    def _agent(self, a: Action) -> AdbActResult:
        """answer, ask_user, terminate: nothing a finger does; a virtual device records them for its verifier."""
        if not self.runs_tasks():
            return AdbActResult(True, f"{a.type}: nothing to do on the phone")
        return self._do(f"phoneloop act {shlex.quote(a.to_json())}")

    _act_answer = _act_ask_user = _act_terminate = _agent


class _Stream:
    def __init__(self, conn: AdbConnection) -> None:
        self._conn = conn

    def recv(self, n: int) -> bytes:
        return self._conn.conn.recv(n)

    def close(self) -> None:
        self._conn.close()


def _split_head(prefix: str, out: bytes) -> tuple[bytes, bytes]:
    """The first line (what ``prefix`` printed) and the rest; with no prefix, nothing and all of it."""
    if not prefix:
        return b"", out
    head, _, rest = out.partition(b"\n")
    return head, rest


def _uptime(serial: str, head: bytes) -> float:
    """Seconds since boot from a ``/proc/uptime`` line (``12345.67 54321.00``)."""
    try:
        return float(head.split()[0])
    except (IndexError, ValueError):
        raise DeviceOffline(f"{serial}: cat /proc/uptime printed {head[:60]!r}, not the uptime") from None


def _focus(text: str) -> tuple[str | None, str | None]:
    m = _FOCUS.search(text)
    if m is None:
        return None, None
    package, activity = m.group("pkg"), m.group("act")
    if activity.startswith(package + "."):
        activity = activity[len(package):]
    return package, activity


def _device_error(serial: str, message: str) -> Exception:
    low = message.lower()
    if "unauthorized" in low:
        return DeviceUnauthorized(f"{serial}: unauthorized; accept the USB debugging prompt on the phone ({message})")
    if "offline" in low or "closed" in low:
        return DeviceOffline(f"{serial}: offline ({message})")
    if "not found" in low:
        return DeviceNotFound(f"{serial}: not found on the adb server ({message})")
    return DeviceOffline(f"{serial}: adb error: {message}")


def list_devices(adb: AdbClient) -> list[adbutils.AdbDeviceInfo]:
    try:
        return adb.list(extended=True)
    except (socket.error, AdbError) as exc:
        if isinstance(exc, AdbServerUnreachable):
            raise
        raise AdbServerUnreachable(f"adb server at {adb.host}:{adb.port} did not answer host:devices-l ({exc})") from None


def check_state(adb: AdbClient, serial: str) -> None:
    """Raise the error that says why ``serial`` cannot be used, if it cannot."""
    infos = {d.serial: d.state for d in list_devices(adb)}
    state = infos.get(serial)
    if state is None:
        raise DeviceNotFound(f"{serial}: not listed by the adb server at {adb.host}:{adb.port} "
                             f"(devices: {', '.join(infos) or 'none'})")
    if state == "unauthorized":
        raise DeviceUnauthorized(f"{serial}: unauthorized; accept the USB debugging prompt on the phone")
    if state != "device":
        raise DeviceOffline(f"{serial}: {state}")

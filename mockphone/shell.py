"""A documented subset of ``adb shell`` on the mock phone.

Supported (anything else fails like Android's ``sh``: exit 127, ``inaccessible or not found``)::

    am start -n <package>/<activity>     am start -a android.settings.SETTINGS
    am force-stop <package>              monkey -p <package> -c android.intent.category.LAUNCHER 1
    input tap X Y | swipe X1 Y1 X2 Y2 [ms] | text STR | keyevent KEY   (KEYCODE_* names or 3/4/66/187)
    settings get|put|delete <global|system|secure> <key> [value]      settings list <namespace>
    svc wifi|bluetooth|data enable|disable                            cmd statusbar expand-notifications|collapse
    pm list packages [filter]            wm size | wm density          getprop [name]
    date                                 echo ...                      dumpsys window | dumpsys activity top
    uiautomator dump [FILE]              cat FILE                      (files written by uiautomator dump)
    content insert --uri URI --bind NAME:TYPE:VALUE ...   content query --uri URI [--where "name LIKE '%Q%'"]
        (URIs of mockphone.tools.CONTENT_URIS; the same change the tool and the GUI make)
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Callable

from datalake.types import Action
from mockphone import gestures
from mockphone.errors import UnknownApp
from mockphone.gestures import ActResult

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

KEYCODES = {"KEYCODE_BACK": "back", "4": "back", "KEYCODE_HOME": "home", "3": "home", "KEYCODE_ENTER": "enter",
            "66": "enter", "KEYCODE_APP_SWITCH": "app_switch", "187": "app_switch"}
PROPS = {"ro.product.model": "Pixel 8 (mock)", "ro.product.manufacturer": "phoneloop", "ro.build.version.sdk": "34",
         "ro.build.version.release": "14", "ro.kernel.qemu": "0"}
NAMESPACES = ("global", "system", "secure")


def act(phone: MockPhone, a: Action) -> ActResult:
    """Perform a ``shell`` action: run its command line and report the exit code and output."""
    code, out = run(phone, a.command)
    phone.invalidate()
    return ActResult(code == 0, f"exit {code}", exit_code=code, output=out)


def run(phone: MockPhone, command: str) -> tuple[int, str]:
    """Run one shell command line; returns (exit code, output)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return 2, f"/system/bin/sh: syntax error: {exc}"
    if not argv:
        return 0, ""
    handler = _COMMANDS.get(argv[0])
    if handler is None:
        return 127, f"/system/bin/sh: {argv[0]}: inaccessible or not found"
    return handler(phone, argv[1:])


def _am(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if len(args) >= 3 and args[0] == "start" and "-n" in args:
        component = args[args.index("-n") + 1] if args.index("-n") + 1 < len(args) else ""
        package = component.split("/")[0]
        try:
            phone.nav.open_app(package)
        except UnknownApp:
            return 1, f"Error: Activity class {{{component}}} does not exist."
        return 0, f"Starting: Intent {{ cmp={component} }}"
    if len(args) >= 3 and args[0] == "start" and args[1] == "-a":
        if args[2].startswith("android.settings."):
            phone.nav.open_app("settings")
            return 0, f"Starting: Intent {{ act={args[2]} }}"
        return 1, f"Error: Activity not started, unable to resolve Intent {{ act={args[2]} }}"
    if len(args) == 2 and args[0] == "force-stop":
        if phone.has_package(args[1]):
            phone.nav.force_stop(args[1])
        return 0, ""
    return 1, "usage: am [start -n <COMPONENT> | start -a <ACTION> | force-stop <PACKAGE>]"


def _monkey(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if "-p" not in args or args.index("-p") + 1 >= len(args):
        return 1, "usage: monkey -p <package> -c android.intent.category.LAUNCHER 1"
    package = args[args.index("-p") + 1]
    if not phone.has_package(package):
        return 252, "** No activities found to run, monkey aborted."
    phone.nav.open_app(package)
    return 0, "Events injected: 1"


def _input(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    try:
        if args[:1] == ["tap"] and len(args) == 3:
            gestures.tap(phone, Action("tap", x=float(args[1]), y=float(args[2])))
        elif args[:1] == ["swipe"] and len(args) in (5, 6):
            x, y, x2, y2 = (float(v) for v in args[1:5])
            gestures.swipe(phone, Action("swipe", x=x, y=y, x2=x2, y2=y2))
        elif args[:1] == ["text"] and len(args) >= 2:
            gestures.input_text(phone, Action("input_text", text=" ".join(args[1:]).replace("%s", " ")))
        elif args[:1] == ["keyevent"] and len(args) == 2 and args[1] in KEYCODES:
            gestures.press_key(phone, KEYCODES[args[1]])
        else:
            raise ValueError(" ".join(args))
    except ValueError:
        return 1, "usage: input [tap X Y | swipe X1 Y1 X2 Y2 [ms] | text STR | keyevent KEYCODE]"
    return 0, ""


def _settings(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if len(args) == 2 and args[0] == "list" and args[1] in NAMESPACES:
        prefix = args[1] + "/"
        rows = sorted(k[len(prefix):] + "=" + v for k, v in phone.system.settings.items() if k.startswith(prefix))
        return 0, "\n".join(rows)
    if len(args) < 3 or args[1] not in NAMESPACES:
        return 1, "usage: settings [get|put|delete|list] NAMESPACE KEY [VALUE]  (NAMESPACE: global, system, secure)"
    verb, key = args[0], f"{args[1]}/{args[2]}"
    if verb == "get" and len(args) == 3:
        return 0, phone.system.settings.get(key, "null")
    if verb == "put" and len(args) == 4:
        phone.put_setting(key, args[3])
        return 0, ""
    if verb == "delete" and len(args) == 3:
        existed = phone.system.settings.pop(key, None) is not None
        return 0, f"Deleted {int(existed)} rows"
    return 1, "usage: settings [get|put|delete|list] NAMESPACE KEY [VALUE]"


def _svc(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    keys = {"wifi": "global/wifi_on", "bluetooth": "global/bluetooth_on", "data": "global/mobile_data"}
    if len(args) == 2 and args[0] in keys and args[1] in ("enable", "disable"):
        phone.put_setting(keys[args[0]], args[1] == "enable")
        return 0, ""
    return 1, "usage: svc [wifi|bluetooth|data] [enable|disable]"


def _cmd(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if args == ["statusbar", "expand-notifications"]:
        phone.nav.open_shade()
        return 0, ""
    if args == ["statusbar", "collapse"]:
        if phone.nav.overlay == "shade":
            phone.nav.overlay = None
        return 0, ""
    return 255, f"cmd: Can't find service: {args[0] if args else ''}"


def _pm(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if args[:2] == ["list", "packages"]:
        flt = args[2] if len(args) > 2 else ""
        return 0, "\n".join(f"package:{p}" for p in sorted(phone.apps) if flt in p)
    return 1, "usage: pm list packages [FILTER]"


def _wm(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    d = phone.display
    if args == ["size"]:
        return 0, f"Physical size: {d.width}x{d.height}"
    if args == ["density"]:
        return 0, f"Physical density: {d.dpi}"
    return 1, "usage: wm [size|density]"


def _getprop(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if not args:
        return 0, "\n".join(f"[{k}]: [{v}]" for k, v in sorted(PROPS.items()))
    return 0, PROPS.get(args[0], "")


def _date(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    return 0, phone.system.now.strftime("%a %b %d %H:%M:%S UTC %Y")


def _dumpsys(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    pkg = phone.nav.foreground or "com.google.android.apps.nexuslauncher"
    if args[:1] in (["window"], ["activity"]):
        return 0, f"  mCurrentFocus=Window{{0 u0 {pkg}/{pkg}{phone.activity()}}}"
    return 1, f"Can't find service: {args[0] if args else ''}"


def _uiautomator(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if not args or args[0] != "dump" or len(args) > 2:
        return 1, "Usage: uiautomator dump [--compressed] [FILE]"
    path = args[1] if len(args) == 2 else "/sdcard/window_dump.xml"
    phone.files[path] = phone.ui_tree()
    return 0, f"UI hierchary dumped to: {path}"  # sic: the real tool's spelling


def _cat(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    if len(args) != 1:
        return 1, "usage: cat FILE"
    if args[0] not in phone.files:
        return 1, f"cat: {args[0]}: No such file or directory"
    return 0, phone.files[args[0]]


def _content(phone: MockPhone, args: list[str]) -> tuple[int, str]:
    import json
    import re

    from mockphone.tools import CONTENT_URIS, QUERY_URIS, ToolError

    usage = "usage: content [insert --uri URI --bind NAME:TYPE:VALUE ... | query --uri URI [--where WHERE]]"
    if len(args) < 3 or args[0] not in ("insert", "query") or args[1] != "--uri":
        return 1, usage
    verb, uri, rest = args[0], args[2], args[3:]
    table = CONTENT_URIS if verb == "insert" else QUERY_URIS
    if uri not in table:
        return 1, f"Error: unknown URI {uri} (known: {', '.join(sorted(table))})"
    values: dict = {}
    while rest:
        flag, *rest = rest
        if not rest:
            return 1, usage
        value, *rest = rest
        if flag == "--bind" and verb == "insert" and value.count(":") >= 2:
            name, kind, raw = value.split(":", 2)
            values[name] = int(raw) if kind in "il" and raw.lstrip("-").isdigit() else (
                raw.lower() == "true" if kind == "b" else raw)
        elif flag == "--where" and verb == "query":
            m = re.fullmatch(r"name\s+LIKE\s+'%?(.*?)%?'", value.strip(), re.IGNORECASE)
            if m is None:
                return 1, "Error: only --where \"name LIKE '%TEXT%'\" is supported"
            values["query"] = m.group(1)
        else:
            return 1, usage
    if verb == "query":
        values.setdefault("query", "")
    try:
        out = phone.tools[table[uri]](phone, values)
    except ToolError as exc:
        return 1, f"Error: {exc}"
    if verb == "query":
        rows = json.loads(out)
        return 0, "\n".join(f"Row: {i} " + ", ".join(f"{k}={v}" for k, v in r.items()) for i, r in enumerate(rows))
    return 0, ""


_COMMANDS: dict[str, Callable[[MockPhone, list[str]], tuple[int, str]]] = {
    "am": _am, "monkey": _monkey, "input": _input, "settings": _settings, "svc": _svc, "cmd": _cmd,
    "pm": _pm, "wm": _wm, "getprop": _getprop, "date": _date, "dumpsys": _dumpsys, "uiautomator": _uiautomator,
    "cat": _cat, "content": _content,
    "echo": lambda phone, args: (0, " ".join(args)),
}

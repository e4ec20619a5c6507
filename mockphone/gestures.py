"""What each action of the shared vocabulary does on a MockPhone.

Gestures hit-test the element under the finger in the same node tree that is drawn
and dumped: the deepest visible element that accepts the gesture wins.

* ``tap``: clicks it (an edit field takes focus and shows the keyboard, whose keys type);
  outside a cancelable dialog, dismisses it. ``double_tap`` is two taps.
* ``long_press``: on text, copies it to the clipboard (toast "Copied to clipboard");
  on an edit field, pastes the clipboard; on rows with a long-press menu, opens it.
  Shorter than 500 ms it is a tap.
* ``swipe``: down from the status bar opens the shade; from the left/right edge is back;
  up from the nav bar is home; up on a banner dismisses it; over a list it scrolls;
  under 8 dp of travel it is a tap (or a long press when held).
* ``scroll``: moves the list under (x, y), or the first one, by 60% of its height;
  ``direction`` is where the content comes from (down = reveal what is below).
* ``input_text``: types into the focused field (tapping (x, y) first when given);
  ``clear`` replaces its text. ``key``: back (shade, dialog, keyboard, page, app, in that
  order), home, app_switch (recents), enter (submits the focused field).
* ``open_app``: by short name, label, package or alias. ``wait``: advances the clock.
* ``answer`` / ``ask_user`` / ``terminate``: recorded in the system state for verifiers.
* ``shell``: see ``mockphone.shell``. ``tool``: a registered function (``mockphone.tools``); an unknown tool or bad
  arguments gives ``ok=False`` with the error as output and a toast the policy sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from datalake.types import Action
from mockphone.errors import UnknownApp
from mockphone.layout import Node
from mockphone.screen import KEY_ROWS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone


@dataclass(frozen=True)
class ActResult:
    """What an action did: ``ok`` is False when it had no effect a user would expect (e.g. no focused field)."""

    ok: bool
    detail: str = ""
    exit_code: int | None = None  # shell actions only
    output: str = ""  # shell and tool actions


def _result(ok: bool, detail: str = "", **kw) -> ActResult:
    return ActResult(ok, detail, **kw)


def dispatch(phone: MockPhone, a: Action) -> ActResult:
    handler = _HANDLERS[a.type]
    return handler(phone, a)


def visible_nodes(root: Node) -> list[Node]:
    out: list[Node] = []

    def walk(node: Node) -> None:
        if node.data.get("hidden"):
            return
        out.append(node)
        for child in node.children:
            walk(child)

    walk(root)
    return out


def hit(phone: MockPhone, x: float, y: float, want: str) -> Node | None:
    """Deepest visible node at (x, y) with attribute ``want`` (clickable, long_clickable, scrollable)."""
    found = None
    for node in visible_nodes(phone.root):
        x1, y1, x2, y2 = node.bounds
        if x1 <= x < x2 and y1 <= y < y2 and getattr(node, want):
            found = node
    return found


def _keyboard(phone: MockPhone) -> Node | None:
    for node in phone.root.children:
        if node.kind == "keyboard":
            return node
    return None


def tap(phone: MockPhone, a: Action) -> ActResult:
    kb = _keyboard(phone)
    if kb is not None and kb.bounds[1] <= a.y < kb.bounds[3]:
        return _key_tap(phone, kb, a.x, a.y)
    node = hit(phone, a.x, a.y, "clickable")
    if node is None:
        if phone.nav.dialog is not None and phone.nav.dialog.cancelable and not _inside_dialog(phone, a.x, a.y):
            phone.nav.dialog = None
            return _result(True, "dismissed dialog")
        return _result(True, "nothing clickable there")
    activate(phone, node, a.x)
    phone.invalidate()
    return _result(True, f"tapped {node.text or node.desc or node.rid or node.cls}")


def _inside_dialog(phone: MockPhone, x: float, y: float) -> bool:
    for node in visible_nodes(phone.root):
        if node.kind == "dialog":
            x1, y1, x2, y2 = node.bounds
            return x1 <= x < x2 and y1 <= y < y2
    return False


def activate(phone: MockPhone, node: Node, x: float) -> None:
    """Run what tapping ``node`` does."""
    k, w = node.kind, node.widget
    if k == "nav_back":
        phone.nav.back()
    elif k == "nav_home":
        phone.nav.home()
    elif k == "nav_recent_apps":
        phone.nav.toggle_recents()
    elif k == "app_icon":
        phone.nav.open_app(node.data["package"])
    elif k == "up" and phone.nav.foreground is not None:
        phone.nav.pop(phone.nav.foreground)
    elif k == "heads_up":
        phone.nav.open_notification(node.data["note"])
    elif k == "dialog_button":
        phone.nav.press_dialog_button(node.data["index"])
    elif k == "edit":
        phone.nav.focus = node.rid
    elif k in ("toggle", "checkbox") and w is not None and w.on_change is not None:
        w.on_change(not w.checked)
    elif k == "slider" and w is not None and w.on_change is not None:
        x1, _, x2, _ = node.bounds
        frac = min(max((x - x1) / max(x2 - x1 - 1, 1), 0.0), 1.0)
        steps = round(frac * (w.vmax - w.vmin) / w.step)
        w.on_change(min(w.vmin + steps * w.step, w.vmax))
    elif w is not None and w.on_tap is not None:
        w.on_tap()


def _key_tap(phone: MockPhone, kb: Node, x: float, y: float) -> ActResult:
    x1, y1, x2, y2 = kb.bounds
    row = min(int((y - y1) * len(KEY_ROWS) / (y2 - y1)), len(KEY_ROWS) - 1)
    keys = KEY_ROWS[row]
    if row == 3:  # "@", ",", space (wide), ".", enter
        spans = (0.15, 0.25, 0.75, 0.85, 1.0)
        col = next(i for i, edge in enumerate(spans) if (x - x1) / (x2 - x1) < edge or i == 4)
        key = keys[col]
    else:
        key = keys[min(int((x - x1) * len(keys) / (x2 - x1)), len(keys) - 1)]
    if key == ">":
        return press_key(phone, "enter")
    if key in "^@":
        return _result(True, "keyboard mode key")
    page = phone.nav.top_page(phone.nav.foreground) if phone.nav.foreground else None
    if page is None or phone.nav.focus is None:
        return _result(False, "no focused input field")
    old = page.field(phone.nav.focus)
    _set_field(phone, page, phone.nav.focus, old[:-1] if key == "<" else old + key)
    phone.invalidate()
    return _result(True, f"typed {key!r}")


LONG_PRESS_MS = 500  # Android's default long-press timeout
TOUCH_SLOP_DP = 8  # finger travel below this is a tap, not a swipe


def long_press(phone: MockPhone, a: Action) -> ActResult:
    if a.duration_ms is not None and a.duration_ms < LONG_PRESS_MS:
        return tap(phone, Action("tap", x=a.x, y=a.y))
    node = hit(phone, a.x, a.y, "long_clickable")
    if node is None:
        return _result(True, "nothing to long-press there")
    w = node.widget
    if node.kind == "edit":
        phone.nav.focus = node.rid
        page = phone.nav.top_page(phone.nav.foreground)
        clip = phone.system.clipboard
        if not clip:
            return _result(False, "clipboard is empty")
        _set_field(phone, page, node.rid, page.field(node.rid) + clip)
        phone.invalidate()
        return _result(True, "pasted")
    if w is not None and w.on_long_press is not None:
        w.on_long_press()
    elif node.kind == "text":
        phone.system.clipboard = node.text
        phone.nav.toast("Copied to clipboard")
    elif node.kind == "app_icon":
        phone.nav.toast(f"{node.text}: App info")
    elif node.kind == "nav_home":
        phone.nav.open_app("assistant") if _has(phone, "assistant") else None
    phone.invalidate()
    return _result(True, f"long-pressed {node.text or node.desc or node.cls}")


def _has(phone: MockPhone, name: str) -> bool:
    try:
        phone.app(name)
    except UnknownApp:
        return False
    return True


def double_tap(phone: MockPhone, a: Action) -> ActResult:
    first = tap(phone, a)
    phone.invalidate()
    tap(phone, a)
    return _result(first.ok, "double-" + first.detail)


def swipe(phone: MockPhone, a: Action) -> ActResult:
    d = phone.display
    dx, dy = a.x2 - a.x, a.y2 - a.y
    if abs(dx) < d.dp(TOUCH_SLOP_DP) and abs(dy) < d.dp(TOUCH_SLOP_DP):
        held = a.duration_ms is not None and a.duration_ms >= LONG_PRESS_MS
        return (long_press if held else tap)(phone, Action("long_press" if held else "tap", x=a.x, y=a.y))
    banner = hit(phone, a.x, a.y, "clickable")
    if banner is not None and banner.kind == "heads_up" and dy < -d.dp(40):
        phone.nav.heads_up = None
        return _result(True, "dismissed notification banner")
    if a.y < d.status_h and dy > d.dp(80):
        phone.nav.open_shade()
        return _result(True, "opened notification shade")
    if phone.nav.overlay == "shade" and dy < -d.dp(80) and abs(dy) > abs(dx):
        node = hit(phone, a.x, a.y, "scrollable")
        if node is None or node.data.get("scroll", 0) >= node.data.get("max_scroll", 0):
            phone.nav.overlay = None
            return _result(True, "closed notification shade")
    if a.y >= d.height - d.nav_h and dy < -d.dp(120):
        phone.nav.home()
        return _result(True, "went home")
    edge = d.dp(16)
    if (a.x < edge or a.x >= d.width - edge) and abs(dx) > d.dp(80) and abs(dx) > abs(dy):
        return _result(True, phone.nav.back())
    node = hit(phone, a.x, a.y, "scrollable")
    if node is None or abs(dy) < abs(dx):
        return _result(True, "nothing scrolled")
    return _scroll_by(phone, node, int(-dy))


def scroll(phone: MockPhone, a: Action) -> ActResult:
    if a.direction in ("left", "right"):
        return _result(False, "nothing scrolls horizontally here")
    if a.x is not None and a.y is not None:
        node = hit(phone, a.x, a.y, "scrollable")
    else:
        node = next((n for n in visible_nodes(phone.root) if n.scrollable), None)
    if node is None:
        return _result(False, "nothing to scroll")
    amount = int((node.bounds[3] - node.bounds[1]) * 0.6)
    return _scroll_by(phone, node, amount if a.direction == "down" else -amount)


def _scroll_by(phone: MockPhone, node: Node, delta: int) -> ActResult:
    old, top = node.data.get("scroll", 0), node.data.get("max_scroll", 0)
    new = min(max(old + delta, 0), top)
    if phone.nav.overlay == "shade" and node.package == "com.android.systemui":
        phone.nav.shade_scroll = new
    elif phone.nav.foreground is not None:
        phone.nav.top_page(phone.nav.foreground).scroll = new
    phone.invalidate()
    return _result(new != old, "scrolled" if new != old else "already at the end")


def input_text(phone: MockPhone, a: Action) -> ActResult:
    if a.x is not None and a.y is not None:
        node = hit(phone, a.x, a.y, "clickable")
        if node is not None and node.kind == "edit":
            phone.nav.focus = node.rid
    page = phone.nav.top_page(phone.nav.foreground) if phone.nav.foreground else None
    if phone.nav.focus is None or page is None or phone.nav.dialog is not None or phone.nav.overlay is not None:
        return _result(False, "no focused input field")
    _set_field(phone, page, phone.nav.focus, a.text if a.clear else page.field(phone.nav.focus) + a.text)
    phone.invalidate()
    return _result(True, f"typed into {phone.nav.focus}")


def _set_field(phone: MockPhone, page, rid: str, text: str) -> None:
    """Type into a form field, logging the value in the phone's draft log (read by privacy verifiers)."""
    page.fields[rid] = text
    phone.system.typed(phone.nav.foreground or "", page.name, rid, text)


def press_key(phone: MockPhone, key: str) -> ActResult:
    if key == "back":
        return _result(True, phone.nav.back())
    if key == "home":
        phone.nav.home()
        return _result(True, "home")
    if key == "app_switch":
        phone.nav.toggle_recents()
        return _result(True, "recents")
    if phone.nav.focus is not None:
        focused = next((n for n in visible_nodes(phone.root) if n.focused), None)
        if focused is not None and focused.widget is not None:
            if focused.widget.on_submit is not None:
                focused.widget.on_submit()
                phone.nav.focus = None
                return _result(True, "submitted")
            if focused.widget.lines > 1:
                page = phone.nav.top_page(phone.nav.foreground)
                _set_field(phone, page, phone.nav.focus, page.field(phone.nav.focus) + "\n")
                return _result(True, "newline")
    return _result(False, "enter had nothing to submit")


def key(phone: MockPhone, a: Action) -> ActResult:
    result = press_key(phone, a.key)
    phone.invalidate()
    return result


def open_app(phone: MockPhone, a: Action) -> ActResult:
    try:
        app = phone.nav.open_app(a.app)
    except UnknownApp as exc:
        return _result(False, str(exc))
    return _result(True, f"opened {app.package}")


def wait(phone: MockPhone, a: Action) -> ActResult:
    return _result(True, "waited")


def answer(phone: MockPhone, a: Action) -> ActResult:
    phone.system.answers.append(a.text)
    return _result(True, "answered")


def ask_user(phone: MockPhone, a: Action) -> ActResult:
    phone.system.questions.append(a.text)
    return _result(True, "asked the user")


def terminate(phone: MockPhone, a: Action) -> ActResult:
    phone.system.terminated = a.status
    return _result(True, f"terminated: {a.status}")


def tool(phone: MockPhone, a: Action) -> ActResult:
    """Call a registered tool; an unknown tool or bad arguments is an error result (and a toast), never a raise."""
    import json

    from mockphone.tools import ToolError

    args = dict(a.args or {})
    fn = phone.tools.get(a.name)
    try:
        if fn is None:
            raise ToolError(f"tool {a.name!r} is not registered on this phone "
                            f"(registered: {', '.join(sorted(phone.tools)) or 'none'})")
        out = str(fn(phone, args))
    except Exception as exc:  # noqa: BLE001 - a tool is foreign code: any failure is an error step, not a crash
        phone.system.tool_calls.append((a.name, json.dumps(args, sort_keys=True, default=str), False))
        phone.nav.toast(f"Tool error: {exc}")
        phone.invalidate()
        return _result(False, f"tool error: {exc}", output=f"error: {exc}")
    phone.system.tool_calls.append((a.name, json.dumps(args, sort_keys=True, default=str), True))
    phone.invalidate()
    return _result(True, f"called {a.name}", output=out)


_HANDLERS = {
    "tap": tap, "double_tap": double_tap, "long_press": long_press, "swipe": swipe, "scroll": scroll,
    "input_text": input_text, "key": key, "open_app": open_app, "wait": wait, "answer": answer,
    "ask_user": ask_user, "tool": tool, "terminate": terminate,  # shell: mockphone.shell.act
}

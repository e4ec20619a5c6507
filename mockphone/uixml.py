"""Dump a node tree as ``uiautomator dump`` XML, attribute for attribute like a real device.

As on a real phone the ``<hierarchy>`` holds one root ``<node>`` per window, in
z-order: the app's window (its content, dialogs and toasts; the notification shade
and recents when they are open), then the status bar window of
``com.android.systemui`` (with a heads-up banner when one shows), then the navigation
bar window. The keyboard, another window that uiautomator leaves out, is not dumped.
"""

from __future__ import annotations

from mockphone.layout import Node

SYSTEMUI = "com.android.systemui"
STATUS_WINDOW = frozenset({"statusbar", "heads_up"})
NAV_WINDOW = frozenset({"navbar"})

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                          "\t": "&#9;", **{chr(c): "" for c in range(32) if c not in (9, 10, 13)}})


def _attr(value: str) -> str:
    return value.translate(_ESCAPES)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def dump(root: Node) -> str:
    parts = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"]
    for i, window in enumerate(windows(root)):
        _node(window, i, parts)
    parts.append("</hierarchy>")
    return "".join(parts)


def windows(root: Node) -> list[Node]:
    """The window roots of a composed screen: app, status bar, navigation bar (those with something to show)."""
    app = Node(root.cls, root.bounds, root.package, "window")
    status = Node("android.widget.FrameLayout", (0, 0, 0, 0), SYSTEMUI, "window")
    nav = Node("android.widget.FrameLayout", (0, 0, 0, 0), SYSTEMUI, "window")
    for child in root.children:
        kind = child.kind if child.package == SYSTEMUI else ""
        (status if kind in STATUS_WINDOW else nav if kind in NAV_WINDOW else app).children.append(child)
    for window in (status, nav):
        if window.children:  # a window is as big as what it shows
            boxes = [c.bounds for c in window.children]
            window.bounds = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                             max(b[3] for b in boxes))
    return [w for w in (app, status, nav) if w.children or w is app]


def _node(node: Node, index: int, parts: list[str]) -> None:
    x1, y1, x2, y2 = node.bounds
    parts.append(
        f'<node index="{index}" text="{_attr(node.text)}" resource-id="{_attr(node.full_rid())}" '
        f'class="{node.cls}" package="{node.package}" content-desc="{_attr(node.desc)}" '
        f'checkable="{_flag(node.checkable)}" checked="{_flag(node.checked)}" clickable="{_flag(node.clickable)}" '
        f'enabled="{_flag(node.enabled)}" focusable="{_flag(node.focusable)}" focused="{_flag(node.focused)}" '
        f'scrollable="{_flag(node.scrollable)}" long-clickable="{_flag(node.long_clickable)}" '
        f'password="{_flag(node.password)}" selected="{_flag(node.selected)}" bounds="[{x1},{y1}][{x2},{y2}]"'
    )
    kids = [c for c in node.children if not c.data.get("hidden")]
    if not kids:
        parts.append(" />")
        return
    parts.append(">")
    for i, child in enumerate(kids):
        _node(child, i, parts)
    parts.append("</node>")

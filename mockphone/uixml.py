"""Dump a node tree as ``uiautomator dump`` XML, attribute for attribute like a real device."""

from __future__ import annotations

from mockphone.layout import Node

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                          "\t": "&#9;", **{chr(c): "" for c in range(32) if c not in (9, 10, 13)}})


def _attr(value: str) -> str:
    return value.translate(_ESCAPES)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def dump(root: Node) -> str:
    parts = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"]
    _node(root, 0, parts)
    parts.append("</hierarchy>")
    return "".join(parts)


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

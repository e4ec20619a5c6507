"""How an action is drawn over its screenshot: a list of SVG shapes in device pixels.

``shapes(action, width, height)`` returns plain dicts the viewer template renders
inside an ``<svg viewBox="0 0 width height">`` laid over the ``<img>``:

- ``dot``: a tap (a double tap adds a ``ring``); ``ring``: a long press;
- ``arrow``: a swipe (the finger's path) or a scroll (the direction content moves into view);
- ``box``: the target element's bounds, when the action names one;
- ``label``: typed text, a key name, an app, an answer, a terminate status.
"""

from __future__ import annotations

from typing import Any

_SCROLL = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def shapes(action: dict[str, Any], width: int, height: int) -> list[dict[str, Any]]:
    """The shapes drawing ``action`` (a recorded or corrected action dict) on a width x height frame."""
    unit = max(width, height) / 100  # 1% of the longer side: sizes scale with the screenshot
    kind = action.get("type")
    out: list[dict[str, Any]] = []
    bounds = (action.get("element") or {}).get("bounds")
    if bounds and len(bounds) == 4:
        x1, y1, x2, y2 = bounds
        out.append({"kind": "box", "x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1})
    x, y = action.get("x"), action.get("y")
    if kind in ("tap", "double_tap") and x is not None:
        out.append({"kind": "dot", "x": x, "y": y, "r": 1.6 * unit})
        if kind == "double_tap":
            out.append({"kind": "ring", "x": x, "y": y, "r": 3 * unit})
    elif kind == "long_press" and x is not None:
        out.append({"kind": "ring", "x": x, "y": y, "r": 3.5 * unit})
        out.append({"kind": "dot", "x": x, "y": y, "r": 0.8 * unit})
    elif kind == "swipe":
        out.append({"kind": "arrow", "x1": x, "y1": y, "x2": action["x2"], "y2": action["y2"]})
    elif kind == "scroll":
        cx = width / 2 if x is None else x
        cy = height / 2 if y is None else y
        dx, dy = _SCROLL.get(action.get("direction"), (0, 0))
        out.append({"kind": "arrow", "x1": cx, "y1": cy, "x2": cx + dx * width / 4, "y2": cy + dy * height / 4})
    text = _label(action)
    if text:
        lx = x if x is not None else width / 2
        ly = (y + 6 * unit) if y is not None else height - 8 * unit
        out.append({"kind": "label", "x": min(max(lx, 2 * unit), width - 2 * unit),
                    "y": min(ly, height - 2 * unit), "text": text, "size": 3 * unit})
    return out


def _label(action: dict[str, Any]) -> str | None:
    kind = action.get("type")
    if kind == "input_text":
        return f"⌨ “{action.get('text', '')}”"
    if kind == "key":
        return f"key: {action.get('key')}"
    if kind == "open_app":
        return f"open {action.get('app')}"
    if kind in ("answer", "ask_user"):
        return f"{kind}: {action.get('text', '')}"
    if kind == "terminate":
        return f"terminate: {action.get('status')}"
    if kind == "scroll":
        return f"scroll {action.get('direction')}"
    if kind in ("wait", "shell", "tool"):
        return {"wait": "wait", "shell": f"$ {action.get('command')}", "tool": f"tool {action.get('name')}"}[kind]
    return None


def describe(action: dict[str, Any] | None) -> str:
    """A one-line text form of an action, for the step's caption."""
    if not action:
        return "—"
    parts = [action["type"]]
    for key in ("x", "y", "x2", "y2", "direction", "text", "key", "app", "status", "command", "name"):
        if action.get(key) is not None:
            parts.append(f"{key}={action[key]!r}" if isinstance(action[key], str) else f"{key}={action[key]:g}")
    element = action.get("element") or {}
    if element.get("text") or element.get("resource_id"):
        parts.append(f"on “{element.get('text') or element.get('resource_id')}”")
    return " ".join(parts)

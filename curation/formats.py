"""Action text formats for models, and their parsers (exports write them, policies parse them).

Two styles:

- ``json``: the Action's own JSON with coordinates in the chosen convention, e.g.
  ``{"type":"tap","x":500,"y":504}``.
- ``qwen3vl``: a Qwen3-VL ``mobile_use`` tool call::

      <tool_call>
      {"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 504]}}
      </tool_call>

  mapping tap→click, long_press→long_press (+time), swipe→swipe (coordinate,
  coordinate2), input_text→type, key→system_button (Back/Home/Enter/AppSwitch),
  open_app→open, wait→wait (time), answer→answer, terminate→terminate
  (infeasible→failure). Actions Qwen's tool lacks (double_tap, scroll, ask_user,
  shell, tool) keep their own names with the same argument style.

Parsing is strict: anything that does not give a valid Action raises
``ActionParseError`` (callers record an invalid step; they never crash).
"""

from __future__ import annotations

import json
import re
from typing import Any

from curation.coords import check_convention, from_model, round_for, to_model
from datalake.errors import InvalidRecord
from datalake.types import Action

STYLES = ("json", "qwen3vl")
_KEY_TO_BUTTON = {"back": "Back", "home": "Home", "enter": "Enter", "app_switch": "AppSwitch"}
_BUTTON_TO_KEY = {v.lower(): k for k, v in _KEY_TO_BUTTON.items()} | {"menu": "app_switch"}
_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


class ActionParseError(ValueError):
    """Model output that does not parse into a valid action."""


def check_style(style: str) -> str:
    if style not in STYLES:
        raise ValueError(f"unknown action format {style!r} (known: {', '.join(STYLES)})")
    return style


def _point(x, y, convention, size) -> list:
    mx, my = to_model(x, y, convention, size)
    return [round_for(mx, convention, size), round_for(my, convention, size)]


def format_action(action: Action, style: str, convention: str, size: tuple[int, int]) -> str:
    check_style(style)
    check_convention(convention)
    if style == "json":
        data = action.to_dict()
        data.pop("element", None)  # the model predicts the action, not the tree's bookkeeping
        for a, b in (("x", "y"), ("x2", "y2")):
            if a in data and b in data:
                data[a], data[b] = _point(data[a], data[b], convention, size)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    call = {"name": "mobile_use", "arguments": _qwen_arguments(action, convention, size)}
    return "<tool_call>\n" + json.dumps(call, ensure_ascii=False) + "\n</tool_call>"


def _qwen_arguments(a: Action, convention: str, size) -> dict[str, Any]:
    t = a.type
    if t in ("tap", "double_tap", "long_press"):
        args: dict[str, Any] = {"action": "click" if t == "tap" else t, "coordinate": _point(a.x, a.y, convention, size)}
        if t == "long_press" and a.duration_ms is not None:
            args["time"] = a.duration_ms / 1000
        return args
    if t == "swipe":
        return {"action": "swipe", "coordinate": _point(a.x, a.y, convention, size),
                "coordinate2": _point(a.x2, a.y2, convention, size)}
    if t == "scroll":
        args = {"action": "scroll", "direction": a.direction}
        if a.x is not None:
            args["coordinate"] = _point(a.x, a.y, convention, size)
        return args
    simple = {"input_text": ("type", "text", a.text), "open_app": ("open", "text", a.app),
              "answer": ("answer", "text", a.text), "ask_user": ("ask_user", "text", a.text),
              "shell": ("shell", "command", a.command)}
    if t in simple:
        name, field, value = simple[t]
        return {"action": name, field: value}
    if t == "key":
        return {"action": "system_button", "button": _KEY_TO_BUTTON[a.key]}
    if t == "wait":
        return {"action": "wait", "time": a.seconds if a.seconds is not None else 1}
    if t == "terminate":
        return {"action": "terminate", "status": "success" if a.status == "success" else "failure"}
    return {"action": "tool", "name": a.name, "args": a.args or {}}  # tool


def parse_action(text: str, style: str, convention: str, size: tuple[int, int]) -> Action:
    """Parse model output in ``style`` back into a device-pixel Action."""
    check_style(style)
    try:
        if style == "json":
            return _parse_json(text, convention, size)
        return _parse_qwen(text, convention, size)
    except (InvalidRecord, KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ActionParseError):
            raise
        raise ActionParseError(f"cannot parse action from model output: {exc}") from None


def _device(point, convention, size) -> tuple[float, float]:
    if not isinstance(point, (list, tuple)) or len(point) != 2:
        raise ActionParseError(f"coordinate must be [x, y], got {point!r}")
    x, y = from_model(float(point[0]), float(point[1]), convention, size)
    return round(x, 1), round(y, 1)


def _parse_json(text: str, convention: str, size) -> Action:
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        raise ActionParseError("no JSON object in model output")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ActionParseError("action JSON must be an object")
    for a, b in (("x", "y"), ("x2", "y2")):
        if a in data and b in data:
            data[a], data[b] = _device([data[a], data[b]], convention, size)
    return Action.from_dict(data)


def _parse_qwen(text: str, convention: str, size) -> Action:
    match = _TOOL_CALL.search(text)
    if not match:
        raise ActionParseError("no <tool_call>...</tool_call> in model output")
    call = json.loads(match.group(1))
    args = call["arguments"]
    name = args["action"]
    if name in ("click", "double_tap", "long_press"):
        x, y = _device(args["coordinate"], convention, size)
        kind = "tap" if name == "click" else name
        extra = {"duration_ms": int(float(args["time"]) * 1000)} if name == "long_press" and "time" in args else {}
        return Action(kind, x=x, y=y, **extra)
    if name == "swipe":
        (x, y), (x2, y2) = _device(args["coordinate"], convention, size), _device(args["coordinate2"], convention, size)
        return Action("swipe", x=x, y=y, x2=x2, y2=y2)
    if name == "scroll":
        point = _device(args["coordinate"], convention, size) if "coordinate" in args else (None, None)
        return Action("scroll", direction=args["direction"], x=point[0], y=point[1])
    table = {"type": ("input_text", "text"), "open": ("open_app", "app"), "answer": ("answer", "text"),
             "ask_user": ("ask_user", "text"), "shell": ("shell", "command")}
    if name in table:
        kind, field = table[name]
        return Action(kind, **{field: args["command" if name == "shell" else "text"]})
    if name == "system_button":
        return Action("key", key=_BUTTON_TO_KEY[str(args["button"]).lower()])
    if name == "wait":
        return Action("wait", seconds=args.get("time", 1))
    if name == "terminate":
        return Action("terminate", status="success" if args["status"] == "success" else "infeasible")
    if name == "tool":
        return Action("tool", name=args["name"], args=args.get("args") or None)
    raise ActionParseError(f"unknown mobile_use action {name!r}")

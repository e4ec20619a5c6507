"""Parsing what policies say into Actions: JSON, Qwen3-VL tool calls and UI-TARS-style text.

JSON and Qwen3-VL tool calls are the training formats (``curation.formats``). UI-TARS
replies with ``Thought: ...`` then ``Action: click(start_box='(x,y)')``; its actions are
click, long_press, type(content=...), scroll(start_box, direction), drag(start_box,
end_box), open_app(app_name=...), press_home(), press_back(), press_enter(), hotkey(key='enter|back|home'), wait(),
finished(content=...). Boxes may be ``(x,y)``, ``[x1,y1,x2,y2]`` (the centre is used) or
wrapped in ``<|box_start|>``/``<|box_end|>``. Coordinates follow the given convention.

Anything that does not parse raises ``ActionParseError``; the runner records such a
step as invalid and goes on.
"""

from __future__ import annotations

import re

from curation.coords import from_model
from curation.formats import ActionParseError, parse_action
from datalake.errors import InvalidRecord
from datalake.types import Action

STYLES = ("json", "qwen3vl", "uitars")
_CALL = re.compile(r"Action:\s*([a-z_]+)\((.*)\)\s*$", re.S | re.M)
_ARG = re.compile(r"(\w+)\s*=\s*'((?:[^'\\]|\\.)*)'|(\w+)\s*=\s*\"((?:[^\"\\]|\\.)*)\"")
_HOTKEYS = {"enter": "enter", "back": "back", "home": "home", "app_switch": "app_switch", "recent": "app_switch"}
_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?")


def parse_output(text: str, style: str, convention: str, size: tuple[int, int]) -> list[Action]:
    """The device-pixel Action(s) in a model's reply, or ActionParseError.

    One action, except UI-TARS ``finished(content='...')``, which is an answer followed by
    ``terminate`` (the task verifier reads answers from the ``answer`` action)."""
    if style not in STYLES:
        raise ValueError(f"unknown output style {style!r} (known: {', '.join(STYLES)})")
    if style != "uitars":
        return [parse_action(text, style, convention, size)]
    try:
        return _parse_uitars(text, convention, size)
    except (InvalidRecord, ValueError, KeyError) as exc:
        if isinstance(exc, ActionParseError):
            raise
        raise ActionParseError(f"cannot parse UI-TARS action: {exc}") from None


def _point(box: str, convention: str, size) -> tuple[float, float]:
    numbers = [float(n) for n in _NUMBERS.findall(box.replace("<|box_start|>", "").replace("<|box_end|>", ""))]
    if len(numbers) == 4:
        numbers = [(numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2]
    if len(numbers) != 2:
        raise ActionParseError(f"a box must be (x,y) or [x1,y1,x2,y2], got {box!r}")
    x, y = from_model(numbers[0], numbers[1], convention, size)
    return round(x, 1), round(y, 1)


def _parse_uitars(text: str, convention: str, size) -> list[Action]:
    action = _uitars_action(text, convention, size)
    return action if isinstance(action, list) else [action]


def _uitars_action(text: str, convention: str, size) -> Action | list[Action]:
    match = _CALL.search(text)
    if not match:
        raise ActionParseError("no 'Action: name(...)' line in model output")
    name, body = match.group(1), match.group(2)
    args = {m.group(1) or m.group(3): (m.group(2) if m.group(1) else m.group(4)) for m in _ARG.finditer(body)}
    args = {k: v.encode().decode("unicode_escape") if "\\" in v else v for k, v in args.items()}
    if name in ("click", "left_single", "tap"):
        x, y = _point(args["start_box"], convention, size)
        return Action("tap", x=x, y=y)
    if name in ("long_press",):
        x, y = _point(args["start_box"], convention, size)
        return Action("long_press", x=x, y=y)
    if name in ("left_double", "double_click"):
        x, y = _point(args["start_box"], convention, size)
        return Action("double_tap", x=x, y=y)
    if name in ("drag", "swipe"):
        (x, y), (x2, y2) = _point(args["start_box"], convention, size), _point(args["end_box"], convention, size)
        return Action("swipe", x=x, y=y, x2=x2, y2=y2)
    if name == "scroll":
        point = _point(args["start_box"], convention, size) if "start_box" in args else (None, None)
        return Action("scroll", direction=args["direction"].strip(), x=point[0], y=point[1])
    if name == "type":
        return Action("input_text", text=args["content"])
    if name == "open_app":
        return Action("open_app", app=args["app_name"])
    keys = {"press_home": "home", "press_back": "back", "press_enter": "enter", "press_recent": "app_switch"}
    if name in keys:
        return Action("key", key=keys[name])
    if name == "hotkey":
        key = args.get("key", "").strip().lower()
        if key not in _HOTKEYS:
            raise ActionParseError(f"hotkey {key!r} is not one of {', '.join(sorted(_HOTKEYS))}")
        return Action("key", key=_HOTKEYS[key])
    if name == "wait":
        return Action("wait", seconds=1)
    if name == "finished":
        done = Action("terminate", status="success")
        content = args.get("content", "")
        return [Action("answer", text=content), done] if content else done
    if name == "call_user":
        return Action("ask_user", text=args.get("content", "") or "?")
    raise ActionParseError(f"unknown UI-TARS action {name!r}")

"""The element-list input format and element-number actions (set-of-marks, as text-only agents see a screen).

A small model learns far more easily from a compact numbered list of the screen's UI
elements than from pixels: AndroidWorld's T3A agent and set-of-marks prompts show
the same thing. ``marks(ui_tree)`` picks the elements worth naming (clickable,
editable, scrollable, checkable or carrying text/description, with a non-empty box
on screen), numbered from 1 in document order; ``render_marks`` writes one line each::

    [3] Button "Send" id=send (420,1800,660,1900)

with the box in the prompt's coordinate convention (whole numbers, except on the 0-1 scale). An action may then name its target
by number instead of by point: ``{"type":"tap","element":3}`` (json) or
``{"action":"click","element":3}`` (qwen3vl). ``format_with_marks`` turns a stored
device-pixel action into that text (the mark that the action's recorded element or its
point falls on; actions without a mark, or on a seek bar, keep their coordinates), and
``parse_with_marks`` turns the text back into a device-pixel Action at the mark's
centre, with the element recorded as its ``Target``. Stored actions stay device pixels.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from curation.coords import box_to_model, from_model
from curation.formats import ActionParseError, format_action, parse_action
from datalake.errors import UITreeError
from datalake.types import Action, Target
from datalake.uitree import UIElement, parse_ui_tree

POINT_TYPES = ("tap", "double_tap", "long_press", "input_text")  # input_text: the field typed into, when known
POSITIONAL = ("SeekBar", "AbsSeekBar", "RatingBar")  # classes whose taps mean a value, not just the element
MAX_MARKS = 40
_LABEL_CHARS = 40
_LINE = re.compile(r"^\[(\d+)\][^\n]*\(([-\d.]+),([-\d.]+),([-\d.]+),([-\d.]+)\)\s*$", re.M)
_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


@dataclass(frozen=True)
class Mark:
    number: int  # what the model says (1-based)
    element: Target  # bounds in device px

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.element.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2


def _worth_naming(el: UIElement, size: tuple[int, int]) -> bool:
    x1, y1, x2, y2 = el.bounds
    on_screen = x2 > x1 and y2 > y1 and x1 < size[0] and y1 < size[1] and x2 > 0 and y2 > 0
    useful = el.clickable or el.long_clickable or el.scrollable or el.checkable or bool(el.text or el.content_desc)
    return on_screen and useful and el.enabled


def marks(ui_tree: str | bytes | None, size: tuple[int, int], limit: int = MAX_MARKS) -> list[Mark]:
    """The numbered elements of a screen (empty without a tree; a broken tree raises UITreeError)."""
    if not ui_tree:
        return []
    out: list[Mark] = []
    seen: set[tuple[int, int, int, int]] = set()
    for el in parse_ui_tree(ui_tree):
        if not _worth_naming(el, size) or el.bounds in seen:
            continue
        seen.add(el.bounds)
        out.append(Mark(len(out) + 1, el.as_target()))
        if len(out) >= limit:
            break
    return out


def _label(t: Target) -> str:
    kind = (t.class_name or "View").rsplit(".", 1)[-1]
    text = (t.text or t.content_desc or "").replace("\n", " ")[:_LABEL_CHARS]
    rid = (t.resource_id or "").rsplit("/", 1)[-1]
    parts = [kind] + ([json.dumps(text, ensure_ascii=False)] if text else []) + ([f"id={rid}"] if rid else [])
    return " ".join(parts)


def render_marks(items: list[Mark], convention: str, size: tuple[int, int]) -> str:
    """One line per mark: number, class, text, resource-id, box in ``convention``."""
    lines = []
    for m in items:
        box = ",".join(str(_short(v, convention)) for v in box_to_model(m.element.bounds, convention, size))
        lines.append(f"[{m.number}] {_label(m.element)} ({box})")
    return "\n".join(lines)


def _short(v: float, convention: str):
    """Whole numbers except on the 0-1 scale: a box needs no sub-unit precision, and short lines train faster."""
    return v if convention == "rel1" else int(round(v))


def marks_from_text(text: str, convention: str, size: tuple[int, int]) -> list[Mark]:
    """The marks a rendered element list names (numbers and boxes), e.g. read back from a prompt."""
    out = []
    for match in _LINE.finditer(text or ""):
        x1, y1 = from_model(float(match.group(2)), float(match.group(3)), convention, size)
        x2, y2 = from_model(float(match.group(4)), float(match.group(5)), convention, size)
        box = tuple(int(round(v)) for v in (x1, y1, x2, y2))
        out.append(Mark(int(match.group(1)), Target(bounds=box)))
    return out


def mark_for(action: Action, items: list[Mark]) -> Mark | None:
    """The mark a point action aims at: its recorded element's box, else the smallest mark under the point."""
    if action.type not in POINT_TYPES or action.x is None:
        return None
    if action.element is not None and action.element.bounds is not None:
        for m in items:
            if m.element.bounds == action.element.bounds:
                return m
    under = [m for m in items if _inside(m.element.bounds, action.x, action.y)]
    return min(under, key=lambda m: _area(m.element.bounds), default=None)


def _positional(mark: Mark) -> bool:
    """Where on the element a tap lands matters (a seek bar's value): the action keeps its point, since the
    element's centre would set another value."""
    return (mark.element.class_name or "").rsplit(".", 1)[-1] in POSITIONAL


def _inside(b, x, y) -> bool:
    return b[0] <= x < b[2] and b[1] <= y < b[3]


def _area(b) -> int:
    return (b[2] - b[0]) * (b[3] - b[1])


def format_with_marks(action: Action, style: str, convention: str, size: tuple[int, int],
                      items: list[Mark]) -> str:
    """The action's text naming its element by number (coordinates when no mark fits)."""
    mark = mark_for(action, items)
    text = format_action(action, style, convention, size)
    if mark is None or _positional(mark):
        return text
    if style == "json":
        data = json.loads(text)
        data.pop("x"), data.pop("y")
        data["element"] = mark.number
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    call = json.loads(_CALL.search(text).group(1))
    call["arguments"].pop("coordinate", None)
    call["arguments"]["element"] = mark.number
    if action.type == "input_text" and action.clear:
        call["arguments"]["clear"] = True
    return "<tool_call>\n" + json.dumps(call, ensure_ascii=False) + "\n</tool_call>"


def parse_with_marks(text: str, style: str, convention: str, size: tuple[int, int], items: list[Mark]) -> Action:
    """A device-pixel Action from text that may name an element by number (ActionParseError if unknown)."""
    try:
        return _parse_with_marks(text, style, convention, size, items)
    except UITreeError as exc:
        raise ActionParseError(str(exc)) from None


def _parse_with_marks(text, style, convention, size, items) -> Action:
    if '"element"' not in (text or ""):
        return parse_action(text, style, convention, size)
    action = parse_action(_with_point(text, style, convention, size, items), style, convention, size)
    mark = _number_in(text, style, items)
    extra = {"clear": True} if action.type == "input_text" and _payload(text, style).get("clear") is True else {}
    return Action.from_dict(dict(action.to_dict(), x=mark.center[0], y=mark.center[1],
                                 element=mark.element.to_dict(), **extra))


def _number_in(text: str, style: str, items: list[Mark]) -> Mark:
    data = _payload(text, style)
    number = data.get("element")
    if not isinstance(number, int) or isinstance(number, bool):
        raise ActionParseError(f"element must be an element number, got {number!r}")
    by_number = {m.number: m for m in items}
    if number not in by_number:
        raise ActionParseError(f"element {number} is not on this screen (elements 1-{len(items)})")
    return by_number[number]


def _payload(text: str, style: str) -> dict:
    try:
        if style == "json":
            match = re.search(r"\{.*\}", text, re.S)
            return json.loads(match.group(0)) if match else {}
        match = _CALL.search(text)
        return json.loads(match.group(1)).get("arguments", {}) if match else {}
    except (ValueError, AttributeError):
        raise ActionParseError("cannot parse action from model output") from None


def _with_point(text: str, style: str, convention: str, size, items: list[Mark]) -> str:
    """The same text with the element number replaced by its centre, so the stock parser reads it."""
    mark = _number_in(text, style, items)
    mx, my = (round(v, 4) for v in _model_point(mark.center, convention, size))
    if style == "json":
        data = json.loads(re.search(r"\{.*\}", text, re.S).group(0))
        data.pop("element")
        data.update(x=mx, y=my)
        return json.dumps(data)
    call = json.loads(_CALL.search(text).group(1))
    call["arguments"].pop("element")
    call["arguments"]["coordinate"] = [mx, my]
    return "<tool_call>\n" + json.dumps(call) + "\n</tool_call>"


def _model_point(point, convention, size):
    from curation.coords import to_model

    return to_model(point[0], point[1], convention, size)

"""Verifiable step rewards for offline GRPO on the ``grpo`` export.

Each function has TRL's reward signature ``f(prompts, completions, **columns) -> list``
and reads the row's target from the export's columns: ``target_action`` (the action
as JSON in model coordinates), ``target_box`` (the target element's bounds in model
coordinates, or None), ``width``/``height`` (device pixels), ``coords`` (the
coordinate convention) and ``action_format`` (the text style the model answers in).
Both sides are parsed with ``curation.formats.parse_action`` into device pixels, so
every coordinate convention (abs, resized, rel1000, rel1) is scored the same way.

- ``format_reward``: 1 if the completion parses into an action, else 0;
- ``action_type_reward``: 1 if the action type matches the target's (0 if unparseable);
- ``location_reward``: for point targets (tap, double tap, long press): 1 if the point
  is inside the target box (or, without a box, within ``TAP_RADIUS`` of the screen's
  diagonal from the target point), else 0; ``None`` (not scored) for other targets;
- ``text_reward``: for typed text, answers and app names: the similarity ratio of the
  texts (difflib), 0 for a wrong action type; ``None`` for targets without text.

``None`` tells TRL that a reward does not apply to that row.
"""

from __future__ import annotations

import difflib
import json
import math
from typing import Any

from curation.coords import from_model
from curation.formats import ActionParseError, parse_action
from datalake.types import Action

TAP_RADIUS = 0.03  # fraction of the screen diagonal
POINT_TYPES = ("tap", "double_tap", "long_press")
TEXT_FIELDS = {"input_text": "text", "answer": "text", "open_app": "app", "ask_user": "text"}


def completion_text(completion: Any) -> str:
    """TRL passes conversational completions as message lists and standard ones as strings."""
    if isinstance(completion, str):
        return completion
    parts = []
    for message in completion:
        if message.get("role", "assistant") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text") or "" for p in content if p.get("type") == "text"]
        for call in message.get("tool_calls") or []:  # parsed tool calls, re-serialised for parse_action
            fn = call.get("function", call)
            parts.append("<tool_call>\n" + json.dumps({"name": fn.get("name"), "arguments": fn.get("arguments")})
                         + "\n</tool_call>")
    return "\n".join(parts)


def _parse(text: str, style: str, convention: str, size: tuple[int, int]) -> Action | None:
    try:
        return parse_action(text, style, convention, size)
    except ActionParseError:
        return None


def _pairs(completions, kw) -> list[tuple[Action | None, Action | None, dict]]:
    out = []
    for i, completion in enumerate(completions):
        size = (int(kw["width"][i]), int(kw["height"][i]))
        convention = kw["coords"][i]
        row = {"size": size, "convention": convention, "box": kw.get("target_box", [None] * len(completions))[i]}
        raw = kw["target_action"][i]
        if not raw:  # an online row of a --mix run: the verifier scores it
            out.append((None, None, row))
            continue
        predicted = _parse(completion_text(completion), kw["action_format"][i], convention, size)
        target = parse_action(raw, "json", convention, size)
        out.append((predicted, target, row))
    return out


def format_reward(prompts, completions, **kw) -> list[float | None]:
    return [None if t is None else 0.0 if p is None else 1.0 for p, t, _ in _pairs(completions, kw)]


def action_type_reward(prompts, completions, **kw) -> list[float | None]:
    return [None if t is None else 1.0 if p is not None and p.type == t.type else 0.0
            for p, t, _ in _pairs(completions, kw)]


def location_reward(prompts, completions, **kw) -> list[float | None]:
    return [score_location(p, t, row["box"], row["convention"], row["size"]) for p, t, row in _pairs(completions, kw)]


def text_reward(prompts, completions, **kw) -> list[float | None]:
    return [score_text(p, t) for p, t, _ in _pairs(completions, kw)]


def score_location(predicted: Action | None, target: Action | None, box, convention: str,
                   size: tuple[int, int]) -> float | None:
    if target is None or target.type not in POINT_TYPES:
        return None
    if predicted is None or predicted.type not in POINT_TYPES or predicted.x is None:
        return 0.0
    if box:
        x1, y1 = from_model(box[0], box[1], convention, size)
        x2, y2 = from_model(box[2], box[3], convention, size)
        slack = 1.0  # model-coordinate rounding
        inside = x1 - slack <= predicted.x <= x2 + slack and y1 - slack <= predicted.y <= y2 + slack
        return 1.0 if inside else 0.0
    radius = TAP_RADIUS * math.hypot(*size)
    return 1.0 if math.hypot(predicted.x - target.x, predicted.y - target.y) <= radius else 0.0


def score_text(predicted: Action | None, target: Action | None) -> float | None:
    field = TEXT_FIELDS.get(target.type) if target is not None else None
    if field is None:
        return None
    if predicted is None or predicted.type != target.type:
        return 0.0
    a, b = str(getattr(predicted, field) or ""), str(getattr(target, field) or "")
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


STEP_REWARDS = (format_reward, action_type_reward, location_reward, text_reward)
STEP_WEIGHTS = (0.2, 0.3, 0.5, 0.5)

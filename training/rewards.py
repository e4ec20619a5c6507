"""Verifiable step rewards for offline GRPO on the ``grpo`` export: they check the whole action.

Each function has TRL's reward signature ``f(prompts, completions, **columns) -> list``
and reads the row's target from the export's columns: ``target_action`` (the action
as JSON in model coordinates), ``target_box`` (the target element's bounds in model
coordinates, or None), ``width``/``height`` (device pixels), ``coords`` (the
coordinate convention, ``resized:F:MIN:MAX`` for a processor's own geometry) and
``action_format`` (the text style the model answers in). Both sides are parsed with
``curation.formats.parse_action`` into device pixels, so every coordinate convention
(abs, resized, rel1000, rel1) is scored the same way.

- ``format_reward``: 1 if the completion is exactly one action in its format and
  nothing else (no text before or after the tool call or JSON object, no second call),
  else 0 — a completion with junk around a parseable call still counts for the others;
- ``action_type_reward``: 1 if the action type matches the target's (0 if unparseable);
- ``argument_reward``: the discrete arguments: the key (back vs home), the scroll
  direction, the terminate status, the swipe's dominant direction; 0 for a wrong type,
  ``None`` for targets without such an argument;
- ``location_reward``: for point targets (tap, double tap, long press): 1 if the point
  is inside the target box (or, without a box, within ``TAP_RADIUS`` of the screen's
  diagonal from the target point), else 0; ``None`` (not scored) for other targets;
- ``text_reward``: for typed text, answers, questions and app names: the similarity
  ratio (difflib) of the normalised texts (NFKC, case-folded, whitespace collapsed),
  0 for a wrong action type; ``None`` for targets without text.

``action_matches`` is the same rules as one yes/no (every applicable part right), used
to score a policy offline. ``None`` tells TRL that a reward does not apply to that row.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
from typing import Any

from curation.coords import from_model
from curation.elements import marks_from_text, parse_with_marks
from curation.formats import ActionParseError, parse_action
from datalake.types import Action

TAP_RADIUS = 0.03  # fraction of the screen diagonal
POINT_TYPES = ("tap", "double_tap", "long_press")
TEXT_FIELDS = {"input_text": "text", "answer": "text", "open_app": "app", "ask_user": "text", "shell": "command"}
ARGUMENT_FIELDS = {"key": "key", "scroll": "direction", "terminate": "status"}
TEXT_MATCH = 0.9  # similarity at which typed text counts as right in action_matches
_STRICT = {"qwen3vl": re.compile(r"\A\s*<tool_call>\s*\{.*\}\s*</tool_call>\s*\Z", re.S),
           "json": re.compile(r"\A\s*\{.*\}\s*\Z", re.S)}


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


def _parse(text: str, style: str, convention: str, size: tuple[int, int], prompt: Any = None) -> Action | None:
    try:
        if '"element"' in text:  # an element-number action: the numbers are the prompt's element list
            return parse_with_marks(text, style, convention, size, marks_from_text(prompt_text(prompt), convention,
                                                                                   size))
        return parse_action(text, style, convention, size)
    except ActionParseError:
        return None


def prompt_text(prompt: Any) -> str:
    """The text of a prompt (a string or chat messages with text parts)."""
    if prompt is None or isinstance(prompt, str):
        return prompt or ""
    parts = []
    for message in prompt:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text") or "" for p in content if p.get("type") == "text"]
    return "\n".join(parts)


def _pairs(completions, kw, prompts=None) -> list[tuple[Action | None, Action | None, dict]]:
    out = []
    for i, completion in enumerate(completions):
        size = (int(kw["width"][i]), int(kw["height"][i]))
        convention = kw["coords"][i]
        row = {"size": size, "convention": convention, "box": kw.get("target_box", [None] * len(completions))[i],
               "style": kw["action_format"][i]}
        raw = kw["target_action"][i]
        if not raw:  # an online row of a --mix run: the verifier scores it
            out.append((None, None, row))
            continue
        prompt = prompts[i] if prompts is not None else None
        predicted = _parse(completion_text(completion), kw["action_format"][i], convention, size, prompt)
        target = parse_action(raw, "json", convention, size)
        out.append((predicted, target, row))
    return out


def is_strict(text: str, style: str) -> bool:
    """Exactly one action in ``style`` and nothing around it."""
    pattern = _STRICT.get(style, _STRICT["json"])
    return bool(pattern.match(text)) and text.count("<tool_call>") <= 1 and (
        style != "json" or _one_json_object(text))


def _one_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def format_reward(prompts, completions, **kw) -> list[float | None]:
    out = []
    for completion, (p, t, row) in zip(completions, _pairs(completions, kw, prompts)):
        strict = p is not None and is_strict(completion_text(completion), row["style"])
        out.append(None if t is None else 1.0 if strict else 0.0)
    return out


def action_type_reward(prompts, completions, **kw) -> list[float | None]:
    return [None if t is None else 1.0 if p is not None and p.type == t.type else 0.0
            for p, t, _ in _pairs(completions, kw, prompts)]


def argument_reward(prompts, completions, **kw) -> list[float | None]:
    return [score_arguments(p, t) for p, t, _ in _pairs(completions, kw, prompts)]


def location_reward(prompts, completions, **kw) -> list[float | None]:
    return [score_location(p, t, row["box"], row["convention"], row["size"])
            for p, t, row in _pairs(completions, kw, prompts)]


def text_reward(prompts, completions, **kw) -> list[float | None]:
    return [score_text(p, t) for p, t, _ in _pairs(completions, kw, prompts)]


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


def swipe_direction(action: Action) -> str:
    """The dominant direction of a swipe's finger path (up, down, left, right)."""
    dx, dy = action.x2 - action.x, action.y2 - action.y
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def score_arguments(predicted: Action | None, target: Action | None) -> float | None:
    if target is None or (target.type not in ARGUMENT_FIELDS and target.type != "swipe"):
        return None
    if predicted is None or predicted.type != target.type:
        return 0.0
    if target.type == "swipe":
        return 1.0 if swipe_direction(predicted) == swipe_direction(target) else 0.0
    field = ARGUMENT_FIELDS[target.type]
    return 1.0 if getattr(predicted, field) == getattr(target, field) else 0.0


def normalise_text(value: Any) -> str:
    return " ".join(unicodedata.normalize("NFKC", str(value or "")).casefold().split())


def score_text(predicted: Action | None, target: Action | None) -> float | None:
    field = TEXT_FIELDS.get(target.type) if target is not None else None
    if field is None:
        return None
    if predicted is None or predicted.type != target.type:
        return 0.0
    a, b = normalise_text(getattr(predicted, field)), normalise_text(getattr(target, field))
    return difflib.SequenceMatcher(None, a, b).ratio()


def action_matches(predicted: Action | None, target: Action, box=None, convention: str = "abs",
                   size: tuple[int, int] = (1080, 2400)) -> bool:
    """Every part of the action that applies is right (type, arguments, target, text)."""
    if predicted is None or predicted.type != target.type:
        return False
    parts = (score_arguments(predicted, target), score_location(predicted, target, box, convention, size))
    text = score_text(predicted, target)
    return all(v is None or v == 1.0 for v in parts) and (text is None or text >= TEXT_MATCH)


STEP_REWARDS = (format_reward, action_type_reward, argument_reward, location_reward, text_reward)
STEP_WEIGHTS = (0.2, 0.3, 0.5, 0.5, 0.5)

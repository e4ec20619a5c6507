"""Label Studio annotations -> ``annotations`` rows, shared by the webhook and ``pull``.

Both paths build the same event dict (the webhook receives it, ``pull`` rebuilds it
from an export) and call ``to_row``::

    {"action": "ANNOTATION_CREATED",
     "project": {"id": 3},
     "task": {"id": 17, "data": {"episode_id": "...", "step_index": 2, "image": "..."}},
     "annotation": {"id": 41, "completed_by": 1 | {"id": 1, "email": "a@b"},
                    "result": [...]}}

``step_index`` in the task data makes it a step review, its absence an episode review.
Result items read (by ``from_name``, percent coordinates as Label Studio sends them;
names as in ``annotate.configs``):

- ``keypointlabels``/``keypoint`` named ``point``: the corrected point, ``x``/``y``
  percent of ``original_width``/``original_height`` -> device px; a point labelled
  ``swipe_end`` is a swipe's end (``x2``/``y2``), any other label its start;
- ``rectanglelabels``/``rectangle`` named ``element``: the target element's bounds;
- ``choices`` named ``action_type``: the corrected action's type (default ``tap`` when a
  point is given, ``input_text`` when only text is); ``key``, ``direction`` and
  ``status`` choices fill those fields of ``key``, ``scroll`` and ``terminate`` actions;
- ``textarea`` named ``text``: the typed text or answer, the app of ``open_app``, the
  command of ``shell``, the name of ``tool``; ``note``: a free note;
- ``choices`` named ``step_correct``: yes/no; ``outcome`` (episode review): success,
  failure or unknown.

Any other item is foreign to phoneloop's interfaces and makes the whole annotation
invalid (nothing is dropped silently). When the task carries the ``recorded_action``
(``annotate.push`` puts it there) and the corrected type is the recorded one, the fields
the interface cannot show (``duration_ms``, ``seconds``, ``clear``, ``args``) are kept,
and so is the recorded element when the drawn box still matches its bounds (±1 px).

The row has status ``accepted``, annotator = the annotator's email or id, origin
``label-studio:<project>/<task>/<annotation>``, and an id derived from the origin and
what the annotation says (not from how it arrived), so a redelivered webhook, or a
pull after the webhook, writes nothing new, while an edited annotation is a new row.
Anything else (unknown action, missing task data, an episode or step not in the lake,
an invalid corrected action) raises ``InvalidPayload``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from annotate.errors import InvalidPayload
from datalake import schema as S
from datalake.errors import InvalidAction
from datalake.types import OUTCOMES, Action

ACTIONS = ("ANNOTATION_CREATED", "ANNOTATION_UPDATED")
CHOICES = ("action_type", "step_correct", "outcome", "key", "direction", "status")
TEXT_FIELD = {"open_app": "app", "shell": "command", "tool": "name"}  # else "text"
_KEPT = ("duration_ms", "seconds", "clear", "args")
TEXTS = ("text", "note")
_YES = {"yes", "true", "correct", "1"}
_NO = {"no", "false", "incorrect", "wrong", "0"}
_POINTED = ("tap", "double_tap", "long_press", "scroll", "input_text")  # types a keypoint places
_ELEMENT = ("tap", "double_tap", "long_press", "scroll", "input_text")  # types that take an element
_CONTENT = ("target", "episode_id", "step_index", "action_json", "step_correct", "outcome", "note", "origin")


def to_row(lake, payload: Any) -> dict[str, Any]:
    """The ``annotations`` row for an event; raises InvalidPayload (nothing is written)."""
    if not isinstance(payload, dict) or payload.get("action") not in ACTIONS:
        raise InvalidPayload(f"webhook action must be one of {ACTIONS}")
    task, annotation = _obj(payload, "task"), _obj(payload, "annotation")
    data = _obj(task, "data")
    episode_id = data.get("episode_id")
    if not isinstance(episode_id, str) or not episode_id:
        raise InvalidPayload("task.data.episode_id is missing")
    step_index = data.get("step_index")
    if step_index is not None and (not isinstance(step_index, int) or isinstance(step_index, bool)):
        raise InvalidPayload(f"task.data.step_index must be an integer, got {step_index!r}")
    _check_target(lake, episode_id, step_index)
    results = annotation.get("result")
    if not isinstance(results, list):
        raise InvalidPayload("annotation.result must be a list")
    fields = read_results(results)
    row = {
        "target": "episode" if step_index is None else "step", "episode_id": episode_id,
        "step_index": step_index, "status": "accepted", "note": fields.get("note"),
        "annotator": _annotator(annotation.get("completed_by")),
        "origin": origin(_id(payload.get("project")), task.get("id"), annotation.get("id")),
        "action_json": None, "step_correct": None, "outcome": None,
    }
    if step_index is None:
        if fields.get("outcome") not in OUTCOMES:
            raise InvalidPayload(f"an episode review needs an outcome choice, one of {OUTCOMES}")
        row["outcome"] = fields["outcome"]
    else:
        row["step_correct"] = fields.get("step_correct")
        action = _action(fields, _recorded(data.get("recorded_action")))
        row["action_json"] = action.to_json() if action else None
        if action is None and row["step_correct"] is None:
            raise InvalidPayload("a step review needs a corrected action or a step_correct choice")
    row["annotation_id"] = annotation_id(row)
    row["created_at"] = S.now()
    return row


def origin(project: Any, task: Any, annotation: Any) -> str:
    return f"label-studio:{project}/{task}/{annotation}"


def annotation_id(row: dict[str, Any]) -> str:
    """A UUID from the row's origin and content: the same annotation gives the same id."""
    content = json.dumps({k: row[k] for k in _CONTENT}, sort_keys=True, default=str)
    digest = hashlib.sha256(content.encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))


def _obj(parent: dict, key: str) -> dict:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise InvalidPayload(f"{key} must be an object")
    return value


def _check_target(lake, episode_id: str, step_index: int | None) -> None:
    rows = lake.sql("SELECT num_steps FROM episodes WHERE episode_id = ?", [episode_id]).to_pylist()
    if not rows:
        raise InvalidPayload(f"no episode {episode_id!r} in the lake")
    if step_index is not None and not 0 <= step_index < rows[0]["num_steps"]:
        raise InvalidPayload(f"episode {episode_id!r} has no step {step_index}")


def read_results(results: list) -> dict[str, Any]:
    """The fields a list of result items sets; raises InvalidPayload on a corrupt or foreign item."""
    fields: dict[str, Any] = {}
    for item in results:
        if not isinstance(item, dict) or not isinstance(item.get("value"), dict):
            raise InvalidPayload("every result item must be an object with a value object")
        kind, name, value = item.get("type"), item.get("from_name"), item["value"]
        if kind in ("keypointlabels", "keypoint"):
            end = "swipe_end" in (value.get("keypointlabels") or ())
            fields["point2" if end else "point"] = _point(item, value)
        elif kind in ("rectanglelabels", "rectangle") and name == "element":
            fields["bounds"] = _bounds(item, value)
        elif kind == "choices" and name in CHOICES:
            choices = value.get("choices")
            if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], str):
                raise InvalidPayload(f"choices {name!r} must hold exactly one string")
            fields[name] = _yes_no(choices[0]) if name == "step_correct" else choices[0]
        elif kind == "textarea" and name in TEXTS:
            texts = value.get("text")
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise InvalidPayload(f"textarea {name!r} must hold a list of strings")
            fields[name] = "\n".join(texts)
        else:
            raise InvalidPayload(f"result item {kind!r} named {name!r} is not part of a phoneloop interface")
    return fields


def _size(item: dict) -> tuple[int, int]:
    try:
        width, height = int(item["original_width"]), int(item["original_height"])
    except (KeyError, TypeError, ValueError):
        raise InvalidPayload("a region needs original_width and original_height") from None
    if width <= 0 or height <= 0:
        raise InvalidPayload(f"image size {width}x{height} is not positive")
    return width, height


def _pct(value: dict, key: str) -> float:
    try:
        pct = float(value[key])
    except (KeyError, TypeError, ValueError):
        raise InvalidPayload(f"a region needs value.{key} in percent") from None
    if not 0 <= pct <= 100:
        raise InvalidPayload(f"value.{key} = {pct} is not a percentage")
    return pct


def _point(item: dict, value: dict) -> tuple[float, float]:
    try:
        x, y = _pct(value, "x"), _pct(value, "y")
        width, height = _size(item)
    except InvalidPayload as exc:
        raise InvalidPayload(f"a keypoint needs value.x, value.y (percent), original_width and "
                             f"original_height: {exc}") from None
    return round(min(x * width / 100, width - 1), 1), round(min(y * height / 100, height - 1), 1)


def _bounds(item: dict, value: dict) -> tuple[int, int, int, int]:
    width, height = _size(item)
    x, y, w, h = (_pct(value, k) for k in ("x", "y", "width", "height"))
    if x + w > 100.001 or y + h > 100.001:
        raise InvalidPayload(f"rectangle ({x}, {y}, {w}, {h}) leaves the image")
    return (round(x * width / 100), round(y * height / 100),
            round((x + w) * width / 100), round((y + h) * height / 100))


def _yes_no(choice: str) -> bool:
    if choice.lower() in _YES:
        return True
    if choice.lower() in _NO:
        return False
    raise InvalidPayload(f"step_correct must be yes or no, got {choice!r}")


def _recorded(text: Any) -> dict | None:
    if not isinstance(text, str):
        return None
    try:
        return Action.from_json(text).to_dict()
    except (ValueError, InvalidAction):
        raise InvalidPayload("task.data.recorded_action is not a valid action") from None


def _action(fields: dict[str, Any], recorded: dict | None = None) -> Action | None:
    kind = fields.get("action_type")
    if kind is None:
        kind = "tap" if "point" in fields else "input_text" if "text" in fields else None
    if kind is None:
        return None
    data: dict[str, Any] = {"type": kind}
    if "point" in fields and (kind in _POINTED or kind == "swipe"):
        data["x"], data["y"] = fields["point"]
    if "point2" in fields and kind == "swipe":
        data["x2"], data["y2"] = fields["point2"]
    if "text" in fields:
        data[TEXT_FIELD.get(kind, "text")] = fields["text"]
    for name in ("key", "direction", "status"):
        if name in fields:
            data[name] = fields[name]
    same = recorded is not None and recorded.get("type") == kind
    if same:
        data.update({k: recorded[k] for k in _KEPT if k in recorded})
    if "bounds" in fields and kind in _ELEMENT:
        element = recorded.get("element") if same else None
        close = element and element.get("bounds") and all(
            abs(a - b) <= 1 for a, b in zip(element["bounds"], fields["bounds"]))
        data["element"] = element if close else {"bounds": list(fields["bounds"])}
    try:
        return Action.from_dict(data)
    except InvalidAction as exc:
        raise InvalidPayload(f"corrected action is invalid: {exc}") from None


def _id(obj: Any) -> Any:
    return obj.get("id") if isinstance(obj, dict) else None


def _annotator(completed_by: Any) -> str | None:
    if isinstance(completed_by, dict):
        value = completed_by.get("email") or completed_by.get("id")
        return None if value is None else str(value)
    return None if completed_by is None else str(completed_by)

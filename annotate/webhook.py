"""Label Studio webhook payloads -> one ``annotations`` row each.

``ingest(lake, payload)`` accepts ``ANNOTATION_CREATED`` and ``ANNOTATION_UPDATED``::

    {"action": "ANNOTATION_CREATED",
     "project": {"id": 3},
     "task": {"id": 17, "data": {"episode_id": "...", "step_index": 2, "image": "..."}},
     "annotation": {"id": 41, "completed_by": 1 | {"id": 1, "email": "a@b"},
                    "result": [...]}}

``step_index`` in the task data makes it a step review, its absence an episode review.
Result items read (by ``from_name``, percent coordinates as Label Studio sends them):

- a ``keypointlabels``/``keypoint`` result: the corrected point, ``x``/``y`` percent of
  ``original_width``/``original_height`` -> device px;
- ``choices`` named ``action_type``: the corrected action's type (default ``tap`` when a
  point is given, ``input_text`` when only text is); ``key`` and ``direction`` choices
  fill those fields of ``key`` and ``scroll`` actions;
- ``textarea`` named ``text``: the typed text; ``note``: a free note;
- ``choices`` named ``step_correct``: yes/no; ``outcome`` (episode review): success,
  failure or unknown.

The row has status ``accepted``, annotator = the annotator's email or id, origin
``label-studio:<project>/<task>/<annotation>``, and an id derived from the payload, so a
redelivered webhook writes nothing new. Anything else (unknown action, missing task
data, an episode or step not in the lake, an invalid corrected action) raises
``InvalidPayload`` and writes nothing.
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
_YES = {"yes", "true", "correct", "1"}
_NO = {"no", "false", "incorrect", "wrong", "0"}
_POINTED = ("tap", "double_tap", "long_press", "scroll", "input_text")  # types a keypoint places


def ingest(lake, payload: Any) -> dict[str, Any]:
    """Validate ``payload``, append its annotation row (unless already there) and return the row."""
    row = to_row(lake, payload)
    if row["annotation_id"] not in lake.column_values("annotations", "annotation_id"):
        lake.append("annotations", [row])
    return row


def to_row(lake, payload: Any) -> dict[str, Any]:
    """The ``annotations`` row for a payload; raises InvalidPayload (nothing is written)."""
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
    fields = _read_results(results)
    row = {
        "target": "episode" if step_index is None else "step", "episode_id": episode_id,
        "step_index": step_index, "status": "accepted", "note": fields.get("note"),
        "annotator": _annotator(annotation.get("completed_by")),
        "origin": f"label-studio:{_id(payload.get('project'))}/{task.get('id')}/{annotation.get('id')}",
        "action_json": None, "step_correct": None, "outcome": None,
    }
    if step_index is None:
        if fields.get("outcome") not in OUTCOMES:
            raise InvalidPayload(f"an episode review needs an outcome choice, one of {OUTCOMES}")
        row["outcome"] = fields["outcome"]
    else:
        row["step_correct"] = fields.get("step_correct")
        action = _action(fields)
        row["action_json"] = action.to_json() if action else None
        if action is None and row["step_correct"] is None:
            raise InvalidPayload("a step review needs a corrected action or a step_correct choice")
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).digest()
    row["annotation_id"] = str(uuid.UUID(bytes=digest[:16], version=5))
    row["created_at"] = S.now()
    return row


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


def _read_results(results: list) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for item in results:
        if not isinstance(item, dict) or not isinstance(item.get("value"), dict):
            raise InvalidPayload("every result item must be an object with a value object")
        kind, name, value = item.get("type"), item.get("from_name"), item["value"]
        if kind in ("keypointlabels", "keypoint"):
            fields["point"] = _point(item, value)
        elif kind == "choices" and name in ("action_type", "step_correct", "outcome", "key", "direction"):
            choices = value.get("choices")
            if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], str):
                raise InvalidPayload(f"choices {name!r} must hold exactly one string")
            fields[name] = _yes_no(choices[0]) if name == "step_correct" else choices[0]
        elif kind == "textarea" and name in ("text", "note"):
            texts = value.get("text")
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise InvalidPayload(f"textarea {name!r} must hold a list of strings")
            fields[name] = "\n".join(texts)
    return fields


def _point(item: dict, value: dict) -> tuple[float, float]:
    try:
        x, y = float(value["x"]), float(value["y"])
        width, height = int(item["original_width"]), int(item["original_height"])
    except (KeyError, TypeError, ValueError):
        raise InvalidPayload("a keypoint needs value.x, value.y (percent), original_width and original_height") from None
    if not (0 <= x <= 100 and 0 <= y <= 100) or width <= 0 or height <= 0:
        raise InvalidPayload(f"keypoint ({x}, {y}) is not in percent of a {width}x{height} image")
    return round(min(x * width / 100, width - 1), 1), round(min(y * height / 100, height - 1), 1)


def _yes_no(choice: str) -> bool:
    if choice.lower() in _YES:
        return True
    if choice.lower() in _NO:
        return False
    raise InvalidPayload(f"step_correct must be yes or no, got {choice!r}")


def _action(fields: dict[str, Any]) -> Action | None:
    kind = fields.get("action_type")
    if kind is None:
        kind = "tap" if "point" in fields else "input_text" if "text" in fields else None
    if kind is None:
        return None
    data: dict[str, Any] = {"type": kind}
    if "point" in fields and kind in _POINTED:
        data["x"], data["y"] = fields["point"]
    for name in ("text", "key", "direction"):
        if name in fields:
            data[name] = fields[name]
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

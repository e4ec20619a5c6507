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
- ``polygonlabels`` named ``path`` (the arrow drawn from a swipe's start to its end) are skipped;
- ``choices`` named ``step_correct``: yes/no; ``outcome`` (episode review): success,
  failure or unknown.

Any other item is foreign to phoneloop's interfaces and makes the whole annotation
invalid (nothing is dropped silently). When the task carries the ``recorded_action``
(``annotate.push`` puts it there) and the corrected type is the recorded one, the fields
the interface cannot show (``duration_ms``, ``seconds``, ``clear``, ``args``) are kept,
and so is the recorded element when the drawn box still matches its bounds (±1 px).

A field that does not apply to the chosen action type (a scroll direction left selected
after the annotator switched the type to tap, a point on a ``key`` action) is dropped
and named in the row's note; it does not invalidate the person's correction.

The row has status ``accepted``; the person is resolved by ``annotate.people``
(``completed_by`` is a bare user id in webhooks and exports): ``annotator_id`` = the
Label Studio user id, ``annotator_email`` and ``annotator`` = the email (the id when
unknown). It keeps Label Studio's project, task and annotation ids, ``created_at``,
``updated_at`` and ``lead_time``. An annotation by a team reviewer is a review row
(``is_review``, ``review_verdict`` = the ``review`` choice, else ``accept``; an
``accept`` keeps no answer of its own); so is every annotation of a side-by-side review
task (task data ``review: true``, ``annotate.review``). Origin is
``label-studio:<project>/<task>/<annotation>``; the id is derived from the origin, what
the annotation says, who said it (annotator id, email, review or not) and Label Studio's
``updated_at`` (not from how it arrived), so a redelivered or reordered webhook, or a pull
after the webhook, writes nothing new, while each saved edit (A -> B -> A included) is
its own row, and a row stored under a bare user id (users could not be listed) differs
from the same annotation with its person known: ``annotate.pull`` heals it.

A review counts only with an explicit ``review`` choice (accept, fix or reject): the
review form starts pre-filled with the recorded action, so a reviewer's submit without
a verdict is an ``accept`` (noted in the row) and never overrides an annotator.
Anything else (unknown action, missing task data, an episode or step not in the lake,
an invalid corrected action) raises ``InvalidPayload``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from datetime import datetime, timezone

from annotate.errors import InvalidPayload
from annotate.people import People
from datalake import schema as S
from datalake.errors import InvalidAction
from datalake.types import _OPTIONAL, _REQUIRED, OUTCOMES, Action

ACTIONS = ("ANNOTATION_CREATED", "ANNOTATION_UPDATED")
CHOICES = ("action_type", "step_correct", "outcome", "key", "direction", "status", "review")
VERDICTS = ("accept", "fix", "reject")
TEXT_FIELD = {"open_app": "app", "shell": "command", "tool": "name"}  # else "text"
_KEPT = ("duration_ms", "seconds", "clear", "args")
TEXTS = ("text", "note")
_YES = {"yes", "true", "correct", "1"}
_NO = {"no", "false", "incorrect", "wrong", "0"}
_POINTED = ("tap", "double_tap", "long_press", "scroll", "input_text")  # types a keypoint places
_ELEMENT = ("tap", "double_tap", "long_press", "scroll", "input_text")  # types that take an element
_CONTENT = ("target", "episode_id", "step_index", "action_json", "step_correct", "outcome", "note", "origin",
            "review_verdict", "ls_updated_at", "annotator_id", "annotator_email", "is_review")
IDENTITY = ("annotator", "annotator_id", "annotator_email", "is_review")  # who: healed when users list again
_FIELD_OF = {"key": "key", "direction": "direction", "status": "status"}


def check(payload: Any) -> tuple[dict, dict, dict, dict[str, Any]]:
    """What can be checked without the lake (the shape, every result item): (task, annotation,
    task data, fields). The webhook runs it before it acknowledges; raises InvalidPayload."""
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
    results = annotation.get("result")
    if not isinstance(results, list):
        raise InvalidPayload("annotation.result must be a list")
    fields = read_results(results)
    if fields.get("review") not in (None, *VERDICTS):
        raise InvalidPayload(f"review must be one of {VERDICTS}, got {fields['review']!r}")
    return task, annotation, data, fields


def to_row(lake, payload: Any, people: People | None = None) -> dict[str, Any]:
    """The ``annotations`` row for an event; raises InvalidPayload (nothing is written)."""
    task, annotation, data, fields = check(payload)
    episode_id, step_index = data["episode_id"], data.get("step_index")
    _check_target(lake, episode_id, step_index)
    row = {"target": "episode" if step_index is None else "step", "episode_id": episode_id,
           "step_index": step_index, "status": "accepted", "action_json": None, "step_correct": None,
           "outcome": None, **_label_studio(payload, task, annotation, people or People())}
    verdict = _verdict(fields, row)
    notes = [fields["note"]] if fields.get("note") else []
    if "_note" in row:
        notes.append(row.pop("_note"))
    if step_index is None:
        _episode_answer(row, fields, verdict)
    else:
        _step_answer(row, fields, _recorded(data.get("recorded_action")), verdict, notes)
        if data.get("invalid") is True and row["step_correct"] is True and row["action_json"] is None:
            raise InvalidPayload("the recorded step is invalid (the model's output did not parse, the phone "
                                 "only waited): it cannot be marked correct; give the action it should have "
                                 "taken or mark it incorrect")
    row["note"] = "\n".join(notes) or None
    row["replaces"] = None
    row["annotation_id"] = annotation_id(row)
    row["created_at"] = S.now()
    return row


def _label_studio(payload: dict, task: dict, annotation: dict, people: People) -> dict[str, Any]:
    """Who and when, as Label Studio says: ids, the person, timestamps, lead time."""
    project = _id(payload.get("project"))
    if project is None:
        project = annotation.get("project")
    uid, email = people.identify(annotation.get("completed_by"))
    # a side-by-side review task (annotate.review) is answered by reviewers only
    review = people.role(email) == "reviewer" or (task.get("data") or {}).get("review") is True
    return {"annotator": email or uid, "annotator_id": uid, "annotator_email": email,
            "origin": origin(project, task.get("id"), annotation.get("id")),
            "ls_project_id": _int(project), "ls_task_id": _int(task.get("id")),
            "ls_annotation_id": _int(annotation.get("id")), "is_review": review, "review_verdict": None,
            "lead_time": _float(annotation.get("lead_time")),
            "ls_created_at": _time(annotation.get("created_at")),
            "ls_updated_at": _time(annotation.get("updated_at"))}


def _verdict(fields: dict[str, Any], row: dict[str, Any]) -> str | None:
    choice = fields.pop("review", None)
    if choice is not None and choice not in VERDICTS:
        raise InvalidPayload(f"review must be one of {VERDICTS}, got {choice!r}")
    if not row["is_review"]:
        row["review_verdict"] = choice  # kept (unused) so a row healed into a review keeps its verdict
        return None
    # Only an explicit choice counts: the review form starts pre-filled (the recorded action), so
    # content without a verdict is the form submitted as it was: an accept of the annotators' answer.
    row["review_verdict"] = choice or "accept"
    if choice is None and any(k in fields for k in ("action_type", "point", "text", "outcome", "step_correct")):
        row["_note"] = "review without an explicit verdict (accept / fix / reject): counted as accept"
    return row["review_verdict"]


def _episode_answer(row: dict[str, Any], fields: dict[str, Any], verdict: str | None) -> None:
    if verdict == "accept":
        return
    if fields.get("outcome") not in OUTCOMES:
        if verdict == "reject":
            return
        raise InvalidPayload(f"an episode review needs an outcome choice, one of {OUTCOMES}")
    row["outcome"] = fields["outcome"]


def _step_answer(row: dict[str, Any], fields: dict[str, Any], recorded: dict | None, verdict: str | None,
                 notes: list[str]) -> None:
    if verdict == "accept":  # the reviewer confirms the annotators: no answer of their own
        return
    row["step_correct"] = fields.get("step_correct")
    action = _action(fields, recorded, notes)
    row["action_json"] = action.to_json() if action else None
    if action is None and row["step_correct"] is None and verdict is None:
        raise InvalidPayload("a step review needs a corrected action or a step_correct choice")


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
        if isinstance(item, dict) and item.get("from_name") == "path" and item.get("type") in ("polygonlabels",
                                                                                              "polygon"):
            continue  # a drawing aid (the swipe's arrow from start to end): the points carry the action
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


def _action(fields: dict[str, Any], recorded: dict | None = None, notes: list[str] | None = None) -> Action | None:
    kind = fields.get("action_type")
    if kind is None:
        kind = "tap" if "point" in fields else "input_text" if "text" in fields else None
    if kind is None:
        return None
    if kind not in _REQUIRED:
        raise InvalidPayload(f"corrected action is invalid: unknown action type {kind!r}")
    takes = set(_REQUIRED[kind]) | set(_OPTIONAL[kind])
    data: dict[str, Any] = {"type": kind}
    dropped = []
    if "point" in fields and "x" in takes:
        data["x"], data["y"] = fields["point"]
    elif "point" in fields:
        dropped.append(f"point {fields['point']}")
    if "point2" in fields:
        if "x2" in takes:
            data["x2"], data["y2"] = fields["point2"]
        else:
            dropped.append(f"swipe end {fields['point2']}")
    if "text" in fields:
        name = TEXT_FIELD.get(kind, "text")
        if name in takes:
            data[name] = fields["text"]
        else:
            dropped.append(f"text {fields['text']!r}")
    for name in _FIELD_OF:
        if name in fields:
            if name in takes:
                data[name] = fields[name]
            else:
                dropped.append(f"{name} {fields[name]!r}")
    same = recorded is not None and recorded.get("type") == kind
    if same:
        data.update({k: recorded[k] for k in _KEPT if k in recorded})
    if "bounds" in fields:
        if "element" in takes:
            element = recorded.get("element") if same else None
            close = element and element.get("bounds") and all(
                abs(a - b) <= 1 for a, b in zip(element["bounds"], fields["bounds"]))
            data["element"] = element if close else {"bounds": list(fields["bounds"])}
        else:
            dropped.append(f"element box {list(fields['bounds'])}")
    if dropped and notes is not None:
        notes.append(f"dropped (does not apply to {kind}): " + "; ".join(dropped))
    try:
        return Action.from_dict(data)
    except InvalidAction as exc:
        raise InvalidPayload(f"corrected action is invalid: {exc}") from None


def _id(obj: Any) -> Any:
    return obj.get("id") if isinstance(obj, dict) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _time(value: Any) -> datetime | None:
    """Label Studio's ISO timestamp (``...Z``) as an aware UTC datetime; None when absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)

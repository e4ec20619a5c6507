"""Lake rows -> Label Studio task dicts: the frames, the recorded action as a prediction and in words.

A step task carries its before frame (``image``), the next step's frame (``after_image``;
the last step shows its own frame again), the instruction, the recorded action as JSON
(``recorded_action``, read back by ``annotate.convert``) and in words (``action_text``,
e.g. ``tap 'Wi-Fi' at 540,1210``), and a prediction drawing the recorded action on the
before frame: its point(s) as keypoints in percent of the frame with
``original_width``/``original_height`` (a swipe's start and end, and an arrow-shaped
polygon from start to end: the finger's path), the target element's
bounds as a box, its type, key, direction, status and text as choices and text. An
episode task shows every frame in order with each action in words; its verdict starts
empty (no recorded outcome pre-selected: the reviewer is not anchored). A step whose
model output did not parse is shown as INVALID, with the raw output and score, and no
prediction.

Frame URLs are ``<frames_url>/frames/<sha>.png``, with ``?token=...`` when a signer is
given (``api.signing``: the API then serves the frame without a bearer token).
"""

from __future__ import annotations

import math
from typing import Callable

from annotate.convert import TEXT_FIELD
from datalake.actions import WORDS, describe
from datalake.types import Action

MODEL_VERSION = "recorded"
INVALID = "invalid: "  # how a policy records output that did not parse (rollout.policies.INVALID)
Signer = Callable[[str], str]  # frame sha -> "token=..." query


def frame_url(frames_url: str, sha: str, sign: Signer | None = None) -> str:
    url = f"{frames_url}/frames/{sha}.png"
    return f"{url}?{sign(sha)}" if sign else url


def in_words(action: Action) -> str:
    """The action as a person says it: ``tap 'Wi-Fi' at 540,1210``, ``swipe 10,900 -> 10,200``."""
    return describe(action, WORDS)


def invalid_reason(raw_output: str | None) -> str | None:
    """Why the model's output did not parse (the policy recorded a ``wait`` with ``raw_output``
    starting ``invalid: <reason>``), or None for a step the model really took."""
    if not raw_output or not raw_output.startswith(INVALID):
        return None
    return raw_output[len(INVALID):].split("\n", 1)[0].strip() or "unparsed output"


def model_text(r: dict) -> str:
    """What the model said and how sure it was, for the annotator to read."""
    raw = r.get("raw_output")
    score = r.get("score")
    lines = [f"model output: {raw}" if raw else "model output: (none recorded)"]
    lines.append(f"score: {score:.3f}" if isinstance(score, (int, float)) else "score: (none recorded)")
    return "\n".join(lines)


def step_tasks(rows: list[dict], frames_url: str, sign: Signer | None = None) -> list[dict]:
    """One task per step. A step whose model output did not parse is shown as INVALID with the
    raw output and score and no prediction: nothing is drawn or pre-ticked (the recorded ``wait``
    is not an action the model took)."""
    out = []
    for r in rows:
        action = Action.from_json(r["action_json"])
        after = r.get("after_sha") or r["frame_sha"]
        invalid = invalid_reason(r.get("raw_output"))
        said = (f"INVALID: the model's output did not parse ({invalid}); the phone only waited"
                if invalid else in_words(action))
        task = {"data": {
            "image": frame_url(frames_url, r["frame_sha"], sign), "after_image": frame_url(frames_url, after, sign),
            "after_caption": "after" if r.get("after_sha") else "after (last step: no later frame)",
            "episode_id": r["episode_id"], "step_index": r["step_index"], "frame_sha": r["frame_sha"],
            "instruction": r["instruction"], "app": r["app"], "recorded_action": r["action_json"],
            "action_text": f"step {r['step_index'] + 1}/{r['num_steps']}: {said}",
            "model_text": model_text(r), "invalid": bool(invalid)}}
        if r.get("gold"):
            task["data"]["gold"] = True
        if not invalid:
            task["predictions"] = [{"model_version": MODEL_VERSION,
                                    "result": prediction(action, r["frame_width"], r["frame_height"])}]
        out.append(task)
    return out


def episode_tasks(rows: list[dict], frames_url: str, sign: Signer | None = None) -> list[dict]:
    episodes: dict[str, dict] = {}
    for r in rows:
        ep = episodes.setdefault(r["episode_id"], {"instruction": r["instruction"], "outcome": r["outcome"],
                                                   "images": [], "lines": [], "overlay": []})
        action = Action.from_json(r["action_json"])
        ep["images"].append(frame_url(frames_url, r["frame_sha"], sign))
        ep["lines"].append(f"{r['step_index'] + 1}. {in_words(action)}")
        step = f"s{len(ep['images'])}"
        for item in prediction(action, r["frame_width"], r["frame_height"]):  # each step's overlay on its frame
            if item["from_name"] in ("point", "element", "path"):
                ep["overlay"].append({**item, "id": step + item["id"], "to_name": "frames",
                                      "item_index": len(ep["images"]) - 1})
    return [{"data": {"episode_id": eid, "instruction": ep["instruction"], "images": ep["images"],
                      "steps_text": "\n".join(ep["lines"])},
             "predictions": [{"model_version": MODEL_VERSION, "result": ep["overlay"]}]}  # no verdict pre-ticked
            for eid, ep in episodes.items()]


def prediction(action: Action, width: int, height: int) -> list[dict]:
    """The recorded action as Label Studio result items (percent coordinates)."""
    size = {"original_width": width, "original_height": height, "image_rotation": 0}
    items: list[dict] = []
    if action.point is not None:
        label = "swipe_start" if action.type == "swipe" else "tap"
        items.append(_keypoint("p0", action.x, action.y, label, width, height, size))
    if action.x2 is not None and action.y2 is not None:
        items.append(_keypoint("p1", action.x2, action.y2, "swipe_end", width, height, size))
        if action.point is not None:  # the finger's path: an arrow from start to end
            items.append(_arrow(action.x, action.y, action.x2, action.y2, width, height, size))
    if action.element is not None and action.element.bounds is not None:
        x1, y1, x2, y2 = action.element.bounds
        items.append({"id": "el", "type": "rectanglelabels", "from_name": "element", "to_name": "image", **size,
                      "value": {"x": 100 * x1 / width, "y": 100 * y1 / height, "width": 100 * (x2 - x1) / width,
                                "height": 100 * (y2 - y1) / height, "rotation": 0, "rectanglelabels": ["target"]}})
    items.append(_choice("action_type", "image", action.type))
    if action.key is not None:
        items.append(_choice("key", "image", action.key))
    if action.direction is not None:
        items.append(_choice("direction", "image", action.direction))
    if action.status is not None:
        items.append(_choice("status", "image", action.status))
    text = action.text if action.text is not None else getattr(action, TEXT_FIELD.get(action.type, "text"))
    if text is not None:
        items.append({"id": "tx", "type": "textarea", "from_name": "text", "to_name": "image",
                      "value": {"text": [text]}})
    return items


def _arrow(x1: float, y1: float, x2: float, y2: float, width: int, height: int, size: dict) -> dict:
    """A straight arrow from (x1, y1) to (x2, y2) as a closed polygon (a shaft and a head) in
    percent of the frame; sizes are a share of the frame's longer side."""
    unit = max(width, height) / 100
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length  # along the swipe
    nx, ny = -uy, ux  # across it
    head = min(3.5 * unit, 0.6 * length)
    bx, by = x2 - ux * head, y2 - uy * head  # where the head starts
    shaft, wing = 0.5 * unit, 1.6 * unit
    outline = [(x1 + nx * shaft, y1 + ny * shaft), (bx + nx * shaft, by + ny * shaft), (bx + nx * wing, by + ny * wing),
               (x2, y2), (bx - nx * wing, by - ny * wing), (bx - nx * shaft, by - ny * shaft),
               (x1 - nx * shaft, y1 - ny * shaft)]
    points = [[min(100.0, max(0.0, 100 * x / width)), min(100.0, max(0.0, 100 * y / height))] for x, y in outline]
    return {"id": "ar", "type": "polygonlabels", "from_name": "path", "to_name": "image", **size,
            "value": {"points": points, "closed": True, "polygonlabels": ["swipe path"]}}


def _keypoint(rid: str, x: float, y: float, label: str, width: int, height: int, size: dict) -> dict:
    return {"id": rid, "type": "keypointlabels", "from_name": "point", "to_name": "image", **size,
            "value": {"x": 100 * x / width, "y": 100 * y / height, "width": 1, "keypointlabels": [label]}}


def _choice(name: str, to: str, value: str) -> dict:
    return {"id": name, "type": "choices", "from_name": name, "to_name": to, "value": {"choices": [value]}}



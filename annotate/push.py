"""Steps (or episodes) of the lake -> Label Studio tasks with the recorded action as a prediction.

    push(lake, client, "fix-taps", preset="failed", frames_url="http://127.0.0.1:8765")

Selection: a preset (``failed``: steps of failed episodes; ``unverified``: episodes
nobody verified or with an unknown outcome; ``random:0.05``: a deterministic 5 % sample
by step) or an SQL condition over ``s`` (steps) and ``e`` (episodes), e.g.
``--where "e.app = 'settings' AND s.action_type = 'tap'"``.

A step task shows the frame from the phoneloop API (``<frames_url>/frames/<sha>.png``,
which sends ``Access-Control-Allow-Origin`` so the annotator's browser may load it)
and pre-fills the recorded action: its point(s) as keypoints in percent of the frame
with ``original_width``/``original_height``, the target element's bounds as a
rectangle, its type, key, direction and text as choices and text. An episode task
shows every frame in order with the recorded actions and the recorded outcome.

Idempotent: a step (or episode) already in the project is not pushed again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import duckdb

from annotate import configs
from annotate.client import LabelStudio
from annotate.convert import TEXT_FIELD
from annotate.errors import InvalidSelection, ProjectNotFound
from datalake.types import Action

DEFAULT_FRAMES_URL = "http://127.0.0.1:8765"
PRESETS = {
    "failed": "e.outcome = 'failure'",
    "unverified": "(e.verified_by = 'none' OR e.outcome = 'unknown')",
}
MODEL_VERSION = "recorded"
_BATCH = 500


@dataclass
class PushReport:
    project_id: int
    project: str
    kind: str
    selected: int = 0
    pushed: int = 0
    skipped: int = 0  # already in the project


def condition(preset: str | None = None, where: str | None = None) -> tuple[str, float | None]:
    """The SQL condition and the random fraction for a preset or a custom WHERE."""
    if (preset is None) == (where is None):
        raise InvalidSelection("give exactly one of a preset (failed, unverified, random:FRACTION) or --where SQL")
    if where is not None:
        return where, None
    if preset in PRESETS:
        return PRESETS[preset], None
    if preset.startswith("random:"):
        try:
            fraction = float(preset.removeprefix("random:"))
        except ValueError:
            fraction = -1.0
        if not 0 < fraction <= 1:
            raise InvalidSelection(f"random:FRACTION needs a fraction in (0, 1], got {preset!r}")
        return "true", fraction
    raise InvalidSelection(f"unknown preset {preset!r} (failed, unverified, random:FRACTION)")


def select_steps(lake, preset: str | None = None, where: str | None = None) -> list[dict]:
    """The steps a selection names, with what a task needs, in episode and step order."""
    cond, fraction = condition(preset, where)
    sql = f"""
        SELECT s.episode_id, s.step_index, s.frame_sha, s.frame_width, s.frame_height, s.action_json,
               e.instruction, e.app, e.outcome, e.num_steps
        FROM steps s JOIN episodes e ON s.episode_id = e.episode_id
        WHERE {cond}
        ORDER BY e.episode_id, s.step_index"""
    try:
        rows = lake.readonly_connection().sql(sql).to_arrow_table().to_pylist()
    except duckdb.Error as exc:
        raise InvalidSelection(f"the selection is not valid SQL over s (steps) and e (episodes): {exc}") from None
    if fraction is not None:
        rows = [r for r in rows if _sampled(r["episode_id"], r["step_index"], fraction)]
    return rows


def _sampled(episode_id: str, step_index: int, fraction: float) -> bool:
    digest = hashlib.sha256(f"{episode_id}:{step_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def ensure_project(client: LabelStudio, title: str, kind: str) -> dict:
    """The project with this title, created with the review interface of ``kind`` if missing."""
    try:
        return client.project(title)
    except ProjectNotFound:
        return client.create_project(title, configs.config(kind))


def push(lake, client: LabelStudio, project: str, *, preset: str | None = None, where: str | None = None,
         kind: str = "step", frames_url: str = DEFAULT_FRAMES_URL) -> PushReport:
    """Create the selected tasks in ``project`` (created if missing); returns what was pushed."""
    configs.config(kind)  # validates the kind before anything is created
    rows = select_steps(lake, preset, where)
    proj = ensure_project(client, project, kind)
    report = PushReport(project_id=proj["id"], project=project, kind=kind)
    existing = {_key(t.get("data") or {}) for t in client.tasks(proj["id"], full=False)}
    frames = frames_url.rstrip("/")
    tasks = step_tasks(rows, frames) if kind == "step" else episode_tasks(rows, frames)
    report.selected = len(tasks)
    fresh = [t for t in tasks if _key(t["data"]) not in existing]
    report.skipped = len(tasks) - len(fresh)
    for start in range(0, len(fresh), _BATCH):
        body = client.import_tasks(proj["id"], fresh[start:start + _BATCH])
        report.pushed += int(body.get("task_count", 0))
    return report


def _key(data: dict) -> tuple:
    return data.get("episode_id"), data.get("step_index")


def step_tasks(rows: list[dict], frames_url: str) -> list[dict]:
    return [{"data": {"image": f"{frames_url}/frames/{r['frame_sha']}.png", "episode_id": r["episode_id"],
                      "step_index": r["step_index"], "frame_sha": r["frame_sha"], "instruction": r["instruction"],
                      "app": r["app"], "recorded_action": r["action_json"]},
             "predictions": [{"model_version": MODEL_VERSION,
                              "result": prediction(Action.from_json(r["action_json"]),
                                                   r["frame_width"], r["frame_height"])}]}
            for r in rows]


def episode_tasks(rows: list[dict], frames_url: str) -> list[dict]:
    episodes: dict[str, dict] = {}
    for r in rows:
        ep = episodes.setdefault(r["episode_id"], {"instruction": r["instruction"], "outcome": r["outcome"],
                                                   "images": [], "lines": []})
        ep["images"].append(f"{frames_url}/frames/{r['frame_sha']}.png")
        ep["lines"].append(f"{r['step_index'] + 1}. {r['action_json']}")
    return [{"data": {"episode_id": eid, "instruction": ep["instruction"], "images": ep["images"],
                      "steps_text": "\n".join(ep["lines"])},
             "predictions": [{"model_version": MODEL_VERSION, "result": [
                 _choice("outcome", "steps", ep["outcome"])]}]}
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


def _keypoint(rid: str, x: float, y: float, label: str, width: int, height: int, size: dict) -> dict:
    return {"id": rid, "type": "keypointlabels", "from_name": "point", "to_name": "image", **size,
            "value": {"x": 100 * x / width, "y": 100 * y / height, "width": 1, "keypointlabels": [label]}}


def _choice(name: str, to: str, value: str) -> dict:
    return {"id": name, "type": "choices", "from_name": name, "to_name": to, "value": {"choices": [value]}}



"""The working set a recipe transforms: episodes with their (resolved) steps, in memory.

Loaded from a pinned lake snapshot (``Lake.as_of``), so a rebuild against the same
table versions sees the same rows. Ops return new lists; they never write the lake.

Every episode keeps ``trajectory``, all its steps as recorded (after human correction),
next to ``steps``, the ones an op has not dropped. Exports take a kept step's history
(previous actions, previous screenshot) from the trajectory, so dropping a step never
invents a past that did not happen. Ops that rewrite step content (redaction) rewrite
the trajectory too.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace

from datalake.errors import InvalidRecord
from datalake.types import Action


@dataclass
class StepRow:
    index: int  # step_index in the lake
    frame_sha: str
    width: int
    height: int
    action_json: str
    action: Action | None  # None when the (corrected) action does not validate
    ui_tree: str | None = None
    package: str | None = None
    thought: str | None = None
    raw_output: str | None = None
    corrected: bool = False
    image: bytes | None = None  # replacement PNG (e.g. after redaction); None = the lake frame
    meta: dict = field(default_factory=dict)
    activity: str | None = None


@dataclass
class EpisodeRow:
    episode_id: str
    instruction: str
    source: str
    phone: str
    app: str | None
    category: str | None
    task: str | None
    outcome: str
    verified_by: str
    policy: str | None
    round: int | None
    width: int
    height: int
    steps: list[StepRow]
    tags: list[str] = field(default_factory=list)
    split: str | None = None
    purpose: str = "train"
    meta: dict = field(default_factory=dict)
    device: dict = field(default_factory=dict)  # the episode's device object (size, kind, extras)
    failure_reason: str | None = None
    score: float | None = None
    trajectory: tuple[StepRow, ...] = ()  # every recorded step, for histories (see the module docstring)
    unredacted: EpisodeRow | None = None  # the episode before redaction, for tags computed on true content

    def __post_init__(self) -> None:
        if not self.trajectory:
            self.trajectory = tuple(self.steps)

    def with_steps(self, steps: list[StepRow]) -> EpisodeRow:
        return replace(self, steps=steps)

    def history(self, step: StepRow) -> list[StepRow]:
        """The recorded steps before ``step`` (by step index), dropped ones included."""
        return [s for s in self.trajectory if s.index < step.index]


def parse_action(action_json: str) -> Action | None:
    try:
        return Action.from_json(action_json)
    except (InvalidRecord, ValueError, TypeError):
        return None


def load(lake, episode_ids: list[str]) -> list[EpisodeRow]:
    """Episodes (in the given order) with steps from ``steps_resolved``."""
    if not episode_ids:
        return []
    lake.con.execute("CREATE OR REPLACE TEMP TABLE _selection AS SELECT unnest(?::VARCHAR[]) AS episode_id",
                     [episode_ids])
    eps = lake.sql("SELECT e.* FROM episodes_resolved e JOIN _selection USING (episode_id)").to_pylist()
    steps = lake.sql(
        "SELECT s.episode_id, s.step_index, s.frame_sha, s.frame_width, s.frame_height, s.action_json, "
        "s.ui_tree, s.package, s.activity, s.thought, s.raw_output, s.corrected, s.meta_json "
        "FROM steps_resolved s JOIN _selection USING (episode_id) ORDER BY s.episode_id, s.step_index").to_pylist()
    by_episode: dict[str, list[StepRow]] = {}
    for s in steps:
        by_episode.setdefault(s["episode_id"], []).append(StepRow(
            index=s["step_index"], frame_sha=s["frame_sha"], width=s["frame_width"], height=s["frame_height"],
            action_json=s["action_json"], action=parse_action(s["action_json"]), ui_tree=s["ui_tree"],
            package=s["package"], thought=s["thought"], raw_output=s["raw_output"], corrected=bool(s["corrected"]),
            meta=_json_object(s["meta_json"]), activity=s["activity"]))
    rows = {e["episode_id"]: e for e in eps}
    out = []
    for episode_id in episode_ids:
        e = rows.get(episode_id)
        if e is None:
            continue
        out.append(EpisodeRow(
            episode_id=episode_id, instruction=e["instruction"], source=e["source"], phone=e["phone"],
            app=e["app"], category=e["category"], task=e["task"], outcome=e["outcome"],
            verified_by=e["verified_by"], policy=e["policy"], round=e["round"], width=e["device_width"],
            height=e["device_height"], steps=by_episode.get(episode_id, []), purpose=e["purpose"] or "train",
            meta=_json_object(e["meta_json"]), device=_json_object(e["device_json"]),
            failure_reason=e["failure_reason"], score=e["score"]))
    return out


def _json_object(text: str | None) -> dict:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def counts(episodes: list[EpisodeRow]) -> dict:
    """Summary numbers for reports: episodes, steps, and per app / source / phone."""
    return {
        "episodes": len(episodes),
        "steps": sum(len(e.steps) for e in episodes),
        "by_app": dict(sorted(Counter(e.app or "-" for e in episodes).items())),
        "by_source": dict(sorted(Counter(e.source for e in episodes).items())),
        "by_phone": dict(sorted(Counter(e.phone for e in episodes).items())),
    }


def action_key(step: StepRow) -> str:
    """The action without its target bookkeeping, for comparing what was done."""
    if step.action is None:
        return step.action_json
    data = step.action.to_dict()
    data.pop("element", None)
    return json.dumps(data, sort_keys=True)

"""Steps (or episodes) of the lake -> Label Studio tasks with the recorded action as a prediction.

    push(lake, client, "fix-taps", preset="failed", overlap=2)

Selection: a preset or an SQL condition over ``s`` (steps) and ``e`` (episodes, as
resolved: ``episodes_resolved``, so a human verdict counts), e.g.
``--where "e.app = 'settings' AND s.action_type = 'tap'"``. Presets:

- ``failed``: steps of failed episodes; ``unverified``: episodes nobody verified or
  with an unknown outcome; ``random:0.05``: a deterministic 5 % sample by step;
- ``low-confidence[:N]``: the N (default 100) steps with the lowest recorded policy
  score or parse confidence (step meta ``score``, ``confidence`` or ``parse_confidence``),
  least confident first (rollouts record ``score`` from the model's token log-probs);
- ``disagreement``: steps where annotators disagree with each other (action type, the
  step's correctness, or points ``DISAGREE_PX`` = 20 device px or more apart), or an
  annotator disagrees with the model (marked it incorrect, corrected it to another
  type, or moved its point 20 px or more);
- ``uncertain-pairing``: steps the recorder flagged (``pairing = 'uncertain'``; recordings older than
  step meta kept it in the episode's ``steps_meta``);
- ``unjudged-real``: real-phone episodes whose outcome is still unknown.

Tasks are built by ``annotate.tasks``; frames load in the annotator's browser from the
phoneloop API at ``frames_url`` (default ``PHONELOOP_PUBLIC_URL``, else
``http://127.0.0.1:8765``), with a signed, expiring token when ``sign`` is given.
``overlap`` sets the project's maximum annotations per task (Label Studio hands a task
to that many annotators).

``gold=N`` mixes in N steps with known answers (steps of episodes the verifier passed),
unmarked for the annotator; ``annotate agreement`` scores each person on them.

``kind="review"`` makes a side-by-side review project (``annotate.review``): each selected
step that annotators answered becomes a reviewer's task showing every annotator's answer.

Idempotent: a step (or episode) already in the project is not pushed again.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

import duckdb

from annotate import configs, review
from annotate.client import LabelStudio
from annotate.errors import InvalidSelection, ProjectNotFound
from annotate.tasks import MODEL_VERSION, Signer, episode_tasks, prediction, step_tasks

__all__ = ["MODEL_VERSION", "PRESETS", "PushReport", "condition", "episode_tasks", "prediction", "push",
           "select_steps", "step_tasks"]

DEFAULT_FRAMES_URL = "http://127.0.0.1:8765"
_CONFIDENCE = ("coalesce(try_cast(json_extract(s.meta_json, '$.score') AS DOUBLE), "
               "try_cast(json_extract(s.meta_json, '$.confidence') AS DOUBLE), "
               "try_cast(json_extract(s.meta_json, '$.parse_confidence') AS DOUBLE))")
DISAGREE_PX = 20  # a point moved this far (device px) from the model's, or from another annotator's, disagrees
_STEP_ANNOTATIONS = ("FROM annotations_current a WHERE a.target = 'step' AND a.status = 'accepted' "
                     "AND NOT coalesce(a.is_review, false) AND a.episode_id = s.episode_id "
                     "AND a.step_index = s.step_index")
# an annotator's answer: their corrected action, else the recorded one (type and point)
_TYPE = "coalesce(json_extract_string({a}.action_json, '$.type'), s.action_type)"
_PX = ("CASE WHEN {a}.action_json IS NULL THEN s.{c} "
       "ELSE try_cast(json_extract({a}.action_json, '$.{c}') AS DOUBLE) END")
_FAR = ("sqrt(({ax} - {bx}) ** 2 + ({ay} - {by}) ** 2) >= " + str(DISAGREE_PX))
_WITH_MODEL = ("(a.step_correct = false OR " + _TYPE.format(a="a") + " <> s.action_type OR coalesce("
               + _FAR.format(ax=_PX.format(a="a", c="x"), ay=_PX.format(a="a", c="y"), bx="s.x", by="s.y")
               + ", false))")
_BETWEEN = ("(" + _TYPE.format(a="a") + " <> " + _TYPE.format(a="b")
            + " OR coalesce(a.step_correct, true) <> coalesce(b.step_correct, true) OR coalesce("
            + _FAR.format(ax=_PX.format(a="a", c="x"), ay=_PX.format(a="a", c="y"),
                          bx=_PX.format(a="b", c="x"), by=_PX.format(a="b", c="y")) + ", false))")
_OTHERS = _STEP_ANNOTATIONS.replace("annotations_current a", "annotations_current b").replace("a.", "b.")
PRESETS = {
    "failed": "e.outcome = 'failure'",
    "unverified": "(e.verified_by = 'none' OR e.outcome = 'unknown')",
    "disagreement": (f"(EXISTS (SELECT 1 {_STEP_ANNOTATIONS} AND {_WITH_MODEL}) "
                     f"OR EXISTS (SELECT 1 {_STEP_ANNOTATIONS} AND EXISTS (SELECT 1 {_OTHERS} "
                     f"AND coalesce(b.annotator_id, b.annotator) <> coalesce(a.annotator_id, a.annotator) "
                     f"AND {_BETWEEN})))"),
    "uncertain-pairing": ("(s.pairing = 'uncertain' OR (s.pairing IS NULL AND json_extract_string(e.meta_json, "
                          "'$.steps_meta[' || s.step_index || '].pairing') = 'uncertain'))"),  # older recordings
    "unjudged-real": "e.phone = 'real' AND e.outcome = 'unknown'",
    # the policy's own failures on training instances (rollout.corrections): what a correction turns into data
    "failed-rollouts": ("e.source = 'rollout' AND e.purpose = 'train' AND e.outcome = 'failure' "
                        "AND coalesce(e.failure_reason, '') NOT IN ('policy_error', 'device_offline')"),
}
# failed-rollouts: each episode's first wrong step (where the oracle annotator found the policy left the
# oracle's path) comes first, so a person starts where the correction matters
_FIRST_WRONG = ("CASE WHEN s.step_index = (SELECT min(a.step_index) FROM annotations a WHERE a.episode_id = "
                "s.episode_id AND a.origin = 'oracle-annotator') THEN 0 ELSE 1 END")
PRESET_NAMES = ("failed, unverified, random:FRACTION, low-confidence[:N], disagreement, uncertain-pairing, "
                "unjudged-real, failed-rollouts")
_BATCH = 500


@dataclass
class PushReport:
    project_id: int
    project: str
    kind: str
    selected: int = 0
    pushed: int = 0
    skipped: int = 0  # already in the project
    overlap: int = 1


@dataclass(frozen=True)
class Selection:
    where: str
    fraction: float | None = None  # a deterministic sample of this share
    lowest: int | None = None  # only the N lowest-confidence steps
    first: str | None = None  # an ORDER BY term that goes before episode and step order


def condition(preset: str | None = None, where: str | None = None) -> Selection:
    """The SQL condition (and sample or limit) for a preset or a custom WHERE."""
    if (preset is None) == (where is None):
        raise InvalidSelection(f"give exactly one of a preset ({PRESET_NAMES}) or --where SQL")
    if where is not None:
        return Selection(where)
    if preset == "failed-rollouts":
        return Selection(PRESETS[preset], first=_FIRST_WRONG)
    if preset in PRESETS:
        return Selection(PRESETS[preset])
    if preset.startswith("random:"):
        try:
            fraction = float(preset.removeprefix("random:"))
        except ValueError:
            fraction = -1.0
        if not 0 < fraction <= 1:
            raise InvalidSelection(f"random:FRACTION needs a fraction in (0, 1], got {preset!r}")
        return Selection("true", fraction=fraction)
    low = re.fullmatch(r"low-confidence(?::(\d+))?", preset)
    if low:
        n = int(low.group(1) or 100)
        if n < 1:
            raise InvalidSelection(f"low-confidence:N needs N >= 1, got {preset!r}")
        return Selection(f"{_CONFIDENCE} IS NOT NULL", lowest=n)
    raise InvalidSelection(f"unknown preset {preset!r} ({PRESET_NAMES})")


def select_steps(lake, preset: str | None = None, where: str | None = None) -> list[dict]:
    """The steps a selection names, with what a task needs, in episode and step order
    (``low-confidence``: least confident first, ties in episode and step order)."""
    sel = condition(preset, where)
    order = f"{_CONFIDENCE}, e.episode_id, s.step_index LIMIT {sel.lowest}" if sel.lowest else \
        f"{sel.first}, e.episode_id, s.step_index" if sel.first else "e.episode_id, s.step_index"
    sql = f"""
        SELECT s.episode_id, s.step_index, s.frame_sha, s.frame_width, s.frame_height, s.action_json,
               s.raw_output, {_CONFIDENCE} AS score,
               lead(s.frame_sha) OVER (PARTITION BY s.episode_id ORDER BY s.step_index) AS after_sha,
               e.instruction, e.app, e.outcome, e.num_steps
        FROM steps s JOIN episodes_resolved e ON s.episode_id = e.episode_id
        QUALIFY {sel.where}
        ORDER BY {order}"""
    try:
        rows = lake.readonly_connection().sql(sql).to_arrow_table().to_pylist()
    except duckdb.Error as exc:
        raise InvalidSelection(f"the selection is not valid SQL over s (steps) and e (episodes): {exc}") from None
    if sel.fraction is not None:
        rows = [r for r in rows if _sampled(r["episode_id"], r["step_index"], sel.fraction)]
    return rows


GOLD = "e.outcome = 'success' AND e.verified_by = 'verifier'"


def gold_steps(lake, n: int, exclude: set[tuple] = frozenset()) -> list[dict]:
    """``n`` steps with known answers, marked ``gold``: steps of episodes the verifier passed
    (their recorded action is a correct answer), a deterministic sample across episodes.
    ``annotate agreement`` scores each annotator on these (``datalake`` knows them as the
    same steps, so gold needs no flag in the annotations)."""
    if n < 1:
        return []
    rows = [r for r in select_steps(lake, where=GOLD) if (r["episode_id"], r["step_index"]) not in exclude
            and r["num_steps"] > 1]
    rows.sort(key=lambda r: hashlib.sha256(f"gold:{r['episode_id']}:{r['step_index']}".encode()).digest())
    return [{**r, "gold": True} for r in sorted(rows[:n], key=lambda r: (r["episode_id"], r["step_index"]))]


def _sampled(episode_id: str, step_index: int, fraction: float) -> bool:
    digest = hashlib.sha256(f"{episode_id}:{step_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def ensure_project(client: LabelStudio, title: str, kind: str, overlap: int | None = None) -> dict:
    """The project with this title, created with the review interface of ``kind`` if missing;
    its maximum annotations per task set to ``overlap`` when given."""
    try:
        proj = client.project(title)
    except ProjectNotFound:
        return client.create_project(title, configs.config(kind), maximum_annotations=overlap or 1)
    if overlap is not None and proj.get("maximum_annotations") != overlap:
        proj = client.update_project(proj["id"], maximum_annotations=overlap)
    return proj


def default_frames_url() -> str:
    return os.environ.get("PHONELOOP_PUBLIC_URL", DEFAULT_FRAMES_URL)


def push(lake, client: LabelStudio, project: str, *, preset: str | None = None, where: str | None = None,
         kind: str = "step", frames_url: str | None = None, overlap: int | None = None,
         sign: Signer | None = None, gold: int = 0) -> PushReport:
    """Create the selected tasks in ``project`` (created if missing); returns what was pushed.
    ``gold``: mix in that many step tasks with known answers (``gold_steps``)."""
    configs.config(kind)  # validates the kind before anything is created
    if overlap is not None and overlap < 1:
        raise InvalidSelection(f"overlap must be at least 1, got {overlap}")
    rows = select_steps(lake, preset, where)
    if gold:
        rows = rows + gold_steps(lake, gold, exclude={(r["episode_id"], r["step_index"]) for r in rows})
    proj = ensure_project(client, project, kind, overlap)
    report = PushReport(project_id=proj["id"], project=project, kind=kind,
                        overlap=proj.get("maximum_annotations") or 1)
    existing = {_key(t.get("data") or {}) for t in client.tasks(proj["id"], full=False)}
    frames = (frames_url or default_frames_url()).rstrip("/")
    if kind == "review":  # the selected steps annotators answered, each answer side by side
        tasks = review.review_tasks(lake, rows, frames, sign)
    else:
        tasks = step_tasks(rows, frames, sign) if kind == "step" else episode_tasks(rows, frames, sign)
    report.selected = len(tasks)
    fresh = [t for t in tasks if _key(t["data"]) not in existing]
    report.skipped = len(tasks) - len(fresh)
    for start in range(0, len(fresh), _BATCH):
        body = client.import_tasks(proj["id"], fresh[start:start + _BATCH])
        report.pushed += int(body.get("task_count", 0))
    return report


def _key(data: dict) -> tuple:
    return data.get("episode_id"), data.get("step_index")

"""Corrections of the policy's own failures, turned into training episodes (the DAgger step of the loop).

A failed rollout on a mock phone says where the policy goes wrong; a correction says what it
should have done there. Two places give corrections, both kept as ``annotations`` rows
(``target=step``, ``action_json`` the corrected action, ``step_correct=false``):

- a person in Label Studio (``annotate push --preset failed-rollouts``, then pull or the webhook);
- the **oracle annotator** (``annotator='oracle'``, ``origin='oracle-annotator'``), which stands in
  for the person in the embedded default: it replays the task's oracle on the episode's instance
  beside the policy's recorded actions and marks the first step where the policy left the
  oracle's path (another action type, another element, other text), with the oracle's action as
  the correction. An episode whose every step matched but ran out of steps is corrected at the
  step after its last.

A *corrected episode* is then recorded by replaying on a fresh mock phone of the same instance:
the policy's prefix (its steps before the corrected one, as it took them), the corrected step,
and the oracle's continuation from the state that left (when the prefix and correction stayed on
the oracle's path its own next actions; otherwise, home and the oracle from there on the state
as it is). The task's verifier judges the result: only verified successes are written, with
``source='corrected'`` and lineage in ``meta.corrected_from`` (the rollout episode, its rollout
id) and ``meta.correction`` (step, annotation id, annotator). Episodes that ran perturbed are
replayed under the same profile and seed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from datalake import schema as S
from datalake.lake import Lake
from datalake.types import Action, Episode, Observation, Step

ORACLE_ANNOTATOR = "oracle"
ORACLE_ORIGIN = "oracle-annotator"

FAILED_ROLLOUTS = """
SELECT episode_id FROM episodes
WHERE source = 'rollout' AND purpose = 'train' AND outcome = 'failure' AND task IS NOT NULL
  AND failure_reason IS DISTINCT FROM 'device_offline'  -- a phone that dropped out: nothing the policy did
  AND failure_reason IS DISTINCT FROM 'policy_error'  -- an endpoint that kept failing: no action to correct
  {where}
ORDER BY episode_id
"""

CORRECTIONS = """
SELECT a.annotation_id, a.episode_id, a.step_index, a.action_json, a.annotator, a.origin
FROM annotations_current a JOIN episodes e USING (episode_id)  -- retracted and superseded rows left out
WHERE a.target = 'step' AND a.action_json IS NOT NULL AND coalesce(a.step_correct, false) = false
  AND a.status <> 'rejected' AND coalesce(a.is_review, false) = false
  AND e.source = 'rollout' AND e.outcome = 'failure'
  {where}
ORDER BY a.episode_id, a.step_index, a.created_at
"""


@dataclass(frozen=True)
class Correction:
    episode_id: str  # the failed rollout episode
    step_index: int  # the first wrong step (== len(steps) when every step was right but too few)
    action: Action  # what should have been done there
    annotation_id: str
    annotator: str


@dataclass
class CorrectionReport:
    failed_rollouts: int = 0
    annotated: int = 0  # corrections the oracle annotator wrote
    corrections: int = 0  # corrections found for the selected episodes (oracle or person)
    written: int = 0  # corrected episodes written (verified successes)
    unverified: int = 0  # corrected episodes the verifier did not accept (not written)
    skipped: list[str] = field(default_factory=list)  # episode: why it was not replayed

    def to_dict(self) -> dict[str, Any]:
        return {"failed_rollouts": self.failed_rollouts, "annotated": self.annotated,
                "corrections": self.corrections, "written": self.written, "unverified": self.unverified,
                "skipped": self.skipped}


def same_action(taken: Action, wanted: Action) -> bool:
    """Whether ``taken`` does what ``wanted`` does: the same type, and for a tap or press the same
    element (the point inside the wanted element's bounds, else within 24 px), for typed text the
    same text into the same field, for a swipe the same main direction, for apps, keys, scroll
    directions, answers, commands and statuses the same value."""
    if taken.type != wanted.type:
        return False
    kind = taken.type
    if kind in ("tap", "long_press", "double_tap"):
        bounds = wanted.element.bounds if wanted.element is not None else None
        if bounds is not None:
            x1, y1, x2, y2 = bounds
            return x1 <= taken.x <= x2 and y1 <= taken.y <= y2
        return abs(taken.x - wanted.x) <= 24 and abs(taken.y - wanted.y) <= 24
    if kind == "input_text":
        field_of = [a.element.resource_id if a.element is not None else None for a in (taken, wanted)]
        same_field = None in field_of or field_of[0] == field_of[1]
        return same_field and (taken.text or "").strip() == (wanted.text or "").strip()
    if kind == "swipe":
        return _direction(taken) == _direction(wanted)
    if kind == "tool":
        return taken.name == wanted.name and (taken.args or {}) == (wanted.args or {})
    value = {"open_app": "app", "key": "key", "scroll": "direction", "terminate": "status", "answer": "text",
             "ask_user": "text", "shell": "command"}.get(kind)
    return value is None or getattr(taken, value) == getattr(wanted, value)


def _direction(a: Action) -> str:
    dx, dy = a.x2 - a.x, a.y2 - a.y
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def _phone_and_task(episode: Episode):
    from mockphone.phone import MockPhone
    from mockphone.tasks import registry

    meta = episode.meta or {}
    seed = int(meta.get("seed", 0))
    perturb = meta.get("perturbation") or {}
    profile = perturb.get("profile") if isinstance(perturb, dict) else None
    phone = MockPhone(locale=meta.get("locale") or "en-US",
                      perturbations=None if profile in (None, "none") else profile)
    task = registry.get(episode.task)(seed=seed)
    phone.reset(seed)
    task.initialize_task(phone)
    return phone, task, seed


def _oracle_plan(phone, task) -> Iterator[Action]:
    from phones.episode import OraclePolicy

    oracle = OraclePolicy(phone, task)
    while True:
        yield oracle.act("", None, [])[0]  # type: ignore[arg-type]  # the oracle reads the live UI only


def oracle_correction(episode: Episode) -> tuple[int, Action] | None:
    """The first step where ``episode`` left its oracle's path, and the oracle's action there."""
    phone, task, _ = _phone_and_task(episode)
    try:
        plan = _oracle_plan(phone, task)
        for k, step in enumerate(episode.steps):
            wanted = next(plan)
            if not same_action(step.action, wanted):
                return k, wanted
            phone.act(step.action)
            if step.action.type == "terminate":
                return None  # it followed the oracle to the end: nothing to correct
        return len(episode.steps), next(plan)
    finally:
        phone.close()


def annotate_with_oracle(lake: Lake, episode_ids: list[str]) -> int:
    """Write the oracle annotator's correction of each episode that has none yet; returns how many."""
    have = set()
    if episode_ids:
        have = {r["episode_id"] for r in lake.sql(
            "SELECT DISTINCT episode_id FROM annotations WHERE origin = ? AND list_contains(?, episode_id)",
            [ORACLE_ORIGIN, episode_ids]).to_pylist()}
    rows = []
    for episode_id in episode_ids:
        if episode_id in have:
            continue
        found = oracle_correction(lake.episode(episode_id))
        if found is None:
            continue
        k, action = found
        rows.append({"annotation_id": f"oracle-{hashlib.sha1(f'{episode_id}|{k}'.encode()).hexdigest()[:16]}",
                     "target": "step", "episode_id": episode_id, "step_index": k, "status": "accepted",
                     "action_json": json.dumps(action.to_dict(), sort_keys=True), "step_correct": False,
                     "outcome": None, "note": "first step off the oracle's path", "annotator": ORACLE_ANNOTATOR,
                     "origin": ORACLE_ORIGIN, "created_at": S.now()})
    if rows:
        lake.append("annotations", rows)
    return len(rows)


def corrections_for(lake: Lake, episode_ids: list[str] | None = None) -> list[Correction]:
    """One correction per episode: its earliest corrected step (a person's wins over the oracle's there)."""
    where, params = "", []
    if episode_ids is not None:
        where, params = "AND list_contains(?, a.episode_id)", [episode_ids]
    rows = lake.sql(CORRECTIONS.format(where=where), params).to_pylist()
    chosen: dict[str, dict] = {}
    for r in rows:
        best = chosen.get(r["episode_id"])
        person = r["origin"] != ORACLE_ORIGIN
        if best is None or r["step_index"] < best["step_index"] or (
                r["step_index"] == best["step_index"] and person and best["origin"] == ORACLE_ORIGIN):
            chosen[r["episode_id"]] = r
    return [Correction(r["episode_id"], int(r["step_index"]), Action.from_dict(json.loads(r["action_json"])),
                       r["annotation_id"], r["annotator"] or "unknown") for r in chosen.values()]


class _Replay:
    """The policy of a corrected episode: the recorded prefix, the corrected step, then the oracle."""

    source = "corrected"

    def __init__(self, phone, task, prefix: list[Step], correction: Correction) -> None:
        self.name = f"corrected:{correction.annotator}"
        self._phone, self._task = phone, task
        self._prefix = [s.action for s in prefix]
        self._fix = correction.action
        self._plan = _oracle_plan(phone, task)
        self._on_path = True  # prefix and correction match what the oracle would have done
        self._restarted = False

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]:
        k = len(history)
        if k < len(self._prefix) or k == len(self._prefix):
            action = self._prefix[k] if k < len(self._prefix) else self._fix
            if self._on_path:
                self._on_path = same_action(action, next(self._plan))
            return action, None
        if not self._on_path and not self._restarted:  # off the oracle's path: from home, on the state as it is
            self._restarted = True
            from phones.episode import OraclePolicy

            self._plan = iter(())
            self._oracle = OraclePolicy(self._phone, self._task)
            return Action("key", key="home"), None
        if self._restarted:
            return self._oracle.act(instruction, observation, history)
        return next(self._plan), None


def corrected_episode(lake: Lake, correction: Correction, max_steps: int = 60) -> Episode:
    """Replay ``correction`` on a fresh phone of its episode's instance (see the module docstring)."""
    from phones.episode import run_episode

    original = lake.episode(correction.episode_id)
    phone, task, seed = _phone_and_task(original)
    try:
        policy = _Replay(phone, task, list(original.steps[:correction.step_index]), correction)
        meta = {"corrected_from": {"episode_id": original.episode_id, "policy": original.policy,
                                   "rollout_id": (original.meta or {}).get("rollout_id")},
                "correction": {"step": correction.step_index, "annotation_id": correction.annotation_id,
                               "annotator": correction.annotator}}
        episode = run_episode(phone, policy, task, seed=seed, max_steps=max_steps, round=original.round, meta=meta)
    finally:
        phone.close()
    digest = hashlib.sha1(f"{original.episode_id}|{correction.annotation_id}".encode()).hexdigest()[:16]
    return replace(episode, episode_id=f"corrected-{digest}", purpose="train")


def correct(lake: Lake, *, where: str = "", oracle: bool = True, max_steps: int = 60) -> CorrectionReport:
    """The loop's correction stage: the failed training rollouts selected by ``where`` (SQL over
    ``episodes``), the oracle annotator's corrections where asked, and a verified corrected
    episode per correction that has none yet. Rerunning it writes nothing twice."""
    report = CorrectionReport()
    ids = lake.sql(FAILED_ROLLOUTS.format(where=f"AND ({where})" if where else "")).column(0).to_pylist()
    report.failed_rollouts = len(ids)
    if not ids:
        return report
    if oracle:
        report.annotated = annotate_with_oracle(lake, ids)
        lake.invalidate()
    corrections = corrections_for(lake, ids)
    report.corrections = len(corrections)
    have = set(lake.sql("SELECT episode_id FROM episodes WHERE source = 'corrected'").column(0).to_pylist())
    episodes = []
    for c in corrections:
        try:
            episode = corrected_episode(lake, c, max_steps=max_steps)
        except Exception as exc:  # an instance that no longer builds, an action the phone refuses
            report.skipped.append(f"{c.episode_id}: {type(exc).__name__}: {exc}"[:300])
            continue
        if episode.episode_id in have:
            continue
        if episode.outcome != "success":
            report.unverified += 1
            continue
        episodes.append(episode)
    if episodes:
        report.written = lake.write_episodes(episodes, origin="corrections").written
    return report

"""A labelled set of near-duplicate episode pairs built from mock seeds, and the
precision and recall of ``dedup_near`` on it (used by the tests and the bench).

- true pairs: one task seed (same parameters, same instruction) run twice, on a plain
  mock phone and on a phone with another display density, with or without
  ``Perturbations.realistic()``, when the oracle did the same thing both times (same
  actions, texts and target elements; other pixels and coordinates);
- false pairs: the same task with other parameters (``Set an alarm for 07:50`` vs
  ``05:00``: screens a few phash bits apart), and episodes of different tasks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from curation.ops.base import Context
from curation.workset import EpisodeRow, StepRow, parse_action

TASKS = ("ClockAddAlarm", "ContactsAdd", "NotesCreate", "MessagesSend")


@dataclass(frozen=True)
class Pair:
    a: EpisodeRow
    b: EpisodeRow
    duplicate: bool
    why: str


class FrameStore:
    """Frames by sha, standing in for the lake in a ``Context`` (``frame(sha)``)."""

    def __init__(self) -> None:
        self.frames: dict[str, bytes] = {}

    def frame(self, sha: str) -> bytes:
        return self.frames[sha]


def to_row(episode, store: FrameStore) -> EpisodeRow:
    """An ``EpisodeRow`` for an in-memory ``datalake.types.Episode`` (frames go to ``store``)."""
    steps = []
    for i, s in enumerate(episode.steps):
        sha = s.observation.sha256
        store.frames[sha] = s.observation.screenshot
        width, height = s.observation.size
        steps.append(StepRow(index=i, frame_sha=sha, width=width, height=height, action_json=s.action.to_json(),
                             action=parse_action(s.action.to_json()), ui_tree=s.observation.ui_tree,
                             thought=s.thought, raw_output=s.raw_output, meta=dict(s.meta)))
    return EpisodeRow(episode_id=episode.episode_id, instruction=episode.instruction, source=episode.source,
                      phone=episode.device.kind, app=episode.app, category=episode.category, task=episode.task,
                      outcome=episode.outcome, verified_by=episode.verified_by, policy=episode.policy,
                      round=episode.round, width=episode.device.width, height=episode.device.height, steps=steps,
                      meta=dict(episode.meta))


def labelled_pairs(seeds: int = 6, tasks: tuple[str, ...] = TASKS) -> tuple[list[Pair], FrameStore]:
    """True and false pairs from ``seeds`` seeds of each task (see the module docstring)."""
    from collectors.collect import run_all
    from mockphone.phone import MockPhone
    from phones.episode import OraclePolicy

    store = FrameStore()
    plain, _ = run_all(MockPhone(seed=0), OraclePolicy.factory, list(tasks), seeds=range(seeds))
    pairs: list[Pair] = []
    rows = [to_row(e, store) for e in plain]
    for k, e in enumerate(plain):
        twin = rerun(e, tries=3, first_phone_seed=1 + 3 * k)
        if twin is not None:
            pairs.append(Pair(rows[k], to_row(twin, store), True, "same task seed, other phone and perturbation"))
    for a, b in itertools.combinations(rows, 2):
        if a.instruction == b.instruction:
            continue  # two seeds that drew the same parameters: neither clearly true nor false
        why = "same task, other parameters" if a.task == b.task else "different tasks"
        if a.task == b.task or (a.steps and b.steps and len(a.steps) == len(b.steps)):
            pairs.append(Pair(a, b, False, why))
    return pairs, store


DENSITIES = (400, 440, 380, 460, 360, 480)


def _trajectory(episode) -> list:
    """What the oracle did, without coordinates (they move with the display density)."""
    out = []
    for s in episode.steps:
        data = s.action.to_dict()
        element = data.pop("element", None) or {}
        for name in ("x", "y", "x2", "y2"):
            data.pop(name, None)
        out.append((data, element.get("resource_id")))
    return out


def rerun(episode, *, tries: int = 3, first_phone_seed: int = 1):
    """The episode's task seed again on another phone: another display density (so other
    pixels and coordinates), under ``Perturbations.realistic()`` on even tries and
    without perturbations on odd ones, phone seeds from
    ``first_phone_seed``. The first run whose oracle did the same thing (same actions,
    texts and target elements), or None."""
    from collectors.collect import run_all
    from mockphone.layout import Display
    from mockphone.perturb import Perturbations
    from mockphone.phone import MockPhone
    from phones.episode import OraclePolicy

    for k in range(tries):
        perturbations = Perturbations.realistic() if k % 2 == 0 else None  # realistic, else none at all
        phone = MockPhone(seed=first_phone_seed + k, display=Display(1080, 2400, dpi=DENSITIES[k % len(DENSITIES)]),
                          perturbations=perturbations)
        again, _ = run_all(phone, OraclePolicy.factory, [episode.task], seeds=[episode.meta["seed"]])
        if again and again[0].instruction == episode.instruction and _trajectory(again[0]) == _trajectory(episode):
            return again[0]
    return None


def evaluate(op, pairs: list[Pair], store: FrameStore, **params) -> dict:
    """Precision and recall of a dedup op on ``pairs``: a pair is called a duplicate
    when the op, given [a, b], keeps only a."""
    ctx = Context(store)
    tp = fp = fn = tn = 0
    for pair in pairs:
        kept = op([pair.a, pair.b], ctx, **params)
        called = len(kept) == 1
        tp += called and pair.duplicate
        fp += called and not pair.duplicate
        fn += (not called) and pair.duplicate
        tn += (not called) and not pair.duplicate
    return {"pairs": len(pairs), "true_pairs": tp + fn, "false_pairs": fp + tn, "tp": tp, "fp": fp, "fn": fn,
            "tn": tn, "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}

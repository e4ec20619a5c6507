"""Deduplication: exact episodes, near-duplicate episodes, near-duplicate (screen, action) steps.

Near-duplicate frames use 64-bit perceptual hashes and a Hamming threshold, clustered
by ``curation.neardup`` (multi-index hashing, sub-quadratic); near-duplicate episodes
must also say and do the same thing, and are found by bit-sampling LSH against the kept
episodes (``dedup_near``, ``curation.neardup.first_repeats``). The first occurrence (selection
order) is kept.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np

from curation.neardup import clusters, first_repeats
from curation.ops.base import Context, normalise_instruction
from curation.workset import EpisodeRow, action_key


def _task(e: EpisodeRow) -> str:
    """What makes two episodes the same task: the instance's content fingerprint when the episode has one
    (two worlds never merge, two seeds that generate the same instance do), else the template or instruction."""
    e = e.unredacted or e
    instance = e.meta.get("instance") if isinstance(e.meta, dict) else None
    if isinstance(instance, str) and instance:
        return f"instance:{instance}"
    return e.task or e.instruction.strip().lower()


def recorded_steps(e: EpisodeRow) -> list:
    """The kept steps as recorded: redaction gives every episode its own fakes, so
    comparisons across episodes look at what was recorded, whatever the op order."""
    if e.unredacted is None:
        return list(e.steps)
    recorded = {s.index: s for s in e.unredacted.trajectory}
    return [recorded.get(s.index, s) for s in e.steps]


def dedup_exact(ws: list[EpisodeRow], ctx: Context) -> list[EpisodeRow]:
    """Drop episodes of the same task instance (its content fingerprint; else the same task or
    instruction) with the same action sequence (as recorded, so it works before or after ``redact``)."""
    seen: set = set()
    out = []
    for e in ws:
        key = (_task(e), tuple(action_key(s) for s in recorded_steps(e)))
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def dedup_near(ws: list[EpisodeRow], ctx: Context, *, threshold: int = 8, min_frames: float = 0.5,
               grid: int = 20) -> list[EpisodeRow]:
    """Drop an episode that repeats an earlier kept one: the same normalised instruction,
    the same actions once ``wait`` steps are left out and a tap repeated in a row counts
    once (type, typed text, answer, key, app, status and target: the element's resource
    id / content-desc / text, else the grid cell of the point on a ``grid`` x ``grid``
    grid) and, at the same actions, frames within ``threshold`` bits (64-bit phash) on at
    least ``min_frames`` of them.

    Frames alone cannot tell "06:30" from "07:30" on an alarm screen (a few bits), so
    they only confirm what the text says. Episodes are grouped by their text key in one
    pass (a dict); inside a group, each episode is compared only with the kept episodes
    that share one of its bit-sampling LSH bands (``curation.neardup.first_repeats``),
    then checked exactly. One rule at every group size, and never transitive: an episode
    repeats a kept one, not a dropped one, so a drifting chain keeps the same episodes
    however long it grows. The cost is linear in the episodes (64 band lookups each)
    plus the exact check of the candidates.

    Measured on the labelled pairs of ``bench.dedup_eval`` (mock seeds of
    ClockAddAlarm, ContactsAdd, NotesCreate, MessagesSend: true pairs are one task seed
    rerun on a phone with another display density, with or without realistic
    perturbations, same actions; false pairs the same task with other parameters, and
    other tasks) and on the labelled generator of ``bench/neardup_bench.py``: see that
    bench for the figures."""
    if not 0.0 <= min_frames <= 1.0:
        raise ValueError("min_frames must be between 0 and 1")
    if grid < 1:
        raise ValueError("grid must be at least 1")
    groups: dict[tuple, list[int]] = defaultdict(list)
    frames: dict[int, list[str]] = {}
    for i, e in enumerate(ws):
        key, frames[i] = canonical(e, grid)
        groups[(normalise_instruction((e.unredacted or e).instruction), key)].append(i)
    hashes = ctx.phashes([sha for shas in frames.values() for sha in shas])
    dropped: set[int] = set()
    examples = []
    for members in groups.values():
        if len(members) < 2:
            continue
        for i, twin in _repeats(members, frames, hashes, threshold, min_frames):
            dropped.add(i)
            if len(examples) < 8:
                examples.append([ws[twin].steps[-1].frame_sha, ws[i].steps[-1].frame_sha])
    ctx.details["near_duplicate_episodes"] = examples
    ctx.details["near_duplicates_dropped"] = len(dropped)
    return [e for i, e in enumerate(ws) if i not in dropped]


def _repeats(members: list[int], frames: dict[int, list[str]], hashes: dict[str, int], threshold: int,
             min_frames: float) -> list[tuple[int, int]]:
    """(dropped, kept twin) pairs inside one text-key group, first occurrence kept."""
    n_steps = len(frames[members[0]])
    if n_steps == 0:
        return []
    sigs = np.array([[hashes[sha] for sha in frames[i]] for i in members], dtype=np.uint64)
    need = max(1, math.ceil(min_frames * n_steps - 1e-9)) if min_frames > 0 else 0
    twins = first_repeats(sigs, threshold, need)
    return [(members[row], members[int(t)]) for row, t in enumerate(twins.tolist()) if t >= 0]


REPEATABLE = ("tap", "double_tap", "long_press")  # the same one twice in a row counts once


def canonical(e: EpisodeRow, grid: int = 20) -> tuple[tuple[str, ...], list[str]]:
    """What an episode does, as compared by ``dedup_near``: the step keys (``_step_key``)
    with ``wait`` steps left out and a tap-like action repeated in a row kept once, and
    the frame each kept key was taken on (its first occurrence). Computed on the episode
    as recorded when redaction has already run."""
    keys: list[str] = []
    shas: list[str] = []
    for s in recorded_steps(e):
        kind = s.action.type if s.action is not None else None
        if kind == "wait":
            continue
        key = _step_key(s, grid)
        if kind in REPEATABLE and keys and keys[-1] == key:
            continue
        keys.append(key)
        shas.append(s.frame_sha)
    return tuple(keys), shas


def content_key(e: EpisodeRow, grid: int = 20) -> tuple:
    """What an episode says and does, independent of pixels: the normalised instruction
    and its canonical step keys (see ``canonical`` and ``dedup_near``)."""
    return (normalise_instruction((e.unredacted or e).instruction), canonical(e, grid)[0])


def _step_key(s, grid: int) -> str:
    if s.action is None:
        return s.action_json
    data = s.action.to_dict()
    for name in ("x", "y", "x2", "y2", "duration_ms", "element"):
        data.pop(name, None)
    if isinstance(data.get("text"), str):
        data["text"] = " ".join(data["text"].split()).lower()
    element = s.action.element
    target = element and (element.resource_id or element.content_desc or element.text)
    if target:
        data["target"] = target
    elif s.action.points():
        data["target"] = [(int(x * grid // max(1, s.width)), int(y * grid // max(1, s.height)))
                          for x, y in s.action.points()]
    return json.dumps(data, sort_keys=True)


def dedup_frames(ws: list[EpisodeRow], ctx: Context, *, threshold: int = 4) -> list[EpisodeRow]:
    """Drop steps showing a near-identical screen with the same action as an earlier kept
    step (frames and actions as recorded, so it works before or after ``redact``)."""
    flat = [(ei, si) for ei, e in enumerate(ws) for si in range(len(e.steps))]
    if not flat:
        return ws
    recorded = [recorded_steps(e) for e in ws]
    shas = [ws[ei].steps[si].frame_sha for ei, si in flat]
    hashes = ctx.phashes(shas)
    labels = clusters(np.array([hashes[s] for s in shas], dtype=np.uint64), threshold)
    seen: set = set()
    drop: set[tuple[int, int]] = set()
    cluster_examples: dict[int, list[str]] = defaultdict(list)
    for (ei, si), label in zip(flat, labels.tolist()):
        key = (label, action_key(recorded[ei][si]))
        if key in seen:
            drop.add((ei, si))
        else:
            seen.add(key)
        members = cluster_examples[label]
        sha = ws[ei].steps[si].frame_sha
        if len(members) < 6 and sha not in members:
            members.append(sha)
    ctx.details["near_duplicate_clusters"] = [m for m in cluster_examples.values() if len(m) > 1][:8]
    out = [e.with_steps([s for si, s in enumerate(e.steps) if (ei, si) not in drop]) for ei, e in enumerate(ws)]
    return [e for e in out if e.steps]

"""Deduplication: exact episodes, near-duplicate episodes, near-duplicate (screen, action) steps.

Near-duplicates use 64-bit perceptual hashes of the frames and a Hamming threshold;
candidate pairs come from ``curation.neardup`` (multi-index hashing, sub-quadratic).
The first occurrence (selection order) is kept.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from curation.neardup import clusters
from curation.ops.base import Context
from curation.workset import EpisodeRow, action_key


def _task(e: EpisodeRow) -> str:
    return e.task or e.instruction.strip().lower()


def dedup_exact(ws: list[EpisodeRow], ctx: Context) -> list[EpisodeRow]:
    """Drop episodes with the same task (or instruction) and the same action sequence."""
    seen: set = set()
    out = []
    for e in ws:
        key = (_task(e), tuple(action_key(s) for s in e.steps))
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def dedup_near(ws: list[EpisodeRow], ctx: Context, *, threshold: int = 4) -> list[EpisodeRow]:
    """Drop episodes of the same task and action types whose frames all lie within
    ``threshold`` bits of an earlier kept episode's frames, step by step."""
    hashes = ctx.phashes([s.frame_sha for e in ws for s in e.steps])
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, e in enumerate(ws):
        groups[(_task(e), tuple(s.action.type if s.action else "?" for s in e.steps))].append(i)
    dropped: set[int] = set()
    examples = []
    for members in groups.values():
        if len(members) < 2:
            continue
        sigs = np.array([[hashes[s.frame_sha] for s in ws[i].steps] for i in members], dtype=np.uint64)
        kept_rows: list[int] = []
        for row, i in enumerate(members):
            twin = next((k for k in kept_rows if _all_close(sigs[row], sigs[k], threshold)), None)
            if twin is None:
                kept_rows.append(row)
                continue
            dropped.add(i)
            if len(examples) < 8:
                examples.append([ws[members[twin]].steps[0].frame_sha, ws[i].steps[0].frame_sha])
    ctx.details["near_duplicate_episodes"] = examples
    return [e for i, e in enumerate(ws) if i not in dropped]


def _all_close(a: np.ndarray, b: np.ndarray, threshold: int) -> bool:
    x = np.bitwise_xor(a, b)
    bits = np.unpackbits(x.view(np.uint8)).reshape(len(x), 64).sum(axis=1)
    return bool((bits <= threshold).all())


def dedup_frames(ws: list[EpisodeRow], ctx: Context, *, threshold: int = 4) -> list[EpisodeRow]:
    """Drop steps showing a near-identical screen with the same action as an earlier kept step."""
    flat = [(ei, si) for ei, e in enumerate(ws) for si in range(len(e.steps))]
    if not flat:
        return ws
    shas = [ws[ei].steps[si].frame_sha for ei, si in flat]
    hashes = ctx.phashes(shas)
    labels = clusters(np.array([hashes[s] for s in shas], dtype=np.uint64), threshold)
    seen: set = set()
    drop: set[tuple[int, int]] = set()
    cluster_examples: dict[int, list[str]] = defaultdict(list)
    for (ei, si), label in zip(flat, labels.tolist()):
        key = (label, action_key(ws[ei].steps[si]))
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

"""Steps by how surely the recorder paired them: drop the ones whose screen may be the wrong one.

A recorded demonstration (``collectors.recorder``) says, per step, how its screen and tree were
chosen (``Step.meta``, the lake's ``meta_json``; its ``pairing`` column holds the first):

- ``pairing``: ``ok`` when the frame was seen at rest between the previous action settling and
  this touch-down; ``uncertain`` when no such frame exists (a transition still running, a late
  grab, too few frames): the screenshot may be a blend or the next screen, so the action would
  be taught on a screen it was not taken on;
- ``tree``: ``same_screen`` when the UI dump ran while that frame was shown; ``uncertain`` when
  the nearest dump may be of another screen (its element ids and bounds would not match the
  pixels);
- ``flags``: e.g. ``multi_touch``, ``rotation_uncertain``, ``no_frame_before``.

Episodes recorded before per-step meta existed keep the same facts in
``meta["steps_meta"]`` (by step index). Steps with none of these facts (mock phones, rollouts,
imports) are never touched.
"""

from __future__ import annotations

from dataclasses import replace

from curation.ops.base import Context
from curation.workset import EpisodeRow, StepRow

FRAME_CHOICES, TREE_CHOICES = ("drop", "keep"), ("drop", "strip", "keep")


def drop_flagged_steps(ws: list[EpisodeRow], ctx: Context, *, frame_uncertain: str = "drop",
                       tree_uncertain: str = "strip", flags: list[str] | None = None,
                       max_flagged: float | None = None) -> list[EpisodeRow]:
    """Drop or keep recorded steps by the recorder's pairing flags. ``frame_uncertain`` (drop |
    keep): steps whose screenshot was not seen at rest before the touch (``pairing = uncertain``).
    ``tree_uncertain`` (drop | strip | keep): steps whose UI tree may be of another screen (strip
    keeps the step without its tree and the target element read from it). ``flags``: steps carrying any of these recorder flags are
    dropped (e.g. [multi_touch, rotation_uncertain]). ``max_flagged``: an episode in which more than
    this fraction of the recorded steps was dropped is dropped whole. Steps without pairing facts
    (mock phones, rollouts, imports) are kept as they are."""
    if frame_uncertain not in FRAME_CHOICES:
        raise ValueError(f"frame_uncertain must be one of {', '.join(FRAME_CHOICES)}, not {frame_uncertain!r}")
    if tree_uncertain not in TREE_CHOICES:
        raise ValueError(f"tree_uncertain must be one of {', '.join(TREE_CHOICES)}, not {tree_uncertain!r}")
    if max_flagged is not None and not 0 <= max_flagged <= 1:
        raise ValueError(f"max_flagged must be a fraction in [0, 1], not {max_flagged!r}")
    drop_flags = set(flags or ())
    counts = {"frame_uncertain": 0, "tree_uncertain": 0, "trees_stripped": 0, "flagged": 0, "episodes_dropped": 0}
    out = []
    for e in ws:
        kept, recorded, dropped = [], 0, 0
        for s in e.steps:
            facts = _facts(e, s)
            if facts is None:
                kept.append(s)
                continue
            recorded += 1
            reason = _drop_reason(facts, frame_uncertain, tree_uncertain, drop_flags)
            if reason is not None:
                counts[reason] += 1
                dropped += 1
            elif tree_uncertain == "strip" and facts.get("tree") == "uncertain" and s.ui_tree is not None:
                counts["trees_stripped"] += 1
                kept.append(_without_tree(s))
            else:
                kept.append(s)
        if max_flagged is not None and recorded and dropped / recorded > max_flagged:
            counts["episodes_dropped"] += 1
            continue
        if kept:
            out.append(e.with_steps(kept))
    ctx.details["pairing_flags"] = counts
    return out


def _facts(e: EpisodeRow, s: StepRow) -> dict | None:
    """The recorder's facts about step ``s``: its own meta, else the episode's older ``steps_meta``."""
    if "pairing" in s.meta:
        return s.meta
    old = e.meta.get("steps_meta") or []
    if 0 <= s.index < len(old) and isinstance(old[s.index], dict) and "pairing" in old[s.index]:
        return old[s.index]
    return None


def _drop_reason(facts: dict, frame_uncertain: str, tree_uncertain: str, drop_flags: set[str]) -> str | None:
    if frame_uncertain == "drop" and facts.get("pairing") == "uncertain":
        return "frame_uncertain"
    if tree_uncertain == "drop" and facts.get("tree") == "uncertain":
        return "tree_uncertain"
    if drop_flags & set(facts.get("flags") or ()):
        return "flagged"
    return None


def _without_tree(s: StepRow) -> StepRow:
    """The step without what came from its tree: the tree and the action's target element."""
    if s.action is None or s.action.element is None:
        return replace(s, ui_tree=None)
    action = replace(s.action, element=None)
    return replace(s, ui_tree=None, action=action, action_json=action.to_json())

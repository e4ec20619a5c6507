"""Inter-annotator agreement over the lake's annotations.

    report = agreement(lake, tolerance_px=14)

Takes each annotator's latest accepted annotation per target (a step or an episode) and,
for every target that two or more annotators judged, compares them pairwise:

- ``step_correct``: the same yes/no;
- ``action``: both corrected the action to the same type, with every point within
  ``tolerance_px`` device pixels and the same text, key, direction and status;
- ``outcome`` (episode reviews): the same outcome.

Each comparison reports how many pairs it saw and the share that agreed (``None`` with
no pairs); ``disagreements`` lists the first targets where any comparison differed.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from itertools import combinations
from typing import Any

_SAME = ("type", "text", "key", "direction", "status", "app", "command", "name")
MAX_LISTED = 20


def agreement(lake, tolerance_px: float = 14.0) -> dict[str, Any]:
    rows = lake.sql("""
        SELECT target, episode_id, step_index, annotator, action_json, step_correct, outcome FROM annotations
        WHERE status = 'accepted' AND annotator IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY target, episode_id, step_index, annotator
                                   ORDER BY created_at DESC, annotation_id DESC) = 1
    """).to_pylist()
    by_target: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        by_target[(row["target"], row["episode_id"], row["step_index"])].append(row)
    tallies = {name: [0, 0] for name in ("step_correct", "action", "outcome")}  # [pairs, agreed]
    items = {"step": 0, "episode": 0}
    disagreements = []
    for key, judged in sorted(by_target.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or -1)):
        if len(judged) < 2:
            continue
        items[key[0]] += 1
        differs = False
        for a, b in combinations(judged, 2):
            for name, same in _compare(a, b, tolerance_px).items():
                tallies[name][0] += 1
                tallies[name][1] += same
                differs |= not same
        if differs and len(disagreements) < MAX_LISTED:
            disagreements.append({"target": key[0], "episode_id": key[1], "step_index": key[2],
                                  "annotators": sorted(r["annotator"] for r in judged)})
    return {
        "annotators": len({r["annotator"] for r in rows}), "tolerance_px": tolerance_px,
        "steps": {"items": items["step"], "step_correct": _share(tallies["step_correct"]),
                  "action": _share(tallies["action"])},
        "episodes": {"items": items["episode"], "outcome": _share(tallies["outcome"])},
        "disagreements": disagreements,
    }


def _compare(a: dict, b: dict, tolerance_px: float) -> dict[str, bool]:
    out = {}
    if a["target"] == "episode":
        if a["outcome"] is not None and b["outcome"] is not None:
            out["outcome"] = a["outcome"] == b["outcome"]
        return out
    if a["step_correct"] is not None and b["step_correct"] is not None:
        out["step_correct"] = a["step_correct"] == b["step_correct"]
    if a["action_json"] is not None and b["action_json"] is not None:
        out["action"] = _same_action(json.loads(a["action_json"]), json.loads(b["action_json"]), tolerance_px)
    return out


def _same_action(a: dict, b: dict, tolerance_px: float) -> bool:
    if any(a.get(k) != b.get(k) for k in _SAME):
        return False
    for x, y in (("x", "y"), ("x2", "y2")):
        if (a.get(x) is None) != (b.get(x) is None):
            return False
        if a.get(x) is not None and math.dist((a[x], a[y]), (b[x], b[y])) > tolerance_px:
            return False
    return True


def _share(tally: list[int]) -> dict[str, Any]:
    pairs, agreed = tally
    return {"pairs": pairs, "agreement": round(agreed / pairs, 4) if pairs else None}

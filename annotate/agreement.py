"""Inter-annotator agreement over the lake's annotations.

    report = agreement(lake, tolerance_px=14)

Takes each annotator's latest accepted annotation per target (a step or an episode;
review rows are not votes) and, over the targets two or more annotators judged:

- ``action_type``: the type of the action each annotator settled on (their correction,
  else the recorded one), with the share of agreeing pairs, Cohen's kappa (mean over
  annotator pairs with common items) and Fleiss' kappa (items with any number of raters);
- ``step_correct``: the same yes/no, share and kappas;
- ``action``: the same type, every point within ``tolerance_px`` device pixels and the
  same text, key, direction and status (share);
- ``tap_distance_px``: for pairs that both placed a point on an action of the same type,
  the distribution of the distance between their points (count, p50, p90, max, share
  within the tolerance);
- ``text``: for pairs that both typed a text (or answer, app, command), the share that
  typed the same after trimming and case folding;
- ``outcome`` (episode reviews): share and kappas;
- ``per_annotator``: annotations, items shared with others, agreement with the
  consensus (the majority type, resp. outcome, of the others and themselves) and median
  lead time in seconds.

- ``matrix``: annotator x annotator, the targets each pair both judged and the share
  they agreed on (the same outcome; the same action within the tolerance and the same
  step-correct judgement);
- ``with_reviewers``: per annotator, over steps a reviewer gave an explicit verdict,
  the share where their answer is the final one (``steps_resolved``);
- ``gold``: per annotator, over gold steps (steps of episodes the verifier passed, whose
  recorded action is a known answer; ``annotate push --gold N`` mixes them in), the
  share they answered right.

``disagreements`` lists the first targets where any comparison differed.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from itertools import combinations
from statistics import median
from typing import Any

_SAME = ("type", "text", "key", "direction", "status", "app", "command", "name")
_TEXTS = ("text", "app", "command", "name")
MAX_LISTED = 20


def agreement(lake, tolerance_px: float = 14.0) -> dict[str, Any]:
    rows = lake.sql("""
        SELECT a.target, a.episode_id, a.step_index, a.annotator, a.action_json, a.step_correct, a.outcome,
               a.lead_time, s.action_json AS recorded_json
        FROM annotations_current a LEFT JOIN steps s ON a.target = 'step' AND s.episode_id = a.episode_id
                                              AND s.step_index = a.step_index
        WHERE a.status = 'accepted' AND a.annotator IS NOT NULL AND NOT coalesce(a.is_review, false)
        QUALIFY row_number() OVER (PARTITION BY a.target, a.episode_id, a.step_index, a.annotator
                                   ORDER BY coalesce(a.ls_updated_at, a.created_at) DESC, a.created_at DESC,
                                            a.annotation_id DESC) = 1
    """).to_pylist()
    by_target: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        row["action"] = json.loads(row["action_json"] or row["recorded_json"] or "null")
        by_target[(row["target"], row["episode_id"], row["step_index"])].append(row)
    shared = {k: v for k, v in sorted(by_target.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or -1))
              if len(v) >= 2}
    steps = [v for k, v in shared.items() if k[0] == "step"]
    episodes = [v for k, v in shared.items() if k[0] == "episode"]
    return {
        "annotators": len({r["annotator"] for r in rows}), "tolerance_px": tolerance_px,
        "steps": {"items": len(steps),
                  "action_type": categorical(steps, lambda r: (r["action"] or {}).get("type")),
                  "step_correct": categorical(steps, lambda r: r["step_correct"]),
                  "action": _share(_pairs(steps, lambda a, b: _same_action(a, b, tolerance_px))),
                  "tap_distance_px": _distances(steps, tolerance_px),
                  "text": _share(_pairs(steps, _same_text))},
        "episodes": {"items": len(episodes), "outcome": categorical(episodes, lambda r: r["outcome"])},
        "per_annotator": _per_annotator(rows, shared),
        "matrix": matrix(shared, tolerance_px),
        "with_reviewers": with_reviewers(lake, rows, tolerance_px),
        "gold": gold(lake, rows, tolerance_px),
        "disagreements": _disagreements(shared, tolerance_px),
    }


def _agrees(a: dict, b: dict, tolerance_px: float) -> bool:
    """Two annotators' answers on one target agree: same outcome (episodes), or the same
    action within the tolerance and the same step-correct judgement (steps)."""
    if a["target"] == "episode":
        return a["outcome"] == b["outcome"]
    if (a["step_correct"] is False) != (b["step_correct"] is False):
        return False
    return bool(a["action"] and b["action"] and _same_action(a["action"], b["action"], tolerance_px))


def matrix(shared: dict[tuple, list[dict]], tolerance_px: float) -> dict[str, Any]:
    """Annotator x annotator: for each pair, the targets both judged and the share they agreed on."""
    people = sorted({r["annotator"] for judged in shared.values() for r in judged})
    both: Counter = Counter()
    agreed: Counter = Counter()
    for judged in shared.values():
        for a, b in combinations(judged, 2):
            key = tuple(sorted((a["annotator"], b["annotator"])))
            both[key] += 1
            agreed[key] += _agrees(a, b, tolerance_px)
    cells = [[None if p == q else ({"items": both[k], "agreement": round(agreed[k] / both[k], 4)} if both[k]
                                   else {"items": 0, "agreement": None})
              for q in people for k in [tuple(sorted((p, q)))]] for p in people]
    return {"annotators": people, "cells": cells}


def with_reviewers(lake, rows: list[dict], tolerance_px: float) -> list[dict]:
    """Per annotator, over the steps a reviewer judged with an explicit verdict: the share where
    their answer is the final one (``steps_resolved``: the reviewer's fix, the recorded action
    after a reject, the annotators' answer after an accept)."""
    final = {(r["episode_id"], r["step_index"]): r for r in lake.sql("""
        SELECT r.episode_id, r.step_index, r.action_json, r.corrected FROM steps_resolved r
        WHERE EXISTS (SELECT 1 FROM annotations_current a WHERE a.is_review AND a.target = 'step'
                      AND a.review_verdict IN ('accept', 'fix', 'reject')
                      AND a.episode_id = r.episode_id AND a.step_index = r.step_index)""").to_pylist()}
    return _scored(rows, final, tolerance_px)


def gold(lake, rows: list[dict], tolerance_px: float) -> list[dict]:
    """Per annotator, over gold steps (steps of episodes the verifier passed: the recorded action
    is a known answer, ``annotate.push.gold_steps``): the share they answered right."""
    known = {(r["episode_id"], r["step_index"]): {**r, "corrected": False} for r in lake.sql("""
        SELECT s.episode_id, s.step_index, s.action_json FROM steps s JOIN episodes_resolved e USING (episode_id)
        WHERE e.outcome = 'success' AND e.verified_by = 'verifier'""").to_pylist()}
    return _scored(rows, known, tolerance_px)


def _scored(rows: list[dict], answers: dict[tuple, dict], tolerance_px: float) -> list[dict]:
    stats: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        answer = answers.get((row["episode_id"], row["step_index"])) if row["target"] == "step" else None
        if answer is None:
            continue
        right = json.loads(answer["action_json"])
        said_wrong = row["step_correct"] is False and row["action_json"] is None
        corrected_is_recorded = not answer["corrected"]
        ok = (not (said_wrong and corrected_is_recorded)) and bool(row["action"]) and \
            _same_action(row["action"], right, tolerance_px)
        stats[row["annotator"]].append(ok)
    return [{"annotator": who, "items": len(v), "agreement": round(sum(v) / len(v), 4)}
            for who, v in sorted(stats.items())]


def categorical(items: list[list[dict]], label) -> dict[str, Any]:
    """Pairwise share, mean pairwise Cohen's kappa and Fleiss' kappa of one label over items."""
    labelled = [[(r["annotator"], label(r)) for r in judged if label(r) is not None] for judged in items]
    labelled = [judged for judged in labelled if len(judged) >= 2]
    out = _share(_pairs_of(labelled))
    out["cohen_kappa"] = _mean_cohen(labelled)
    out["fleiss_kappa"] = fleiss_kappa([Counter(v for _, v in judged) for judged in labelled])
    return out


def cohen_kappa(a: list, b: list) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (None when undefined)."""
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    return None if expected == 1 else round((observed - expected) / (1 - expected), 4)


def fleiss_kappa(counts: list[Counter]) -> float | None:
    """Fleiss' kappa over items given as label counts (raters per item may differ, each >= 2)."""
    counts = [c for c in counts if sum(c.values()) >= 2]
    if not counts:
        return None
    per_item = [(sum(v * (v - 1) for v in c.values()) / (n * (n - 1))) for c in counts
                for n in [sum(c.values())]]
    totals = Counter()
    for c in counts:
        totals.update(c)
    ratings = sum(totals.values())
    expected = sum((v / ratings) ** 2 for v in totals.values())
    observed = sum(per_item) / len(per_item)
    return None if expected == 1 else round((observed - expected) / (1 - expected), 4)


def _mean_cohen(labelled: list[list[tuple]]) -> float | None:
    common: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
    for judged in labelled:
        for (pa, va), (pb, vb) in combinations(sorted(judged, key=lambda t: str(t[0])), 2):
            common[(pa, pb)][0].append(va)
            common[(pa, pb)][1].append(vb)
    kappas = [k for a, b in common.values() if (k := cohen_kappa(a, b)) is not None]
    return round(sum(kappas) / len(kappas), 4) if kappas else None


def _pairs_of(labelled: list[list[tuple]]) -> list[bool]:
    return [va == vb for judged in labelled for (_, va), (_, vb) in combinations(judged, 2)]


def _pairs(items: list[list[dict]], same) -> list[bool]:
    out = []
    for judged in items:
        for a, b in combinations(judged, 2):
            verdict = same(a["action"], b["action"]) if a["action"] and b["action"] else None
            if verdict is not None:
                out.append(verdict)
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


def _text(action: dict) -> str | None:
    return next((action[k] for k in _TEXTS if action.get(k) is not None), None)


def _same_text(a: dict, b: dict) -> bool | None:
    ta, tb = _text(a), _text(b)
    if ta is None or tb is None:
        return None
    return " ".join(ta.split()).casefold() == " ".join(tb.split()).casefold()


def _distances(items: list[list[dict]], tolerance_px: float) -> dict[str, Any]:
    dist = sorted(math.dist((a["action"]["x"], a["action"]["y"]), (b["action"]["x"], b["action"]["y"]))
                  for judged in items for a, b in combinations(judged, 2)
                  if a["action"] and b["action"] and a["action"].get("type") == b["action"].get("type")
                  and a["action"].get("x") is not None and b["action"].get("x") is not None)
    if not dist:
        return {"pairs": 0, "p50": None, "p90": None, "max": None, "within_tolerance": None}
    pick = lambda q: round(dist[min(len(dist) - 1, int(q * len(dist)))], 1)  # noqa: E731
    return {"pairs": len(dist), "p50": round(median(dist), 1), "p90": pick(0.9), "max": round(dist[-1], 1),
            "within_tolerance": round(sum(d <= tolerance_px for d in dist) / len(dist), 4)}


def _vote(row: dict) -> Any:
    return row["outcome"] if row["target"] == "episode" else (row["action"] or {}).get("type")


def _per_annotator(rows: list[dict], shared: dict[tuple, list[dict]]) -> list[dict]:
    stats: dict[str, dict] = defaultdict(lambda: {"annotations": 0, "shared_items": 0, "agreed": 0, "lead": []})
    for row in rows:
        entry = stats[row["annotator"]]
        entry["annotations"] += 1
        if row["lead_time"] is not None:
            entry["lead"].append(row["lead_time"])
    for judged in shared.values():
        consensus, _ = Counter(_vote(r) for r in judged).most_common(1)[0]
        for row in judged:
            stats[row["annotator"]]["shared_items"] += 1
            stats[row["annotator"]]["agreed"] += _vote(row) == consensus
    return [{"annotator": who, "annotations": s["annotations"], "shared_items": s["shared_items"],
             "agreement_with_consensus": round(s["agreed"] / s["shared_items"], 4) if s["shared_items"] else None,
             "median_lead_time_s": round(median(s["lead"]), 2) if s["lead"] else None}
            for who, s in sorted(stats.items())]


def _disagreements(shared: dict[tuple, list[dict]], tolerance_px: float) -> list[dict]:
    out = []
    for key, judged in shared.items():
        differs = any(
            a["outcome"] != b["outcome"] if key[0] == "episode" else
            (a["step_correct"] is not None and b["step_correct"] is not None and a["step_correct"] != b["step_correct"])
            or (a["action"] and b["action"] and not _same_action(a["action"], b["action"], tolerance_px))
            for a, b in combinations(judged, 2))
        if differs and len(out) < MAX_LISTED:
            out.append({"target": key[0], "episode_id": key[1], "step_index": key[2],
                        "annotators": sorted(r["annotator"] for r in judged)})
    return out


def _share(agreed: list[bool]) -> dict[str, Any]:
    return {"pairs": len(agreed), "agreement": round(sum(agreed) / len(agreed), 4) if agreed else None}

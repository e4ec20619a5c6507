"""Evaluations as the viewer reads them from the lake's ``evals`` table (schema v2).

One ``evals`` row per (eval_id, policy). The JSON columns are read in this shape — the
eval writer (rollout/eval.py) writes exactly it:

- ``results_json``: a list, one item per episode the policy ran:
  ``{"task": str, "seed": int, "episode_id": str, "outcome": "success"|"failure"|"unknown",
  "score": float|null, "category": str|null, "app": str|null}``;
- ``summary_json``: ``{"overall": G, "by_category": {category: G}, "by_app": {app: G}}`` where
  ``G = {"n": int, "successes": int, "rate": float, "low": float, "high": float}`` (rate in
  0..1 with its 95% interval). The viewer shows these numbers as stored; when the column
  is NULL it computes them from ``results_json`` and says so, and the eval writer's rows
  (no ``overall``) get their overall cell from ``results_json``;
- human verdicts win: every result's outcome is read again from ``episodes_resolved`` (the
  one rule: reviewer > majority > latest). A policy whose results a human changed gets its
  summary, counts and comparisons recomputed from the resolved outcomes (``summary_source``
  says ``human verdicts``; each changed result keeps its ``recorded_outcome``). Intervals
  are ``rollout.eval.wilson``'s (what ``phoneloop eval`` stores) and comparisons
  ``rollout.eval.paired``'s, so the viewer has no interval method of its own;
- ``comparisons_json`` (as ``rollout/eval.py`` writes it, each pair once:
  ``{a, b, pairs, both, only_a, only_b, neither, rate_a, rate_b, test, p_value}``) is read
  as a list of paired comparisons with the other policies of the eval
  on the same (task, seed) pairs: ``{"against": policy, "group": "overall"|category,
  "pairs": int, "only_this": int, "only_other": int, "both": int, "neither": int,
  "diff": float, "low": float|null, "high": float|null, "p_value": float|null}`` (``diff`` is
  this policy's success rate minus the other's over the pairs; ``phoneloop eval`` tests it with
  McNemar's exact test and computes no interval for it, so rows it wrote have ``low``/``high``
  null rather than an interval the evaluator never gave).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from api.errors import EvalNotFound
from rollout.eval import paired, wilson

Sql = Callable[[str, list | None], list[dict[str, Any]]]
GROUPS = (("category", "by_category"), ("app", "by_app"))


def _cell(results: list[dict[str, Any]]) -> dict[str, Any]:
    n, k = len(results), sum(r.get("outcome") == "success" for r in results)
    low, high = wilson(k, n)
    return {"n": n, "successes": k, "rate": k / n if n else 0.0, "low": low, "high": high}


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary_json``'s shape computed from per-episode results (when the row has none)."""
    out: dict[str, Any] = {"overall": _cell(results)}
    for key, name in GROUPS:
        groups: dict[str, list] = {}
        for r in results:
            groups.setdefault(r.get(key) or "—", []).append(r)
        out[name] = {g: _cell(rs) for g, rs in sorted(groups.items())}
    return out


def _loads(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _row(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if not k.endswith("_json")}
    out["policy_config"] = _loads(row.get("policy_json"), None)
    out["seeds"] = _loads(row.get("seeds_json"), None)
    out["results"] = _loads(row.get("results_json"), [])
    out["summary"] = _loads(row.get("summary_json"), None)
    out["summary_computed"] = out["summary"] is None
    if out["summary"] is None:
        out["summary"] = summarise(out["results"])
    elif "overall" not in out["summary"]:  # the eval writer stores per-group cells only
        out["summary"] = {"overall": _cell(out["results"]), **out["summary"]}
    out["comparisons"] = [_comparison(c, row.get("policy")) for c in _loads(row.get("comparisons_json"), [])]
    n = row.get("episodes") or 0
    out["rate"] = (row.get("successes") or 0) / n if n else None
    return out


def _comparison(c: dict[str, Any], policy: str | None) -> dict[str, Any]:
    """One paired comparison seen from ``policy``'s row. ``rollout/eval.py`` writes each pair
    once as ``{a, b, pairs, both, only_a, only_b, neither, rate_a, rate_b, test, p_value}``
    (McNemar's exact test); the viewer's shape (module docstring) is derived from it."""
    if "against" in c:
        return c
    mine = c.get("a") == policy
    only_this, only_other = (c.get("only_a", 0), c.get("only_b", 0)) if mine else (c.get("only_b", 0), c.get("only_a", 0))
    n = c.get("pairs") or 0
    diff = (only_this - only_other) / n if n else None
    # phoneloop eval's interval for b - a (rollout.eval.paired_difference), seen from this row's side
    low, high = c.get("low"), c.get("high")
    if low is not None and high is not None and mine:
        low, high = -high, -low
    return {"against": c.get("b") if mine else c.get("a"), "group": c.get("group", "overall"), "pairs": n,
            "only_this": only_this, "only_other": only_other, "both": c.get("both", 0), "neither": c.get("neither", 0),
            "diff": diff, "low": low, "high": high, "p_value": c.get("p_value"), "test": c.get("test")}


def _resolved_outcomes(sql: Sql, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """episode id -> its outcome and verified_by after human judgement, for every result of ``rows``."""
    ids = sorted({str(r["episode_id"]) for row in rows for r in row["results"] if r.get("episode_id")})
    if not ids:
        return {}
    got = sql("SELECT episode_id, outcome, verified_by FROM episodes_resolved "
              "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
    return {g["episode_id"]: g for g in got}


def apply_verdicts(sql: Sql, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (parsed by ``_row``) with every result's outcome as judged; a policy whose results
    changed gets its summary, counts and comparisons recomputed (module docstring)."""
    resolved = _resolved_outcomes(sql, rows)
    changed = False
    for row in rows:
        results, n_changed = [], 0
        for r in row["results"]:
            now = resolved.get(str(r.get("episode_id")))
            if now is not None and now["outcome"] != r.get("outcome"):
                r = {**r, "outcome": now["outcome"], "recorded_outcome": r.get("outcome"),
                     "verified_by": now["verified_by"]}
                n_changed += 1
            results.append(r)
        row["results"], row["human_changed"] = results, n_changed
        row["summary_source"] = "evals table" if not row["summary_computed"] else "computed from results"
        if n_changed:
            row["summary"], row["summary_source"] = summarise(results), f"human verdicts ({n_changed} changed)"
            row["successes"] = sum(r.get("outcome") == "success" for r in results)
            row["rate"] = row["successes"] / len(results) if results else None
            changed = True
    if changed:  # the pairs are recomputed with the evaluator's own test
        flat = [{"policy": row["policy"], "task": r.get("task"), "seed": r.get("seed"), "outcome": r.get("outcome")}
                for row in rows for r in row["results"]]
        pairs = paired(flat, [row["policy"] for row in rows])
        for row in rows:
            row["comparisons"] = [_comparison(c, row["policy"]) for c in pairs if row["policy"] in (c["a"], c["b"])]
    return rows


def list_evals(sql: Sql) -> list[dict[str, Any]]:
    """Every evaluation, newest first, with one line per policy (counts after human judgement)."""
    rows = sql("""SELECT eval_id, name, policy, status, error, episodes, successes, task_set, perturbation,
                         round, loop, created_at, results_json FROM evals
                  ORDER BY created_at DESC, eval_id, policy""", None)
    judged = apply_verdicts(sql, [{"policy": r["policy"], "results": _loads(r["results_json"], []),
                                   "summary_computed": False, "summary": None} for r in rows])
    for r, j in zip(rows, judged):
        if j["human_changed"]:
            r["successes"] = j["successes"]
    evals: dict[str, dict[str, Any]] = {}
    for r in rows:
        e = evals.setdefault(r["eval_id"], {k: r[k] for k in ("eval_id", "name", "task_set", "perturbation",
                                                               "round", "loop", "created_at")} | {"policies": []})
        n = r["episodes"] or 0
        e["policies"].append({"policy": r["policy"], "status": r["status"], "error": r["error"], "episodes": n,
                              "successes": r["successes"], "rate": (r["successes"] or 0) / n if n else None})
    return list(evals.values())


def eval_detail(sql: Sql, eval_id: str) -> dict[str, Any]:
    """One evaluation: its policies' rows, the per-group table and the per-task results."""
    rows = [_row(r) for r in sql("SELECT * FROM evals WHERE eval_id = ? ORDER BY created_at, policy", [eval_id])]
    if not rows:
        raise EvalNotFound(f"no evaluation {eval_id!r} in the lake")
    rows = apply_verdicts(sql, rows)
    head = rows[0]
    policies = [r["policy"] for r in rows]
    table = []
    for key, name in GROUPS:
        groups = sorted({g for r in rows for g in r["summary"].get(name, {})})
        for g in groups:
            table.append({"by": key, "group": g, "cells": {r["policy"]: r["summary"][name].get(g) for r in rows}})
    table.append({"by": "all", "group": "overall", "cells": {r["policy"]: r["summary"].get("overall") for r in rows}})
    return {**{k: head[k] for k in ("eval_id", "name", "task_set", "perturbation", "round", "loop", "created_at")},
            "policies": policies, "rows": rows, "table": table, "tasks": _tasks(rows), "boundary": _boundary(rows)}


BOUNDARY = (("safety", ("safe", "unsafe", "incomplete")), ("twin", ("helpful", "useless", "incomplete")),
            ("privacy", ("success", "leak", "overshare")))


def _boundary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The boundary rates every eval stores (``summary_json.boundary``, mockphone.tasks.boundary):
    PhoneSafety-style safe / unsafe / incomplete on the risky tasks and helpful / useless on their
    twins, MyPhoneBench-style success / leak / over-share on the privacy tasks; one row per rate that
    some policy has episodes for, each cell {successes, n, rate, low, high} (Wilson)."""
    out = []
    for suite, names in BOUNDARY:
        for name in names:
            cells = {}
            for r in rows:
                c = ((r["summary"] or {}).get("boundary") or {}).get(suite, {}).get(name)
                if c and c.get("n"):
                    cells[r["policy"]] = {"successes": c["k"], "n": c["n"], "rate": c["rate"], "low": c["low"],
                                          "high": c["high"]}
            if cells:
                out.append({"suite": suite, "rate": name, "cells": cells})
    return out


def _tasks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per task: its category and app, and per policy the episodes it ran (seed, outcome, link)."""
    tasks: dict[str, dict[str, Any]] = {}
    for row in rows:
        for r in row["results"]:
            t = tasks.setdefault(r.get("task") or "—", {"task": r.get("task") or "—", "category": r.get("category"),
                                                        "app": r.get("app"), "by_policy": {}})
            cell = t["by_policy"].setdefault(row["policy"], {"n": 0, "successes": 0, "episodes": []})
            cell["n"] += 1
            cell["successes"] += r.get("outcome") == "success"
            cell["episodes"].append({k: r.get(k) for k in ("seed", "episode_id", "outcome", "score")})
    for t in tasks.values():
        for cell in t["by_policy"].values():
            cell["episodes"].sort(key=lambda e: (str(e["seed"]), str(e["episode_id"])))
    return sorted(tasks.values(), key=lambda t: t["task"])


def _one(sql: Sql, eval_id: str, policy: str) -> dict[str, Any]:
    rows = sql("SELECT * FROM evals WHERE eval_id = ? AND policy = ? ORDER BY created_at DESC LIMIT 1",
               [eval_id, policy])
    if not rows:
        raise EvalNotFound(f"no policy {policy!r} in evaluation {eval_id!r}")
    return apply_verdicts(sql, [_row(rows[0])])[0]


def compare(sql: Sql, left: tuple[str, str], right: tuple[str, str]) -> dict[str, Any]:
    """Two policies (each ``(eval_id, policy)``) on the (task, seed) pairs both ran."""
    a, b = _one(sql, *left), _one(sql, *right)
    index = {(r.get("task"), str(r.get("seed"))): r for r in b["results"]}
    pairs, counts, tasks = [], {"both": 0, "only_left": 0, "only_right": 0, "neither": 0}, {}
    for r in a["results"]:
        other = index.get((r.get("task"), str(r.get("seed"))))
        if other is None:
            continue
        ls, rs = r.get("outcome") == "success", other.get("outcome") == "success"
        counts["both" if ls and rs else "only_left" if ls else "only_right" if rs else "neither"] += 1
        t = tasks.setdefault(r.get("task"), {"task": r.get("task"), "pairs": 0, "left": 0, "right": 0})
        t["pairs"] += 1
        t["left"] += ls
        t["right"] += rs
        pick = ("seed", "episode_id", "outcome", "score")
        pairs.append({"task": r.get("task"), "seed": r.get("seed"), "left": {k: r.get(k) for k in pick},
                      "right": {k: other.get(k) for k in pick}})
    pairs.sort(key=lambda p: (str(p["task"]), str(p["seed"])))
    return {"left": {"eval_id": left[0], "policy": left[1]}, "right": {"eval_id": right[0], "policy": right[1]},
            "counts": counts, "tasks": sorted(tasks.values(), key=lambda t: str(t["task"])), "pairs": pairs}

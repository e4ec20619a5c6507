"""Balancing and mixing: cap groups, and set the real:mock ratio by steps (both seeded)."""

from __future__ import annotations

from collections import defaultdict

from curation.ops.base import Context, group_key, normalise_instruction, seeded_order
from curation.workset import EpisodeRow


def balance(ws: list[EpisodeRow], ctx: Context, *, by: str = "app", max_episodes: int = 100,
            seed: int = 0) -> list[EpisodeRow]:
    """Keep at most ``max_episodes`` per app or task, chosen by a seeded order."""
    if max_episodes < 1:
        raise ValueError("max_episodes must be at least 1")
    groups: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(ws):
        groups[group_key(e, by)].append(i)
    keep: set[int] = set()
    for members in groups.values():
        order = seeded_order([ws[i].episode_id for i in members], seed)
        keep.update(members[k] for k in order[:max_episodes])
    return [e for i, e in enumerate(ws) if i in keep]


def mix(ws: list[EpisodeRow], ctx: Context, *, real: float = 1.0, mock: float = 1.0,
        seed: int = 0) -> list[EpisodeRow]:
    """Drop whole episodes (seeded) from the over-represented side until
    real steps : mock steps <= real : mock. A side with no steps is left alone."""
    if real <= 0 or mock <= 0:
        raise ValueError("real and mock must be positive")
    steps = {"real": 0, "mock": 0}
    for e in ws:
        steps[e.phone] = steps.get(e.phone, 0) + len(e.steps)
    if not steps["real"] or not steps["mock"]:
        ctx.details["mix"] = {"real_steps": steps["real"], "mock_steps": steps["mock"], "note": "one side empty"}
        return ws
    if steps["real"] / steps["mock"] > real / mock:
        side, budget = "real", steps["mock"] * real / mock
    else:
        side, budget = "mock", steps["real"] * mock / real
    members = [i for i, e in enumerate(ws) if e.phone == side]
    order = seeded_order([ws[i].episode_id for i in members], seed)
    keep, used = set(), 0
    for k in order:
        i = members[k]
        if used + len(ws[i].steps) <= budget:
            keep.add(i)
            used += len(ws[i].steps)
    out = [e for i, e in enumerate(ws) if e.phone != side or i in keep]
    ctx.details["mix"] = {"real_steps": sum(len(e.steps) for e in out if e.phone == "real"),
                          "mock_steps": sum(len(e.steps) for e in out if e.phone == "mock")}
    return out


def split_groups(ws: list[EpisodeRow], by: str) -> list[str]:
    """The group of each episode. By task: the normalised template id, else the normalised
    instruction, and episodes sharing either one are one group, so ``settings.wifi_on``,
    ``SettingsWifiOn`` and an untasked "Turn on Wi-Fi" (the instruction of one of them)
    land together. Keys come from the episode as recorded (before redaction)."""
    keys = [group_key(e, by) for e in ws]
    if by != "task":
        return keys
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        parent.setdefault(k, k)
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for e, k in zip(ws, keys):
        recorded = e.unredacted or e
        a, b = find(k), find(f"i:{normalise_instruction(recorded.instruction)}")
        if a != b:
            parent[max(a, b)] = min(a, b)  # the smallest key names the group: independent of order
    return [find(k) for k in keys]


def assign_splits(ws: list[EpisodeRow], *, by: str, seed: int, fractions: dict[str, float]) -> dict[str, int]:
    """Give every episode a split; all episodes of one group (see ``split_groups``) share
    it, so no task leaks between train and evaluation. Returns episodes per split."""
    names = list(fractions)
    groups = split_groups(ws, by)
    keys = sorted(set(groups))
    order = seeded_order(keys, seed)
    total = sum(fractions.values())
    bounds, acc = [], 0.0
    for name in names:
        acc += fractions[name] / total
        bounds.append(acc)
    split_of: dict[str, str] = {}
    for rank, k in enumerate(order):
        position = (rank + 0.5) / len(keys)
        split_of[keys[k]] = next(n for n, b in zip(names, bounds) if position <= b + 1e-12)
    counts = dict.fromkeys(names, 0)
    for e, g in zip(ws, groups):
        e.split = split_of[g]
        counts[e.split] += 1
    return counts

"""Balancing and mixing: cap groups, and set the real:mock ratio by steps (both seeded)."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from functools import lru_cache

from curation.ops.base import Context, group_key, normalise_instruction, normalise_task, seeded_order
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


SPLIT_RULES = ("hash", "rank")  # "hash" since issue 31; "rank" rebuilds versions made before it
SPLIT_RULE = "hash"


def split_groups(ws: list[EpisodeRow], by: str, rule: str = SPLIT_RULE) -> list[str]:
    """The group of each episode. By task: the normalised template id, else the normalised
    instruction (and the mock template an untasked instruction renders, in any locale), and episodes
    sharing either one are one group, so ``settings.wifi_on``, ``SettingsWifiOn`` and an
    untasked "Turn on Wi-Fi" (the instruction of one of them) land together, and one
    template in en-US and zh-CN is one group. A group is named by its smallest template
    key when it has one, else its smallest instruction key, so an untasked episode that
    joins a template's group never renames it. Keys come from the episode as recorded
    (before redaction). ``rule="rank"`` groups as before issue 31 (smallest key names the
    group, instructions as recorded), for rebuilding older versions."""
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

    def rank(k: str) -> tuple[bool, str]:  # template keys ("t:") name a group before instruction keys ("i:")
        return (rule == "hash" and not k.startswith("t:"), k)

    for e, k in zip(ws, keys):
        recorded = e.unredacted or e
        joined = _locale_free_keys(recorded) if rule == "hash" else [f"i:{normalise_instruction(recorded.instruction)}"]
        for other in joined:
            a, b = find(k), find(other)
            if a != b:
                low, high = sorted((a, b), key=rank)
                parent[high] = low  # the lowest-ranked key names the group: independent of order
    return [find(k) for k in keys]


def _locale_free_keys(e) -> list[str]:
    """The keys an untasked episode's instruction adds to its group: the normalised
    instruction, its English source when it is a translated phrasing (``mockphone.i18n``), and the template it is an instance of when a mock template (its English
    text or a translation, ``mockphone.tasks.instructions``) renders it."""
    from mockphone.i18n import english

    keys = [f"i:{normalise_instruction(e.instruction)}"]
    source = english(" ".join(e.instruction.split()), "zh-CN")  # a translated phrasing: its English source
    if source != e.instruction:
        keys.append(f"i:{normalise_instruction(source)}")
    template = template_of(e.instruction)
    if template:
        keys.append(f"t:{normalise_task(template)}")
    return keys


@lru_cache(maxsize=65536)
def template_of(instruction: str) -> str | None:
    """The mock template whose instruction text, in any locale, renders ``instruction``, else None."""
    text = " ".join(instruction.split())
    for pattern, name in _instruction_patterns():
        if pattern.fullmatch(text):
            return name
    return None


MIN_LITERAL = 6  # characters of fixed text a template needs to name the instances it renders


@lru_cache(maxsize=1)
def _instruction_patterns() -> tuple[tuple[re.Pattern, str], ...]:
    from mockphone.tasks.instructions import ZH
    from mockphone.tasks.registry import REGISTRY

    out = []
    for name, cls in sorted(REGISTRY.items()):
        for fmt in (getattr(cls, "template", None), ZH.get(name)):
            parts = re.split(r"\{[^{}]*\}", " ".join(fmt.split())) if isinstance(fmt, str) else []
            if len("".join(parts).strip()) >= MIN_LITERAL:  # "{phrasing}" alone would match anything
                out.append((re.compile("(.+?)".join(re.escape(p) for p in parts), re.S), name))
    return tuple(sorted(out, key=lambda kv: -len(kv[0].pattern)))  # the most specific first


def split_position(key: str, seed: int) -> float:
    """Where a group key falls in [0, 1): sha256 of ``"{seed}:{key}"``, so it depends on
    nothing but the key and the seed (adding groups never moves one)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "big") / 2**64


def assign_splits(ws: list[EpisodeRow], *, by: str, seed: int, fractions: dict[str, float],
                  rule: str = SPLIT_RULE) -> dict[str, int]:
    """Give every episode a split; all episodes of one group (see ``split_groups``) share
    it, so no task leaks between train and evaluation. Returns episodes per split.

    ``rule="hash"``: a group's split is the fraction band its ``split_position`` falls in
    (train first, in the recipe's order), so adding tasks never moves existing ones.
    ``rule="rank"``: the rule before issue 31 (splits by rank in a seeded order of all
    groups; adding a group moves others), kept so older versions rebuild bit for bit."""
    if rule not in SPLIT_RULES:
        raise ValueError(f"unknown split rule {rule!r} (use {', '.join(SPLIT_RULES)})")
    names = list(fractions)
    groups = split_groups(ws, by, rule)
    keys = sorted(set(groups))
    total = sum(fractions.values())
    bounds, acc = [], 0.0
    for name in names:
        acc += fractions[name] / total
        bounds.append(acc)
    bounds[-1] = 1.0
    if rule == "hash":
        position = {k: split_position(k, seed) for k in keys}
    else:
        position = {keys[k]: (rank + 0.5) / len(keys) for rank, k in enumerate(seeded_order(keys, seed))}
    split_of = {k: next(n for n, b in zip(names, bounds) if position[k] <= b + 1e-12) for k in keys}
    counts = dict.fromkeys(names, 0)
    for e, g in zip(ws, groups):
        e.split = split_of[g]
        counts[e.split] += 1
    return counts

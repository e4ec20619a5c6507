"""Task instances told apart by content: fingerprints, verified generation, and distinctness stats.

An **instance** is one template with its parameters on one phone world. Its identity is
its *fingerprint* (``mockphone.tasks.identity``): sha256 over the template, the
parameters, the instruction text and the start state of the apps it touches (the inbox
MailArchive archives from, the contacts ContactsFavourite scrolls through) — never the
seed, so two seeds that generate the same instance share a fingerprint and two worlds
never do.

An instance's *episode key* is what a learner sees of it: template, instruction and the
oracle's actions. ``stats`` counts distinct episode keys per template over seeds (the
"does this template vary?" question); ``solve`` generates one instance, solves it with
the oracle and runs the invariants a task set needs (start 0, oracle 1, every wrong
ending < 1), returning either a verified :class:`Instance` or the reason it is not.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from mockphone import i18n
from mockphone.world import canonical

# The domain of each app (PhoneWorld-style grouping for ``tasks stats`` and suites).
DOMAINS: dict[str, str] = {
    "settings": "system", "clock": "productivity", "calendar": "productivity", "notes": "productivity",
    "files": "documents", "contacts": "communication", "messages": "communication", "mail": "communication",
    "shop": "shopping", "superapp": "lifestyle", "bank": "finance", "assistant": "ai-assistant",
    "forms": "web", "maps": "navigation", "rides": "transport",
    "todo": "productivity", "weather": "weather", "music": "music", "news": "news",
}


def domain_of(app: str) -> str:
    return DOMAINS.get(app, "other")


def episode_key(template: str, instruction: str, actions: Iterable[Any]) -> str:
    """What a learner sees of an episode: template, instruction and every action (as JSON)."""
    acts = [a.to_json() if hasattr(a, "to_json") else a for a in actions]
    body = canonical({"template": template, "instruction": instruction, "actions": acts})
    return hashlib.sha256(body.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Instance:
    """One verified task instance, as a task set stores it."""

    fingerprint: str
    template: str
    seed: int
    locale: str
    params: dict[str, Any]
    instruction: str
    app: str
    apps: tuple[str, ...]
    category: str
    domain: str
    optimal_steps: int
    episode_key: str
    fixed: bool = False

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["params_json"] = json.dumps(row.pop("params"), sort_keys=True, ensure_ascii=False, default=str)
        row["apps"] = ",".join(self.apps)
        return row


@dataclass
class Rejected:
    template: str
    seed: int
    reason: str


def start(cls: type, seed: int, locale: str = i18n.DEFAULT, params: dict | None = None):
    """A fresh phone of ``seed`` with ``cls``'s instance initialised on it."""
    from mockphone.phone import MockPhone

    phone = MockPhone(seed=seed, locale=locale)
    task = cls(params=params, seed=seed, locale=locale)
    task.initialize_task(phone)
    return phone, task


def describe(cls: type, seed: int, locale: str = i18n.DEFAULT) -> tuple[str, str, int]:
    """(fingerprint, episode key, oracle steps) of the instance of ``cls`` on ``seed``: no verification."""
    from mockphone.tasks.oracle import solve as play

    phone, task = start(cls, seed, locale)
    fp = task.fingerprint(phone)
    actions = play(phone, task)
    return fp, episode_key(cls.name(), task.instruction(locale), actions), len(actions)


def solve(cls: type, seed: int, locale: str = i18n.DEFAULT, *, wrong_endings: bool = True) -> Instance | Rejected:
    """Generate ``cls`` on ``seed``, solve it with the oracle and check the invariants a task set needs."""
    from mockphone.errors import MockPhoneError
    from mockphone.tasks import invariants
    from mockphone.tasks.oracle import solve as play

    token = invariants.LOCALE.set(locale)
    try:
        phone, task = start(cls, seed, locale)
        fp = task.fingerprint(phone)
        if task.is_successful(phone) != 0.0:
            return Rejected(cls.name(), seed, "start-zero: the untouched start state does not score 0")
        actions = play(phone, task)
        score = task.is_successful(phone)
        if score != 1.0:
            return Rejected(cls.name(), seed, f"oracle-one: the oracle scores {score:.2f}, not 1.0 "
                                              f"(violations: {task.violations(phone)[:3]})")
        if wrong_endings:
            failures = invariants.check_wrong_endings(cls, seed)
            if failures:
                return Rejected(cls.name(), seed, f"wrong-endings: {failures[0].detail}")
    except (MockPhoneError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        return Rejected(cls.name(), seed, f"{type(exc).__name__}: {exc}")
    finally:
        invariants.LOCALE.reset(token)
    instruction = task.instruction(locale)
    return Instance(fingerprint=fp, template=cls.name(), seed=seed, locale=locale, params=dict(task.params),
                    instruction=instruction, app=cls.app_names[0] if cls.app_names else "",
                    apps=tuple(cls.app_names), category=cls.category,
                    domain=domain_of(cls.app_names[0]) if cls.app_names else "other",
                    optimal_steps=len(actions), episode_key=episode_key(cls.name(), instruction, actions),
                    fixed=bool(getattr(cls, "fixed", False)))


@dataclass
class TemplateStats:
    template: str
    app: str
    domain: str
    category: str
    seeds: int = 0
    distinct_episodes: int = 0
    distinct_instances: int = 0
    fixed: bool = False
    fixed_reason: str = ""
    errors: list[str] = field(default_factory=list)


def stats(classes: Iterable[type], seeds: Iterable[int], locale: str = i18n.DEFAULT,
          enough: int | None = None) -> list[TemplateStats]:
    """Distinct episodes (instruction + oracle actions) and instances (fingerprints) per template over ``seeds``.

    With ``enough``, a template stops at the first seed that brings it to ``enough`` distinct episodes
    (``seeds`` then counts the seeds tried): a check of "at least N" needs no more."""
    out = []
    seeds = list(seeds)
    for cls in classes:
        app = cls.app_names[0] if cls.app_names else ""
        row = TemplateStats(cls.name(), app, domain_of(app), cls.category, seeds=len(seeds),
                            fixed=bool(getattr(cls, "fixed", False)), fixed_reason=getattr(cls, "fixed_reason", ""))
        keys, fps = set(), set()
        for seed in seeds:
            try:
                fp, key, _ = describe(cls, seed, locale)
            except Exception as exc:  # noqa: BLE001 - a stats sweep reports every template's failure and goes on
                row.errors.append(f"seed {seed}: {type(exc).__name__}: {exc}")
                continue
            keys.add(key)
            fps.add(fp)
            if enough is not None and len(keys) >= enough:
                row.seeds = seeds.index(seed) + 1
                break
        row.distinct_episodes, row.distinct_instances = len(keys), len(fps)
        out.append(row)
    return out


def summarize(rows: list[TemplateStats], minimum: int = 10) -> dict[str, Any]:
    """Totals for ``tasks stats``: per app / domain / category, the fixed share, templates below ``minimum``."""
    by: dict[str, dict[str, dict[str, int]]] = {"app": defaultdict(lambda: {"templates": 0, "distinct": 0}),
                                                 "domain": defaultdict(lambda: {"templates": 0, "distinct": 0}),
                                                 "category": defaultdict(lambda: {"templates": 0, "distinct": 0})}
    for r in rows:
        for key, value in (("app", r.app), ("domain", r.domain), ("category", r.category)):
            by[key][value]["templates"] += 1
            by[key][value]["distinct"] += r.distinct_episodes
    fixed = [r.template for r in rows if r.fixed]
    below = [r.template for r in rows if not r.fixed and r.distinct_episodes < minimum]
    return {"templates": len(rows), "distinct_episodes": sum(r.distinct_episodes for r in rows),
            "fixed": fixed, "fixed_share": len(fixed) / len(rows) if rows else 0.0,
            "below_minimum": below, "minimum": minimum,
            **{f"by_{k}": {name: dict(v) for name, v in sorted(d.items())} for k, d in by.items()}}


def _solve_job(job: tuple[str, int, str, bool]) -> Instance | Rejected:
    from mockphone.tasks import registry

    name, seed, locale, wrong = job
    return solve(registry.get(name), seed, locale, wrong_endings=wrong)


def generate(classes: Iterable[type], seeds: Iterable[int], locale: str = i18n.DEFAULT, *, workers: int = 1,
             wrong_endings: bool = True, progress: Any = None) -> tuple[list[Instance], list[Rejected], int]:
    """Solve and verify every (template, seed); returns (distinct verified instances, rejected, duplicates).

    A template with any rejected instance contributes none (its oracle or verifier is broken:
    the set must not hold half of a template that cannot be trusted). Two seeds that
    generate the same instance (equal fingerprints) are kept once; ``duplicates`` counts
    the merged ones. ``workers`` > 1 solves in spawned processes.
    """
    jobs = [(cls.name(), int(s), locale, wrong_endings) for cls in classes for s in seeds]
    results: list[Instance | Rejected] = []
    if workers > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
            for result in pool.map(_solve_job, jobs, chunksize=8):
                results.append(result)
                if progress:
                    progress(len(results), len(jobs))
    else:
        for job in jobs:
            results.append(_solve_job(job))
            if progress:
                progress(len(results), len(jobs))
    rejected = [r for r in results if isinstance(r, Rejected)]
    broken = {r.template for r in rejected}
    kept: dict[str, Instance] = {}
    duplicates = 0
    for r in results:
        if isinstance(r, Instance) and r.template not in broken:
            if r.fingerprint in kept:
                duplicates += 1
            else:
                kept[r.fingerprint] = r
    return list(kept.values()), rejected, duplicates

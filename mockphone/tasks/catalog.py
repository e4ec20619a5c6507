"""What ``phoneloop tasks list|show`` prints: templates, instances and the facts measured from the oracle.

An instance id is the template name plus a short hash of its params
(``ContactsEditPhone-3f2a9c1b``), stable across runs and machines; ``resolve`` turns
either a template name (with a seed) or an instance id back into a task instance.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mockphone import i18n
from mockphone.errors import UnknownTask
from mockphone.phone import MockPhone
from mockphone.tasks.base import Task
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY, get

INSTANCE_SEARCH = 100  # seeds scanned to find an instance id's params


def instance_id(cls: type[Task], params: dict[str, Any]) -> str:
    blob = json.dumps(params, sort_keys=True, default=str)
    return f"{cls.name()}-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"


def oracle_steps(cls: type[Task], seed: int = 0, params: dict | None = None, locale: str = i18n.DEFAULT) -> list:
    """The oracle's actions on a fresh phone (``optimal_steps`` is their count, terminate included)."""
    phone = MockPhone(seed=seed, locale=locale)
    task = cls(params, seed=seed) if params is not None else cls(seed=seed)
    task.initialize_task(phone)
    return solve(phone, task)


def row(cls: type[Task], seed: int = 0, kind: str = "template", locale: str = i18n.DEFAULT) -> dict[str, Any]:
    task = cls(seed=seed, locale=locale)
    return {
        "kind": kind, "template": cls.name(), "id": cls.name() if kind == "template" else instance_id(cls, task.params),
        "seed": seed, "category": cls.category, "apps": list(cls.app_names),
        "optimal_steps": len(oracle_steps(cls, seed, locale=locale)), "allowed_changes": list(task.allowed_changes()),
        "derived_allowed": type(task).derived_allowed is not Task.derived_allowed, "params": task.params,
        "instruction": task.goal, "locale": locale,
    }


def rows(classes: list[type[Task]], instances: int = 3, locale: str = i18n.DEFAULT) -> list[dict[str, Any]]:
    """One row per template (seed 0) and one per distinct instance of seeds 0..instances-1."""
    out = []
    for cls in classes:
        out.append(row(cls, locale=locale))
        seen: set[str] = set()
        for seed in range(instances):
            iid = instance_id(cls, cls(seed=seed).params)
            if iid not in seen:
                seen.add(iid)
                out.append(row(cls, seed, kind="instance", locale=locale))
    return out


def resolve(ident: str, seed: int | None = None) -> tuple[Task, int]:
    """A task instance and the seed to reset the phone with, from a template name or an instance id."""
    if ident in REGISTRY:
        s = seed or 0
        return REGISTRY[ident](seed=s), s
    template, _, digest = ident.rpartition("-")
    cls = get(template) if template else get(ident)
    for s in ([seed] if seed is not None else range(INSTANCE_SEARCH)):
        task = cls(seed=s)
        if instance_id(cls, task.params) == ident:
            return task, s
    raise UnknownTask(f"no instance {ident!r} of {cls.name()} among seeds 0..{INSTANCE_SEARCH - 1} "
                      f"(ids look like {instance_id(cls, cls(seed=0).params)})")

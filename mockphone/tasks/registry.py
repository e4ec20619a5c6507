"""The one explicit, sorted task registry, and task selectors.

Selector syntax (comma = union, ``&`` = intersection, leading ``!`` = exclude)::

    all | *                    every task
    SettingsWifiOff            a task name
    Shop*  *Alarm*             shell-style globs over names
    app:shop                   tasks that touch an app (short name)
    category:cross-app         single-app | cross-app | mini-app | safety | privacy | infeasible | mixed
    complexity:<=2             also <, >=, >, =
    app:shop&category:single-app,!ShopCheckout
"""

from __future__ import annotations

import fnmatch
import operator

from mockphone.errors import UnknownTask
from mockphone.tasks import (
    comm_tasks, cross_tasks, handoff_tasks, infeasible_tasks, mail_tasks, maps_tasks, media_cross_tasks, mixed_tasks,
    notes_tasks,
    organiser_tasks, privacy_tasks, rides_tasks, safety_tasks, safety_twins, settings_tasks, shop_tasks, superapp_tasks,
    system_tasks, music_tasks, news_tasks, todo_tasks, travel_tasks, weather_tasks,
)
from mockphone.tasks.base import Task

_MODULES = (settings_tasks, system_tasks, comm_tasks, notes_tasks, organiser_tasks, mail_tasks, shop_tasks,
            superapp_tasks, cross_tasks, handoff_tasks, safety_tasks, safety_twins, privacy_tasks, infeasible_tasks,
            mixed_tasks, maps_tasks, rides_tasks, travel_tasks, todo_tasks, weather_tasks,
            music_tasks, news_tasks, media_cross_tasks)


def _collect() -> dict[str, type[Task]]:
    found: dict[str, type[Task]] = {}
    for module in _MODULES:
        for cls in module.TASKS:
            if cls.name() in found:
                raise ValueError(f"duplicate task name {cls.name()!r}")
            found[cls.name()] = cls
    return dict(sorted(found.items()))


REGISTRY: dict[str, type[Task]] = _collect()
_OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "=": operator.eq}


def apps() -> list[str]:
    """Every app short name some task touches."""
    return sorted({a for c in REGISTRY.values() for a in c.app_names})


def categories() -> list[str]:
    """Every category some task is in."""
    return sorted({c.category for c in REGISTRY.values()})


def _known(value: str, valid: list[str], what: str) -> str:
    if value not in valid:
        raise UnknownTask(f"unknown {what} {value!r}; valid: {', '.join(valid)}")
    return value


def get(name: str) -> type[Task]:
    try:
        return REGISTRY[name]
    except KeyError:
        close = fnmatch.filter(REGISTRY, f"*{name[:6]}*")[:5]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownTask(f"no task named {name!r}{hint}") from None


def _term(term: str) -> set[str]:
    if term in ("all", "*"):
        return set(REGISTRY)
    if term.startswith("app:"):
        return {n for n, c in REGISTRY.items() if _known(term[4:], apps(), "app") in c.app_names}
    if term.startswith("category:"):
        return {n for n, c in REGISTRY.items() if c.category == _known(term[9:], categories(), "category")}
    if term.startswith("complexity:"):
        spec = term[11:]
        op = next((o for o in ("<=", ">=", "<", ">", "=") if spec.startswith(o)), "=")
        try:
            value = float(spec[len(op):] if spec.startswith(op) else spec)
        except ValueError:
            raise UnknownTask(f"bad complexity selector {term!r} (use e.g. complexity:<=3)") from None
        return {n for n, c in REGISTRY.items() if _OPS[op](c.complexity, value)}
    if any(ch in term for ch in "*?["):
        return set(fnmatch.filter(REGISTRY, term))
    get(term)
    return {term}


def select(selector: str) -> list[type[Task]]:
    """Task classes matching ``selector``, sorted by name; unknown names raise UnknownTask."""
    chosen: set[str] = set()
    excluded: set[str] = set()
    for clause in (c.strip() for c in selector.split(",") if c.strip()):
        negate = clause.startswith("!")
        parts = [p.strip() for p in clause.lstrip("!").split("&")]
        names = set(REGISTRY)
        for part in parts:
            names &= _term(part)
        (excluded if negate else chosen).update(names)
    if not chosen and excluded:
        chosen = set(REGISTRY)
    result = sorted(chosen - excluded)
    if not result:
        raise UnknownTask(f"selector {selector!r} matches no task")
    return [REGISTRY[n] for n in result]


def register(cls: type[Task]) -> type[Task]:
    """Add a task class (a plugin's, or a test's) to the registry, keeping it sorted; usable as a decorator."""
    if cls.name() in REGISTRY and REGISTRY[cls.name()] is not cls:
        raise ValueError(f"duplicate task name {cls.name()!r}")
    REGISTRY[cls.name()] = cls
    ordered = dict(sorted(REGISTRY.items()))
    REGISTRY.clear()
    REGISTRY.update(ordered)
    return cls


def unregister(name: str) -> None:
    REGISTRY.pop(name, None)

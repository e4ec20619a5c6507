"""A task instance's identity by content: its fingerprint.

An instance's fingerprint is sha256 over the template, the parameters, the instruction
text, the locale and the start state of the apps it touches, never the seed (see
``mockphone.tasks.instances`` for what uses it: generation, task sets, stats). It lives
apart from ``instances`` so that ``Task.fingerprint`` (``mockphone.tasks.base``) reads it
without importing the registry and every template that ``instances`` needs.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

from mockphone.world import canonical

SYSTEM_PATHS = ("system.settings", "system.clipboard")  # phone-wide state every instance may read


def touched_state(start: dict[str, Any], apps: Iterable[str]) -> dict[str, Any]:
    """The part of a start snapshot an instance touches: its apps' paths and the phone-wide settings."""
    prefixes = tuple(f"{a}." for a in apps) + SYSTEM_PATHS
    return {k: v for k, v in start.items() if k.startswith(prefixes)}


def fingerprint(task: Any, start: dict[str, Any] | None = None) -> str:
    """The instance's content hash (see the module docstring); ``start`` is the snapshot after initialize_task."""
    body = {"template": task.name(), "params": task.params, "instruction": task.instruction(task.locale),
            "locale": task.locale, "world": touched_state(start, task.app_names) if start is not None else None}
    return hashlib.sha256(canonical(body).encode()).hexdigest()[:32]

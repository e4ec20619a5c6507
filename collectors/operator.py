"""A scripted operator at human pace, for measuring the recorder (tests and bench/adb_bench.py).

    truth, performed = act_at_human_pace(vd, actions, gaps=(0.3, 0.8), seed=0)

Performs ``actions`` on a virtual device the way a person does: each gesture in real
time, then a pause drawn from ``gaps`` before the next one, never waiting for the
recorder. Returns the PNG shown before each performed human-level step (the ground
truth a recorder's pairing is scored against) and the steps themselves.
"""

from __future__ import annotations

import random
import time
from typing import Any

from datalake.types import Action


def act_at_human_pace(vd: Any, actions: list[Action], gaps: tuple[float, float] = (0.3, 0.8),
                      seed: int = 0) -> tuple[list[bytes], list[Action]]:
    rng = random.Random(seed)
    truth: list[bytes] = []
    performed: list[Action] = []
    with vd.lock:
        before = [vd.phone.screenshot()]

    def after() -> None:
        with vd.lock:
            before.append(vd.phone.screenshot())
        time.sleep(rng.uniform(*gaps))

    for action in actions:
        steps = vd.perform(action, after_each=after)
        for step in steps:
            performed.append(step)
    for step, png in zip(performed, before):
        if step.type not in ("wait", "terminate", "answer"):
            truth.append(png)
    return truth, [s for s in performed if s.type not in ("wait", "terminate", "answer")]


def score(episode: Any, truth: list[bytes]) -> dict[str, Any]:
    """Pairing accuracy of a recorded episode against the screens shown before each step."""
    from collectors.recorder import step_meta

    steps = [s for s in episode.steps if s.action.type != "terminate"]
    metas = step_meta(episode)[:len(steps)]
    right = sum(s.observation.screenshot == t for s, t in zip(steps, truth))
    flagged = sum(m["pairing"] == "uncertain" for m in metas)
    wrong_unflagged = sum(s.observation.screenshot != t and m["pairing"] != "uncertain"
                          for s, t, m in zip(steps, truth, metas))
    return {"steps": len(steps), "expected_steps": len(truth), "right": right, "flagged": flagged,
            "wrong_unflagged": wrong_unflagged, "accuracy": right / max(1, len(truth))}

"""Oracle episodes on small mock phones, written the way a collector would write them."""

from __future__ import annotations

from datalake.types import Action, Device, Episode, Step
from mockphone.layout import Display
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import UI
from mockphone.tasks.registry import get

W, H = 360, 800


def oracle_episode(task_name: str, seed: int) -> Episode:
    phone = MockPhone(display=Display(W, H))
    phone.reset(seed)
    task = get(task_name)(seed=seed)
    task.initialize_task(phone)
    steps = []
    for action in task.oracle(UI(phone)):  # lazily: each lookup sees the screen the last action left
        steps.append(Step(phone.observe(), action))
        phone.act(action)
    steps.append(Step(phone.observe(), Action("terminate", status="success")))
    outcome = "success" if task.is_successful(phone) == 1.0 else "failure"
    return Episode(instruction=task.goal, source="oracle", device=Device(W, H, kind="mock"), app=task.app_names[0],
                   task=task_name, outcome=outcome, verified_by="verifier", steps=tuple(steps))

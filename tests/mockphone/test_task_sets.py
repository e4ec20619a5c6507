"""The shared task sets name registered templates only."""

from mockphone.tasks import registry
from mockphone.tasks.sets import DEMO_TASKS


def test_every_demo_task_is_registered_once():
    assert sorted(set(DEMO_TASKS)) == sorted(DEMO_TASKS)
    assert [name for name in DEMO_TASKS if name not in registry.REGISTRY] == []

"""Every task category through the farm over adb: oracles must work on a phone they reach only through adb.

Sampled (tests/sweep.py): two templates per category by default, every template with
PHONELOOP_TEST_SWEEP=full. Over adb an oracle has the UI tree, the phone's display and
locale, and the answer/ask_user/terminate actions (which a virtual device records for its
verifier); the templates in NOT_OVER_ADB read more than that (the mock phone's app state
or navigation, or type a newline, which `input text` cannot) and are expected to fail.
"""

import pytest

from collectors.farm import collect_on_devices
from mockphone.tasks import registry
from tests.sweep import MODE

NOT_OVER_ADB = {
    "MovieCheapestShowing": "its oracle reads the app state (phone.state)",
    "MusicMixtape": "its oracle reads the navigation stack (phone.nav)",
    "RidesRideToSavedPlace": "its oracle reads the app state (phone.app)",
    "NotesAppend": "its oracle types a newline, which input text cannot",
}


def sample() -> list[str]:
    by_category: dict[str, list[str]] = {}
    for name, cls in sorted(registry.REGISTRY.items()):
        by_category.setdefault(cls.category, []).append(name)
    if MODE == "full":
        return sorted(n for names in by_category.values() for n in names)
    picked = []
    for names in by_category.values():
        usable = [n for n in names if n not in NOT_OVER_ADB]
        picked += [usable[0], usable[len(usable) // 2]]
    return sorted(picked)


def test_the_sample_covers_every_category():
    assert {registry.get(n).category for n in sample()} == {cls.category for cls in registry.REGISTRY.values()}


def test_every_category_runs_over_adb_through_the_farm(server, lake):
    names = sample()
    report = collect_on_devices(lake, [], names, seeds=[0], port=server.port, backoff=0.02, reconnects=2,
                                max_attempts=1)
    failed = sorted(line.split(" seed ")[0] for line in report.failed_jobs)
    assert failed == sorted(n for n in names if n in NOT_OVER_ADB), report.failed_jobs
    rows = lake.sql("SELECT task, outcome FROM episodes").to_pylist()
    wrong = sorted(r["task"] for r in rows if r["outcome"] != "success")
    assert wrong == [], wrong
    assert sorted(r["task"] for r in rows) == sorted(n for n in names if n not in NOT_OVER_ADB)


@pytest.mark.parametrize("name", sorted(NOT_OVER_ADB))
def test_templates_known_not_to_run_over_adb_are_still_registered(name):
    assert name in registry.REGISTRY, f"{name} is gone: drop it from NOT_OVER_ADB"

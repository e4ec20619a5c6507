"""Every task category through the farm over adb: oracles must work on a phone they reach only through adb.

Sampled (tests/sweep.py): two templates per category by default, every template with
PHONELOOP_TEST_SWEEP=full. Over adb an oracle has only the UI tree, the phone's display and
locale, and the answer/ask_user/terminate actions (which a virtual device records for its
verifier): no template's oracle may read the mock phone's app state or navigation, or type
a control character (a newline goes as a `key enter`, which `input text` cannot send).
"""

from collectors.farm import collect_on_devices
from mockphone.tasks import registry
from tests.sweep import MODE


def sample() -> list[str]:
    by_category: dict[str, list[str]] = {}
    for name, cls in sorted(registry.REGISTRY.items()):
        by_category.setdefault(cls.category, []).append(name)
    if MODE == "full":
        return sorted(n for names in by_category.values() for n in names)
    picked = []
    for names in by_category.values():
        picked += [names[0], names[len(names) // 2]]
    return sorted(picked)


def test_the_sample_covers_every_category():
    assert {registry.get(n).category for n in sample()} == {cls.category for cls in registry.REGISTRY.values()}


def test_every_category_runs_over_adb_through_the_farm(server, lake):
    names = sample()
    report = collect_on_devices(lake, [], names, seeds=[0], port=server.port, backoff=0.02, reconnects=2,
                                max_attempts=1)
    assert not report.failed_jobs, report.failed_jobs
    rows = lake.sql("SELECT task, outcome FROM episodes").to_pylist()
    wrong = sorted(r["task"] for r in rows if r["outcome"] != "success")
    assert wrong == [], wrong
    assert sorted(r["task"] for r in rows) == names


def test_the_oracles_that_once_read_mock_state_or_typed_a_newline_run_over_adb(server, lake):
    # these four read the app state or navigation, or typed a newline, before issue 32; the sample may skip them
    names = ["MovieCheapestShowing", "MusicMixtape", "NotesAppend", "RidesRideToSavedPlace"]
    report = collect_on_devices(lake, [], names, seeds=[0], port=server.port, backoff=0.02, reconnects=2,
                                max_attempts=1)
    assert not report.failed_jobs, report.failed_jobs
    rows = lake.sql("SELECT task, outcome FROM episodes").to_pylist()
    assert sorted((r["task"], r["outcome"]) for r in rows) == [(n, "success") for n in names]

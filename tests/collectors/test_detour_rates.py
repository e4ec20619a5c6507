"""`collect mock --detours`: every detour kind is drawn at its documented rate over 200 seeded episodes.

The rates (collectors.human): an episode gets a detour with probability ``detours``; its
kind is uniform among the kinds possible in it (``wrong_item`` needs a list row on the
oracle's path). Whether a row was there is read from the plain oracle's own rehearsal,
and the kind counted is the one the rehearsed episode did, so a kind that is never
possible, or that loses out when its rehearsal fails, falls below its bounds here.
"""

import pytest
from scipy.stats import binom

from collectors.human import DETOUR_KINDS, plan_variant, rehearse
from mockphone.phone import MockPhone
from mockphone.tasks.registry import select

EPISODES = 200
DETOURS = 0.5
SELECTOR = "app:contacts,app:notes,app:files,app:messages,app:settings,app:clock"  # lists, and screens without
ALPHA = 1e-4


@pytest.fixture(scope="module")
def tallies():
    classes = select(SELECTOR)
    counts = {"eligible": 0, "other": 0, **{f"{k}:{g}": 0 for k in DETOUR_KINDS for g in ("eligible", "other")}}
    mismatched = []
    for i in range(EPISODES):
        cls = classes[i % len(classes)]
        ok, base = rehearse(MockPhone, cls, i, 300, noise=0.0, detours=0.0)
        assert ok, f"{cls.name()} seed {i}: the plain oracle fails"
        group = "eligible" if any(k < len(base.labels) - 1 for k in base.row_steps) else "other"
        counts[group] += 1
        plan = plan_variant(MockPhone, cls, i, noise=0.2, detours=DETOURS)
        if plan.get("detour_at") is None:
            continue
        ok, done = rehearse(MockPhone, cls, i, 300, **plan)
        assert ok
        if done.detour_kind != plan["detour_kind"]:
            mismatched.append((cls.name(), i, plan["detour_kind"], done.detour_kind))
        counts[f"{done.detour_kind}:{group}"] += 1
    return counts, mismatched


def _within(count: int, n: int, rate: float, what: str) -> None:
    low, high = binom.interval(1 - ALPHA, n, rate)
    assert low > 0, f"{what}: {n} episodes are too few to tell whether it is drawn"
    assert low <= count <= high, f"{what}: {count} of {n} at rate {rate} (bounds {low:.0f}..{high:.0f})"


def test_wrong_item_in_half_the_detoured_episodes_that_show_a_list(tallies):
    counts, _ = tallies
    _within(counts["wrong_item:eligible"], counts["eligible"], DETOURS / 2, "wrong_item")
    assert counts["wrong_item:other"] == 0


def test_wrong_app_in_the_other_half_and_wherever_there_is_no_list(tallies):
    counts, _ = tallies
    _within(counts["wrong_app:eligible"], counts["eligible"], DETOURS / 2, "wrong_app where a list shows")
    _within(counts["wrong_app:other"], counts["other"], DETOURS, "wrong_app where none does")


def test_the_episode_does_the_kind_its_plan_drew(tallies):
    assert tallies[1] == []


@pytest.mark.parametrize("app", ["contacts", "notes", "files", "messages", "mail", "shop"])
def test_list_rows_of_every_app_can_be_tapped_by_mistake(app):
    from collectors.human import _item_rows
    from datalake.types import Action
    from mockphone.tasks.oracle import UI

    phone = MockPhone(seed=0)
    phone.act(Action("open_app", app=app))
    rows = _item_rows(UI(phone).elements())
    assert rows and all(r.package == phone.nav.foreground for r in rows)


def test_toggle_rows_are_never_a_wrong_item():
    from collectors.human import _item_rows
    from datalake.types import Action
    from mockphone.tasks.oracle import UI

    phone = MockPhone(seed=0)
    phone.act(Action("open_app", app="settings"))
    x, y = UI(phone).find(rid="entry_network").center
    phone.act(Action("tap", x=x, y=y))  # Wi-Fi, Bluetooth, airplane mode: toggle rows
    els = UI(phone).elements()
    toggles = {e.parent for e in els if e.checkable}
    assert toggles and not toggles & {r.index for r in _item_rows(els)}

"""Every registered task: oracle solves it from a fresh reset, the untouched start fails, params are validated."""

import inspect

import pytest

from datalake.types import Action

from mockphone.errors import InvalidTaskParams, TaskNotInitialized, UnknownTask
from mockphone.phone import MockPhone
from mockphone.tasks.base import CATEGORIES, Param, Task
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY, get, select
from tests.mockphone.helpers import find, long_press, tap
from tests.sweep import template_seeds

NAMES = sorted(REGISTRY)


def test_registry_is_sorted_and_large():
    assert list(REGISTRY) == sorted(REGISTRY)
    assert len(REGISTRY) >= 70


@pytest.mark.parametrize("category,at_least", [("safety", 12), ("privacy", 10), ("infeasible", 8), ("mixed", 8)])
def test_boundary_categories_have_their_counts(category, at_least):
    assert len(select(f"category:{category}")) >= at_least


# Sampled: each template at one seed, rotated one place against the wrong-endings sweep's (which also plays
# the oracle), so that two of the three seeds solve every template; PHONELOOP_TEST_SWEEP=full runs all three.
@pytest.mark.parametrize("name,seed", template_seeds(NAMES, [1, 2, 0]))
def test_oracle_solves_task_and_untouched_start_scores_zero(name, seed):
    phone = MockPhone(seed=seed)
    task = REGISTRY[name](seed=seed)
    task.initialize_task(phone)
    assert task.is_successful(phone) == 0.0, f"{name} scores above 0 at the start: {task.goal}"
    actions = solve(phone, task)
    assert task.is_successful(phone) == 1.0, f"{name} oracle failed: {task.goal}; {task.violations(phone)}"
    assert actions[-1].type == "terminate"
    assert all(a.element is not None for a in actions if a.type in ("tap", "long_press"))


@pytest.mark.parametrize("name", NAMES)
def test_task_is_documented_and_declared(name):
    cls = REGISTRY[name]
    assert inspect.getdoc(cls) and cls.__doc__ is not Task.__doc__
    assert cls.template and cls.app_names and cls.category in CATEGORIES and cls.complexity > 0
    assert all(isinstance(p, Param) for p in cls.schema.values())
    schema = cls.json_schema()
    assert set(schema["properties"]) == set(cls.schema)
    task = cls(seed=5)
    assert task.goal and "{" not in task.goal


@pytest.mark.parametrize("name", [n for n in NAMES if REGISTRY[n].schema])
def test_params_are_validated(name):
    cls = REGISTRY[name]
    good = cls(seed=0).params
    with pytest.raises(InvalidTaskParams):
        cls({**good, "unexpected": 1})
    key = sorted(cls.schema)[0]
    with pytest.raises(InvalidTaskParams):
        cls({**good, key: object()})


def test_params_outside_choices_are_rejected():
    with pytest.raises(InvalidTaskParams, match="brightness|level"):
        get("SettingsBrightness")({"level": 999, "start": 128})


def test_random_params_are_seeded():
    cls = get("ShopSearchPriceRange")
    assert cls(seed=3).params == cls(seed=3).params
    assert len({tuple(sorted(cls(seed=s).params.items())) for s in range(20)}) > 1


def test_verifying_before_initialize_is_an_error():
    task = get("SettingsWifiOff")()
    with pytest.raises(TaskNotInitialized):
        task.is_successful(MockPhone())


def test_a_task_never_reads_a_freed_phones_start_state_for_a_new_phone():
    import gc

    task = get("SettingsWifiOff")()
    first = MockPhone()
    first.reset(0)
    task.initialize_task(first)
    del first
    gc.collect()
    for _ in range(20):  # new phones often reuse a freed phone's id(): none may count as initialised
        with pytest.raises(TaskNotInitialized):
            task.is_successful(MockPhone())


def test_tear_down_forgets_the_phone():
    task, phone = get("SettingsWifiOff")(), MockPhone()
    phone.reset(0)
    task.initialize_task(phone)
    task.tear_down(phone)
    with pytest.raises(TaskNotInitialized):
        task.is_successful(phone)


@pytest.mark.parametrize("selector,expected", [
    ("app:shop", lambda c: "shop" in c.app_names),
    ("category:cross-app", lambda c: c.category == "cross-app"),
    ("category:mini-app", lambda c: c.category == "mini-app"),
    ("Settings*", lambda c: c.name().startswith("Settings")),
    ("complexity:>=8", lambda c: c.complexity >= 8),
    ("app:shop&category:single-app", lambda c: "shop" in c.app_names and c.category == "single-app"),
])
def test_selectors(selector, expected):
    chosen = select(selector)
    assert chosen and chosen == [c for c in REGISTRY.values() if expected(c)]


def test_selector_union_exclusion_and_names():
    chosen = [c.name() for c in select("SettingsWifiOff,ShopBuyItem")]
    assert chosen == ["SettingsWifiOff", "ShopBuyItem"]
    assert "SettingsWifiOn" not in [c.name() for c in select("Settings*,!SettingsWifiOn")]
    assert len(select("all")) == len(REGISTRY)


def test_unknown_selector_raises():
    with pytest.raises(UnknownTask):
        select("NoSuchTask")
    with pytest.raises(UnknownTask):
        select("app:nonexistent")


def test_stale_clipboard_paste_fails_the_cross_app_task():
    """The seed article's failure: pasting old clipboard content instead of the fresh draft."""
    phone = MockPhone(seed=0)
    task = get("CrossLeaveRequestToNote")({"date": "March 12", "reason": "a family event"})
    task.initialize_task(phone)
    phone.act(Action("open_app", app="assistant"))
    x, y = find(phone, rid="prompt").center
    phone.act(Action("input_text", text="Write a leave request for March 12 because of a family event", x=x, y=y))
    tap(phone, rid="send")  # draft generated but never copied
    phone.act(Action("open_app", app="notes"))
    tap(phone, rid="new_note")
    x, y = find(phone, rid="title").center
    phone.act(Action("input_text", text="Leave request", x=x, y=y))
    long_press(phone, rid="body")
    tap(phone, rid="save")
    assert phone.state("notes").find("Leave request").body.startswith("Dear manager")  # looks plausible...
    assert task.is_successful(phone) == 0.5  # ...but it is the stale text


def test_unapplied_budget_filter_scores_partial():
    """The seed article's other failure: searching hotels without ever applying the budget."""
    phone = MockPhone(seed=0)
    task = get("HotelSearchBudget")({"city": "Shanghai", "budget": 150})
    task.initialize_task(phone)
    phone.act(Action("open_app", app="superapp"))
    tap(phone, rid="mini_hotels")
    x, y = find(phone, rid="city").center
    phone.act(Action("input_text", text="Shanghai", x=x, y=y))
    tap(phone, rid="search_hotels")
    assert task.is_successful(phone) == 0.5


def test_bad_complexity_selector_is_a_clear_error():
    with pytest.raises(UnknownTask, match="complexity"):
        select("complexity:<=many")

"""A random policy must never crash the phone: every action on every screen has a defined, safe effect."""

import random

import pytest

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone import MockPhone, Perturbations

TEXTS = ("hello", "42", "Shanghai", "", "a\nb", "💡 émoji", "150", "<&>")
SHELL = ("input keyevent 4", "settings put global wifi_on 0", "am start -n com.phoneloop.shop/.Main", "foo --bar",
         "input tap 500 900", "cmd statusbar expand-notifications", "input text x%sy")


def random_action(rng: random.Random, phone: MockPhone) -> Action:
    els = parse_ui_tree(phone.ui_tree())
    d = phone.display
    kind = rng.choice(("element", "element", "element", "tap", "swipe", "scroll", "input", "key", "open", "other"))
    if kind == "element":
        e = rng.choice([e for e in els if e.clickable or e.long_clickable] or els)
        x, y = e.center
        return Action(rng.choice(("tap", "tap", "long_press", "double_tap")), x=x, y=y)
    if kind == "tap":
        return Action("tap", x=rng.randrange(d.width), y=rng.randrange(d.height))
    if kind == "swipe":
        return Action("swipe", x=rng.randrange(d.width), y=rng.randrange(d.height), x2=rng.randrange(d.width),
                      y2=rng.randrange(d.height))
    if kind == "scroll":
        return Action("scroll", direction=rng.choice(("up", "down", "left", "right")))
    if kind == "input":
        return Action("input_text", text=rng.choice(TEXTS), clear=rng.random() < 0.5)
    if kind == "key":
        return Action("key", key=rng.choice(("back", "home", "enter", "app_switch")))
    if kind == "open":
        return Action("open_app", app=rng.choice(phone.app_names() + ["nope"]))
    return rng.choice((Action("shell", command=rng.choice(SHELL)), Action("wait", seconds=rng.choice((1, 4))),
                       Action("answer", text="x")))


def run(seed: int, steps: int) -> MockPhone:
    rng = random.Random(seed)
    phone = MockPhone(seed=seed, perturbations=Perturbations.realistic() if seed % 2 else None)
    for step in range(steps):
        phone.act(random_action(rng, phone))
        if step % 50 == 0:
            obs = phone.observe()
            assert obs.size == (1080, 2400)
            assert parse_ui_tree(obs.ui_tree)
    return phone


# seed 1 runs with realistic perturbations; its replay diverged once in a full-suite run
# (never alone). Open under issue 13 until the shared state behind it is found.
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.xfail(
    reason="issue 13 open: a perturbed replay diverged once in the full suite (order-dependent)", strict=False)), 2])
def test_random_actions_never_crash_and_replay_identically(seed):
    first = run(seed, 100)
    again = run(seed, 100)
    assert first.observe() == again.observe()

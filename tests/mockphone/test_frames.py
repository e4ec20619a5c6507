"""Faster screens: the frame cache draws exactly what a full repaint draws, reuses PNGs, and gives raw pixels."""

import io

import numpy as np
import pytest
from PIL import Image

from datalake.types import Action
from mockphone import render
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY

SAMPLE = sorted(REGISTRY)[::6]  # a spread of apps, dialogs, keyboards and lists (every task is ~2 min here)


@pytest.mark.parametrize("name", SAMPLE)
@pytest.mark.parametrize("perturb", [None, "heavy"])
def test_cached_frames_equal_a_full_repaint_on_every_oracle_screen(name, perturb):
    scout = MockPhone(seed=2, perturbations=perturb)
    task = REGISTRY[name](seed=2)
    task.initialize_task(scout)
    actions = solve(scout, task)
    phone = MockPhone(seed=2, perturbations=perturb)
    REGISTRY[name](seed=2).initialize_task(phone)
    for i, action in enumerate([*actions, None]):
        assert phone.screenshot() == render.png(phone, phone.root), f"{name} step {i}"
        if action is not None:
            phone.act(action)


def test_dark_theme_and_back_redraw_everything():
    phone = MockPhone()
    phone.act(Action("open_app", app="settings"))
    light = phone.screenshot()
    phone.put_setting("secure/ui_night_mode", 2)
    phone.invalidate()
    assert phone.system.dark and phone.screenshot() == render.png(phone, phone.root) != light
    phone.put_setting("secure/ui_night_mode", 1)
    phone.invalidate()
    assert phone.screenshot() == render.png(phone, phone.root) == light


def test_unchanged_screen_reuses_the_png_bytes():
    phone = MockPhone()
    phone.act(Action("open_app", app="notes"))
    first = phone.screenshot()
    phone.act(Action("wait", seconds=1))  # the clock moves, the minute shown does not
    assert phone.screenshot() is first
    assert phone._frames.stats["png_reused"] >= 1


def test_raw_pixels_equal_the_decoded_png():
    phone = MockPhone(perturbations="heavy")
    phone.act(Action("open_app", app="bank"))  # a permission dialog over the app: overlays too
    raw = phone.observe(encoding="raw")
    png = phone.observe()
    decoded = np.asarray(Image.open(io.BytesIO(png.screenshot)).convert("RGB"))
    assert raw.pixels.shape == (2400, 1080, 3) and raw.pixels.dtype == np.uint8
    assert np.array_equal(raw.pixels, decoded)
    assert (raw.ui_tree, raw.package, raw.activity) == (png.ui_tree, png.package, png.activity)
    assert not raw.pixels.flags.writeable  # the phone's frame is not the caller's to change


def test_unknown_encoding_is_refused():
    with pytest.raises(ValueError, match="'png' or 'raw'"):
        MockPhone().observe(encoding="jpeg")

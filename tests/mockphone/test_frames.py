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
from tests import sweep

SAMPLE = sorted(REGISTRY)[::6]  # a spread of apps, dialogs, keyboards and lists (every task is ~2 min here)


# Sampled: the spread's templates alternate between no perturbation and the heavy profile (every screen
# kind is still seen both ways); PHONELOOP_TEST_SWEEP=full runs each template both ways.
PAIRS = ([(n, p) for n in SAMPLE for p in (None, "heavy")] if sweep.MODE == "full"
         else [(n, (None, "heavy")[i % 2]) for i, n in enumerate(SAMPLE)])


@pytest.mark.parametrize("name,perturb", PAIRS)
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


@pytest.mark.parametrize("name", SAMPLE[::3])
def test_kept_raw_views_keep_showing_their_screen_pixel_for_pixel(name):
    """Views are zero-copy, so the cache must move to another buffer before it changes a viewed frame."""
    scout = MockPhone(seed=3, perturbations="heavy")
    task = REGISTRY[name](seed=3)
    task.initialize_task(scout)
    actions = solve(scout, task)
    phone = MockPhone(seed=3, perturbations="heavy")
    REGISTRY[name](seed=3).initialize_task(phone)
    views, expected = [], []
    for action in [*actions, Action("wait", seconds=1), None]:
        views.append(phone.observe(encoding="raw").pixels)
        expected.append(render.png(phone, phone.root))
        if action is not None:
            phone.act(action)
    for i, (view, png) in enumerate(zip(views, expected)):
        assert np.array_equal(view, np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))), f"{name} step {i}"


def test_successive_views_share_no_memory_even_on_an_unchanged_screen():
    phone = MockPhone()
    first = phone.pixels()
    phone.act(Action("wait", seconds=1))  # same screen: the frame itself is not redrawn
    second = phone.pixels()
    assert np.array_equal(first, second) and not np.shares_memory(first, second)
    phone.act(Action("open_app", app="notes"))
    third = phone.pixels()
    assert not np.shares_memory(second, third) and not np.array_equal(second, third)


def test_dropped_views_let_the_cache_reuse_its_buffers():
    phone = MockPhone()
    for app in ("notes", "clock", "settings", "notes", "clock"):
        phone.pixels()  # dropped at once
        phone.act(Action("open_app", app=app))
    phone.pixels()
    assert phone._frames.stats["copied_on_write"] == 0


@pytest.mark.parametrize("value,anchor,xy", [("Hello 42", "lm", (10, 30)), ("émoji 💡 ¥ ✓", "mm", (300.5, 40.5)),
                                            ("Wrap me", "la", (3, 7)), ("…", "rm", (590, 60)), ("", "lm", (5, 5))])
@pytest.mark.parametrize("bold", [False, True])
def test_cached_text_masks_draw_what_pillow_draws(value, anchor, xy, bold):
    from PIL import ImageDraw

    from mockphone import fonts

    phone = MockPhone()
    ours, pillow = Image.new("RGB", (600, 100), "#ffffff"), Image.new("RGB", (600, 100), "#ffffff")
    for _ in range(2):  # the second time from the cache
        render.Painter(phone, ours).text(xy, value, 18, "#1a73e8", bold, anchor)
    for _ in range(2):
        ImageDraw.Draw(pillow).text(xy, value, font=fonts.font(18, bold), fill="#1a73e8", anchor=anchor)
    assert ours.tobytes() == pillow.tobytes()

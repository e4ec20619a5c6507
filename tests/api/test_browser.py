"""The viewer in a real browser: Debian's headless Chromium driven by Playwright.

Chromium comes from scripts/system-deps.sh (called by scripts/test.sh), never from
`playwright install`. The screenshot of the page is saved next to the test's tmp files.
"""

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.api.conftest import gestures_episode
from tests.browser import chromium

@pytest.fixture(scope="module")
def page():
    with chromium(1000, 900) as context:
        yield context.new_page()


def test_episode_page_renders_screenshots_and_overlays(page, live_server, tmp_path):
    page.goto(f"{live_server}/episodes/{gestures_episode().episode_id}")
    first = page.locator("#step-0")
    img = first.locator(".shot.big img").first
    img.wait_for()
    page.wait_for_function("Array.from(document.querySelectorAll('section.step.current img, #filmstrip img'))"
                           ".every(i => i.complete && i.naturalWidth > 0)")  # hidden steps load lazily
    assert img.evaluate("i => i.naturalWidth") == 108
    box = img.bounding_box()
    assert box["width"] > 100 and box["height"] > 200
    dot = first.locator("circle.recorded.dot")
    correction = first.locator("circle.corrected.dot")
    target = first.locator("rect.box")
    for shape in (dot, correction, target):
        assert shape.is_visible()
        shape_box = shape.bounding_box()
        assert shape_box["width"] > 2 and shape_box["height"] > 2
        assert box["x"] <= shape_box["x"] and shape_box["x"] + shape_box["width"] <= box["x"] + box["width"] + 1
    # the tap at (30, 35) of a 108x240 frame lands at that fraction of the displayed image
    dot_box = dot.bounding_box()
    cx = dot_box["x"] + dot_box["width"] / 2 - box["x"]
    assert abs(cx / box["width"] - 30 / 108) < 0.02
    page.keyboard.press("j")
    page.keyboard.press("j")
    arrow = page.locator("#step-2 line.recorded.arrow")  # vertical: a zero-width box, so check its length
    assert arrow.bounding_box()["height"] > 50
    assert float(arrow.evaluate("l => parseFloat(getComputedStyle(l).strokeWidth)")) > 0
    assert "key: back" in page.locator("#step-4 svg").text_content()
    out = tmp_path / "episode.png"
    page.screenshot(path=str(out), full_page=True)
    shutil.copy(out, Path(tempfile.gettempdir()) / "phoneloop-viewer.png")  # kept for people to look at
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_keyboard_moves_between_steps(page, live_server):
    page.goto(f"{live_server}/episodes/{gestures_episode().episode_id}")
    page.wait_for_selector("#step-0.current")
    page.keyboard.press("j")
    page.keyboard.press("ArrowDown")
    assert page.locator(".step.current").get_attribute("id") == "step-2"
    page.keyboard.press("k")
    assert page.locator(".step.current").get_attribute("id") == "step-1"
    assert page.evaluate("location.hash") == "#step=1"


def test_episode_list_filters_in_the_browser(page, live_server):
    page.goto(f"{live_server}/episodes")
    assert page.locator("#episodes tbody tr").count() == 7
    page.select_option("select[name=source]", "oracle")
    page.click("button[type=submit]")
    page.wait_for_url("**source=oracle**", wait_until="domcontentloaded")
    assert page.locator("#episodes tbody tr").count() == 2
    page.click("text=Turn on Wi-Fi")
    page.wait_for_selector("#step-0 .shot.big img")
    assert page.locator("#verified-by").text_content() == "verifier"

"""Replays of getevent captures written the way kernels emit them give the actions the person performed.

Some captures are literal text (omitted axes, protocol A, single-touch, hex codes); others
come from the virtual device's panel, which drops unchanged values as the input core does.
"""

import pytest

from collectors.classify import Screen, classify
from collectors.gestures import GeteventError, Gesture, KeyPress, Tracker, touch_axes
from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone.adb.getevent import TouchPanel, line_path
from mockphone.phone import MockPhone

PORTRAIT = Screen(1080, 2400, 420)


def replay(text_or_lines, describe, screen=PORTRAIT):
    axes = touch_axes(describe)
    tracker = Tracker(axes)
    lines = text_or_lines.strip().splitlines() if isinstance(text_or_lines, str) else text_or_lines
    out = [g for line in lines for g in tracker.feed(line)]
    return [classify(g, axes, screen)[0] if isinstance(g, Gesture) else g for g in out], tracker


def near(a, b, tol=2):
    return a.type == b.type and all(abs(getattr(a, k) - getattr(b, k)) <= tol for k in ("x", "y")
                                    if getattr(b, k) is not None)


@pytest.mark.parametrize("protocol", ["B", "A", "single"])
@pytest.mark.parametrize("action", [Action("tap", x=100, y=200), Action("long_press", x=500, y=900, duration_ms=900),
                                    Action("swipe", x=100, y=2000, x2=900, y2=300, duration_ms=300)])
def test_panel_protocols_replay_to_the_gesture(protocol, action):
    panel = TouchPanel(1080, 2400, protocol)
    got, _ = replay(panel.lines(action, None), panel.describe(labels=True))
    assert len(got) == 1 and near(got[0], action)
    if action.type == "swipe":
        assert abs(got[0].x2 - 900) <= 2 and abs(got[0].y2 - 300) <= 2


def test_second_tap_at_the_same_x_is_kept_when_the_kernel_omits_x():
    b = TouchPanel(1080, 2400, "B")
    lines = b.lines(Action("tap", x=300, y=500), None) + b.lines(Action("tap", x=300, y=1500), None)
    assert sum("POSITION_X" in ln for ln in lines) == 1  # the kernel sent X once
    got, _ = replay(lines, b.describe(labels=True))
    assert len(got) == 2 and all(near(a, e) for a, e in zip(got, [Action("tap", x=300, y=500),
                                                                  Action("tap", x=300, y=1500)]))


B_DESCRIBE = TouchPanel(1080, 2400, "B").describe(labels=True)
LITERAL_B = """
[   4242.100000] /dev/input/event2: EV_ABS       ABS_MT_TRACKING_ID   00000031
[   4242.100000] /dev/input/event2: EV_ABS       ABS_MT_POSITION_X    00000400
[   4242.100000] /dev/input/event2: EV_ABS       ABS_MT_POSITION_Y    00000400
[   4242.100000] /dev/input/event2: EV_KEY       BTN_TOUCH            DOWN
[   4242.100000] /dev/input/event2: EV_SYN       SYN_REPORT           00000000
[   4242.160000] /dev/input/event2: EV_ABS       ABS_MT_TRACKING_ID   ffffffff
[   4242.160000] /dev/input/event2: EV_KEY       BTN_TOUCH            UP
[   4242.160000] /dev/input/event2: EV_SYN       SYN_REPORT           00000000
[   4242.900000] /dev/input/event2: EV_ABS       ABS_MT_TRACKING_ID   00000032
[   4242.900000] /dev/input/event2: EV_KEY       BTN_TOUCH            DOWN
[   4242.900000] /dev/input/event2: EV_SYN       SYN_REPORT           00000000
[   4242.950000] /dev/input/event2: EV_ABS       ABS_MT_TRACKING_ID   ffffffff
[   4242.950000] /dev/input/event2: EV_KEY       BTN_TOUCH            UP
[   4242.950000] /dev/input/event2: EV_SYN       SYN_REPORT           00000000
"""


def test_literal_capture_with_a_repeat_tap_that_sends_no_axes_at_all():
    got, _ = replay(LITERAL_B, B_DESCRIBE)
    assert [(a.type, a.x, a.y) for a in got] == [("tap", 270, 600), ("tap", 270, 600)]


A_DESCRIBE = """add device 1: /dev/input/event1
  name:     "synaptics-rmi4"
  events:
    KEY (0001): BTN_TOUCH
    ABS (0003): ABS_MT_TOUCH_MAJOR    : value 0, min 0, max 15, fuzz 0, flat 0, resolution 0
                ABS_MT_POSITION_X     : value 0, min 0, max 1079, fuzz 0, flat 0, resolution 0
                ABS_MT_POSITION_Y     : value 0, min 0, max 2399, fuzz 0, flat 0, resolution 0
"""
LITERAL_A = """
[ 100.000000] /dev/input/event1: EV_ABS       ABS_MT_POSITION_X    00000064
[ 100.000000] /dev/input/event1: EV_ABS       ABS_MT_POSITION_Y    000000c8
[ 100.000000] /dev/input/event1: EV_SYN       SYN_MT_REPORT        00000000
[ 100.000000] /dev/input/event1: EV_KEY       BTN_TOUCH            DOWN
[ 100.000000] /dev/input/event1: EV_SYN       SYN_REPORT           00000000
[ 100.016000] /dev/input/event1: EV_ABS       ABS_MT_POSITION_X    00000064
[ 100.016000] /dev/input/event1: EV_ABS       ABS_MT_POSITION_Y    000000c8
[ 100.016000] /dev/input/event1: EV_SYN       SYN_MT_REPORT        00000000
[ 100.016000] /dev/input/event1: EV_SYN       SYN_REPORT           00000000
[ 100.050000] /dev/input/event1: EV_KEY       BTN_TOUCH            UP
[ 100.050000] /dev/input/event1: EV_SYN       SYN_MT_REPORT        00000000
[ 100.050000] /dev/input/event1: EV_SYN       SYN_REPORT           00000000
"""


def test_protocol_a_capture_gives_a_tap_in_pixels_of_its_own_range():
    assert touch_axes(A_DESCRIBE).protocol == "A"
    got, _ = replay(LITERAL_A, A_DESCRIBE)
    assert [(a.type, a.x, a.y) for a in got] == [("tap", 100, 200)]


SINGLE_DESCRIBE = """add device 3: /dev/input/event3
  name:     "ads7846"
  events:
    KEY (0001): 014a
    ABS (0003): 0000  : value 0, min 0, max 4095, fuzz 0, flat 0, resolution 0
                0001  : value 0, min 0, max 4095, fuzz 0, flat 0, resolution 0
"""
LITERAL_SINGLE_HEX = """
[ 7.000000] /dev/input/event3: 0003 0000 00000800
[ 7.000000] /dev/input/event3: 0003 0001 00000800
[ 7.000000] /dev/input/event3: 0001 014a 00000001
[ 7.000000] /dev/input/event3: 0000 0000 00000000
[ 7.100000] /dev/input/event3: 0003 0001 00000400
[ 7.100000] /dev/input/event3: 0000 0000 00000000
[ 7.200000] /dev/input/event3: 0003 0001 00000100
[ 7.200000] /dev/input/event3: 0000 0000 00000000
[ 7.250000] /dev/input/event3: 0001 014a 00000000
[ 7.250000] /dev/input/event3: 0000 0000 00000000
"""


def test_single_touch_panel_in_hex_gives_a_vertical_swipe_with_x_never_resent():
    assert touch_axes(SINGLE_DESCRIBE).protocol == "single"
    got, _ = replay(LITERAL_SINGLE_HEX, SINGLE_DESCRIBE)
    assert len(got) == 1 and got[0].type == "swipe" and (got[0].x, got[0].y) == (540, 1200)
    assert (got[0].x2, got[0].y2) == (540, 150)


def test_landscape_tap_is_scaled_to_the_rotated_screen():
    panel = TouchPanel(1080, 2400)  # natural portrait panel
    lines = panel.touch([[(600, 540)]], 60, rotation=1)[0]
    got, _ = replay(lines, panel.describe(labels=True), Screen(2400, 1080, 420, rotation=1))
    assert near(got[0], Action("tap", x=600, y=540))
    lines = panel.touch([[(2000, 100)]], 60, rotation=3)[0]
    got, _ = replay(lines, panel.describe(labels=True), Screen(2400, 1080, 420, rotation=3))
    assert near(got[0], Action("tap", x=2000, y=100))


GESTURAL = Screen(1080, 2400, 420, nav_mode="gestural")


@pytest.mark.parametrize("path, hold, key", [
    ((3, 1200, 380, 1200), 0, "back"), ((1077, 900, 700, 900), 0, "back"),
    ((540, 2396, 540, 1440), 0, "home"), ((540, 2396, 540, 1440), 450, "app_switch"),
])
def test_gesture_navigation_swipes_are_keys(path, hold, key):
    panel = TouchPanel(1080, 2400)
    lines = panel.touch([line_path(*path, 260, hold)], 260 + hold)[0]
    got, _ = replay(lines, panel.describe(labels=True), GESTURAL)
    assert [(a.type, a.key) for a in got] == [("key", key)]
    same, _ = replay(TouchPanel(1080, 2400).touch([line_path(*path, 260, hold)], 260 + hold)[0],
                     panel.describe(labels=True), PORTRAIT)  # 3-button mode: a plain swipe
    assert same[0].type == "swipe"


def windowed(xml: str) -> str:
    """The dump as a real device writes it: the status bar and the navigation bar are windows of their own
    (roots of the hierarchy next to the app's), not children of the app's root."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml.encode())
    app = root[0]
    bars = [n for n in app if n.get("package") == "com.android.systemui"]  # none: the mock dumps windows already
    for bar in bars:
        app.remove(bar)
        root.append(bar)
    return ET.tostring(root, encoding="unicode")


@pytest.mark.parametrize("shape", ["one_root", "windows"])
@pytest.mark.parametrize("rid, key", [("back", "back"), ("home", "home"), ("recent_apps", "app_switch")])
def test_nav_bar_button_taps_are_keys(rid, key, shape):
    xml = MockPhone(seed=0).ui_tree()
    elements = parse_ui_tree(xml if shape == "one_root" else windowed(xml))
    button = next(e for e in elements if e.resource_id.endswith("/" + rid))
    panel = TouchPanel(1080, 2400)
    got, _ = replay(panel.lines(Action("tap", x=button.center[0], y=button.center[1]), None),
                    panel.describe(labels=True), Screen(1080, 2400, 420, elements=elements))
    assert [(a.type, a.key) for a in got] == [("key", key)]


@pytest.mark.parametrize("protocol", ["B", "A"])
@pytest.mark.parametrize("spread, kind", [((400, 100), "pinch_out"), ((100, 400), "pinch_in")])
def test_pinch_is_a_flagged_multi_touch_never_a_swipe(protocol, spread, kind):
    end, start = spread  # half the distance between the fingers at the end and at the start
    panel = TouchPanel(1080, 2400, protocol)
    lines = panel.touch([line_path(540 - start, 1200, 540 - end, 1200, 300),
                         line_path(540 + start, 1300, 540 + end, 1300, 300)], 300)[0]
    axes = touch_axes(panel.describe(labels=True))
    tracker = Tracker(axes)
    gestures = [g for ln in lines for g in tracker.feed(ln)]
    assert len(gestures) == 1 and gestures[0].fingers == 2
    action, flags = classify(gestures[0], axes, PORTRAIT)
    assert action.type == "tool" and action.name == "multi_touch" and action.args["kind"] == kind
    assert flags == ["multi_touch"]


def test_garbage_lines_are_counted_not_fatal():
    noisy = ["could not get driver version for /dev/input/mouse0, Not a typewriter", "\x00\xffgarbage",
             "[ 1.0] /dev/input/event2: EV_ABS ABS_MT_POSITION_X zz"] + TouchPanel(1080, 2400).lines(
        Action("tap", x=540, y=1200), None)
    got, tracker = replay(noisy, B_DESCRIBE)
    assert [a.type for a in got] == ["tap"] and tracker.garbage == 2 and len(tracker.garbage_examples) == 2


def test_hardware_keys_are_key_presses():
    panel = TouchPanel(1080, 2400)
    got, _ = replay(panel.key("back")[0] + panel.key("home")[0], B_DESCRIBE)
    assert [g.key for g in got if isinstance(g, KeyPress)] == ["back", "home"]


def test_getevent_without_touchscreen_is_an_error():
    with pytest.raises(GeteventError, match="no touchscreen"):
        touch_axes('add device 1: /dev/input/event0\n  name:     "gpio-keys"\n')

"""Human-demonstration recording end to end: the virtual device replays oracle solutions as raw getevent lines."""

import time

import pytest

from collectors.gestures import GeteventError, Tracker, classify, touch_axes
from collectors.recorder import Recorder
from datalake.types import Action
from mockphone.adb.getevent import TouchPanel
from mockphone.phone import MockPhone
from mockphone.tasks import registry


def close(recorded, expected, tol=3):
    if recorded.type != expected.type:
        return False
    for name in ("x", "y", "x2", "y2"):
        a, b = getattr(recorded, name), getattr(expected, name)
        if (a is None) != (b is None) or (a is not None and abs(a - b) > tol):
            return False
    return all(getattr(recorded, n) == getattr(expected, n) for n in ("direction", "key", "text"))


def replay(vd, rec, action):
    def seen():
        assert rec.wait_observed_after(time.monotonic()), "the recorder never observed the screen"
    return [a for a in vd.perform(action, after_each=seen) if a.type not in ("wait", "terminate")]


@pytest.mark.parametrize("name, seed", [("SettingsWifiOff", 0), ("ShopSearchPriceRange", 1), ("ContactsAdd", 0)])
def test_recorded_demo_equals_the_oracle_and_verifies(server, adb_phone, lake, name, seed):
    from collectors import OraclePolicy

    vd = server.devices[0]
    mock = vd.phone
    task = registry.get(name)(seed=seed)
    mock.reset(seed)
    task.initialize_task(mock)
    rec = Recorder(adb_phone, task.goal, task=name).start()
    oracle = OraclePolicy(mock, task)
    expected = []
    while True:
        action, _ = oracle.act(task.goal, None, [])
        if action.type == "terminate":
            break
        expected += replay(vd, rec, action)
    episode = rec.stop(success=True)
    recorded = [s.action for s in episode.steps[:-1]]
    assert len(recorded) == len(expected) and all(map(close, recorded, expected)), (recorded, expected)
    assert task.is_successful(mock) == 1.0
    assert episode.source == "human" and episode.meta["collector"] == "human" and episode.verified_by == "human"
    # each step shows the screen before its action: replaying the recording on a fresh phone verifies too
    fresh = MockPhone(seed=seed)
    task.initialize_task(fresh)
    for step in episode.steps:
        assert step.observation.ui_tree == fresh.ui_tree()
        fresh.act(step.action)
    assert task.is_successful(fresh) == 1.0
    assert lake.write_episodes([episode]).written == 1


def test_stop_without_anything_recorded_writes_nothing(server, adb_phone):
    from collectors.errors import EpisodeAborted

    rec = Recorder(adb_phone, "do nothing").start()
    with pytest.raises(EpisodeAborted, match="nothing was recorded"):
        rec.stop(success=False)


PANEL = TouchPanel(1080, 2400)


@pytest.mark.parametrize("action, kind", [
    (Action("tap", x=100, y=200), "tap"), (Action("long_press", x=500, y=900, duration_ms=900), "long_press"),
    (Action("swipe", x=100, y=2000, x2=900, y2=300, duration_ms=300), "swipe"),
])
def test_gestures_scale_raw_axes_to_pixels(action, kind):
    axes = touch_axes(PANEL.describe(labels=True))
    tracker = Tracker(axes)
    gestures = [g for line in PANEL.lines(action, None) for g in tracker.feed(line)]
    got = classify(gestures[0], axes, [], 1080, 2400, 420)
    assert got.type == kind and abs(got.x - action.x) <= 1 and abs(got.y - action.y) <= 1
    if kind == "long_press":
        assert got.duration_ms == 900


def test_two_finger_gesture_is_one_gesture():
    axes = touch_axes(PANEL.describe(labels=False))
    tracker = Tracker(axes)
    lines = [
        "[ 1.000000] /dev/input/event2: EV_ABS ABS_MT_SLOT 00000000",
        "[ 1.000000] /dev/input/event2: EV_ABS ABS_MT_TRACKING_ID 00000007",
        "[ 1.000000] /dev/input/event2: EV_ABS ABS_MT_POSITION_X 00000100",
        "[ 1.000000] /dev/input/event2: EV_ABS ABS_MT_POSITION_Y 00000100",
        "[ 1.000000] /dev/input/event2: EV_SYN SYN_REPORT 00000000",
        "[ 1.010000] /dev/input/event2: EV_ABS ABS_MT_SLOT 00000001",
        "[ 1.010000] /dev/input/event2: EV_ABS ABS_MT_TRACKING_ID 00000008",
        "[ 1.010000] /dev/input/event2: EV_ABS ABS_MT_POSITION_X 00000800",
        "[ 1.010000] /dev/input/event2: EV_ABS ABS_MT_POSITION_Y 00000800",
        "[ 1.010000] /dev/input/event2: EV_SYN SYN_REPORT 00000000",
        "[ 1.050000] /dev/input/event2: EV_ABS ABS_MT_TRACKING_ID ffffffff",
        "[ 1.050000] /dev/input/event2: EV_SYN SYN_REPORT 00000000",
        "[ 1.060000] /dev/input/event2: EV_ABS ABS_MT_SLOT 00000000",
        "[ 1.060000] /dev/input/event2: EV_ABS ABS_MT_TRACKING_ID ffffffff",
        "[ 1.060000] /dev/input/event2: EV_SYN SYN_REPORT 00000000",
    ]
    out = [g for line in lines for g in tracker.feed(line)]
    assert len(out) == 1 and len(out[0].tracks) == 2 and not tracker.touching


def test_getevent_without_touchscreen_is_an_error():
    with pytest.raises(GeteventError, match="no touchscreen"):
        touch_axes('add device 1: /dev/input/event0\n  name:     "gpio-keys"\n')


def test_typing_on_the_soft_keyboard_becomes_one_input_text(server, adb_phone):
    from mockphone.gestures import _keyboard
    from mockphone.screen import KEY_ROWS

    vd = server.devices[0]
    vd.phone.act(Action("open_app", app="shop"))
    rec = Recorder(adb_phone, "search for hi").start()
    replay(vd, rec, Action("tap", x=540, y=315))  # focus the search field: the keyboard opens
    x1, y1, x2, y2 = _keyboard(vd.phone).bounds
    for ch in "hi":
        row = next(i for i, keys in enumerate(KEY_ROWS) if ch in keys)
        col = KEY_ROWS[row].index(ch)
        x = x1 + (col + 0.5) * (x2 - x1) / len(KEY_ROWS[row])
        y = y1 + (row + 0.5) * (y2 - y1) / len(KEY_ROWS)
        replay(vd, rec, Action("tap", x=int(x), y=int(y)))
    episode = rec.stop(success=False)
    assert [s.action.type for s in episode.steps] == ["tap", "input_text"]
    assert episode.steps[1].action.text == "hi" and episode.steps[1].action.clear is True
    assert episode.outcome == "failure" and episode.verified_by == "human"


def test_phone_lost_while_recording_is_an_error_and_no_episode(server, adb_phone):
    from collectors.errors import CollectorError

    rec = Recorder(adb_phone, "anything").start()
    server.devices[0].state = "offline"
    assert rec.wait_observed_after(time.monotonic(), timeout=5)  # returns once the recorder has failed
    with pytest.raises(CollectorError, match="recording failed.*offline"):
        rec.stop(success=True)

"""Human-demonstration recording end to end: the virtual device replays oracle solutions as raw getevent lines."""

import time

import pytest

from collectors.recorder import Recorder
from datalake.types import Action
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from phones.adb_phone import AdbPhone


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
    from phones.episode import OraclePolicy

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
    from phones.errors import EpisodeAborted

    rec = Recorder(adb_phone, "do nothing").start()
    with pytest.raises(EpisodeAborted, match="nothing was recorded"):
        rec.stop(success=False)


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


def test_phone_lost_before_any_step_is_an_error_and_no_episode(server, adb_phone):
    from collectors.errors import CollectorError

    rec = Recorder(adb_phone, "anything").start()
    server.devices[0].state = "offline"
    assert rec.wait_observed_after(time.monotonic(), timeout=5)  # returns once the recorder has failed
    with pytest.raises(CollectorError, match="recording failed.*(offline|ended).*nothing was recorded"):
        rec.stop(success=True)


def test_phone_lost_mid_recording_keeps_the_steps_as_a_partial_flagged_episode(server, adb_phone, lake):
    vd = server.devices[0]
    rec = Recorder(adb_phone, "open shop").start()
    replay(vd, rec, Action("tap", x=540, y=1000))
    vd.state = "offline"
    assert rec.wait_observed_after(time.monotonic(), timeout=5)
    episode = rec.stop(success=True)
    assert [s.action.type for s in episode.steps] == ["tap"]
    assert episode.meta["partial"] is True and "offline" in episode.meta["failure_reason"] or \
        "ended" in episode.meta["failure_reason"]
    assert episode.outcome == "unknown" and episode.verified_by == "none"
    assert lake.write_episodes([episode]).written == 1


@pytest.mark.parametrize("nav_mode", ["3button", "gestural", "keys"])
def test_navigation_is_recorded_as_keys_in_every_nav_mode(server, adb_phone, nav_mode):
    vd = server.devices[0]
    vd.configure(nav_mode=nav_mode)
    vd.phone.act(Action("open_app", app="shop"))
    rec = Recorder(adb_phone, "leave the shop").start()
    for key in ("back", "app_switch", "home"):
        replay(vd, rec, Action("key", key=key))
    episode = rec.stop(success=False)
    assert [(s.action.type, s.action.key) for s in episode.steps] == [("key", "back"), ("key", "app_switch"),
                                                                      ("key", "home")]
    assert episode.meta["nav_mode"] == nav_mode.replace("keys", "3button")  # touch keys report mode 0 too


def test_landscape_taps_land_where_the_finger_was():
    from mockphone.adb import VirtualAdbServer
    from mockphone.layout import Display

    with VirtualAdbServer(phones=[MockPhone(seed=0, display=Display(width=2400, height=1080))]) as server:
        vd = server.devices[0].configure(rotation=1)
        rec = Recorder(AdbPhone("emulator-5554", port=server.port, retry_delay=0.01), "tap in landscape").start()
        replay(vd, rec, Action("tap", x=600, y=540))
        episode = rec.stop(success=False)
    tap = episode.steps[0].action
    assert tap.type == "tap" and abs(tap.x - 600) <= 1 and abs(tap.y - 540) <= 1
    assert (episode.device.width, episode.device.height, episode.device.extra["rotation"]) == (2400, 1080, 1)


@pytest.mark.parametrize("protocol", ["A", "single"])
def test_other_panel_protocols_record_the_same_demo(server, adb_phone, protocol):
    vd = server.devices[0]
    vd.configure(touch_protocol=protocol)
    vd.phone.act(Action("open_app", app="contacts"))
    rec = Recorder(adb_phone, "scroll the contacts").start()
    replay(vd, rec, Action("scroll", direction="down"))
    replay(vd, rec, Action("tap", x=540, y=1000))
    episode = rec.stop(success=False)
    assert [s.action.type for s in episode.steps] == ["scroll", "tap"]
    assert episode.meta["touch_protocol"] == protocol


def test_double_tap_on_one_screen_is_one_double_tap(server, adb_phone):
    vd = server.devices[0]
    vd.phone.act(Action("open_app", app="notes"))
    rec = Recorder(adb_phone, "double tap").start()
    replay(vd, rec, Action("double_tap", x=540, y=1400))
    episode = rec.stop(success=False)
    assert [s.action.type for s in episode.steps] == ["double_tap"]


def test_garbage_in_the_getevent_stream_is_reported_in_meta(server, adb_phone):
    vd = server.devices[0]
    rec = Recorder(adb_phone, "open shop").start()
    while vd.listeners() == 0:
        time.sleep(0.01)
    vd.emit(["\x00\x01 not an event", "[ 12.5 ] /dev/input/event2: EV_ABS"])
    replay(vd, rec, Action("tap", x=540, y=1000))
    episode = rec.stop(success=False)
    assert [s.action.type for s in episode.steps] == ["tap"]
    assert episode.meta["getevent_garbage"]["lines"] == 2


def test_rotation_between_two_taps_each_tap_lands_on_its_screens_pixel(server, adb_phone):
    from datalake.types import png_size
    from datalake.uitree import parse_ui_tree

    vd = server.devices[0]
    vd.phone.act(Action("open_app", app="contacts"))
    rec = Recorder(adb_phone, "tap, turn the phone, tap Add").start()
    replay(vd, rec, Action("tap", x=300, y=136))  # portrait, on the title (nothing happens)
    vd.rotate(1)
    add = next(e for e in parse_ui_tree(vd.phone.ui_tree()) if e.text == "Add")
    assert rec.wait_observed_after(time.monotonic())
    replay(vd, rec, Action("tap", x=add.center[0], y=add.center[1]))
    episode = rec.stop(success=False)
    first, second = (s.action for s in episode.steps)
    assert (first.type, second.type) == ("tap", "tap")
    assert abs(first.x - 300) <= 1 and abs(first.y - 136) <= 1
    assert abs(second.x - add.center[0]) <= 1 and abs(second.y - add.center[1]) <= 1
    assert second.element is not None and second.element.text == "Add"
    assert [s.meta["rotation"] for s in episode.steps] == [0, 1]
    assert [png_size(s.observation.screenshot) for s in episode.steps] == [(1080, 2400), (2400, 1080)]
    assert episode.meta["rotations"] == [0, 1] and episode.device.extra["rotation"] == 0


def test_step_facts_are_in_step_meta_and_in_the_lakes_pairing_column(server, adb_phone, lake):
    vd = server.devices[0]
    rec = Recorder(adb_phone, "open shop").start()
    # a frame before the touch-down (else the first step is rightly "uncertain": nothing shows
    # what the screen was when the finger came down)
    assert rec.wait_observed_after(time.monotonic())
    replay(vd, rec, Action("tap", x=540, y=1000))
    episode = rec.stop(success=True)
    assert "steps_meta" not in episode.meta
    assert [s.meta["pairing"] for s in episode.steps] == ["ok", "ok"]
    assert {"frame_lag_ms", "tree", "tree_lag_ms", "rotation", "flags"} <= set(episode.steps[0].meta)
    lake.write_episodes([episode])
    rows = lake.sql("SELECT step_index, pairing, json_extract(meta_json, '$.rotation') AS r FROM steps "
                    "ORDER BY step_index").to_pylist()
    assert [(r["pairing"], int(r["r"]) if r["r"] is not None else None) for r in rows] == [("ok", 0), ("ok", None)]


def test_older_recordings_with_steps_meta_are_still_read_and_selected(lake):
    import dataclasses

    from annotate.push import select_steps
    from collectors.operator import score
    from collectors.recorder import step_meta
    from datalake.types import Device, Episode, Observation, Step
    from mockphone.phone import MockPhone

    png = MockPhone(seed=0).screenshot()
    steps = tuple(Step(Observation(screenshot=png), Action("tap", x=10 * i + 5, y=10)) for i in range(3))
    old = Episode(instruction="old shape", source="human", device=Device(1080, 2400), steps=steps,
                  meta={"steps_meta": [{"pairing": "certain"}, {"pairing": "uncertain"}, {"pairing": "certain"}]})
    new = Episode(instruction="new shape", source="human", device=Device(1080, 2400),
                  steps=tuple(dataclasses.replace(s, meta={"pairing": p}) for s, p in zip(steps, ["uncertain", "ok",
                                                                                                    "ok"])))
    assert [m["pairing"] for m in step_meta(old)] == ["certain", "uncertain", "certain"]
    assert score(old, [png] * 3)["flagged"] == 1 and score(new, [png] * 3)["flagged"] == 1
    lake.write_episodes([old, new])
    picked = {(r["episode_id"], r["step_index"]) for r in select_steps(lake, "uncertain-pairing")}
    assert picked == {(old.episode_id, 1), (new.episode_id, 0)}

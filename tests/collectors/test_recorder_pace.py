"""The recorder against a realistic virtual phone (1.2 s screencaps) and an operator who never waits for it."""

import time

import pytest

from collectors.operator import act_at_human_pace, score
from collectors.recorder import Recorder
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from mockphone.tasks.oracle import solve
from phones.adb_phone import AdbPhone

pytestmark = pytest.mark.slow  # > 20 s on 2 cores: `scripts/test.sh -m "not slow"` leaves it out


def plan(name, seed):
    phone = MockPhone(seed=seed)
    task = registry.get(name)(seed=seed)
    task.initialize_task(phone)
    return task, [a for a in solve(phone, task) if a.type != "terminate"]


def record(server, name, seed, gaps, device=None, **recorder):
    vd = server.devices[0]
    vd.configure(**{"capture_latency": 1.2, "dump_latency": 0.5, "grab_jitter": 0.03, **(device or {})})
    task, actions = plan(name, seed)
    vd.phone.reset(seed)
    task.initialize_task(vd.phone)
    rec = Recorder(AdbPhone("emulator-5554", port=server.port, retry_delay=0.01), task.goal, task=name,
                   **recorder).start()
    truth, performed = act_at_human_pace(vd, actions, gaps=gaps, seed=seed)
    episode = rec.stop(success=True)
    return episode, truth, performed, vd


@pytest.fixture(scope="module")
def paced():
    from mockphone.adb import VirtualAdbServer

    out = []
    for name, seed in [("ContactsAdd", 0), ("ShopSearchPriceRange", 1)]:
        with VirtualAdbServer(phones=1) as server:
            out.append(record(server, name, seed, gaps=(0.3, 0.8)))
    return out


def test_human_pace_steps_are_paired_with_the_right_screen(paced):
    totals = [score(ep, truth) for ep, truth, _, _ in paced]
    right, expected = sum(t["right"] for t in totals), sum(t["expected_steps"] for t in totals)
    assert expected >= 15 and all(t["steps"] == t["expected_steps"] for t in totals), totals
    assert right / expected >= 0.99, totals
    assert sum(t["wrong_unflagged"] for t in totals) == 0, totals


def test_human_pace_actions_are_the_performed_ones(paced):
    for ep, _, performed, _ in paced:
        assert [s.action.type for s in ep.steps[:-1]] == [a.type for a in performed]
        assert ep.meta["nav_mode"] == "3button" and ep.meta["capture"]["workers"] > 1


def test_clock_alignment_error_is_measured_and_small(paced):
    for ep, _, _, vd in paced:
        true_offset = vd._boot  # host monotonic = device uptime + _boot, in one process
        assert abs(ep.meta["clock"]["offset_s"] - true_offset) < 0.02, ep.meta["clock"]
        assert ep.meta["clock"]["source"] == "getevent"


def test_steps_that_cannot_be_paired_are_flagged_never_mispaired(server):
    # one frame a second (as one slow screencap at a time gives) for steps 0.4 s apart: most have no frame
    episode, truth, _, _ = record(server, "ShopSearchPriceRange", 1, gaps=(0.35, 0.4), capture_period=1.0)
    result = score(episode, truth)
    assert result["steps"] == result["expected_steps"], result
    assert result["wrong_unflagged"] == 0, result
    assert result["flagged"] >= 2, result
    flagged = [s.meta for s in episode.steps if s.meta["pairing"] == "uncertain"]
    assert all("frame_lag_ms" in m and "tree_lag_ms" in m for m in flagged)


def test_pair_frame_without_a_frame_between_the_actions_is_uncertain():
    from collectors.pairing import Clock, Frame, pair_frame

    clock = Clock()
    clock.event(arrival=100.0, device_t=10.0)  # host = device + 90
    clock.uptime_sample(99.999, 10.0, 100.0)  # uptime = device clock (shift 0)

    def stamped(up, sha):  # grabbed between the two stamps, 20 ms apart
        return Frame(90 + up, 90 + up + 0.5, sha, up=up, up_end=up + 0.02)

    frames = [stamped(9.0, "a"), stamped(10.2, "b"), stamped(10.35, "b")]
    certain = pair_frame(frames, clock, prev_up=9.5, down=10.6, grab_window=0.1, settle=0.05)
    assert certain.certain and certain.frame.up == 10.35
    too_soon = pair_frame(frames, clock, prev_up=10.32, down=10.5, grab_window=0.1, settle=0.05)
    assert not too_soon.certain and too_soon.frame.sha == "b"  # the last frame surely before touch-down
    none_before = pair_frame(frames, clock, prev_up=10.0, down=10.18, grab_window=0.1, settle=0.05)
    assert not none_before.certain and none_before.frame.sha == "a"


def test_a_frame_not_confirmed_by_the_next_grab_or_with_no_known_interval_is_uncertain():
    """Issue 32: one grab inside the quiet interval may be mid-transition; host-dated grabs have no interval."""
    from collectors.pairing import Clock, Frame, pair_frame

    clock = Clock()
    clock.event(arrival=100.0, device_t=10.0)
    clock.uptime_sample(99.999, 10.0, 100.0)
    moving = [Frame(0, 0, s, up=u, up_end=u + 0.02) for s, u in [("blend1", 10.1), ("blend2", 10.2), ("end", 10.3)]]
    assert not pair_frame(moving, clock, prev_up=10.0, down=10.4, grab_window=0.1, settle=0.05).certain
    host_dated = [Frame(100.1, 100.2, "x"), Frame(100.2, 100.3, "x")]  # no stamp: the interval is not known
    assert not pair_frame(host_dated, clock, prev_up=10.0, down=10.6, grab_window=0.1, settle=0.05).certain


def test_only_equal_grabs_well_apart_confirm_a_screen_at_rest():
    """Issue 32: two grabs 20 ms apart can hold one blend twice (a transition's clamped end), a grab that
    differs between two equal ones means the screen moved, and nearly equal is not equal (a short text
    typed, a blend 40 ms on): none is certain; equal bytes 150 ms apart are."""
    from collectors.pairing import Clock, Frame, pair_frame

    clock = Clock()
    clock.event(arrival=100.0, device_t=10.0)
    clock.uptime_sample(99.999, 10.0, 100.0)

    def grabs(*pairs):
        return [Frame(0, 0, s, up=u, up_end=u + 0.02) for s, u in pairs]

    def certain(frames):
        return pair_frame(frames, clock, prev_up=10.0, down=10.6, grab_window=0.1, settle=0.05).certain

    assert not certain(grabs(("blend", 10.30), ("blend", 10.32)))
    assert not certain(grabs(("a", 10.1), ("x", 10.25), ("a", 10.4)))
    assert not certain(grabs(("before typing", 10.2), ("typed", 10.4)))
    assert certain(grabs(("end", 10.3), ("end", 10.45)))


def test_stalled_capture_flags_steps_never_mispairs(server):
    # mid-recording the phone's screencaps slow to 3 s and start 0.5 s late: frames that host request times
    # would misdate (grabbed after the next touch-down); on the phone's clock they are only fewer
    import threading

    vd = server.devices[0]
    stall = threading.Timer(2.5, lambda: setattr(vd, "capture_latency", 3.0) or setattr(vd, "grab_jitter", 0.5))
    stall.start()
    try:
        episode, truth, _, _ = record(server, "ShopSearchPriceRange", 1, gaps=(0.3, 0.5))
    finally:
        stall.cancel()
        stall.join(timeout=5)
    assert vd.capture_latency == 3.0  # the stall happened during the recording
    result = score(episode, truth)
    assert result["steps"] == result["expected_steps"], result
    assert result["wrong_unflagged"] == 0, result
    assert result["flagged"] >= 1, result


def test_ime_typing_then_a_tap_at_once_keeps_the_text_before_the_tap(server):
    # ContactsAdd ends: type the phone number (an IME: no touches), and 0.3 s later tap Save, which leaves
    # the screen; dumps take 1 s. The phone also slept since boot (uptime runs ahead of getevent's clock)
    episode, truth, performed, vd = record(server, "ContactsAdd", 0, gaps=(0.3, 0.3),
                                           device={"suspended": 4321.5, "dump_latency": 1.0})
    recorded = [s.action for s in episode.steps[:-1]]
    assert [a.type for a in recorded] == [a.type for a in performed]
    assert [a.text for a in recorded if a.type == "input_text"] == ["Grace Hopper", "+1 555-867-5309"]
    assert abs(episode.meta["clock"]["uptime_shift_s"] + vd.suspended) < 0.02, episode.meta["clock"]
    assert score(episode, truth)["wrong_unflagged"] == 0


def test_long_recording_keeps_frames_not_yet_paired_within_the_cap(server):
    episode, truth, _, _ = record(server, "ShopSearchPriceRange", 1, gaps=(0.3, 0.5), max_frames=1)
    store, capture = episode.meta["capture"]["store"], episode.meta["capture"]
    assert capture["frames"] >= 30 and store["evicted"] > 0, capture
    assert store["peak_unpinned"] <= 1, store
    assert store["pinned"] <= len(episode.steps), store  # what is kept beyond the cap is the episode's screens
    result = score(episode, truth)
    assert result["steps"] == result["expected_steps"] and result["wrong_unflagged"] == 0, result


def test_frame_store_drops_the_oldest_unpinned_screens_first():
    from collectors.pairing import FrameStore

    store = FrameStore(max_frames=5, max_bytes=10_000)
    for i in range(1000):
        store.add(f"s{i}", bytes(1000 + i % 7))
        if i % 100 == 0:
            store.pin(f"s{i}")
        store.add("s0", bytes(1000))  # seen again and again: pinned, never dropped
    free = [d for d in store.pngs if d not in store.pinned]
    assert free == [f"s{i}" for i in range(995, 1000)] and store.pinned == {f"s{i}" for i in range(0, 1000, 100)}
    assert store.peak_unpinned <= 5 and store.evicted == 1000 - 10 - 5


def test_rotation_just_before_a_tap_uses_the_frames_shape_when_no_dump_saw_it(server):
    from datalake.types import Action
    from datalake.uitree import parse_ui_tree

    vd = server.devices[0].configure(capture_latency=1.2, dump_latency=3.0)  # most likely no dump sees the turn
    vd.phone.act(Action("open_app", app="contacts"))
    rec = Recorder(AdbPhone("emulator-5554", port=server.port, retry_delay=0.01), "turn and tap",
                   max_dump_workers=1).start()
    vd.perform(Action("tap", x=300, y=136))
    time.sleep(0.4)
    vd.rotate(1)
    add = next(e for e in parse_ui_tree(vd.phone.ui_tree()) if e.text == "Add")
    time.sleep(0.6)
    vd.perform(Action("tap", x=add.center[0], y=add.center[1]))
    time.sleep(0.5)
    episode = rec.stop(success=False)
    tap = episode.steps[1].action
    assert abs(tap.x - add.center[0]) <= 1 and abs(tap.y - add.center[1]) <= 1, tap
    assert episode.steps[1].meta["rotation"] == 1


def test_two_quick_keyboard_taps_on_one_sparse_frame_are_not_a_double_tap():
    """Issue 32: with sparse frames two keyboard taps share a frame; they are keys, merged never."""
    from collectors.pairing import Frame, Tree
    from datalake.types import Action

    keyboard = ('<hierarchy rotation="0"><node index="0" text="" resource-id="com.example:id/name" '
                'class="android.widget.EditText" package="com.example" bounds="[0,200][1080,320]" focused="true" '
                'clickable="true" enabled="true" /><node index="1" text="" resource-id="" '
                'class="android.inputmethodservice.KeyboardView" package="com.google.android.inputmethod.latin" '
                'bounds="[0,1500][1080,2300]" clickable="true" enabled="true" /></hierarchy>')
    tree, frame = Tree(0, 0, keyboard, "com.example", ".Main"), Frame(0, 0, "same")
    rec = Recorder.__new__(Recorder)
    rec.natural, rec.dpi = (1080, 2400), 420

    def tap(x, y, down):
        return {"action": Action("tap", x=x, y=y), "frame": frame, "tree": tree, "down": down, "up": down + 0.05}

    keys = rec._merge_double_taps([tap(100, 1800, 1.0), tap(110, 1805, 1.15)])
    assert [e["action"].type for e in keys] == ["tap", "tap"]
    app = rec._merge_double_taps([tap(500, 260, 1.0), tap(505, 262, 1.15)])  # on the field: a real double tap
    assert [e["action"].type for e in app] == ["double_tap"]

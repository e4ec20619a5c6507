"""The recorder against a realistic virtual phone (1.2 s screencaps) and an operator who never waits for it."""

import pytest

from collectors.adb_phone import AdbPhone
from collectors.operator import act_at_human_pace, score
from collectors.recorder import Recorder
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from mockphone.tasks.oracle import solve


def plan(name, seed):
    phone = MockPhone(seed=seed)
    task = registry.get(name)(seed=seed)
    task.initialize_task(phone)
    return task, [a for a in solve(phone, task) if a.type != "terminate"]


def record(server, name, seed, gaps, **recorder):
    vd = server.devices[0]
    vd.configure(capture_latency=1.2, dump_latency=0.5, grab_jitter=0.03)
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
    frames = [Frame(99.0, 100.2, "a"), Frame(100.35, 101.5, "b")]  # device 9.0 and 10.35
    certain = pair_frame(frames, clock, prev_up=9.5, down=10.6, grab_window=0.1, settle=0.05)
    assert certain.certain and certain.frame.sha == "b"
    too_soon = pair_frame(frames, clock, prev_up=10.32, down=10.5, grab_window=0.1, settle=0.05)
    assert not too_soon.certain and too_soon.frame.sha == "b"  # the last frame surely before touch-down
    none_before = pair_frame(frames, clock, prev_up=10.0, down=10.4, grab_window=0.1, settle=0.05)
    assert not none_before.certain and none_before.frame.sha == "a"

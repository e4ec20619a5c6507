"""Pairing rules found by the recorder matrix's rotation row (issue 32), on hand-made grab timelines."""

from collectors.pairing import Clock, Frame, pair_frame


def _clock() -> Clock:
    clock = Clock()
    clock.event(arrival=100.0, device_t=10.0)  # host = device + 90
    clock.uptime_sample(99.999, 10.0, 100.0)  # uptime = device clock (shift 0)
    return clock


def stamped(up, sha):  # grabbed between the two stamps, 20 ms apart
    return Frame(90 + up, 90 + up + 0.5, sha, up=up, up_end=up + 0.02)


def test_a_screen_that_changed_after_it_came_to_rest_is_not_ok():
    # at rest on "portrait" (two equal grabs 150 ms apart), then the phone turns: one grab of "landscape"
    frames = [stamped(10.1, "portrait"), stamped(10.25, "portrait"), stamped(10.4, "landscape")]
    assert pair_frame(frames[:2], _clock(), prev_up=10.0, down=10.5, grab_window=0.1, settle=0.05).certain
    p = pair_frame(frames, _clock(), prev_up=10.0, down=10.5, grab_window=0.1, settle=0.05)
    assert not p.certain and p.frame.sha == "landscape"  # the latest frame is the guess, flagged


def test_the_changed_screen_once_at_rest_is_ok():
    frames = [stamped(10.1, "portrait"), stamped(10.25, "portrait"), stamped(10.4, "landscape"),
              stamped(10.55, "landscape")]
    p = pair_frame(frames, _clock(), prev_up=10.0, down=10.65, grab_window=0.1, settle=0.05)
    assert p.certain and p.frame.sha == "landscape" and p.frame.up == 10.55


def test_a_grab_after_touch_down_does_not_count():
    frames = [stamped(10.1, "a"), stamped(10.25, "a"), stamped(10.55, "b")]  # "b": after the finger went down
    p = pair_frame(frames, _clock(), prev_up=10.0, down=10.5, grab_window=0.1, settle=0.05)
    assert p.certain and p.frame.sha == "a"

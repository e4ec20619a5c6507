"""A take survives (issue 32): Ctrl-C, SIGTERM and the end of input keep what was recorded; the lake is
checked before recording; `collect record --episodes N` with keys to keep, discard or redo a take."""

import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from phones.errors import EpisodeAborted
from collectors.takes import record_takes
from datalake.types import Action
from phoneloop.cli import app


class FakeRecorder:
    def __init__(self, n):
        self.n = n

    def stop(self, success=None, stopped=None):
        if self.n < 0:
            raise EpisodeAborted("nothing was recorded")
        return {"take": self.n, "success": success, "stopped": stopped}


def run_takes(lines, episodes):
    started, kept = [], []

    def start():
        started.append(FakeRecorder(len(started)))
        return started[-1]

    def read_line(prompt):
        item = lines.pop(0) if lines else EOFError()
        if isinstance(item, BaseException):
            raise item
        return item

    report = record_takes(start, kept.append, episodes=episodes, read_line=read_line, say=lambda _: None)
    return report, kept, len(started)


def test_keys_keep_discard_and_redo_takes():
    report, kept, started = run_takes(["", "s", "", "r", "", "f", "", "d"], episodes=3)
    assert [(k["take"], k["success"]) for k in kept] == [(0, True), (2, False)]
    assert (report.redone, report.discarded, report.stopped, started) == (1, 1, None, 4)


@pytest.mark.parametrize("end,reason", [(KeyboardInterrupt(), "sigint"), (EOFError(), "end of input")])
def test_a_take_cut_short_is_kept_with_outcome_unknown_and_the_reason(end, reason):
    report, kept, started = run_takes(["", "s", end], episodes=3)
    assert [k["stopped"] for k in kept] == [None, reason] and report.stopped == reason and started == 2


def test_quit_keeps_nothing_more():
    report, kept, _ = run_takes(["", "q"], episodes=3)
    assert kept == [] and report.stopped == "quit"


def test_record_into_a_lake_that_does_not_exist_fails_before_recording(server):
    t0 = time.monotonic()
    result = CliRunner().invoke(app, ["collect", "record", "--serial", "emulator-5554", "--instruction", "x",
                                      "--lake", "/proc/no/lake", "--port", str(server.port)], input="\ny\n")
    assert result.exit_code == 2 and "/proc/no/lake" in result.output, result.output
    assert "take 1" not in result.output and time.monotonic() - t0 < 10
    assert server.devices[0].listeners() == 0  # no getevent stream was ever opened


def _listening(vd):
    deadline = time.monotonic() + 20
    while vd.listeners() == 0 and time.monotonic() < deadline:  # the recorder's getevent stream is attached
        time.sleep(0.05)


def _record(server, lake, *args):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "collect", "record", "--serial", "emulator-5554",
                             "--instruction", "open the app", "--lake", lake.uri, "--port", str(server.port), *args],
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    seen = b""
    while b"take 1/" not in seen:
        line = proc.stderr.readline()
        assert line, seen
        seen += line
    vd = server.devices[0]
    _listening(vd)
    vd.perform(Action("tap", x=540, y=1200))
    vd.perform(Action("swipe", x=540, y=1800, x2=540, y2=600, duration_ms=300))
    time.sleep(1.0)  # the recorder captures the screens after them
    return proc


@pytest.mark.parametrize("how,rc,reason", [("sigint", 130, "sigint"), ("sigterm", 143, "sigterm"),
                                           ("eof", 0, "end of input")])
def test_ctrl_c_sigterm_and_end_of_input_write_what_was_recorded(server, lake, how, rc, reason):
    proc = _record(server, lake)
    if how == "eof":
        proc.stdin.close()
    else:
        proc.send_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == rc, err.decode()
    (row,) = lake.sql("SELECT episode_id, outcome, verified_by, num_steps FROM episodes").to_pylist()
    assert (row["outcome"], row["verified_by"]) == ("unknown", "none") and row["num_steps"] >= 2
    episode = lake.episode(row["episode_id"])
    assert episode.meta["stopped"] == reason and episode.steps[-1].action.type != "terminate"


def test_record_several_takes_with_keys(server, lake):
    proc = _record(server, lake, "--episodes", "2")
    proc.stdin.write(b"\ns\n")
    proc.stdin.flush()
    seen = b""
    while b"take 2/" not in seen:
        line = proc.stderr.readline()
        assert line, seen
        seen += line
    time.sleep(1.5)  # take 1's getevent stream is gone and take 2's is attached
    # where take 1's swipe lifted: the panel sends no position that did not change, so take 2 knows it
    # only from take 1's recorder
    server.devices[0].perform(Action("tap", x=540, y=600))
    time.sleep(1.0)
    out, err = proc.communicate(b"\nf\n", timeout=60)
    assert proc.returncode == 0, err.decode()
    rows = lake.sql("SELECT episode_id, outcome FROM episodes ORDER BY created_at").to_pylist()
    assert [r["outcome"] for r in rows] == ["success", "failure"], (rows, seen.decode(), err.decode()[-3000:])
    (tap,) = [s.action for s in lake.episode(rows[1]["episode_id"]).steps]
    assert (tap.type, round(tap.x), round(tap.y)) == ("tap", 540, 600), tap


@pytest.mark.parametrize("protocol", ["B", "single"])
def test_a_tap_where_the_last_take_lifted_is_seen_with_the_panel_state_carried(protocol):
    from collectors.gestures import Tracker, touch_axes
    from mockphone.adb.getevent import TouchPanel
    from mockphone.phone import MockPhone

    phone, panel = MockPhone(seed=0), TouchPanel(1080, 2400, protocol)
    axes = touch_axes(panel.describe(labels=True))
    first = Tracker(axes)
    for line in panel.gesture(Action("swipe", x=540, y=1800, x2=540, y2=600, duration_ms=300), phone)[0]:
        first.feed(line)
    lines = panel.gesture(Action("tap", x=540, y=600), phone)[0]
    assert not any("POSITION" in line or "ABS_X" in line for line in lines)  # nothing changed: not sent
    fresh, carried = Tracker(axes), Tracker(axes, first.state())
    assert [g for line in lines for g in fresh.feed(line)] == []  # a recorder started cold loses it
    (tap,) = [g for line in lines for g in carried.feed(line)]
    assert axes.to_screen(*tap.tracks[0][0][1:], 1080, 2400) == pytest.approx((540, 600), abs=1)

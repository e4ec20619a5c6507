"""The virtual device as real phones behave: animated transitions, late grabs, Android's dumpsys answers,
the shell forms harnesses send, and run-time control (offline/online, rotation) of a served phone."""

import io
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from PIL import Image

from mockphone.adb import control
from tests.adb.helpers import free_port, stock_adb

OPEN_SETTINGS = "monkey -p com.android.settings 1"


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int16)


def test_a_frame_grabbed_mid_transition_is_the_two_screens_blended(server, dev):
    server.devices[0].configure(transition=1.0)  # long, so a loaded machine still grabs inside it
    before = dev.shell(["screencap", "-p"], encoding=None)
    dev.shell(OPEN_SETTINGS)
    running = dev.shell("dumpsys window | grep mAppTransitionState")
    mid = dev.shell(["screencap", "-p"], encoding=None)
    time.sleep(1.1)
    after = dev.shell(["screencap", "-p"], encoding=None)
    assert "APP_STATE_RUNNING" in running
    assert "APP_STATE_IDLE" in dev.shell("dumpsys window | grep mAppTransitionState")
    assert mid not in (before, after) and before != after
    a, m, b = pixels(before), pixels(mid), pixels(after)
    differ = a != b
    t = np.median((m[differ] - a[differ]) / (b[differ] - a[differ]))  # where the screens differ, m = a + t (b - a)
    assert 0.02 < t < 0.98
    assert np.abs(a + t * (b - a) - m)[differ].mean() < 3
    assert dev.shell("settings get global transition_animation_scale").strip() == "1.0"


def test_without_a_transition_the_screen_changes_at_once(server, dev):
    before = dev.shell(["screencap", "-p"], encoding=None)
    dev.shell(OPEN_SETTINGS)
    assert dev.shell(["screencap", "-p"], encoding=None) != before
    assert "APP_STATE_IDLE" in dev.shell("dumpsys window")
    assert dev.shell("settings get global transition_animation_scale").strip() == "0.0"


def test_a_late_grab_takes_seconds_and_returns_a_later_frame(server, dev):
    server.devices[0].configure(slow_grabs=1.0, slow_grab_delay=(0.8, 0.9))
    before = server.devices[0].phone.screenshot()
    changer = threading.Timer(0.3, lambda: server.devices[0].shell(OPEN_SETTINGS))
    t0 = time.monotonic()
    changer.start()
    late = dev.shell(["screencap", "-p"], encoding=None)
    took = time.monotonic() - t0
    changer.join()
    assert took >= 0.8 and late != before and late == server.devices[0].phone.screenshot()
    server.devices[0].configure(slow_grabs=0.3, slow_grab_delay=(0.01, 0.02))
    for _ in range(40):
        server.devices[0].shell("screencap -p")
    assert 4 <= server.devices[0].grabs.late <= 25  # about 30% of 40 (seeded), plus the first one


def test_dumpsys_power_answers_like_android_so_adbutils_sees_the_screen_on(server, dev):
    assert dev.is_screen_on() is True
    power = dev.shell("dumpsys power")
    assert "mWakefulness=Awake" in power and "Display Power: state=ON" in power
    control.apply(server.devices[0], "screen off")
    assert dev.is_screen_on() is False and "mWakefulness=Asleep" in dev.shell("dumpsys power")


@pytest.mark.parametrize("line,out", [
    ("echo $(getprop ro.serialno)", "emulator-5554\n"),
    ('S=$(getprop ro.serialno) && echo "serial=$S"', "serial=emulator-5554\n"),
    ('echo "$(echo a; echo b)"', "a\nb\n"),
    ("echo $(echo $(echo nested)) `echo quoted`", "nested quoted\n"),
    ("false && echo no || echo yes; echo after", "yes\nafter\n"),
    ("echo 'no $(substitution) here' \"x;y\" | grep -E 'no|x'", "no $(substitution) here x;y\n"),
    ("dumpsys window | grep mCurrentFocus | head -n 1 && echo ok",
     "  mCurrentFocus=Window{0 u0 com.google.android.apps.nexuslauncher/"
     "com.google.android.apps.nexuslauncher.NexusLauncherActivity}\nok\n"),
])
def test_stock_adb_shell_runs_the_common_shell_forms(server, tmp_path, line, out):
    r = stock_adb(server.port, tmp_path, "-s", "emulator-5554", "shell", line)
    assert (r.returncode, r.stdout.decode()) == (0, out), r.stderr


def test_input_takes_coordinates_from_a_command_substitution(server, dev, monkeypatch):
    done = []
    monkeypatch.setattr(server.devices[0], "_act", done.append)
    dev.shell("input tap $(echo 540 1200)")
    assert [a.to_dict() for a in done] == [{"type": "tap", "x": 540, "y": 1200}]


def test_control_takes_a_phone_offline_and_back_and_rotates_it(server, dev, tmp_path):
    assert control.send(server.port, "emulator-5554", "offline") == "emulator-5554 is offline"
    listing = stock_adb(server.port, tmp_path, "devices").stdout.decode()
    assert "emulator-5554\toffline" in listing
    r = stock_adb(server.port, tmp_path, "-s", "emulator-5554", "shell", "true")
    assert r.returncode != 0 and b"offline" in r.stderr
    control.send(server.port, "emulator-5554", "online")
    assert stock_adb(server.port, tmp_path, "-s", "emulator-5554", "shell", "true").returncode == 0
    control.send(server.port, "emulator-5554", "rotate 1")
    assert dev.rotation() == 1 and dev.window_size() == (2400, 1080)
    with pytest.raises(control.ControlError, match="unknown control command"):
        control.send(server.port, "emulator-5554", "explode")


def test_device_serve_rotates_and_device_control_switches_it_at_run_time(tmp_path):
    from typer.testing import CliRunner

    from phoneloop.cli import app

    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-c", "from phoneloop.cli import app; app()", "device", "serve",
                             "--port", str(port), "--rotate", "1", "--transition", "0.3"],
                            stderr=subprocess.PIPE, env=env)
    try:
        assert b"virtual adb server on" in proc.stderr.readline()
        shown = stock_adb(port, tmp_path, "-s", "emulator-5554", "shell", "dumpsys display | grep mCurrentOrientation")
        assert shown.stdout.decode().strip() == "mCurrentOrientation=1"
        runner = CliRunner()
        off = runner.invoke(app, ["device", "control", "emulator-5554", "offline", "--port", str(port)])
        assert off.exit_code == 0 and "offline" in off.output
        assert "emulator-5554\toffline" in stock_adb(port, tmp_path, "devices").stdout.decode()
        on = runner.invoke(app, ["device", "control", "emulator-5554", "online", "--port", str(port)])
        assert on.exit_code == 0
        assert "emulator-5554\tdevice" in stock_adb(port, tmp_path, "devices").stdout.decode()
    finally:
        proc.terminate()
        proc.wait(timeout=10)

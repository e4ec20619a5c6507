"""The protocol pieces real harnesses use, through adbutils' own helpers (never our wrappers)."""

import threading

import pytest
from adbutils.errors import AdbError

from datalake.types import Action
from mockphone.layout import Display
from mockphone.phone import MockPhone


def test_window_size_and_rotation_follow_the_display(dev, server):
    assert tuple(dev.window_size()) == (1080, 2400) and dev.rotation() == 0


@pytest.fixture
def landscape():
    from mockphone.adb import VirtualAdbServer

    s = VirtualAdbServer(phones=[MockPhone(seed=0, display=Display(width=2400, height=1080))]).start()
    s.devices[0].configure(rotation=1)
    yield s
    s.stop()


def test_landscape_window_size_is_rotated_and_wm_size_is_physical(landscape):
    from phones.adb_phone import client

    dev = client(port=landscape.port).device("emulator-5554")
    assert dev.rotation() == 1 and tuple(dev.window_size()) == (2400, 1080)
    assert dev.shell("wm size") == "Physical size: 1080x2400"
    assert 'rotation="1"' in dev.dump_hierarchy()[:200]


def test_shell2_without_v2_reads_exit_status_from_dollar_question(dev):
    ok, bad = dev.shell2("echo hi"), dev.shell2("false")
    assert (ok.returncode, ok.output) == (0, "hi\n") and bad.returncode == 1
    assert dev.shell2("nosuchcommand").returncode == 127


@pytest.mark.parametrize("line, out", [
    ("A=1; echo $A ${A}x \"$A\" '$A'", "1 1x 1 $A"), ("false; echo $?; true && echo ok || echo no", "1\nok"),
    ("false && echo never; echo after", "after"), ("echo $HOME $NOPE.", "/ ."), ("echo 'a;b' \"c&&d\"", "a;b c&&d"),
])
def test_shell_lines_behave_as_sh(dev, line, out):
    assert dev.shell(line) == out


def test_click_with_percentages_taps_the_scaled_point(dev, server):
    mock = server.devices[0].phone
    shop = next(e for e in __import__("datalake.uitree", fromlist=["x"]).parse_ui_tree(mock.ui_tree())
                if e.text == "Shop")
    x, y = shop.center
    dev.click(x / 1080, y / 2400)
    assert mock.nav.foreground == "com.phoneloop.shop"


@pytest.mark.parametrize("code", ["KEYCODE_HOME", "HOME", "home", "3"])
def test_keyevent_names_and_codes(dev, server, code):
    server.devices[0].phone.act(Action("open_app", app="shop"))
    assert dev.shell2(f"input keyevent {code}").returncode == 0
    assert server.devices[0].phone.nav.foreground is None


def test_unknown_keyevent_fails_and_harmless_ones_pass(dev):
    assert dev.shell2("input keyevent KEYCODE_VOLUME_UP").returncode == 0
    assert dev.shell2("input keyevent KEYCODE_NOPE").returncode != 0


def test_getprop_agrees_with_devices_l(adb, dev):
    info = next(d for d in adb.list(extended=True) if d.serial == "emulator-5554")
    assert info.tags["product"] == dev.getprop("ro.product.name")
    assert info.tags["model"] == dev.getprop("ro.product.model").replace(" ", "_").replace("(", "_").replace(")", "_")
    assert info.tags["device"] == dev.getprop("ro.product.device")


def test_wait_for_device_returns_when_the_phone_comes_back(adb, server):
    server.devices[0].state = "offline"
    threading.Timer(0.3, lambda: setattr(server.devices[0], "state", "device")).start()
    adb.wait_for("emulator-5554", state="device", timeout=10)
    assert server.devices[0].state == "device"


def test_forward_and_reverse_are_listed_and_removed(adb, dev):
    dev.forward("tcp:6100", "tcp:7100")
    assert [(f.serial, f.local, f.remote) for f in dev.forward_list()] == [("emulator-5554", "tcp:6100", "tcp:7100")]
    assert [f.local for f in adb.forward_list()] == ["tcp:6100"]
    dev.forward_remove("tcp:6100")
    assert dev.forward_list() == []
    dev.reverse("tcp:8000", "tcp:9000")
    assert [(r.remote, r.local) for r in dev.reverse_list()] == [("tcp:8000", "tcp:9000")]
    with pytest.raises(AdbError):
        dev.forward_remove("tcp:1")


def test_proc_uptime_is_the_getevent_clock(dev, server):
    up = float(dev.shell("cat /proc/uptime").split()[0])
    assert abs(up - server.devices[0].uptime()) < 0.5

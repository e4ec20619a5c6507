"""The virtual adb server through adbutils: host services, shell v1/v2, sync, device states, getevent."""

import struct
import threading

import pytest
from adbutils.errors import AdbError

from datalake.types import Action
from mockphone.adb import ADB_VERSION

from tests.adb.helpers import launcher_icon


def test_reports_version_41_so_stock_clients_keep_it(adb):
    assert adb.server_version() == ADB_VERSION == 41


def test_lists_every_phone_with_state_and_transport_id(adb, server):
    server.devices[1].state = "offline"
    infos = adb.list(extended=True)
    assert [(i.serial, i.state) for i in infos] == [("emulator-5554", "device"), ("emulator-5556", "offline")]
    assert infos[1].tags["transport_id"] == "2"


def test_get_state_and_serialno(dev):
    assert dev.get_state() == "device" and dev.get_serialno() == "emulator-5554"


def test_shell_v1_returns_stdout(dev):
    assert dev.shell("wm size") == "Physical size: 1080x2400"


def test_shell_v2_separates_stderr_and_exit_code(dev):
    r = dev.shell2("nosuchtool --x", v2=True)
    assert r.returncode == 127 and r.stdout == "" and "nosuchtool: inaccessible or not found" in r.stderr


@pytest.mark.parametrize("line, out, code", [
    ("false && echo no; echo yes", "yes\n", 0),
    ("false || echo fallback", "fallback\n", 0),
    ("getprop | grep -E 'model|serialno'", "[ro.product.model]: [Pixel 8 (mock)]\n[ro.serialno]: [emulator-5554]\n", 0),
    ("echo hidden > /sdcard/x; cat /sdcard/x", "hidden\n", 0),
    ("cat /nope 2>/dev/null", "", 1),
])
def test_shell_command_lists_redirections_and_grep(dev, line, out, code):
    r = dev.shell2(line, v2=True)
    assert (r.stdout, r.returncode) == (out, code)


def test_screenshot_is_the_phones_png(dev, server):
    png = dev.shell("screencap -p", encoding=None)
    assert png == server.devices[0].phone.screenshot()
    assert dev.screenshot().size == (1080, 2400)


def test_dump_hierarchy_round_trips_through_sync(dev, server):
    assert dev.dump_hierarchy() == server.devices[0].phone.ui_tree()


def test_uiautomator_dump_to_tty_prints_the_tree(dev, server):
    out = dev.shell("uiautomator dump /dev/tty")
    assert out.startswith("<?xml") and out.endswith("UI hierchary dumped to: /dev/tty")


def test_input_tap_opens_the_app_under_the_finger(dev, server):
    dev.click(*launcher_icon(server.devices[0].phone, "Shop"))
    assert dev.app_current().package == "com.phoneloop.shop"
    assert server.devices[0].phone.nav.foreground == "com.phoneloop.shop"


def test_monkey_and_am_start_open_apps(dev):
    dev.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert dev.app_current().package == "com.android.settings"
    dev.shell("am start -n com.phoneloop.notes/.MainActivity")
    assert dev.app_current().package == "com.phoneloop.notes"


def test_input_keyevent_home_and_back(dev, server):
    dev.shell("monkey -p com.android.settings 1")
    dev.shell("input keyevent KEYCODE_HOME")
    assert server.devices[0].phone.nav.foreground is None


def test_push_then_pull_round_trips_bytes(dev):
    payload = bytes(range(256)) * 600  # > one 64 KiB sync chunk
    dev.sync.push(payload, "/sdcard/blob.bin")
    assert dev.sync.read_bytes("/sdcard/blob.bin") == payload
    assert dev.sync.stat("/sdcard/blob.bin").size == len(payload)


def test_pull_of_missing_file_fails_with_its_name(dev):
    with pytest.raises(AdbError, match="/sdcard/none.txt"):
        dev.sync.read_bytes("/sdcard/none.txt")


def test_stat_of_missing_file_has_zero_mode(dev):
    assert dev.sync.stat("/sdcard/none.txt").mode == 0


def test_list_directory_shows_pushed_files(dev):
    dev.sync.push(b"a", "/sdcard/d/one.txt")
    assert [f.path for f in dev.sync.list("/sdcard/d")] == ["one.txt"]


@pytest.mark.parametrize("state, message", [("offline", "device offline"), ("unauthorized", "unauthorized")])
def test_unusable_device_fails_with_adbs_message(adb, server, state, message):
    server.devices[0].state = state
    with pytest.raises(AdbError, match=message):
        adb.device("emulator-5554").shell("echo hi")


def test_unknown_serial_is_not_found(adb):
    with pytest.raises(AdbError, match="not found"):
        adb.device("emulator-9999").shell("echo hi")


def test_getevent_p_describes_touch_axes(dev):
    out = dev.shell("getevent -lp")
    assert "ABS_MT_POSITION_X" in out and "max 4095" in out and "KEY_BACK" in out
    assert "0035  : value 0, min 0, max 4095" in dev.shell("getevent -p")


def test_getevent_lt_streams_replayed_gestures(dev, server):
    vd = server.devices[0]
    conn = dev.shell("getevent -lt", stream=True)
    try:
        while vd.listeners() == 0:
            threading.Event().wait(0.01)
        x, y = launcher_icon(vd.phone, "Shop")
        vd.perform(Action("tap", x=x, y=y))
        data = b""
        conn.conn.settimeout(10)
        while b"BTN_TOUCH            UP" not in data:
            data += conn.conn.recv(4096)
    finally:
        conn.close()
    text = data.decode()
    raw_x = int(x * 4096 / 1080)  # panel units 0..4095 (the natural orientation is portrait)
    assert "EV_KEY       BTN_TOUCH            DOWN" in text and f"ABS_MT_POSITION_X    {raw_x:08x}" in text
    assert vd.phone.nav.foreground == "com.phoneloop.shop"


def test_virtual_device_starts_and_checks_tasks(dev):
    from mockphone.tasks.registry import get

    assert dev.shell("phoneloop task start SettingsWifiOff 0") == get("SettingsWifiOff")(seed=0).goal
    assert dev.shell("phoneloop task check") == "0.0"
    dev.shell("svc wifi disable")
    assert dev.shell("phoneloop task check") == "1.0"


def test_tport_returns_transport_id(adb, server):
    with adb.make_connection() as c:
        c.send_command("host:tport:serial:emulator-5556")
        c.check_okay()
        assert struct.unpack("<Q", c.read(8))[0] == 2


def test_kill_is_acknowledged_and_server_keeps_serving(adb):
    with adb.make_connection() as c:
        c.send_command("host:kill")
        c.check_okay()
    assert adb.server_version() == 41


def test_refuses_non_loopback_bind():
    from mockphone.adb import VirtualAdbServer

    with pytest.raises(ValueError, match="loopback"):
        VirtualAdbServer(phones=1, host="0.0.0.0")


def test_track_devices_reports_state_changes(adb, server):
    events = adb.track_devices()
    first = [next(events), next(events)]
    assert {(e.serial, e.present) for e in first} == {("emulator-5554", True), ("emulator-5556", True)}
    server.devices[1].state = "offline"
    change = next(events)
    assert (change.serial, change.status) in {("emulator-5556", "absent"), ("emulator-5556", "offline")}
    events.close()

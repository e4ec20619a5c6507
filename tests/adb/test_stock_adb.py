"""The stock adb client (bundled in adbutils) against the virtual server: devices, shell, pull, push, exec-out."""

import pytest

from tests.adb.helpers import launcher_icon, stock_adb


@pytest.fixture
def run(server, tmp_path):
    def go(*args):
        return stock_adb(server.port, tmp_path, *args)
    return go


def test_stock_devices_lists_virtual_phones(run, server):
    server.devices[1].state = "unauthorized"
    r = run("devices")
    assert r.returncode == 0
    assert r.stdout.decode().splitlines()[1:3] == ["emulator-5554\tdevice", "emulator-5556\tunauthorized"]


def test_stock_shell_passes_output_and_exit_code(run):
    ok = run("-s", "emulator-5554", "shell", "wm", "density")
    bad = run("-s", "emulator-5554", "shell", "nosuch")
    assert (ok.returncode, ok.stdout) == (0, b"Physical density: 420\n")
    assert bad.returncode == 127 and b"inaccessible or not found" in bad.stderr


def test_stock_shell_quoted_command_line(run):
    r = run("-s", "emulator-5554", "shell", "getprop | grep serialno")
    assert r.stdout == b"[ro.serialno]: [emulator-5554]\n"


def test_stock_pull_of_ui_dump(run, server, tmp_path):
    run("-s", "emulator-5554", "shell", "uiautomator", "dump")
    r = run("-s", "emulator-5554", "pull", "/sdcard/window_dump.xml", str(tmp_path / "w.xml"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "w.xml").read_text() == server.devices[0].phone.ui_tree()


def test_stock_push_then_cat(run, tmp_path):
    (tmp_path / "note.txt").write_text("pushed by stock adb")
    assert run("-s", "emulator-5556", "push", str(tmp_path / "note.txt"), "/sdcard/note.txt").returncode == 0
    assert run("-s", "emulator-5556", "shell", "cat", "/sdcard/note.txt").stdout == b"pushed by stock adb"


def test_stock_exec_out_screencap_is_png(run, server):
    r = run("-s", "emulator-5554", "exec-out", "screencap", "-p")
    assert r.stdout == server.devices[0].phone.screenshot()


def test_stock_input_tap_drives_the_mock_phone(run, server):
    x, y = launcher_icon(server.devices[1].phone, "Settings")
    run("-s", "emulator-5556", "shell", "input", "tap", str(x), str(y))
    assert server.devices[1].phone.nav.foreground == "com.android.settings"


@pytest.mark.parametrize("state, message", [("unauthorized", b"device unauthorized"), ("offline", b"offline")])
def test_stock_client_reports_unusable_device(run, server, state, message):
    server.devices[0].state = state
    r = run("-s", "emulator-5554", "shell", "echo", "hi")
    assert r.returncode != 0 and message in r.stderr


def test_stock_client_unknown_serial(run):
    r = run("-s", "emulator-1234", "shell", "echo", "hi")
    assert r.returncode != 0 and b"'emulator-1234' not found" in r.stderr


def test_stock_client_does_not_replace_the_virtual_server(run, server, adb):
    run("devices")
    run("kill-server")
    assert adb.server_version() == 41 and len(adb.list()) == 2


def test_stock_shell_getevent_p_shows_touch_ranges(run):
    r = run("-s", "emulator-5554", "shell", "getevent", "-lp")
    assert r.returncode == 0 and b"ABS_MT_POSITION_Y" in r.stdout and b"max 4095" in r.stdout


def test_stock_wait_for_device_and_forward_list(run):
    assert run("-s", "emulator-5554", "wait-for-device").returncode == 0
    r = run("-s", "emulator-5554", "forward", "tcp:6101", "tcp:7101")
    assert r.returncode == 0, r.stderr
    listed = run("forward", "--list")
    assert listed.stdout.decode().split() == ["emulator-5554", "tcp:6101", "tcp:7101"]
    assert run("-s", "emulator-5554", "forward", "--remove-all").returncode == 0
    assert run("forward", "--list").stdout.strip() == b""


def test_stock_shell_expands_variables_and_exit_status(run):
    r = run("-s", "emulator-5554", "shell", "false; echo code=$?; X=hi; echo \"$X\" '$X'")
    assert r.stdout == b"code=1\nhi $X\n"

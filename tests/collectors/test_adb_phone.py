"""AdbPhone against the virtual adb server: observations, actions, text escaping, retries, faults."""

import socket

import pytest

from phones.adb_phone import AdbPhone
from phones.episode import OraclePolicy, run_episode
from phones.errors import (
    AdbServerUnreachable, BadScreenshot, BadUITree, DeviceNotFound, DeviceOffline, DeviceUnauthorized,
    UnsupportedAction, UntypeableText,
)
from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone.tasks import registry
from tests.adb.helpers import free_port


def field_text(mock, rid):
    return next(e.text for e in parse_ui_tree(mock.ui_tree()) if e.resource_id.endswith("/" + rid))


def test_observe_matches_the_mock_phone(adb_phone, server):
    mock = server.devices[0].phone
    obs, direct = adb_phone.observe(), mock.observe()
    assert obs.screenshot == direct.screenshot and obs.ui_tree == direct.ui_tree
    assert (obs.package, obs.activity) == (direct.package, direct.activity)


def test_device_reports_screen_facts_and_virtual_kind(adb_phone):
    d = adb_phone.device()
    assert (d.width, d.height, d.kind) == (1080, 2400, "mock")
    assert d.extra["dpi"] == 420 and d.extra["serial"] == "emulator-5554" and d.extra["rotation"] == 0


@pytest.mark.parametrize("text", [
    "hello world", "it's 5 o'clock", 'say "hi"; rm -rf * && echo $HOME `id` | cat > x', "100%s sure",
    "two  spaces", "%", "back\\slash", "(a) [b] {c} <d> ~!#^", "café 日本 🎉",
])
def test_input_text_arrives_exactly(adb_phone, server, text):
    adb_phone.act(Action("open_app", app="shop"))
    adb_phone.act(Action("input_text", text=text, x=540, y=315))
    assert field_text(server.devices[0].phone, "search") == text


def test_input_text_clear_replaces_field(adb_phone, server):
    adb_phone.act(Action("open_app", app="shop"))
    adb_phone.act(Action("input_text", text="old words", x=540, y=315))
    adb_phone.act(Action("input_text", text="new", x=540, y=315, clear=True))
    assert field_text(server.devices[0].phone, "search") == "new"


def test_control_characters_are_untypeable(adb_phone):
    with pytest.raises(UntypeableText, match="control character"):
        adb_phone.act(Action("input_text", text="line\nbreak"))


def test_non_ascii_without_adbkeyboard_says_how_to_fix(adb_phone, server):
    server.devices[0].adb_keyboard = False
    with pytest.raises(UntypeableText, match="ADBKeyBoard"):
        adb_phone.act(Action("input_text", text="naïve"))


def test_long_press_is_a_held_zero_distance_swipe(adb_phone, server):
    adb_phone.act(Action("open_app", app="contacts"))
    server.devices[0].phone.system.clipboard = "from clipboard"
    adb_phone.act(Action("long_press", x=540, y=315))  # long-pressing a field pastes; a tap would not
    assert field_text(server.devices[0].phone, "search") == "from clipboard"


def test_scroll_moves_the_list(adb_phone):
    adb_phone.act(Action("open_app", app="contacts"))
    before = adb_phone.ui_tree()
    adb_phone.act(Action("scroll", direction="down"))
    assert adb_phone.ui_tree() != before


@pytest.mark.parametrize("app, package", [("messages", "com.google.android.apps.messaging"),
                                          ("Shop", "com.phoneloop.shop"), ("com.android.settings", "com.android.settings")])
def test_open_app_resolves_labels_to_packages(adb_phone, app, package):
    adb_phone.act(Action("open_app", app=app))
    assert adb_phone.observe().package == package


def test_open_unknown_app_is_a_clear_error(adb_phone):
    with pytest.raises(UnsupportedAction, match="no single installed package"):
        adb_phone.act(Action("open_app", app="flightsim"))


def test_key_and_shell_actions(adb_phone, server):
    adb_phone.act(Action("open_app", app="settings"))
    adb_phone.act(Action("key", key="home"))
    result = adb_phone.act(Action("shell", command="settings get global wifi_on"))
    assert server.devices[0].phone.nav.foreground is None and result.output.strip() in ("0", "1")


def test_tool_action_on_a_phone_over_adb_is_an_error_result_not_a_raise(adb_phone):
    result = adb_phone.act(Action("tool", name="search", args={"q": "x"}))
    assert result.ok is False and "'search' is not a tool" in result.output


class ToolThenTerminate:
    name, source = "tool-happy", "agent"

    def __init__(self):
        self.plan = [Action("tool", name="weather.lookup", args={"city": "Oslo"}), Action("key", key="home"),
                     Action("terminate", status="success")]

    def act(self, instruction, observation, history):
        return self.plan.pop(0), None


def test_unknown_tool_on_a_phone_over_adb_is_an_error_step_and_the_episode_is_kept(adb_phone):
    episode = run_episode(adb_phone, ToolThenTerminate(), "Check the weather", max_steps=5)
    assert [s.action.type for s in episode.steps] == ["tool", "key", "terminate"]
    assert episode.meta["tool_errors"][0]["step"] == 0 and "weather.lookup" in episode.meta["tool_errors"][0]["error"]


def test_transient_dump_failures_are_retried(adb_phone, server):
    server.devices[0].faults.update(dump_idle=1, dump_null_root=1)
    assert adb_phone.observe().ui_tree == server.devices[0].phone.ui_tree()


@pytest.mark.parametrize("fault, message", [("dump_idle", "could not get idle state"), ("dump_garbage", "unparseable")])
def test_persistent_dump_failure_is_bad_ui_tree(adb_phone, server, fault, message):
    server.devices[0].faults[fault] = 50
    with pytest.raises(BadUITree, match=message):
        adb_phone.observe()


def test_screenshot_that_is_not_png_is_an_error(adb_phone, server):
    server.devices[0].faults["screencap_garbage"] = 1
    with pytest.raises(BadScreenshot, match="not a PNG"):
        adb_phone.observe()


@pytest.mark.parametrize("state, error", [("unauthorized", DeviceUnauthorized), ("offline", DeviceOffline)])
def test_unusable_device_is_refused_at_connect(server, state, error):
    server.devices[1].state = state
    with pytest.raises(error, match="emulator-5556"):
        AdbPhone("emulator-5556", port=server.port)


def test_unknown_serial_is_not_found(server):
    with pytest.raises(DeviceNotFound, match="emulator-5554, emulator-5556"):
        AdbPhone("R58M123", port=server.port)


def test_unreachable_server_is_reported_and_none_is_started():
    port = free_port()
    with pytest.raises(AdbServerUnreachable, match=f"127.0.0.1:{port}.*never starts one"):
        AdbPhone("emulator-5554", port=port)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # still nothing listening there


def test_device_going_offline_mid_command_raises_offline(adb_phone, server):
    server.devices[0].state = "offline"
    with pytest.raises(DeviceOffline):
        adb_phone.observe()


def test_oracle_episode_over_adb_is_verified_on_the_virtual_device(adb_phone):
    task = registry.get("NotesCreate")(seed=2)
    ep = run_episode(adb_phone, OraclePolicy(adb_phone, task), task, seed=2, max_steps=60)
    assert ep.outcome == "success" and ep.verified_by == "verifier" and ep.device.kind == "mock"
    assert ep.device.extra["serial"] == "emulator-5554"


class GoesOfflineAfter:
    name, source = "scripted", "agent"

    def __init__(self, server, n):
        self.server, self.n = server, n

    def act(self, instruction, observation, history):
        if len(history) == self.n:
            self.server.devices[0].state = "offline"
        return Action("key", key="home"), None


def test_phone_offline_mid_episode_fails_with_reason(adb_phone, server):
    ep = run_episode(adb_phone, GoesOfflineAfter(server, 2), "press home", reset=False, max_steps=10)
    assert ep.outcome == "failure" and "offline" in ep.meta["failure_reason"] and len(ep.steps) == 3


def test_observe_settles_on_a_screen_that_stops_changing(adb_phone, server):
    server.devices[0].faults["dump_unstable"] = 3
    assert adb_phone.observe().ui_tree == server.devices[0].phone.ui_tree()
    assert server.devices[0].faults["dump_unstable"] == 0


def test_wait_until_stable_gives_up_after_timeout(adb_phone, server):
    server.devices[0].faults["dump_unstable"] = 1000
    assert adb_phone.wait_until_stable(timeout=0.3, interval=0.01) is False
    server.devices[0].faults["dump_unstable"] = 0
    assert adb_phone.wait_until_stable(timeout=5, interval=0.01) is True


def test_collect_with_a_bad_dump_reports_the_error_and_writes_nothing(server, lake):
    from collectors.collect import collect

    phone = AdbPhone("emulator-5554", port=server.port, retry_delay=0.0, dump_retries=1)
    server.devices[0].faults["dump_garbage"] = 1000
    report = collect(lake, phone, OraclePolicy.factory, ["SettingsWifiOff"])
    assert report.written == 0 and "SettingsWifiOff seed 0" in report.errors[0] and "unparseable" in report.errors[0]
    assert lake.sql("SELECT count(*) AS n FROM episodes").to_pylist() == [{"n": 0}]


@pytest.mark.parametrize("dumpsys, expected", [
    ("  mCurrentFocus=Window{c4b3a2f u0 com.android.settings/com.android.settings.Settings}\n",
     ("com.android.settings", ".Settings")),
    ("  mCurrentFocus=Window{1f2e u0 PopupWindow:3d1c}\n"
     "  mFocusedApp=ActivityRecord{7d0c1b4 u0 com.whatsapp/.HomeActivity t123}\n", ("com.whatsapp", ".HomeActivity")),
    ("  mCurrentFocus=null\n", (None, None)),
])
def test_focus_is_read_from_real_dumpsys_lines(dumpsys, expected):
    from phones.adb_phone import _focus

    assert _focus(dumpsys) == expected


def test_screen_facts_prefer_override_size_and_mark_real_phones_real(adb_phone):
    adb_phone.run = lambda command: ("Physical size: 1080x2400\nOverride size: 720x1600\nPhysical density: 420\n"
                                     "Override density: 320\n__model__\nPixel 7\n__mock__\n\n")
    adb_phone._facts = None
    d = adb_phone.device()
    assert (d.width, d.height, d.extra["dpi"], d.extra["model"], d.kind) == (720, 1600, 320, "Pixel 7", "real")

"""Every action type has a defined effect; the shell subset works and unknown commands fail like sh."""

import pytest

from datalake.types import ACTION_TYPES, Action
from mockphone.phone import ActResult
from tests.mockphone.helpers import elements, find

SAMPLES = {
    "tap": Action("tap", x=540, y=1200), "double_tap": Action("double_tap", x=540, y=1200),
    "long_press": Action("long_press", x=540, y=1200), "swipe": Action("swipe", x=540, y=20, x2=540, y2=1500),
    "scroll": Action("scroll", direction="down"), "input_text": Action("input_text", text="hi"),
    "key": Action("key", key="home"), "open_app": Action("open_app", app="clock"), "wait": Action("wait"),
    "answer": Action("answer", text="x"), "ask_user": Action("ask_user", text="?"),
    "shell": Action("shell", command="echo hi"), "tool": Action("tool", name="nope"),
    "terminate": Action("terminate", status="success"),
}


def test_samples_cover_the_whole_vocabulary():
    assert set(SAMPLES) == set(ACTION_TYPES)


@pytest.mark.parametrize("kind", ACTION_TYPES)
def test_every_action_type_has_a_defined_effect(phone, kind):
    before = phone.system_state().clock_s
    result = phone.act(SAMPLES[kind])
    assert isinstance(result, ActResult) and result.detail
    assert phone.system_state().clock_s > before


def run(phone, command):
    return phone.act(Action("shell", command=command))


def test_am_start_opens_component(phone):
    r = run(phone, "am start -n com.android.settings/.Settings")
    assert r.exit_code == 0 and phone.nav.foreground == "com.android.settings"


def test_am_start_unknown_component_errors(phone):
    r = run(phone, "am start -n com.example.nothing/.Main")
    assert r.exit_code == 1 and "does not exist" in r.output


def test_monkey_launches_and_force_stop_clears_stack(phone):
    assert run(phone, "monkey -p com.phoneloop.notes -c android.intent.category.LAUNCHER 1").exit_code == 0
    assert phone.nav.foreground == "com.phoneloop.notes"
    run(phone, "am force-stop com.phoneloop.notes")
    assert phone.nav.foreground is None and "com.phoneloop.notes" not in phone.nav.stacks


def test_settings_put_get_and_effect_on_status_bar(phone):
    assert run(phone, "settings get global wifi_on").output == "1"
    assert any(e.content_desc.startswith("Wifi") for e in elements(phone))
    run(phone, "settings put global wifi_on 0")
    assert run(phone, "settings get global wifi_on").output == "0"
    assert all(not e.content_desc.startswith("Wifi") for e in elements(phone))
    assert run(phone, "settings get global no_such_key").output == "null"


def test_settings_bad_namespace_is_usage_error(phone):
    r = run(phone, "settings put galactic wifi_on 1")
    assert r.exit_code == 1 and "usage" in r.output


def test_svc_toggles_radios(phone):
    run(phone, "svc bluetooth enable")
    assert phone.system_state().flag("global/bluetooth_on")


def test_input_subcommands_drive_the_ui(phone):
    run(phone, "am start -n com.android.contacts/.PeopleActivity")
    x, y = find(phone, rid="search").center
    run(phone, f"input tap {x} {y}")
    run(phone, "input text Maya%sK")
    assert find(phone, rid="search").text == "Maya K"
    run(phone, "input keyevent KEYCODE_BACK")
    run(phone, "input keyevent 3")
    assert phone.nav.foreground is None


@pytest.mark.parametrize("command,expected", [
    ("wm size", "Physical size: 1080x2400"), ("wm density", "Physical density: 420"),
    ("getprop ro.build.version.sdk", "34"), ("date", "Mon Mar 02 09:00:00 UTC 2026"), ("echo a b", "a b"),
])
def test_read_only_commands(phone, command, expected):
    assert run(phone, command).output == expected


def test_pm_list_packages_lists_installed_apps(phone):
    out = run(phone, "pm list packages shop").output
    assert out == "package:com.phoneloop.shop"


def test_unknown_command_fails_like_sh(phone):
    r = run(phone, "rm -rf /sdcard")
    assert (r.exit_code, r.output) == (127, "/system/bin/sh: rm: inaccessible or not found")
    assert not r.ok


def test_unbalanced_quotes_are_a_syntax_error(phone):
    assert run(phone, "echo 'oops").exit_code == 2


def test_uiautomator_dump_then_cat_returns_the_tree(phone):
    r = run(phone, "uiautomator dump /sdcard/ui.xml")
    assert r.output == "UI hierchary dumped to: /sdcard/ui.xml"
    assert run(phone, "cat /sdcard/ui.xml").output == phone.ui_tree()
    assert run(phone, "cat /sdcard/missing.xml").exit_code == 1

"""The device farm over the virtual adb server: listing, one worker per phone, unusable phones."""

import pytest

from collectors.errors import AdbServerUnreachable
from collectors.farm import collect_on_devices, list_phones, load_policy_factory
from tests.adb.helpers import free_port


def test_list_phones_gives_state_and_screen_facts(server):
    server.devices[1].state = "unauthorized"
    rows = list_phones(port=server.port)
    assert [(r.serial, r.state) for r in rows] == [("emulator-5554", "device"), ("emulator-5556", "unauthorized")]
    assert (rows[0].width, rows[0].height, rows[0].dpi, rows[0].kind) == (1080, 2400, 420, "mock")
    assert rows[1].width is None


def test_list_phones_on_dead_server_says_so():
    with pytest.raises(AdbServerUnreachable, match="no adb server answers"):
        list_phones(port=free_port())


def test_collect_on_two_phones_writes_verified_episodes_and_survives_an_unusable_one(server, lake):
    server.devices[1].state = "offline"
    report = collect_on_devices(lake, ["emulator-5554", "emulator-5556"], ["SettingsWifiOff", "NotesCreate"],
                                seeds=[0], port=server.port)
    assert report.written == 1 and report.outcomes == {"success": 1}
    assert len(report.errors) == 1 and "emulator-5556" in report.errors[0] and "offline" in report.errors[0]
    row = lake.sql("SELECT task, outcome, verified_by FROM episodes").to_pylist()
    assert row == [{"task": "SettingsWifiOff", "outcome": "success", "verified_by": "verifier"}]


def test_policy_spec_must_name_a_callable():
    with pytest.raises(ValueError, match="module:callable"):
        load_policy_factory("nonsense")


def test_phone_dropping_off_mid_run_fails_that_episode_and_the_run_continues(server, lake):
    server.devices[0].offline_after = 12  # a few steps into its first episode
    report = collect_on_devices(lake, ["emulator-5554", "emulator-5556"], ["SettingsWifiOff", "NotesCreate"],
                                seeds=[0, 1], port=server.port)
    rows = lake.sql("SELECT task, outcome, meta_json FROM episodes ORDER BY outcome").to_pylist()
    failed = [r for r in rows if r["outcome"] == "failure"]
    assert len(failed) == 1 and "offline" in failed[0]["meta_json"]
    assert sum(r["outcome"] == "success" for r in rows) == 2  # emulator-5556 did both of its jobs
    assert len(report.errors) == 1 and "emulator-5554" in report.errors[0]  # its next job could not start

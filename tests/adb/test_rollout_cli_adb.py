"""`phoneloop rollout` and `phoneloop eval` on another host's adb server (--adb), leased, and honest exit codes."""

import json

from typer.testing import CliRunner

from fleet.leases import Leases
from phoneloop.cli import app

runner = CliRunner()


def test_rollout_takes_adb_host_and_port(server, lake, leases):
    result = runner.invoke(app, ["rollout", "--policy", "oracle", "--tasks", "ClockAddAlarm,SettingsWifiOn",
                                 "--phones", "adb:emulator-5554,emulator-5556", "--adb", f"127.0.0.1:{server.port}",
                                 "--lake", lake.uri, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outcomes"] == {"success": 2}
    phones = {json.loads(r["device_json"])["serial"] for r in lake.sql("SELECT device_json FROM episodes").to_pylist()}
    assert phones == {"emulator-5554", "emulator-5556"}
    assert not list(leases.glob("*.lease"))  # given back


def test_eval_takes_adb_host_and_port(server, lake):
    result = runner.invoke(app, ["eval", "--policies", "oracle", "--tasks", "SettingsWifiOn", "--episodes", "1",
                                 "--phones", "adb:emulator-5554", "--adb", f"127.0.0.1:{server.port}",
                                 "--lake", lake.uri])
    assert result.exit_code == 0, result.output
    rows = lake.sql("SELECT outcome, purpose FROM episodes").to_pylist()
    assert rows == [{"outcome": "success", "purpose": "eval"}]


def test_rollout_on_a_leased_phone_fails_naming_the_holder(server, lake, leases):
    label = f"127.0.0.1:{server.port}/emulator-5556"
    with Leases.take([label], command="phoneloop collect run --task app:clock"):
        result = runner.invoke(app, ["rollout", "--policy", "oracle", "--tasks", "SettingsWifiOn", "--phones",
                                     "adb:emulator-5554,emulator-5556", "--adb-port", str(server.port),
                                     "--lake", lake.uri])
    out = " ".join(result.output.split())
    assert result.exit_code == 2 and f"{label} is leased by pid" in out and "collect run --task app:clock" in out
    assert lake.sql("SELECT count(*) AS n FROM episodes").to_pylist() == [{"n": 0}]


def test_rollout_exits_1_when_a_job_ended_with_no_episode(server, lake):
    # the only phone's cable is pulled during the second job (60 device requests in): the first job has its
    # episode, the second cannot get one (no other phone to retry on); which job runs first is not fixed
    server.devices[0].offline_after = 60
    result = runner.invoke(app, ["rollout", "--policy", "oracle", "--tasks", "SettingsWifiOn,ClockAddAlarm",
                                 "--phones", "adb:emulator-5554", "--adb-port", str(server.port),
                                 "--lake", lake.uri])
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert "1 of 2 job(s) ended with no episode" in out and "device offline" in out
    [done] = lake.sql("SELECT task FROM episodes WHERE outcome = 'success'").column("task").to_pylist()
    missing = ({"SettingsWifiOn", "ClockAddAlarm"} - {done}).pop()
    assert f"{missing} seed 0" in out

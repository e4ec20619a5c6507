"""`phoneloop device serve`, `phoneloop devices`, `phoneloop collect run` as a user runs them."""

import json
import os
import subprocess
import sys
import time

from typer.testing import CliRunner

from phoneloop.cli import app
from phones.adb_phone import client
from phones.errors import AdbServerUnreachable
from tests.adb.helpers import free_port

runner = CliRunner()


def test_devices_lists_virtual_phones_as_json(server):
    server.devices[1].state = "offline"
    result = runner.invoke(app, ["devices", "--port", str(server.port), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["serial"], r["state"], r["width"]) for r in rows] == [("emulator-5554", "device", 1080),
                                                                      ("emulator-5556", "offline", None)]


def test_devices_without_server_fails_clearly():
    result = runner.invoke(app, ["devices", "--port", str(free_port())])
    assert result.exit_code == 2 and "no adb server answers" in result.output


def test_collect_run_on_mock_phone_writes_to_lake(lake):
    result = runner.invoke(app, ["collect", "run", "--task", "SettingsWifiOff", "--seeds", "2", "--lake", lake.uri,
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["written"] == 2 and report["outcomes"] == {"success": 2}


def test_collect_run_over_adb_serials(server, lake):
    result = runner.invoke(app, ["collect", "run", "--task", "SettingsWifiOff", "--lake", lake.uri, "--serial",
                                 "emulator-5556", "--port", str(server.port), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["written"] == 1
    device = json.loads(lake.sql("SELECT device_json FROM episodes").to_pylist()[0]["device_json"])
    assert device["serial"] == "emulator-5556" and device["kind"] == "mock"


def test_collect_run_unknown_task_is_an_error(lake):
    result = runner.invoke(app, ["collect", "run", "--task", "NoSuchTask", "--lake", lake.uri])
    assert result.exit_code == 2 and "NoSuchTask" in result.output


def test_device_serve_runs_a_server_the_clients_can_use():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "device", "serve", "--port", str(port),
                             "--phones", "3"], stderr=subprocess.PIPE, env=os.environ.copy())
    try:
        adb = client(port=port)
        for _ in range(200):
            try:
                infos = adb.list()
                break
            except AdbServerUnreachable:  # still starting
                time.sleep(0.05)
        assert [i.serial for i in infos] == ["emulator-5554", "emulator-5556", "emulator-5558"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_record_with_nothing_done_and_failure_mark_writes_nothing(server, lake):
    result = runner.invoke(app, ["collect", "record", "--serial", "emulator-5554", "--instruction", "open notes",
                                 "--lake", lake.uri, "--port", str(server.port)], input="\nn\n")
    assert result.exit_code == 2 and "nothing was recorded" in result.output
    assert lake.sql("SELECT count(*) AS n FROM episodes").to_pylist() == [{"n": 0}]


def test_record_success_mark_writes_a_human_episode(server, lake):
    result = runner.invoke(app, ["collect", "record", "--serial", "emulator-5554", "--instruction", "stay home",
                                 "--lake", lake.uri, "--port", str(server.port)], input="\ny\n")
    assert result.exit_code == 0, result.output
    row = lake.sql("SELECT source, outcome, verified_by FROM episodes").to_pylist()
    assert row == [{"source": "human", "outcome": "success", "verified_by": "human"}]


def test_record_on_unauthorized_phone_fails_clearly(server, lake):
    server.devices[0].state = "unauthorized"
    result = runner.invoke(app, ["collect", "record", "--serial", "emulator-5554", "--instruction", "x",
                                 "--lake", lake.uri, "--port", str(server.port)], input="\ny\n")
    assert result.exit_code == 2 and "unauthorized" in result.output


def test_collect_run_over_adb_without_server_fails_fast(lake):
    result = runner.invoke(app, ["collect", "run", "--task", "SettingsWifiOff", "--lake", lake.uri, "--serial",
                                 "emulator-5554", "--port", str(free_port())])
    assert result.exit_code == 2 and "no adb server answers" in result.output

"""The farm the way it fails in the field: hosts killed mid-job, jobs that raise, oracles that need more than the tree."""

import json
import os
import subprocess
import sys
import time

from typer.testing import CliRunner

from collectors.farm import collect_on_devices
from phoneloop.cli import app
from phones.adb_phone import client
from phones.episode import OraclePolicy
from phones.errors import AdbServerUnreachable
from tests.adb.helpers import free_port

runner = CliRunner()
FAST = dict(backoff=0.02, reconnects=2)
DISTINCT = ["NotesCreate", "ContactsAdd"]  # every (task, seed) gives different content

KILL: dict[str, subprocess.Popen] = {}  # adb address -> the `device serve` process to kill mid-job there
RAISED: set[str] = set()  # jobs whose first attempt raised


def serve(phones: int = 1) -> tuple[subprocess.Popen, int]:
    """A real `phoneloop device serve` process, once it answers."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "device", "serve", "--port", str(port),
                             "--phones", str(phones)], stderr=subprocess.DEVNULL, env=os.environ.copy())
    adb = client(port=port)
    for _ in range(600):
        try:
            adb.list()
            return proc, port
        except AdbServerUnreachable:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("device serve did not start")


class _KillsItsHost:
    """The oracle, except that before its third action the host serving the phone is killed (SIGKILL)."""

    source = "oracle"

    def __init__(self, phone, task, proc):
        self.inner, self.proc, self.calls = OraclePolicy(phone, task), proc, 0
        self.name = self.inner.name

    def act(self, instruction, observation, history):
        self.calls += 1
        if self.calls == 3 and self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
        return self.inner.act(instruction, observation, history)


def killing_oracle(phone, task):
    return _KillsItsHost(phone, task, KILL.pop(phone.address, None))


def flaky_oracle(phone, task):
    """Raises (not a phone error) on each job's first attempt, then behaves."""
    key = f"{task.name()}:{json.dumps(task.params, sort_keys=True)}"
    if key not in RAISED:
        RAISED.add(key)
        raise RuntimeError(f"policy blew up on {key}")
    return OraclePolicy(phone, task)


def broken_policy(phone, task):
    raise KeyError("no such prompt")


def episodes(lake):
    return [{**r, "meta": json.loads(r["meta_json"])} for r in
            lake.sql("SELECT task, outcome, verified_by, meta_json, num_steps FROM episodes").to_pylist()]


def test_host_killed_mid_job_keeps_the_cut_attempt_and_runs_every_job_once(lake):
    (a, port_a), (b, port_b) = serve(), serve()
    try:
        KILL[f"127.0.0.1:{port_a}"] = a
        report = collect_on_devices(lake, [], DISTINCT, seeds=[0, 1], adb=[f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"],
                                    policy="tests.collectors.test_farm_field:killing_oracle", **FAST)
    finally:
        for proc in (a, b):
            proc.kill()
            proc.wait(10)
    assert a.returncode is not None and not KILL  # the host was killed, during a job
    got = episodes(lake)
    complete = sorted((r["task"], r["meta"]["seed"], r["outcome"]) for r in got if not r["meta"].get("partial"))
    assert complete == sorted((t, s, "success") for t in DISTINCT for s in (0, 1))
    cut = [r for r in got if r["meta"].get("partial")]
    assert len(cut) == 1 and cut[0]["meta"]["failure_reason"] in ("host_unreachable", "device_offline")
    assert (cut[0]["outcome"], cut[0]["verified_by"], cut[0]["meta"]["adb"]) == ("unknown", "none",
                                                                                 f"127.0.0.1:{port_a}")
    assert cut[0]["num_steps"] >= 2 and cut[0]["meta"]["offline_detail"]  # the steps before the kill, and why
    assert report.failed_jobs == [] and report.dropped == 1


def test_a_job_that_raises_is_retried_on_another_phone(server, lake):
    RAISED.clear()
    report = collect_on_devices(lake, [], DISTINCT, seeds=[0], port=server.port,
                                policy="tests.collectors.test_farm_field:flaky_oracle", **FAST)
    got = episodes(lake)
    assert sorted((r["task"], r["outcome"]) for r in got) == sorted((t, "success") for t in DISTINCT)
    assert report.failed_jobs == [] and len(RAISED) == 2
    assert sum("RuntimeError: policy blew up" in e for e in report.errors) == 2
    for r in got:  # the retry ran on the other phone (a worker hands back once a job it failed)
        assert r["meta"]["attempt"] == 2


def test_collect_run_exits_1_naming_jobs_that_never_got_an_episode(server, lake):
    result = runner.invoke(app, ["collect", "run", "--task", "SettingsWifiOff", "--seeds", "2", "--lake", lake.uri,
                                 "--port", str(server.port), "--serial", "emulator-5554", "--serial", "emulator-5556",
                                 "--attempts", "2", "--policy", "tests.collectors.test_farm_field:broken_policy"])
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert "2 job(s) ended with no episode" in out
    for seed in (0, 1):
        assert f"SettingsWifiOff seed {seed}: gave up after 2 attempt(s)" in out
    assert "KeyError" in out
    assert lake.sql("SELECT count(*) AS n FROM episodes").to_pylist() == [{"n": 0}]


def test_oracles_that_open_the_notification_shade_work_over_adb(server, lake):
    shade = ["NotificationReply", "SettingsBluetoothOn"]  # they read the phone's display to swipe the shade down
    report = collect_on_devices(lake, [], shade, seeds=[0], port=server.port, **FAST)
    assert report.failed_jobs == [] and report.outcomes == {"success": 2}, report.errors


def test_the_readme_farm_command_runs_every_job_once_and_exits_0(lake):
    (a, port_a), (b, port_b) = serve(2), serve(2)
    try:
        result = runner.invoke(app, ["collect", "run", "--task", "app:settings", "--seeds", "1", "--lake", lake.uri,
                                     "--adb", f"127.0.0.1:{port_a}", "--adb", f"127.0.0.1:{port_b}", "--json"])
    finally:
        for proc in (a, b):
            proc.kill()
            proc.wait(10)
    assert result.exit_code == 0, result.output
    from mockphone.tasks import registry

    names = sorted(cls.name() for cls in registry.select("app:settings"))
    rows = episodes(lake)
    assert sorted(r["task"] for r in rows) == names  # each job once, none dropped
    assert json.loads(result.stdout)["failed_jobs"] == []

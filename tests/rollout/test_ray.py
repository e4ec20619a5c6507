"""`--backend ray`: one Ray actor per phone on a local Ray cluster, the same guarantees as the local runner."""

from __future__ import annotations

import os
from dataclasses import replace
import subprocess
import sys
import threading
import time

import json

import pytest
import ray
from typer.testing import CliRunner

from datalake.lake import Lake
from fleet.errors import BadBackend
from phoneloop.cli import app
from rollout.runner import rollout
from rollout.spec import RolloutSpec
from tests.adb.conftest import server  # noqa: F401  (the virtual adb server fixture)
from tests.factory import ray_seeing_phones

TASKS = "app:clock&category:single-app"


SERIALS = ("emulator-5554", "emulator-5556")  # the virtual adb server's phones


@pytest.fixture(scope="module")
def ray_cluster():
    """A local cluster whose one node "sees" the virtual adb server's two phones."""
    ray_seeing_phones(SERIALS)
    yield
    ray.shutdown()


def _ids(lake: Lake) -> dict[str, str]:
    rows = lake.sql("SELECT episode_id, outcome FROM episodes").to_pylist()
    return {r["episode_id"]: r["outcome"] for r in rows}


def test_ray_backend_writes_the_same_episodes_as_the_local_runner(ray_cluster, tmp_path):
    spec = RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:2", episodes=1, run_id="same-run")
    local, remote = Lake.init(tmp_path / "local"), Lake.init(tmp_path / "ray")
    a = rollout(local.uri, spec)
    b = rollout(remote.uri, replace(spec, backend="ray"))
    assert a.errors == [] and b.errors == [], (a.errors, b.errors)
    assert b.episodes == a.episodes > 0
    assert _ids(Lake.open(remote.uri)) == _ids(Lake.open(local.uri))  # same ids, same verified outcomes
    again = rollout(remote.uri, replace(spec, backend="ray"))
    assert again.episodes == 0 and again.skipped == a.episodes  # a rerun doubles nothing


def test_a_killed_actor_loses_no_finished_episode_and_its_jobs_move(ray_cluster, tmp_path):
    lake = Lake.init(tmp_path / "lake")
    spec = RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:2", episodes=2, run_id="kill-run", backend="ray")
    killed: list[str] = []

    def kill_one(report):
        if report.episodes >= 1 and not killed:
            killed.append("mock-0")
            threading.Thread(target=lambda: ray.kill(ray.get_actor(f"phoneloop-{report.rollout_id}-mock-0"))).start()

    report = rollout(lake.uri, spec, progress=kill_one)
    assert killed and report.worker_deaths == 1
    from rollout.spec import jobs_for

    expected = len(jobs_for(spec))
    rows = Lake.open(lake.uri).sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed FROM episodes "
                                   "WHERE failure_reason IS NULL OR failure_reason <> 'device_offline'").to_pylist()
    assert sorted((r["task"], r["seed"]) for r in rows) == sorted(jobs_for(spec))  # every job, once
    assert len(rows) == expected


def test_an_unreachable_ray_address_is_a_clear_error(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    code = ("import sys; from rollout.runner import rollout; from rollout.spec import RolloutSpec\n"
            "from fleet.errors import BackendUnavailable\n"
            "try:\n"
            f"    rollout({lake.uri!r}, RolloutSpec(policy='oracle', tasks={TASKS!r}, phones='mock:1', backend='ray',"
            " address='127.0.0.1:9'))\n"
            "except BackendUnavailable as exc:\n    print('ERR', exc); sys.exit(3)\n")
    env = {**os.environ, "RAY_ADDRESS": ""}
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 3, out.stderr[-2000:]
    assert "127.0.0.1:9" in out.stdout and time.monotonic() - start < 60


def test_local_backend_refuses_an_address(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    with pytest.raises(BadBackend, match="--address is for --backend ray"):
        rollout(lake.uri, RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:1", address="auto"))


# --- collect mock / collect run on Ray: the same Pool as rollouts ------------------------------
def _mock_ids(lake: Lake) -> dict[str, tuple]:
    rows = lake.sql("SELECT episode_id, task, outcome, json_extract(meta_json, '$.seed')::INT AS seed "
                    "FROM episodes").to_pylist()
    return {r["episode_id"]: (r["task"], r["seed"], r["outcome"]) for r in rows}


def test_collect_mock_on_ray_actors_writes_what_the_local_workers_write(ray_cluster, tmp_path):
    from collectors.mock_collect import MockCollectSpec, collect_mock

    spec = MockCollectSpec(tasks=TASKS, episodes=4, workers=2, noise=0.3, detours=0.5, seed=3, batch=2)
    local, remote = Lake.init(tmp_path / "local"), Lake.init(tmp_path / "ray")
    a = collect_mock(local.uri, spec)
    result = CliRunner().invoke(app, ["collect", "mock", "--tasks", TASKS, "--episodes", "4", "--workers", "2",
                                      "--noise", "0.3", "--detours", "0.5", "--seed", "3", "--backend", "ray",
                                      "--lake", remote.uri, "--json"])
    assert result.exit_code == 0, result.output
    b = json.loads(result.stdout)
    assert a.errors == [] and b["errors"] == [] and a.written == b["written"] == 4
    assert _mock_ids(Lake.open(remote.uri)) == _mock_ids(Lake.open(local.uri))  # same ids, same content
    again = collect_mock(remote.uri, replace(spec, backend="ray"))
    assert again.written == 0 and again.skipped == 4  # a rerun doubles nothing


def test_collect_mock_on_ray_a_killed_actor_loses_nothing_and_its_job_moves(ray_cluster, tmp_path):
    from collectors.mock_collect import MockCollectSpec, collect_mock, jobs_for

    lake = Lake.init(tmp_path / "lake")
    spec = MockCollectSpec(tasks=TASKS, episodes=6, workers=2, backend="ray", batch=4, flush_s=30.0)
    killed: list[int] = []

    def kill_one(report):  # worker 0 holds unwritten episodes (batch 4) when it dies
        if report.episodes >= 2 and report.running.get(0) and not killed:
            killed.append(0)
            threading.Thread(target=lambda: ray.kill(_actor_named("-0"))).start()

    report = collect_mock(lake.uri, spec, progress=kill_one)
    assert killed and any("worker 0 died" in e for e in report.errors), report.errors
    got = sorted((t, s) for t, s, _ in _mock_ids(Lake.open(lake.uri)).values())
    assert got == sorted(jobs_for(spec))  # every job once: the lost ones ran again, none twice


def _actor_named(suffix: str):
    names = [n for n in ray.util.list_named_actors() if n.startswith("phoneloop-") and n.endswith(suffix)]
    return ray.get_actor(names[0])


def test_collect_run_on_ray_pins_each_phone_and_retries_a_dropped_episode(ray_cluster, server, tmp_path):
    from collectors.farm import collect_on_devices

    lake = Lake.init(tmp_path / "lake")
    server.devices[0].offline_after = 12  # a few steps into its first episode
    report = collect_on_devices(lake, list(SERIALS), ["NotesCreate", "ContactsAdd"], seeds=[0, 1],
                                port=server.port, backoff=0.02, reconnects=2, backend="ray")
    rows = Lake.open(lake.uri).sql("SELECT task, outcome, json_extract_string(meta_json, '$.failure_reason') AS "
                                   "failure_reason, json_extract_string(meta_json, '$.serial') AS serial "
                                   "FROM episodes").to_pylist()
    done = [r for r in rows if r["failure_reason"] != "device_offline"]
    assert sorted((r["task"], r["outcome"]) for r in done) == sorted(
        (t, "success") for t in ("NotesCreate", "ContactsAdd") for _ in (0, 1))
    assert report.dropped == 1 and [r["serial"] for r in rows if r["failure_reason"] == "device_offline"] == [
        SERIALS[0]]
    assert {r["serial"] for r in done} <= set(SERIALS)

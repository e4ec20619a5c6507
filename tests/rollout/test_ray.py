"""`--backend ray`: one Ray actor per phone on a local Ray cluster, the same guarantees as the local runner."""

from __future__ import annotations

import os
from dataclasses import replace
import subprocess
import sys
import threading
import time

import pytest
import ray

from datalake.lake import Lake
from rollout.errors import RolloutError
from rollout.runner import RolloutSpec, rollout

TASKS = "app:clock&category:single-app"


@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
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
    from rollout.runner import jobs_for

    expected = len(jobs_for(spec))
    rows = Lake.open(lake.uri).sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed FROM episodes "
                                   "WHERE failure_reason IS NULL OR failure_reason <> 'device_offline'").to_pylist()
    assert sorted((r["task"], r["seed"]) for r in rows) == sorted(jobs_for(spec))  # every job, once
    assert len(rows) == expected


def test_an_unreachable_ray_address_is_a_clear_error(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    code = ("import sys; from rollout.runner import RolloutSpec, rollout; from rollout.errors import RolloutError\n"
            "try:\n"
            f"    rollout({lake.uri!r}, RolloutSpec(policy='oracle', tasks={TASKS!r}, phones='mock:1', backend='ray',"
            " address='127.0.0.1:9'))\n"
            "except RolloutError as exc:\n    print('ERR', exc); sys.exit(3)\n")
    env = {**os.environ, "RAY_ADDRESS": ""}
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 3, out.stderr[-2000:]
    assert "127.0.0.1:9" in out.stdout and time.monotonic() - start < 60


def test_local_backend_refuses_an_address(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    with pytest.raises(RolloutError, match="--address is for --backend ray"):
        rollout(lake.uri, RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:1", address="auto"))

"""A real two-node Ray cluster on 127.0.0.1 (a head and a second node, each its own
`ray start`): a rollout spreads its phone actors over both, and when the second node's
raylet is killed mid-run its phones' jobs finish on the head, with exactly the episodes
of an uninterrupted local run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datalake.lake import Lake
from rollout.runner import rollout
from rollout.spec import RolloutSpec
from tests.scale.ray_nodes import ENV, RayNodes

pytestmark = pytest.mark.slow  # > 20 s on 2 cores: `scripts/test.sh -m "not slow"` leaves it out

ROOT = str(Path(__file__).resolve().parents[2])
TASKS = "app:clock&category:single-app"  # 7 tasks
EPISODES = 2


@pytest.fixture(scope="module")
def nodes():
    with RayNodes() as cluster:
        yield cluster


def _final_ids(uri: str) -> dict[str, str]:
    rows = Lake.open(uri).sql("SELECT episode_id, outcome FROM episodes WHERE failure_reason IS NULL "
                              "OR failure_reason <> 'device_offline'").to_pylist()
    return {r["episode_id"]: r["outcome"] for r in rows}


def _count(uri: str) -> int:
    try:
        return Lake.open(uri).sql("SELECT count(*) AS n FROM episodes").to_pylist()[0]["n"]
    except Exception:  # noqa: BLE001  the first commit may not be there yet
        return 0


def test_a_lost_node_moves_its_phones_jobs_to_the_head_and_loses_nothing(nodes, tmp_path):
    expected = Lake.init(tmp_path / "local")
    rollout(expected.uri, RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:2", episodes=EPISODES,
                                      run_id="two-nodes"))
    lake = Lake.init(tmp_path / "ray")
    # 4 phone actors of 0.5 CPU on two 1-CPU nodes: two are placed on each node
    cmd = [sys.executable, "-m", "phoneloop.cli", "rollout", "--policy", "oracle", "--tasks", TASKS,
           "--phones", "mock:4", "--episodes", str(EPISODES), "--run-id", "two-nodes", "--backend", "ray",
           "--address", nodes.address, "--lake", lake.uri, "--json"]
    driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**ENV, "PYTHONPATH": ROOT})
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and _count(lake.uri) < 1 and driver.poll() is None:
            time.sleep(0.2)
        assert driver.poll() is None, "the rollout ended before the node could be killed: " + driver.stderr.read()
        nodes.kill_raylet(nodes.worker)  # the second node is gone, with its two phones
        out, err = driver.communicate(timeout=400)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=30)
    assert driver.returncode == 0, err[-3000:]
    start = out.index("{\n") if out.startswith("{\n") else out.index("\n{\n") + 1  # Ray prints the raylet's end
    report, _ = json.JSONDecoder().raw_decode(out[start:])
    # phones were on the lost node (so the actors were spread over both); an actor there may
    # outlive its raylet long enough to finish cleanly, so at least one, at most two, died
    assert 1 <= report["worker_deaths"] <= 2, report
    assert sum(": worker died" in e for e in report["errors"]) == report["worker_deaths"]  # each death is named
    assert _final_ids(lake.uri) == _final_ids(expected.uri)  # every episode once, same ids, same outcomes
    assert len(_final_ids(lake.uri)) == 7 * EPISODES

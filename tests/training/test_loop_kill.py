"""The loop killed with SIGKILL during a rollout and during training, then rerun, ends with
exactly the episodes, datasets, models and evals of an uninterrupted run; two full rounds,
round 2 training from round 1's GRPO model."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from datalake.lake import Lake

pytestmark = pytest.mark.slow  # > 20 s on 2 cores: `scripts/test.sh -m "not slow"` leaves it out

TINY = {
    "name": "k",
    "collect": {"tasks": "SettingsWifiOn,ClockAddAlarm", "seeds": [0]},
    "sft": {"model": "tiny", "max_steps": 2, "batch_size": 2},
    "rollout": {"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 10, "max_steps": 3,
                "options": {"max_tokens": 24}},  # 10: commits of 4 (rollout.worker.WRITE_EVERY) leave a window
    # of 6 episodes between the first commit and the stage's end; with 3 a fast machine ran through it
    "grpo": {"max_steps": 1, "num_generations": 2, "batch_size": 2, "max_completion_tokens": 16},
    "eval": {"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 1, "seed": 100, "baselines": ["oracle"],
             "options": {"max_tokens": 24}},  # a held-out seed (a trained instance is refused)
}


def start(tmp_path, lake: Lake) -> subprocess.Popen:
    config = tmp_path / "loop.yaml"
    config.write_text(yaml.safe_dump(TINY))
    return subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "loop", "--rounds", "2", "--config", str(config),
                             "--lake", lake.uri], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def state(lake: Lake) -> dict:
    path = os.path.join(lake.uri, "loops", "k", "state.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, ValueError):
        return {}


def rollouts_in(lake: Lake, round_: int) -> int:
    try:
        return Lake.open(lake.uri).sql(f"SELECT count(*) FROM episodes WHERE source = 'rollout' AND round = {round_} "
                                       "AND purpose = 'train'").column(0)[0].as_py()
    except Exception:  # a table mid-commit: look again
        return 0


def kill_when(proc: subprocess.Popen, ready, limit: float = 400) -> None:
    end = time.monotonic() + limit
    while not ready():
        assert proc.poll() is None, "the loop ended before the kill point"
        assert time.monotonic() < end, "kill point never reached"
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def contents(lake: Lake) -> dict:
    fresh = Lake.open(lake.uri)

    def q(sql):
        return [tuple(r.values()) for r in fresh.sql(sql).to_pylist()]

    return {"episodes": q("SELECT episode_id, source, purpose, round FROM episodes ORDER BY episode_id"),
            "datasets": q("SELECT name, version, counts_json FROM datasets ORDER BY name, version"),
            "models": q("SELECT name, parent, dataset FROM models ORDER BY name"),
            "evals": q("SELECT eval_id, policy, status, episodes FROM evals ORDER BY eval_id, policy")}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("whole")
    lake = Lake.init(tmp / "lake")
    assert start(tmp, lake).wait(timeout=900) == 0
    WHOLE["state"] = state(lake)
    return contents(lake)


WHOLE: dict = {}  # the uninterrupted run's state file


def test_two_rounds_run_and_round_2_trains_from_round_1s_grpo_model(uninterrupted):
    models = {name: (parent, dataset) for name, parent, dataset in uninterrupted["models"]}
    assert set(models) == {"k-r1-sft", "k-r1-grpo", "k-r2-sft", "k-r2-grpo"}
    assert models["k-r2-sft"][0] == "k-r1-grpo" and models["k-r2-grpo"][0] == "k-r2-sft"
    assert models["k-r2-sft"][1] != models["k-r1-sft"][1]  # a new dataset version: round 1's rollouts joined
    rounds = {r for _, source, purpose, r in uninterrupted["episodes"] if source == "rollout" and purpose == "train"}
    assert rounds == {1, 2}
    assert len({e for e, *_ in uninterrupted["evals"]}) == 2  # one evaluation per round
    # each round rolls out on fresh training instances, and round 2 is compared with round 1 on the eval's
    r1, r2 = WHOLE["state"]["round1"], WHOLE["state"]["round2"]
    assert r1["rollout"]["rollout_id"] != r2["rollout"]["rollout_id"]
    vs = r2["eval"]["vs_previous"]
    assert vs["grpo"]["pairs"] == 1 and (vs["grpo"]["a"], vs["grpo"]["b"]) == ("k-r1-grpo", "k-r2-grpo")
    assert r1["eval"]["vs_previous"] == {}
    failed = r1["rollout"]["outcomes"].get("failure", 0) - r1["rollout"]["policy_errors"]
    assert r1["correct"]["failed_rollouts"] == failed and r1["correct"]["written"] <= failed


def test_sigkill_during_rollout_and_during_training_then_rerun_gives_the_same_lake(tmp_path, uninterrupted):
    lake = Lake.init(tmp_path / "lake")
    kill_when(start(tmp_path, lake), lambda: rollouts_in(lake, 1) >= 1 and "rollout" not in state(lake)["round1"])
    # killed inside the rollout stage: it had written episodes but not finished (its batches
    # may already hold all of them; the stage's end is what the state file records)
    assert rollouts_in(lake, 1) >= 1 and "rollout" not in state(lake)["round1"]
    kill_when(start(tmp_path, lake), lambda: "curate" in state(lake).get("round2", {}))  # round 2 SFT has started
    assert "sft" not in state(lake)["round2"]
    assert start(tmp_path, lake).wait(timeout=900) == 0
    assert contents(lake) == uninterrupted

"""One small round of the loop on mock phones with the tiny model, and resuming after a failure."""

import json

import pytest
import yaml

from datalake.lake import Lake
from phoneloop.loop import STAGES, Loop, LoopConfig, LoopConfigError
from rollout.errors import RolloutError

SMALL = {
    "name": "t",
    "collect": {"tasks": "SettingsWifiOn,ClockAddAlarm", "seeds": [0]},
    "sft": {"model": "tiny", "max_steps": 2, "batch_size": 2},
    "rollout": {"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 1, "max_steps": 2},
    "grpo": {"max_steps": 1, "num_generations": 2, "batch_size": 2, "max_completion_tokens": 16},
    "eval": {"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 1, "baselines": ["oracle"]},
}


def test_a_round_runs_every_stage_records_lineage_and_resumes(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    broken = {**SMALL, "eval": {**SMALL["eval"], "tasks": "app:nope"}}
    with pytest.raises(RolloutError):
        Loop(lake.uri, LoopConfig(**broken)).run(1)
    state = json.loads((tmp_path / "lake" / "loops" / "t" / "state.json").read_text())["round1"]
    assert list(state) == list(STAGES[:-1])  # everything up to the failed eval was kept
    datasets_before = Lake.open(lake.uri).sql("SELECT count(*) FROM datasets").column(0)[0].as_py()

    final = Loop(lake.uri, LoopConfig(**SMALL)).run(1)["round1"]
    assert list(final) == list(STAGES)
    assert final["sft"] == state["sft"] and final["grpo"] == state["grpo"]  # not trained again
    fresh = Lake.open(lake.uri)
    assert fresh.sql("SELECT count(*) FROM datasets").column(0)[0].as_py() == datasets_before
    models = {r["name"]: r for r in fresh.sql("SELECT name, parent, dataset FROM models").to_pylist()}
    assert models["t-r1-grpo"]["parent"] == "t-r1-sft"
    assert models["t-r1-sft"]["dataset"] == final["curate"]["dataset"]
    assert models["t-r1-grpo"]["dataset"] == final["curate_rollouts"]["dataset"]
    rollouts = fresh.sql("SELECT source, round, policy FROM episodes WHERE source = 'rollout' AND round = 1"
                         ).to_pylist()
    assert {r["policy"] for r in rollouts} >= {"t-r1-sft"}
    table = final["eval"]["by_category"]["single-app"]
    assert table["oracle"]["rate"] == 1.0 and set(table) == {"t-r1-sft", "t-r1-grpo", "oracle"}


def test_loop_config_rejects_unknown_fields(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "epochs": 3}))
    with pytest.raises(LoopConfigError, match="unknown field"):
        LoopConfig.load(path)

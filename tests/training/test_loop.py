"""One small round of the loop on mock phones with the tiny model, and resuming after a failure."""

import json

import pytest
import yaml

from datalake.lake import Lake
from phoneloop.loop import STAGES, Loop, LoopConfig, LoopConfigError, StageFailed

pytestmark = pytest.mark.slow  # > 20 s on 2 cores: `scripts/test.sh -m "not slow"` leaves it out

SMALL = {
    "name": "t",
    "collect": {"tasks": "SettingsWifiOn,ClockAddAlarm", "seeds": [0]},
    "sft": {"model": "tiny", "max_steps": 2, "batch_size": 2},
    "rollout": {"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 1, "max_steps": 2},
    "grpo": {"max_steps": 1, "num_generations": 2, "batch_size": 2, "max_completion_tokens": 16},
    "eval": {"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 1, "baselines": ["oracle"],
             "allow_overlap": True},  # seed 0 is demonstrated too: not held out, and said so
}


def test_a_round_runs_every_stage_records_lineage_and_resumes(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    broken = {**SMALL, "eval": {**SMALL["eval"], "baselines": ["oracle", "no-such-model"]}}
    with pytest.raises(StageFailed, match="round 1 eval failed"):
        Loop(lake.uri, LoopConfig(**broken)).run(1)
    saved = json.loads((tmp_path / "lake" / "loops" / "t" / "state.json").read_text())
    state = saved["round1"]
    assert list(state) == list(STAGES[:-1])  # everything up to the failed eval was kept
    assert (saved["failed"]["round"], saved["failed"]["stage"]) == (1, "eval") and "no-such-model" in saved["failed"]["error"]
    datasets_before = Lake.open(lake.uri).sql("SELECT count(*) FROM datasets").column(0)[0].as_py()

    final_state = Loop(lake.uri, LoopConfig(**SMALL)).run(1)
    final = final_state["round1"]
    assert list(final) == list(STAGES) and "failed" not in final_state
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
    assert final["eval"]["held_out"] is False  # SMALL evaluates seed 0, which it also demonstrated
    assert final["tasks"]["overlap"] == 1 and final["eval"]["overlap"]["t-r1-sft"] == 1
    assert (tmp_path / "lake" / "loops" / "t" / "curves.png").is_file()
    evals = fresh.sql("SELECT policy, status, loop, round FROM evals WHERE status = 'ok' ORDER BY policy").to_pylist()
    assert evals == [{"policy": p, "status": "ok", "loop": "t", "round": 1} for p in ("oracle", "t-r1-grpo", "t-r1-sft")]


def test_a_loop_whose_eval_repeats_a_training_instance_stops_before_training_and_exits_2(tmp_path):
    from typer.testing import CliRunner

    from phoneloop.cli import app

    lake = Lake.init(tmp_path / "lake")
    config = tmp_path / "loop.yaml"
    leaky = {**SMALL, "eval": {k: v for k, v in SMALL["eval"].items() if k != "allow_overlap"}}
    config.write_text(yaml.safe_dump(leaky))
    result = CliRunner().invoke(app, ["loop", "--rounds", "1", "--config", str(config), "--lake", lake.uri])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "round 1 tasks failed" in text and "SettingsWifiOn seed 0" in text, text
    assert Lake.open(lake.uri).sql("SELECT count(*) FROM episodes").column(0)[0].as_py() == 0  # nothing collected


def test_loop_config_rejects_unknown_fields(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "epochs": 3}))
    with pytest.raises(LoopConfigError, match="unknown field"):
        LoopConfig.load(path)


def test_a_stage_that_produces_nothing_fails_the_loop_with_exit_1_and_status_names_it(tmp_path):
    from typer.testing import CliRunner

    from phoneloop.cli import app

    lake = Lake.init(tmp_path / "lake")
    path = tmp_path / "loop.yaml"
    path.write_text(yaml.safe_dump({**SMALL, "name": "nothing", "collect": {"tasks": "SettingsWifiOn", "seeds": []}}))
    result = CliRunner().invoke(app, ["loop", "--config", str(path), "--lake", lake.uri])
    assert result.exit_code == 1 and "round 1 collect failed" in result.output, result.output
    status = CliRunner().invoke(app, ["loop", "status", "--config", str(path), "--lake", lake.uri, "--json"])
    rows = json.loads(status.stdout)
    assert [(r["stage"], r["state"]) for r in rows][:3] == [("tasks", "done"), ("collect", "failed"),
                                                            ("curate", "pending")]
    assert "no episode" in rows[1]["error"]


def test_the_example_loop_runs_real_plus_mock_grpo_after_sft():
    """examples/loop.yaml (what `phoneloop demo` runs): GRPO mixes offline step rewards with online mock episodes."""
    from training.grpo import GRPORun

    config = LoopConfig.load(LoopConfig().path("examples/loop.yaml"))
    assert (config.grpo["env"], config.grpo["mix"]) == ("mock", True)
    GRPORun(output="x", model="demo-loop-r1-sft", dataset="with-rollouts@v1", **config.grpo).check()


def test_a_recipe_that_leaves_no_training_row_fails_the_curate_stage(tmp_path):
    """Episodes are selected, but the split puts every one outside ``train``: nothing to train on."""
    lake = Lake.init(tmp_path / "lake")
    recipe = tmp_path / "holdout.yaml"
    text = LoopConfig().path("examples/recipes/default.yaml").read_text()
    recipe.write_text(text.replace("fractions: {train: 0.8, val: 0.1, test: 0.1}", "fractions: {holdout: 1.0}"))
    assert "holdout" in recipe.read_text()
    with pytest.raises(StageFailed, match="round 1 curate failed: dataset default@v1 yields 0 training rows"):
        Loop(lake.uri, LoopConfig(**{**SMALL, "name": "rows", "recipe": str(recipe)})).run(1)
    saved = json.loads((tmp_path / "lake" / "loops" / "rows" / "state.json").read_text())
    assert (saved["failed"]["round"], saved["failed"]["stage"]) == (1, "curate")
    assert "holdout" in saved["failed"]["error"] and list(saved["round1"]) == ["tasks", "collect"]


def test_a_model_whose_weights_are_truncated_fails_the_stage_that_loads_it(tmp_path):
    """The SFT model's safetensors file is cut in half after training: the rollout stage (which
    loads it) fails naming the model; a rerun that finds the model registered but the stage
    unrecorded (a kill between the two) fails the sft stage's own load check."""
    lake = Lake.init(tmp_path / "lake")

    def say(message: str) -> None:
        if message.startswith("round 1 sft: model"):
            (weights,) = (tmp_path / "lake" / "models" / "t-r1-sft" / "final").glob("*.safetensors")
            weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])

    with pytest.raises(StageFailed, match="round 1 rollout failed: model 't-r1-sft' does not load"):
        Loop(lake.uri, LoopConfig(**SMALL), say=say).run(1)
    path = tmp_path / "lake" / "loops" / "t" / "state.json"
    saved = json.loads(path.read_text())
    assert (saved["failed"]["round"], saved["failed"]["stage"]) == (1, "rollout")
    del saved["round1"]["sft"]  # as if killed after registering the model, before recording the stage
    path.write_text(json.dumps(saved))
    with pytest.raises(StageFailed, match="round 1 sft failed: model 't-r1-sft' does not load from"):
        Loop(lake.uri, LoopConfig(**SMALL)).run(1)
    saved = json.loads(path.read_text())
    assert saved["failed"]["stage"] == "sft" and "Error" in saved["failed"]["error"]

"""`--perturb` reaches every pipeline that drives mock phones, and every episode records it."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from datalake.types import Action
from phoneloop.cli import app
from phoneloop.loop import LoopConfig, LoopConfigError
from rollout.errors import PhonesSpecError
from rollout.eval import evaluate
from rollout.runner import rollout
from rollout.spec import RolloutSpec

runner = CliRunner()


def _episodes(lake):
    from datalake.lake import Lake

    return Lake.open(lake.uri).sql("SELECT episode_id, outcome, meta_json FROM episodes").to_pylist()


def test_rollout_runs_on_perturbed_phones_and_records_the_profile(lake):
    report = rollout(lake.uri, RolloutSpec(policy="oracle", tasks="ShopAddToCart", phones="mock:1", episodes=2,
                                           perturb="heavy"))
    assert report.errors == [] and report.success_rate == 1.0
    rows = _episodes(lake)
    metas = [json.loads(r["meta_json"]) for r in rows]
    assert [m["perturbation"] for m in sorted(metas, key=lambda m: m["seed"])] == [
        {"profile": "heavy", "seed": 0}, {"profile": "heavy", "seed": 1}]
    from datalake.lake import Lake

    trees = Lake.open(lake.uri).sql("SELECT ui_tree FROM steps").to_pylist()
    assert any("perm_dialog" in t["ui_tree"] for t in trees)  # the heavy profile asks on every first launch


def test_unperturbed_rollouts_record_profile_none(lake):
    rollout(lake.uri, RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="mock:1"))
    assert json.loads(_episodes(lake)[0]["meta_json"])["perturbation"] == {"profile": "none", "seed": 0}


def test_eval_passes_the_profile_to_every_policy(lake):
    evaluate(lake.uri, ["oracle"], RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="mock:1",
                                               perturb="light"))
    assert {json.loads(r["meta_json"])["perturbation"]["profile"] for r in _episodes(lake)} == {"light"}


@pytest.mark.parametrize("profile", ["light", "none"])
def test_the_evals_row_records_the_profile_the_phones_ran_under(lake, profile):
    from datalake.lake import Lake

    evaluate(lake.uri, ["oracle"], RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="mock:1",
                                               perturb=profile))
    rows = Lake.open(lake.uri).sql("SELECT perturbation FROM evals").to_pylist()
    assert rows == [{"perturbation": profile}]


def test_perturbing_real_phones_is_refused(lake):
    with pytest.raises(PhonesSpecError, match="needs mock phones"):
        rollout(lake.uri, RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="adb:R58", perturb="light"))


@pytest.mark.parametrize("command", [
    ["rollout", "--policy", "oracle", "--tasks", "SettingsWifiOn"],
    ["eval", "--policies", "oracle", "--tasks", "SettingsWifiOn"],
    ["train", "grpo", "--env", "mock", "--tasks", "SettingsWifiOn", "--output", "x"],
])
def test_unknown_profile_is_refused_by_every_command(lake, command):
    result = runner.invoke(app, [*command, "--perturb", "stormy", "--lake", lake.uri])
    assert result.exit_code == 2 and "none, light, real-like, heavy" in " ".join(result.output.split()), result.output
    assert _episodes(lake) == []


def test_grpo_mock_environment_uses_the_profile():
    from training.env import EnvSettings, env_factory

    env = env_factory(EnvSettings(perturb="heavy"))()
    env.reset(task="SettingsWifiOn", seed=0)
    assert env.phone.perturbations.name == "heavy"
    env.phone.act(Action("open_app", app="settings"))
    assert env.phone.nav.dialog is not None and env.phone.nav.dialog.rid == "perm_dialog"


def test_loop_config_checks_perturb_keys(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(yaml.safe_dump({"rollout": {"tasks": "SettingsWifiOn", "perturb": "stormy"}}))
    with pytest.raises(LoopConfigError, match="rollout.perturb: unknown perturbation profile 'stormy'"):
        LoopConfig.load(path)
    path.write_text(yaml.safe_dump({"collect": {"tasks": "SettingsWifiOn", "perturb": "light"},
                                    "eval": {"tasks": "SettingsWifiOn", "perturb": "real-like"},
                                    "grpo": {"env": "mock", "perturb": "heavy"}}))
    config = LoopConfig.load(path)
    from phoneloop.loop import _with_options

    assert RolloutSpec(policy="x", **_with_options(config.eval)).perturb == "real-like"
    from training.grpo import GRPORun

    GRPORun(output="x", **config.grpo).check()

import pytest

from training.errors import BadTrainingConfig, WrongExportKind
from training.grpo import GRPORun, run_grpo


def test_offline_grpo_runs_steps_with_non_constant_rewards(train_lake, sft_model):
    entry = run_grpo(train_lake, GRPORun(dataset="memo@v1", output="memo-grpo", model="memo-sft", max_steps=2,
                                         num_generations=8, batch_size=8, temperature=1.15, learning_rate=1e-5,
                                         max_completion_tokens=40, seed=1))
    assert entry.metrics["steps"] == 2
    assert entry.parent == "memo-sft" and entry.dataset == "memo@v1"
    rewards = entry.metrics["reward"]
    assert len(rewards) == 2
    assert any(std > 0 for std in entry.metrics["reward_std"])  # completions in a group scored differently
    assert "rewards/location_reward/mean" in entry.metrics


@pytest.mark.parametrize("kwargs, error, message", [
    ({"dataset": "eponly@v1"}, WrongExportKind, "has no 'grpo' export"),
    ({}, BadTrainingConfig, "GRPO needs prompts"),
    ({"dataset": "memo@v1", "num_generations": 1, "batch_size": 1}, BadTrainingConfig, "num_generations"),
    ({"dataset": "memo@v1", "batch_size": 3}, BadTrainingConfig, "multiple of num_generations"),
    ({"dataset": "memo@v1", "mix": True}, BadTrainingConfig, "--mix"),
    ({"env": "mock", "tasks": "NoSuchTask"}, BadTrainingConfig, "NoSuchTask"),
    ({"env": "docker"}, BadTrainingConfig, "--env"),
])
def test_bad_grpo_configs_fail_before_any_compute(train_lake, monkeypatch, kwargs, error, message):
    from training import common

    def no_compute(*a, **k):
        raise AssertionError("a model was loaded before the config was checked")

    monkeypatch.setattr(common, "load_policy", no_compute)
    with pytest.raises(error, match=message):
        run_grpo(train_lake, GRPORun(output="never", **kwargs))


def test_online_episodes_for_a_json_policy_without_element_lists_are_refused_before_any_compute(
        train_lake, monkeypatch):
    """Neither kind of online episode can drive it: played episodes speak the element list, tool calls qwen3vl."""
    from curation.build import curate
    from curation.recipe import parse_recipe
    from tests.training.conftest import CLOCK_TASK, _recipe
    from training import common

    monkeypatch.setattr(common, "load_policy", lambda *a, **k: pytest.fail("a model was loaded"))
    recipe = _recipe("clock-json", f"task = '{CLOCK_TASK}'", "  - {format: grpo, action_format: json}\n")
    ref = curate(train_lake, parse_recipe(recipe)).ref
    with pytest.raises(BadTrainingConfig, match="only in the element-list format"):
        run_grpo(train_lake, GRPORun(output="never", dataset=ref, env="mock", mix=True, tasks=CLOCK_TASK))


def test_the_offline_sample_keeps_every_real_phone_row_and_fills_up_with_a_seeded_sample():
    from datasets import Dataset

    from training.grpo import _sample_offline

    rows = Dataset.from_dict({"phone": ["mock"] * 40 + ["real"] * 3 + ["mock"] * 40, "k": list(range(83))})
    picked = _sample_offline(rows, 10, seed=0)
    assert len(picked) == 10 and picked["phone"].count("real") == 3
    assert picked["k"] == _sample_offline(rows, 10, seed=0)["k"] != _sample_offline(rows, 10, seed=1)["k"]
    assert len(_sample_offline(rows, None, seed=0)) == 83 and len(_sample_offline(rows, 2, seed=0)) == 2

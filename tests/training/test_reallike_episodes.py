"""Online episodes on real-like phones: the reward is the outcome judge's verdict, never the phone's state."""

import pytest

from curation.elements import format_with_marks, marks
from training.errors import BadTrainingConfig
from training.grpo import GRPORun, env_counts
from training.mock_episodes import (EpisodeFormat, EpisodeReward, online_rows, oracle_actions, oracle_demo, outcome,
                                    start)
from tests.training.test_mock_episodes import Scripted

FMT = EpisodeFormat()
TASK = "MailStar"


def _replies(task: str, seed: int, env: str) -> list[str]:
    demo = oracle_demo(task, seed, env)
    size = (demo.device.width, demo.device.height)
    return [format_with_marks(s.action, "json", "rel1000", size, marks(s.observation.ui_tree, size))
            for s in demo.steps]


def _play(task: str, seed: int, env: str):
    phone, spec = start(task, seed, env=env)
    actions = list(oracle_actions(task, seed, env))
    for action in actions:
        phone.act(action)
    return phone, spec, actions


def test_real_like_reward_is_unchanged_when_the_state_store_is_poisoned():
    phone, task, actions = _play("SettingsWifiOff", 0, "real-like")
    before = outcome("real-like", phone, task, actions)
    assert before == (True, "success") and task.is_successful(phone) == 1.0

    phone.system.settings["global/wifi_on"] = "1"  # the verified value flipped in the state store, nothing redrawn

    assert task.is_successful(phone) < 1.0  # the hidden verifier sees the poison ...
    assert outcome("real-like", phone, task, actions) == before  # ... the real-like reward does not read it
    mock, mock_task, mock_actions = _play("SettingsWifiOff", 0, "mock")
    mock.system.settings["global/wifi_on"] = "1"
    assert outcome("mock", mock, mock_task, mock_actions) == (False, None)  # the mock reward is the verifier's


def test_real_like_rows_are_played_on_the_realish_skin_from_the_start_state():
    (real,) = online_rows([TASK], 1, FMT, max_pixels=8192, env="real-like")
    (mock,) = online_rows([TASK], 1, FMT, max_pixels=8192)
    assert (real["env"], mock["env"], real["prefix"]) == ("real-like", "mock", "[]")
    assert real["images"][0].tobytes() != mock["images"][0].tobytes()  # another skin, the same task and seed


def _score(row, replies):
    reward = EpisodeReward(FMT)
    reward.policy = Scripted(replies[1:])
    (value,) = reward([row["prompt"]], [replies[0]], task=[row["task"]], seed=[row["seed"]], prefix=[row["prefix"]],
                      budget=[row["budget"]], env=[row["env"]])
    return value, reward.episodes[-1]


def test_a_real_like_episode_is_scored_by_the_judge_not_the_verifier():
    (row,) = online_rows([TASK], 1, FMT, max_pixels=8192, env="real-like")
    replies = _replies(TASK, row["seed"], "real-like")
    value, episode = _score(row, replies)
    assert (value, episode.env, episode.verdict, episode.success) == (1.0, "real-like", "success", True)

    # the same episode without its closing terminate: the star is set (the verifier would pass it), but one
    # screen cannot tell the judge the task is done
    value, episode = _score(row, replies[:-1] + ["no idea"] * 3)
    phone, task, actions = _play(TASK, row["seed"], "real-like")
    assert task.is_successful(phone) == 1.0
    assert (value, episode.verdict) == (0.0, "unknown")


def test_real_like_plus_mock_splits_the_online_prompts_by_share():
    assert env_counts("real-like+mock", 10, 0.3) == {"real-like": 3, "mock": 7}
    assert env_counts("real-like+mock", 8) == {"real-like": 4, "mock": 4}
    assert env_counts("real-like", 8) == {"real-like": 8}


@pytest.mark.parametrize("env,share", [("mock", 0.5), ("real-like+mock", 1.0), ("real-like+mock", 0.0)])
def test_share_outside_a_mixed_env_or_the_open_interval_is_refused(env, share):
    with pytest.raises(BadTrainingConfig, match="--share"):
        GRPORun(output="x", env=env, share=share).check()

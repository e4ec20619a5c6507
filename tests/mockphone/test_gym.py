"""`mockphone.gym.MockPhoneEnv`: a gymnasium environment that passes gymnasium's own checker."""

import json

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from mockphone.gym import MockPhoneEnv
from mockphone.tasks.oracle import UI
from mockphone.tasks.registry import REGISTRY


@pytest.fixture(scope="module")
def small():
    env = MockPhoneEnv(tasks="app:clock", width=540, height=1200, dpi=210, max_steps=6, render_mode="rgb_array")
    yield env
    env.close()


def test_check_env_passes(small):
    check_env(small, skip_render_check=False)


def test_gymnasium_make_builds_it_by_id():
    import gymnasium

    from mockphone.gym import ENV_ID

    env = gymnasium.make(ENV_ID, tasks="SettingsWifiOff", width=540, height=1200, dpi=210, max_steps=3)
    obs, info = env.reset(seed=0)
    assert info["task"] == "SettingsWifiOff" and env.observation_space.contains(obs)
    env.close()


def test_reset_shows_the_task_start_screen(small):
    obs, info = small.reset(seed=0, options={"task": "ClockAddAlarm", "seed": 4})
    assert obs["screenshot"].shape == (1200, 540, 3) and obs["screenshot"].dtype == np.uint8
    assert "<hierarchy" in obs["ui_xml"] and obs["instruction"] == REGISTRY["ClockAddAlarm"](seed=4).goal
    assert (info["task"], info["seed"]) == ("ClockAddAlarm", 4)
    again, _ = small.reset(seed=0, options={"task": "ClockAddAlarm", "seed": 4})
    assert np.array_equal(again["screenshot"], obs["screenshot"]) and again["ui_xml"] == obs["ui_xml"]


def test_an_episode_driven_by_the_oracle_terminates_with_reward_one():
    env = MockPhoneEnv(tasks="ClockAddAlarm", width=540, height=1200, dpi=210, max_steps=60)
    env.reset(seed=1, options={"seed": 4})
    ui = UI(env.phone)
    rewards = []
    for action in env.task.oracle(ui):
        _, reward, terminated, truncated, _ = env.step(action.to_json())
        rewards.append(reward)
        assert not (terminated or truncated)
        for extra in ui.interruptions():
            env.step(extra.to_json())
    obs, reward, terminated, truncated, info = env.step(json.dumps({"type": "terminate", "status": "success"}))
    assert (reward, terminated, truncated, info["score"]) == (1.0, True, False, 1.0)
    assert set(rewards) == {0.0}  # nothing before the end


def test_claiming_success_without_doing_the_task_scores_zero():
    env = MockPhoneEnv(tasks="ClockAddAlarm", width=540, height=1200, dpi=210)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step({"type": "terminate", "status": "success"})
    assert (reward, terminated) == (0.0, True)


def test_truncated_after_max_steps_with_the_verifier_score():
    env = MockPhoneEnv(tasks="SettingsWifiOff", width=540, height=1200, dpi=210, max_steps=2)
    env.reset(seed=0)
    assert env.step('{"type": "wait", "seconds": 1}')[2:4] == (False, False)
    _, reward, terminated, truncated, info = env.step('{"type": "wait", "seconds": 1}')
    assert (terminated, truncated, reward, info["score"]) == (False, True, 0.0, 0.0)


@pytest.mark.parametrize("action", ["not json", '{"type": "fly"}', '{"x": 1}', '{"type": "tap"}', "[]"])
def test_invalid_actions_are_steps_that_do_nothing(action):
    env = MockPhoneEnv(tasks="SettingsWifiOff", width=540, height=1200, dpi=210)
    obs, _ = env.reset(seed=0)
    after, reward, terminated, truncated, info = env.step(action)
    assert "error" in info and reward == 0.0 and not terminated
    assert np.array_equal(after["screenshot"], obs["screenshot"])


def test_perturbations_reach_the_env():
    env = MockPhoneEnv(tasks="SettingsWifiOff", width=540, height=1200, dpi=210, perturb="heavy")
    _, info = env.reset(seed=3)
    assert info["perturbation"]["profile"] == "heavy"
    obs, *_ = env.step('{"type": "open_app", "app": "settings"}')
    assert "perm_dialog" in obs["ui_xml"]

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


# --- any text the phone accepts stays inside the spaces -----------------------------------------

import warnings  # noqa: E402

from gymnasium.utils.passive_env_checker import env_step_passive_checker  # noqa: E402

from mockphone.gym import UnicodeText  # noqa: E402

TEXTS = {
    "emoji": "party 🎉 👩🏽‍💻 ❤️",
    "cjk": "会议记录 東京タワー 회의록",
    "rtl": "שלום עולם مرحبا بالعالم",
    "astral": "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓀀 𠜎",
}


class TypedNotesEnv(MockPhoneEnv):
    """Starts every episode with ``text`` typed into a new note, so check_env's own resets and steps see it."""

    def __init__(self, text: str, **kwargs):
        super().__init__(tasks="NotesCreate", width=540, height=1200, dpi=210, max_steps=20, **kwargs)
        self.text = text

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed, options=options)
        for action in typing_actions(self, self.text):
            obs, _, _, _, info = env_step_passive_checker(self, action)  # asserts / warns like check_env
            assert "error" not in info, info
        self.steps = 0
        return obs, {"task": self.task.name()}


def typing_actions(env, text):
    ui = UI(env.phone)
    yield '{"type": "open_app", "app": "notes"}'
    x, y = ui.find(rid="new_note").center
    yield json.dumps({"type": "tap", "x": x, "y": y})
    field = next(e for e in ui.elements() if e.class_name == "android.widget.EditText")
    x, y = field.center
    yield json.dumps({"type": "input_text", "text": text, "x": x, "y": y})


@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_check_env_passes_after_typing(kind):
    env = TypedNotesEnv(TEXTS[kind], render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium's checkers report a space violation as a warning
        obs, _ = env.reset(seed=0)
        assert TEXTS[kind].replace("\u200d", "") in obs["ui_xml"].replace("\u200d", "")
        assert env.observation_space.contains(obs)
        check_env(env, skip_render_check=False)
    env.close()


def test_unicode_text_holds_every_scalar_and_no_lone_surrogate():
    space = UnicodeText(8)
    assert space.contains("🎉") and space.contains("\U0010ffff") and space.contains("")
    assert not space.contains("\ud83c") and not space.contains("x" * 9) and not space.contains(b"x")
    assert len(space.character_set) == 0x110000 - 0x800 and "\ue000" in space.character_set
    space.seed(0)
    assert all(space.contains(space.sample()) for _ in range(50))


def test_env_built_directly_has_the_registered_spec_with_its_arguments(small):
    from mockphone.gym import ENV_ID

    assert small.spec.id == ENV_ID and small.spec.kwargs["tasks"] == "app:clock"
    remade = small.spec.make(render_mode="rgb_array")
    assert remade.unwrapped.phone.display.width == 540
    remade.close()


@pytest.mark.parametrize("options, error, says", [
    ({"task": "NotesCreate"}, "TaskNotServed", "'NotesCreate' is not served here"),
    ({"task": "NoSuchTask"}, "UnknownTask", "no task named 'NoSuchTask'"),
    ({"tsk": "ClockAddAlarm"}, "BadResetOption", "unknown reset option(s) 'tsk'"),
    ({"seed": "4"}, "BadResetOption", "'seed' must be an integer"),
])
def test_reset_refuses_what_the_env_does_not_serve(small, options, error, says):
    with pytest.raises(Exception) as caught:
        small.reset(seed=0, options=options)
    assert type(caught.value).__name__ == error and says in str(caught.value)


def test_step_before_reset_names_the_problem():
    from mockphone.gym import EpisodeNotStarted

    env = MockPhoneEnv(tasks="SettingsWifiOff", width=540, height=1200, dpi=210)
    with pytest.raises(EpisodeNotStarted, match="call reset"):
        env.step('{"type": "wait", "seconds": 1}')

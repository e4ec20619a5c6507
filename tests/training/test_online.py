"""Online GRPO on mock phones: each rollout drives its own MockPhone through mobile_use tool calls."""

import pytest

from tests.training.conftest import CLOCK_TASK
from training import env as env_module
from training.grpo import GRPORun, run_grpo

pytestmark = pytest.mark.slow  # > 20 s on 2 cores: `scripts/test.sh -m "not slow"` leaves it out


@pytest.fixture(scope="module")
def clock_sft(train_lake, tiny_path):
    """The tiny model fine-tuned (with the tool schema in its prompts) on oracle ClockDisableAlarm episodes."""
    from training.sft import SFTRun, run_sft

    return run_sft(train_lake, SFTRun(dataset="clock@v1", output="clock-sft", tools=True, max_steps=160,
                                      batch_size=2, learning_rate=5e-3))


@pytest.fixture
def verifier_log(monkeypatch):
    """Every verifier result the environments hand to the trainer, in order."""
    seen = []
    original = env_module.MockPhoneEnv.get_reward

    def spy(self):
        seen.append(original(self))
        return seen[-1]

    monkeypatch.setattr(env_module.MockPhoneEnv, "get_reward", spy)
    return seen


def test_online_grpo_drives_mock_phones_and_the_verifier_reward_reaches_the_trainer(
        train_lake, clock_sft, verifier_log, monkeypatch):
    from mockphone.tasks.registry import get

    # A verifier the policy can satisfy in one action (the real one needs two): the Clock app is open.
    # (It replaces the whole state-diff verifier: opening an app changes no state, so a `check`
    # override alone would still score the untouched phone 0, as every start state must.)
    monkeypatch.setattr(get(CLOCK_TASK), "is_successful",
                        lambda self, phone: float(phone.nav.foreground == "com.google.android.deskclock"))
    entry = run_grpo(train_lake, GRPORun(env="mock", tasks=CLOCK_TASK, output="clock-online", model="clock-sft",
                                         max_steps=2, num_generations=4, batch_size=4, online_prompts=4,
                                         max_turns=2, max_completion_tokens=96, learning_rate=1e-5, seed=0))
    assert entry.metrics["steps"] == 2 and entry.parent == "clock-sft"
    assert len(verifier_log) == 8  # 2 steps x 4 rollouts, one verifier call each
    logged = entry.metrics["rewards/MockPhoneEnv/mean"]
    assert logged == pytest.approx([sum(verifier_log[:4]) / 4, sum(verifier_log[4:]) / 4])
    assert max(entry.metrics["tools/call_frequency"]) > 0  # the policy acted on the phones
    assert max(verifier_log) == 1.0  # and at least one rollout satisfied the verifier


def test_mock_environment_returns_the_new_screen_and_caps_turns():
    from PIL import Image

    settings = env_module.EnvSettings(max_turns=2)
    env = env_module.env_factory(settings)()
    row = env_module.task_rows(CLOCK_TASK, 1, settings)[0]
    assert isinstance(row["images"][0], Image.Image)
    env.reset(task=row["task"], seed=row["seed"])
    first = env.mobile_use(action="open", text="Clock")
    assert [p["type"] for p in first] == ["text", "image"]
    assert first[1]["image"].width * first[1]["image"].height <= settings.max_pixels
    assert env.get_reward() == 0.0  # the real verifier: the alarm is still on
    # every answer carries the screen (TRL's tool loop fails on a turn whose answers hold no image)
    assert "over" in env.mobile_use(action="system_button", button="Back")[0]["text"]
    assert "over" in env.mobile_use(action="click", coordinate=[500, 500])[0]["text"]
    assert env.turns == 2


def test_mock_environment_reports_unparseable_actions_without_acting():
    env = env_module.env_factory(env_module.EnvSettings())()
    env.reset(task=CLOCK_TASK, seed=0)
    assert env.mobile_use(action="fly")[0]["text"].startswith("Invalid action")
    assert env.turns == 0


def test_mixed_run_scores_offline_rows_with_step_rewards_and_episodes_with_the_verifier(
        train_lake, clock_sft, verifier_log):
    entry = run_grpo(train_lake, GRPORun(env="mock", tasks=CLOCK_TASK, dataset="clock@v1", mix=True,
                                         output="clock-mix", model="clock-sft", max_steps=2, num_generations=2,
                                         batch_size=4, online_prompts=2, offline_prompts=2, max_turns=2,
                                         max_completion_tokens=64, learning_rate=1e-5, seed=0))
    assert entry.metrics["steps"] == 2 and entry.dataset == "clock@v1"  # 2 steps x 2 prompts: all 4 rows, both kinds
    assert verifier_log  # episodes were scored by the verifier
    format_rewards = [r for r in entry.metrics["rewards/format_reward/mean"] if r is not None]
    assert format_rewards  # offline rows were scored by the step rewards


def test_element_mode_lists_the_screen_and_acts_on_a_named_element():
    """A policy SFT'd on element lists names targets by number online too; the phone acts at that element,
    and naming the oracle's elements by number solves the task (the verifier says so)."""
    from mockphone.layout import Display

    settings = env_module.EnvSettings(elements=True, width=Display().width, height=Display().height)
    env = env_module.env_factory(settings)()
    env.reset(task="SettingsWifiOn", seed=3)
    row = env_module.task_rows("SettingsWifiOn", 1, settings, seed=3)[0]
    listed = row["prompt"][1]["content"][-1]["text"]
    assert listed.startswith("Elements:\n[1] ") and "\nTask: Turn on Wi-Fi" in listed  # the task next to the answer
    assert "element" in row["prompt"][0]["content"][0]["text"]  # the system prompt says how to name one
    screen = env.mobile_use(action="open", text="settings")
    assert screen[-1]["text"].startswith("Elements:\n[1] ")
    bad = env.mobile_use(action="click", element=len(env.items) + 5)
    assert "not on this screen" in bad[0]["text"] and bad[1]["type"] == "image"
    for label in ("Network & internet", "Wi-Fi", env.task.params["network"]):  # the seed's world names the network
        number = next(m.number for m in env.items if m.element.text == label)
        assert env.mobile_use(action="click", element=number)[0]["text"].startswith("ok")
    assert env.get_reward() == 1.0

"""The one episode loop on mock phones: oracle episodes verify, faults become failures, the lake gets them."""

import pytest

from collectors.collect import collect
from datalake.types import Action
from mockphone.tasks import registry
from phones.episode import OraclePolicy, run_episode
from phones.errors import DeviceOffline, EpisodeAborted
from phones.protocol import Phone


class Scripted:
    name = "scripted"
    source = "agent"

    def __init__(self, actions):
        self.actions = list(actions)
        self.seen = []

    def act(self, instruction, observation, history):
        self.seen.append((instruction, observation.package, len(history)))
        return self.actions.pop(0), "raw"


class DropsOff:
    """A phone wrapper that goes offline after ``after`` actions."""

    def __init__(self, phone, after):
        self.phone, self.after = phone, after

    def __getattr__(self, name):
        return getattr(self.phone, name)

    def act(self, action):
        if self.after == 0:
            raise DeviceOffline("emulator-5554 disconnected")
        self.after -= 1
        return self.phone.act(action)

    def observe(self):
        if self.after < 0:
            raise DeviceOffline("emulator-5554 disconnected")
        return self.phone.observe()


def test_mock_phone_satisfies_phone_protocol(phone):
    assert isinstance(phone, Phone)


@pytest.mark.parametrize("name", ["SettingsWifiOff", "NotesCreate", "ContactsAdd"])
def test_oracle_episode_is_verified_success(phone, name):
    task = registry.get(name)(seed=1)
    ep = run_episode(phone, OraclePolicy(phone, task), task, seed=1, max_steps=100)
    assert ep.outcome == "success" and ep.verified_by == "verifier"
    assert ep.source == "oracle" and ep.task == task.name() and ep.device.kind == "mock"
    assert ep.steps[-1].action == Action("terminate", status="success")
    assert ep.meta["score"] == 1.0


def test_policy_sees_instruction_observation_and_history(phone):
    policy = Scripted([Action("key", key="home"), Action("open_app", app="settings"),
                       Action("terminate", status="infeasible")])
    ep = run_episode(phone, policy, "open settings")
    assert [s.action.type for s in ep.steps] == ["key", "open_app", "terminate"]
    assert policy.seen[0][0] == "open settings" and [h for _, _, h in policy.seen] == [0, 1, 2]
    assert policy.seen[2][1] == "com.android.settings"
    assert ep.outcome == "unknown" and ep.verified_by == "none" and ep.steps[0].raw_output == "raw"


def test_wrong_actions_give_verified_failure(phone):
    task = registry.get("SettingsWifiOff")(seed=0)
    ep = run_episode(phone, Scripted([Action("terminate", status="success")]), task)
    assert ep.outcome == "failure" and ep.verified_by == "verifier" and ep.meta["score"] == 0.0


def test_max_steps_stops_and_says_so(phone):
    ep = run_episode(phone, Scripted([Action("wait")] * 5), "wait forever", max_steps=3)
    assert len(ep.steps) == 3 and ep.meta["stopped"] == "max_steps"


def test_phone_going_offline_mid_episode_is_failure_with_reason(phone):
    flaky = DropsOff(phone, after=1)
    ep = run_episode(flaky, Scripted([Action("key", key="home")] * 5), "go home twice", reset=False)
    assert ep.outcome == "failure" and "offline" in ep.meta["failure_reason"]
    assert len(ep.steps) == 2  # the step whose action failed is kept with its observation


def test_phone_offline_before_first_step_aborts(phone):
    flaky = DropsOff(phone, after=-1)
    with pytest.raises(EpisodeAborted, match="offline"):
        run_episode(flaky, Scripted([Action("wait")]), "anything", reset=False)


def test_oracle_policy_refuses_bare_instruction(phone):
    with pytest.raises(ValueError, match="needs a task"):
        OraclePolicy.factory(phone, None)


def test_collect_writes_verified_episodes_to_lake(phone, lake):
    report = collect(lake, phone, OraclePolicy.factory, ["SettingsWifiOff"], seeds=[0, 1])
    assert report.episodes == 2 and report.written == 2 and report.outcomes == {"success": 2}
    rows = lake.sql("SELECT source, outcome, verified_by FROM episodes").to_pylist()
    assert rows == [{"source": "oracle", "outcome": "success", "verified_by": "verifier"}] * 2


class UnknownToolThenOracle:
    """A policy that first calls a tool nobody registered (and one with bad arguments), then solves the task."""

    name = "tool-happy"
    source = "agent"

    def __init__(self, phone, task):
        self.oracle = OraclePolicy(phone, task)
        self.first = [Action("tool", name="weather.lookup", args={"city": "Oslo"}),
                      Action("tool", name="clock.create_alarm", args={"hour": "seven"})]

    def act(self, instruction, observation, history):
        if self.first:
            return self.first.pop(0), None
        return self.oracle.act(instruction, observation, history)


def test_unknown_tool_is_an_error_step_and_collect_run_still_writes_the_episode(phone, lake):
    report = collect(lake, phone, UnknownToolThenOracle, ["SettingsWifiOff"], seeds=[0])
    assert report.episodes == 1 and report.written == 1 and report.errors == []
    assert report.outcomes == {"success": 1}
    episode = run_episode(phone, UnknownToolThenOracle(phone, registry.get("SettingsWifiOff")(seed=0)),
                          registry.get("SettingsWifiOff")(seed=0))
    errors = episode.meta["tool_errors"]
    assert [e["step"] for e in errors] == [0, 1] and "weather.lookup" in errors[0]["error"]
    assert "Tool error" in episode.steps[1].observation.ui_tree  # the policy saw the error on the next screen

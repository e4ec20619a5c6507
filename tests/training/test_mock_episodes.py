"""Online episodes for single-turn (json element-list) policies: the prompts are SFT's, the reward is the verifier's."""

import json

import pytest

from curation.elements import format_with_marks, marks
from training.mock_episodes import (ONLINE_SEED, EpisodeFormat, EpisodeReward, oracle_actions, oracle_demo,
                                    online_rows, start)

FMT = EpisodeFormat()
TASK = "MailStar"  # three steps: open Mail, open the message, star it


def _replies(task: str, seed: int) -> list[str]:
    """The oracle's actions as element-number json replies, each against the screen it was taken on."""
    demo = oracle_demo(task, seed)
    size = (demo.device.width, demo.device.height)
    return [format_with_marks(s.action, "json", "rel1000", size, marks(s.observation.ui_tree, size))
            for s in demo.steps]


class Scripted:
    """A stand-in for the policy being trained: answers the given replies in order (then junk)."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.model = _Model()

    def generate(self, messages, images, **kw):
        return self.replies.pop(0) if self.replies else "no idea"


class _Model:
    training = True

    def eval(self):
        self.training = False

    def train(self, mode=True):
        self.training = mode


def _score(row: dict, completion: str, continuation: list[str]) -> float | None:
    reward = EpisodeReward(FMT)
    reward.policy = Scripted(continuation)
    (value,) = reward([row["prompt"]], [completion], task=[row["task"]], seed=[row["seed"]],
                      prefix=[row["prefix"]], budget=[row["budget"]])
    assert reward.policy.model.training  # the trainer's mode is restored after the episode
    return value


@pytest.fixture(scope="module")
def rows():
    return online_rows([TASK], 3, FMT, max_pixels=8192)  # seeds 1000, 1001, 1002 at depths 0, 1, 2


def test_online_rows_use_fresh_seeds_and_walk_into_the_episode(rows):
    assert [r["seed"] for r in rows] == [ONLINE_SEED, ONLINE_SEED + 1, ONLINE_SEED + 2]
    assert [len(json.loads(r["prefix"])) for r in rows] == [0, 1, 2]
    assert all(r["budget"] == len(oracle_actions(TASK, r["seed"])) + 2 for r in rows)


def test_the_completion_then_the_policys_continuation_is_scored_by_the_verifier(rows):
    row = rows[0]
    replies = _replies(TASK, row["seed"])
    assert _score(row, replies[0], replies[1:]) == 1.0  # the right first action, finished by the policy
    assert _score(row, '{"type":"terminate","status":"success"}', replies[1:]) == 0.0  # a claim is not success
    assert _score(row, "not an action", replies) == 1.0  # a wasted step, then the whole episode within the budget
    assert _score(row, replies[0], ["no idea"] * 9) == 0.0  # a continuation that never acts


def test_a_row_some_steps_in_replays_its_prefix_and_scores_the_next_action(rows):
    row = rows[2]
    replies = _replies(TASK, row["seed"])
    assert _score(row, replies[2], replies[3:]) == 1.0
    assert _score(row, replies[0], replies[3:]) == 0.0  # the first step's action on the third step's screen


def test_a_damaging_completion_scores_zero_even_when_the_policy_then_finishes_the_task():
    """Collateral damage fails the verifier: on the Network page, the completion turns airplane mode on, then
    the policy turns Wi-Fi on as the oracle does. Wi-Fi ends on (the task's own check holds), the reward is 0."""
    from datalake.types import Action

    task = "SettingsWifiOn"
    row = online_rows([task], 3, FMT, max_pixels=8192)[2]  # two oracle steps in: the Network page
    replies = _replies(task, row["seed"])
    assert _score(row, replies[2], replies[3:]) == 1.0
    phone, checker = start(task, row["seed"])
    try:
        for action in oracle_actions(task, row["seed"])[:2]:
            phone.act(action)
        size = (phone.device().width, phone.device().height)
        airplane = next(m for m in marks(phone.observe().ui_tree, size) if (m.element.resource_id or "").endswith("airplane"))
        damage = json.dumps({"type": "tap", "element": airplane.number})
        assert _score(row, damage, replies[2:]) == 0.0
        phone.act(Action("tap", x=airplane.center[0], y=airplane.center[1]))  # the same episode, replayed here
        for action in oracle_actions(task, row["seed"])[2:]:
            phone.act(action)
        assert checker.check(phone) == 1.0 and phone.system_state().setting("global/airplane_mode_on") == "1"
        assert checker.is_successful(phone) == 0.0
    finally:
        phone.close()


def test_offline_rows_are_left_to_the_step_rewards_and_an_unset_policy_is_an_error(rows):
    reward = EpisodeReward(FMT)
    with pytest.raises(RuntimeError, match="policy is not set"):
        reward([rows[0]["prompt"]], ["x"], task=[TASK], seed=[1000], prefix=["[]"], budget=[5])
    reward.policy = Scripted([])
    assert reward([[], []], ["a", "b"], task=["", ""], seed=[0, 0], prefix=["[]", "[]"], budget=[0, 0]) == [None, None]


def test_online_prompts_are_the_sft_exports_prompts_of_the_same_screens(tmp_path, rows):
    """An online row's prompt is exactly the one SFT trained on for that screen (curated through the real export)."""
    from curation.build import curate
    from curation.recipe import parse_recipe
    from datalake.lake import Lake
    from training.data import open_export
    from training.infer import _plain

    lake = Lake.init(tmp_path / "lake")
    lake.write_episodes([oracle_demo(TASK, r["seed"]) for r in rows])
    recipe = ("name: online\nselect: SELECT episode_id FROM episodes\n"
              "split: {by: episode, seed: 0, fractions: {train: 1.0}}\nexports:\n"
              "  - {format: sft, coords: rel1000, action_format: json, history: 4, elements: true}\n")
    ref = curate(lake, parse_recipe(recipe)).ref
    export = open_export(lake, ref, "sft").load()
    by_text = {json.dumps(_plain(m[:-1])): m for m in export["messages"]}  # the prompt, without the answer
    for row in rows:
        assert json.dumps(_plain(row["prompt"])) in by_text, row["prompt"][-1]

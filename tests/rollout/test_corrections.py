"""A failed rollout's correction becomes a corrected training episode: the prefix the policy took,
the corrected step, the oracle's continuation, verified, with lineage to the rollout and annotation."""

import json
from pathlib import Path
from dataclasses import replace

from datalake.lake import Lake
from datalake.types import Action
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from mockphone.tasks.oracle import solve
from phones.episode import run_episode
from rollout.corrections import ORACLE_ORIGIN, correct, corrections_for, oracle_correction

TASK = "ClockAddAlarm"  # open the clock, add, hour, minute, save: five oracle steps
WRONG = Action("tap", x=5, y=5)  # the status bar: changes nothing


def oracle_actions(seed: int) -> list[Action]:
    phone = MockPhone()
    phone.reset(seed)
    task = registry.get(TASK)(seed=seed)
    task.initialize_task(phone)
    return solve(phone, task)


class Scripted:
    """Follows the oracle for ``good`` steps, then taps the status bar until the step limit."""

    source = "rollout"
    name = "scripted"

    def __init__(self, actions: list[Action], good: int) -> None:
        self.actions, self.good = actions, good

    def act(self, instruction, observation, history):
        k = len(history)
        return (self.actions[k] if k < self.good else WRONG), f"raw {k}"


def failed_rollout(lake: Lake, seed: int, good: int) -> str:
    phone = MockPhone()
    task = registry.get(TASK)(seed=seed)
    episode = run_episode(phone, Scripted(oracle_actions(seed), good), task, seed=seed, max_steps=good + 2,
                          meta={"rollout_id": "r1"})
    assert episode.outcome == "failure"
    episode = replace(episode, episode_id=f"rollout-{seed}-{good}")
    lake.write_episodes([episode])
    return episode.episode_id


def test_the_oracle_annotator_marks_the_first_step_off_the_oracle_path(lake):
    actions = oracle_actions(0)
    first = failed_rollout(lake, 0, good=1)
    k, action = oracle_correction(Lake.open(lake.uri).episode(first))
    assert k == 1 and action.type == actions[1].type and action.element == actions[1].element


def test_a_corrected_episode_keeps_the_prefix_takes_the_fix_and_the_oracle_finishes(lake):
    actions = oracle_actions(3)
    rollout = failed_rollout(lake, 3, good=2)
    report = correct(Lake.open(lake.uri))
    assert (report.failed_rollouts, report.annotated, report.corrections, report.written) == (1, 1, 1, 1)
    fresh = Lake.open(lake.uri)
    (ann,) = fresh.sql("SELECT * FROM annotations").to_pylist()
    assert (ann["origin"], ann["annotator"], ann["step_index"], ann["step_correct"]) == (ORACLE_ORIGIN, "oracle", 2,
                                                                                       False)
    (row,) = fresh.sql("SELECT episode_id FROM episodes WHERE source = 'corrected'").to_pylist()
    episode = fresh.episode(row["episode_id"])
    original = fresh.episode(rollout)
    taken = [s.action for s in episode.steps]
    assert taken[:2] == [s.action for s in original.steps[:2]]  # the policy's own prefix
    assert (taken[2].type, taken[2].text) == (actions[2].type, actions[2].text)  # the correction: the hour
    assert taken[3:] == actions[3:]  # the oracle's continuation: minute, save, terminate
    assert len(taken) == len(actions)
    assert (episode.outcome, episode.verified_by, episode.purpose) == ("success", "verifier", "train")
    assert episode.meta["corrected_from"] == {"episode_id": rollout, "policy": "scripted", "rollout_id": "r1"}
    assert episode.meta["correction"] == {"step": 2, "annotation_id": ann["annotation_id"], "annotator": "oracle"}
    # judged from outside the replay: the same actions on a fresh phone add the alarm
    phone = MockPhone()
    phone.reset(3)
    task = registry.get(TASK)(seed=3)
    task.initialize_task(phone)
    for action in taken:
        phone.act(action)
    assert task.is_successful(phone) == 1.0

    again = correct(Lake.open(lake.uri))  # a rerun writes nothing twice
    assert (again.annotated, again.written) == (0, 0)
    assert Lake.open(lake.uri).sql("SELECT count(*) FROM episodes WHERE source = 'corrected'").column(0)[0].as_py() == 1


def test_a_persons_correction_off_the_oracle_path_is_replayed_and_the_oracle_restarts_from_home(lake):
    rollout = failed_rollout(lake, 5, good=2)  # two right steps, then status-bar taps
    Lake.open(lake.uri).append("annotations", [{
        "annotation_id": "ls-1", "target": "step", "episode_id": rollout, "step_index": 2, "status": "accepted",
        "action_json": json.dumps(Action("key", key="back").to_dict()), "step_correct": False,
        "annotator": "ann@example.com", "origin": "label-studio:1/2/3", "created_at": __import__("datetime").datetime.now(
            __import__("datetime").timezone.utc)}])
    (c,) = corrections_for(Lake.open(lake.uri))
    assert (c.step_index, c.action.type, c.annotator) == (2, "key", "ann@example.com")
    report = correct(Lake.open(lake.uri), oracle=False)
    assert (report.corrections, report.written) == (1, 1), report.to_dict()
    fresh = Lake.open(lake.uri)
    (row,) = fresh.sql("SELECT episode_id FROM episodes WHERE source = 'corrected'").to_pylist()
    taken = [s.action for s in fresh.episode(row["episode_id"]).steps]
    original = fresh.episode(rollout)
    assert taken[:2] == [s.action for s in original.steps[:2]] and taken[2] == Action("key", key="back")
    assert taken[3] == Action("key", key="home")  # off the oracle's path: the oracle starts again from home
    assert fresh.episode(row["episode_id"]).meta["correction"]["annotation_id"] == "ls-1"


def test_the_dataset_diff_counts_the_new_instances_and_corrected_episodes_a_round_adds(lake, tmp_path):
    from typer.testing import CliRunner

    from curation.build import curate
    from curation.recipe import load_recipe
    from phoneloop.cli import app
    from phones.episode import OraclePolicy

    phone = MockPhone()
    demo = run_episode(phone, OraclePolicy.factory(phone, registry.get(TASK)(seed=0)), registry.get(TASK)(seed=0),
                       seed=0)
    lake.write_episodes([demo])
    recipe = load_recipe(Path(__file__).resolve().parents[2] / "examples" / "recipes" / "with_rollouts.yaml")
    v1 = curate(Lake.open(lake.uri), recipe)
    failed_rollout(lake, 3, good=2)
    assert correct(Lake.open(lake.uri)).written == 1
    v2 = curate(Lake.open(lake.uri), recipe)
    result = CliRunner().invoke(app, ["datasets", "diff", v1.ref, v2.ref, "--lake", lake.uri, "--json"])
    assert result.exit_code == 0, result.output
    add = json.loads(result.stdout)["added"]
    assert (add["new_instances"], add["dropped_instances"], add["corrected"], add["real"]) == (1, 0, 1, 0)
    assert add["sources"] == {"corrected": 1}
    text = CliRunner().invoke(app, ["datasets", "diff", v1.ref, v2.ref, "--lake", lake.uri]).output
    assert "adds: 1 new instance(s) (0 dropped), corrected episodes +1" in text


def test_the_failed_rollouts_preset_puts_each_episodes_first_wrong_step_first(lake):
    from annotate.push import select_steps

    rollout = failed_rollout(lake, 4, good=2)
    lake.write_episodes([replace(Lake.open(lake.uri).episode(rollout), episode_id="eval-copy", purpose="eval")])
    correct(Lake.open(lake.uri))  # the oracle annotator marks step 2
    rows = select_steps(Lake.open(lake.uri), preset="failed-rollouts")
    assert {r["episode_id"] for r in rows} == {rollout}  # eval episodes are not training data to correct
    assert (rows[0]["episode_id"], rows[0]["step_index"]) == (rollout, 2)
    assert sorted(r["step_index"] for r in rows[1:]) == [0, 1, 3]

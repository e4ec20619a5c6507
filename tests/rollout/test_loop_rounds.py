"""The loop's rollouts run on fresh training instances each round, and every round's are held out
from the eval (round 1's check saw only the rounds planned then)."""

import pytest

from datalake.lake import Lake
from phoneloop.loop import Loop, LoopConfig
from rollout.heldout import EvalOverlap
from rollout.spec import jobs_for

CONFIG = {"name": "r", "collect": {"tasks": "ClockAddAlarm", "seeds": [0]},
          "rollout": {"tasks": "ClockAddAlarm,SettingsWifiOn", "phones": "mock:1", "episodes": 2, "seed": 10},
          "eval": {"tasks": "ClockAddAlarm", "phones": "mock:1", "episodes": 1, "seed": 14}}


def test_each_round_rolls_out_on_new_seeds_and_the_tasks_stage_fingerprints_all_planned_rounds(tmp_path):
    loop = Loop(Lake.init(tmp_path / "lake").uri, LoopConfig(**CONFIG))
    rounds = [sorted(jobs_for(loop._rollout_spec(k, "oracle"))) for k in (1, 2, 3)]
    assert [sorted({s for _, s in jobs}) for jobs in rounds] == [[10, 11], [12, 13], [14, 15]]
    loop.rounds = 2
    assert set(rounds[0]) | set(rounds[1]) <= loop._training_jobs()
    kept = Loop(loop.lake.uri, LoopConfig(**{**CONFIG, "rollout": {**CONFIG["rollout"], "fresh": False}}))
    assert sorted(jobs_for(kept._rollout_spec(3, "oracle"))) == rounds[0]


def test_a_later_round_whose_fresh_rollouts_reach_the_eval_instances_is_refused(tmp_path):
    loop = Loop(Lake.init(tmp_path / "lake").uri, LoopConfig(**CONFIG))
    loop.rounds = 2  # planned: 2 rounds (seeds 10-13), the eval's seed 14 is held out
    first = loop._tasks(1, {})
    assert first["overlap"] == 0
    assert loop._check_round(2, first) == 0
    with pytest.raises(EvalOverlap):  # a third round, added later, would roll out on seed 14
        loop._check_round(3, first)

"""SFT's ``balance``: every template weighs as many episodes as the largest, rows of an episode together."""

from __future__ import annotations

from collections import Counter

import pytest

from training.data import balance_rows, balanced_indices
from training.errors import BadTrainingConfig


def test_balanced_indices_repeat_small_groups_whole_episodes_and_keep_the_largest_as_is():
    # episode a (group X, 3 rows), b (Y, 2 rows), c/d/e (Z, 1 row each); Z is the largest group
    ids = ["a", "a", "a", "b", "b", "c", "d", "e"]
    groups = {"a": "X", "b": "Y", "c": "Z", "d": "Z", "e": "Z"}
    out = balanced_indices(ids, groups, seed=0)
    per_episode = Counter(ids[i] for i in out)
    assert per_episode == {"a": 9, "b": 6, "c": 1, "d": 1, "e": 1}  # 3 copies of a and b, Z unchanged
    episodes = Counter()
    for eid, rows in per_episode.items():
        episodes[groups[eid]] += rows // ids.count(eid)
    assert set(episodes.values()) == {3}
    runs = [ids[i] for i in out]  # an episode's rows stay together, in order
    assert runs[:3] == ["a", "a", "a"] and [i for i in out[:3]] == [0, 1, 2]


def test_balanced_indices_share_the_remainder_by_a_seeded_choice():
    ids = ["a", "b", "c", "d", "e"]  # X: a, b (2 episodes); Z: c, d, e (3)
    groups = {"a": "X", "b": "X", "c": "Z", "d": "Z", "e": "Z"}
    counts = Counter(ids[i] for i in balanced_indices(ids, groups, seed=0))
    assert counts["a"] + counts["b"] == 3 and {counts["a"], counts["b"]} == {1, 2}
    assert balanced_indices(ids, groups, seed=0) == balanced_indices(ids, groups, seed=0)
    chosen = {max("ab", key=lambda e: Counter(ids[i] for i in balanced_indices(ids, groups, seed=s))[e])
              for s in range(12)}
    assert chosen == {"a", "b"}  # the seed decides which episode gets the extra copy


def test_balance_rows_weighs_a_deduplicated_template_like_the_others(tmp_path):
    """The lake keeps one copy of SettingsDarkThemeOn (a fixed template: its seeds give the same
    episode); balanced, its rows weigh as much as the distinct alarms of ClockDeleteAlarm."""
    from curation.build import curate
    from curation.recipe import parse_recipe
    from datalake.lake import Lake
    from tests.training.mockdata import oracle_episode
    from training.data import open_export

    lake = Lake.init(tmp_path / "lake")
    lake.write_episodes([oracle_episode(t, s) for t in ("SettingsDarkThemeOn", "ClockDeleteAlarm") for s in (0, 1, 2)])
    tasks = {r["task"]: r["n"] for r in lake.sql("SELECT task, count(*) n FROM episodes GROUP BY task").to_pylist()}
    assert tasks["SettingsDarkThemeOn"] == 1 and tasks["ClockDeleteAlarm"] > 1
    ref = curate(lake, parse_recipe("name: b\nselect: SELECT episode_id FROM episodes\n"
                                    "split: {by: episode, seed: 0, fractions: {train: 1.0}}\n"
                                    "exports:\n  - {format: sft}\n")).ref
    ds = open_export(lake, ref, "sft").load()
    task_of = {r["episode_id"]: r["task"] for r in lake.sql("SELECT episode_id, task FROM episodes").to_pylist()}
    out = balance_rows(lake, ds, "task")

    first_steps = Counter(task_of[e] for e, i in zip(out["episode_id"], out["step_index"]) if i == 0)
    assert first_steps["SettingsDarkThemeOn"] == first_steps["ClockDeleteAlarm"] == tasks["ClockDeleteAlarm"]
    original = {(e, i): m for e, i, m in zip(ds["episode_id"], ds["step_index"], ds["messages"])}
    assert all(original[(e, i)] == m for e, i, m in zip(out["episode_id"], out["step_index"], out["messages"]))
    with pytest.raises(BadTrainingConfig, match="balance must be one of task, app"):
        balance_rows(lake, ds, "seed")

"""Stable splits: a group's split depends only on its key and the seed (issue 31)."""

from __future__ import annotations

import pytest

from curation.ops.balance import assign_splits, split_groups
from curation.ops.base import seeded_order
from curation.workset import EpisodeRow

FRACTIONS = {"train": 0.8, "val": 0.1, "test": 0.1}


def row(i: int, task: str | None, instruction: str, locale: str | None = None) -> EpisodeRow:
    return EpisodeRow(episode_id=f"e{i}", instruction=instruction, source="human", phone="real", app="settings",
                      category=None, task=task, outcome="success", verified_by="human", policy=None, round=None,
                      width=100, height=100, steps=[], meta={"locale": locale} if locale else {})


@pytest.mark.parametrize("seed", [1, 7, 11])
def test_adding_tasks_never_moves_an_existing_one(seed):
    before = [row(i, f"app.task{i}", f"do task {i}") for i in range(60)]
    assign_splits(before, by="task", seed=seed, fractions=FRACTIONS)
    old = {e.task: e.split for e in before}
    after = [row(i, f"app.task{i}", f"do task {i}") for i in range(200)]
    assign_splits(after, by="task", seed=seed, fractions=FRACTIONS)
    assert {e.task: e.split for e in after if e.task in old} == old
    assert {e.split for e in after} == set(FRACTIONS)


@pytest.mark.parametrize("en, zh", [("Turn off Wi-Fi.", "关闭 WLAN。"),  # a translated phrasing
                                    ("Turn on Wi-Fi and connect to Home.", "打开 WLAN 并连接到 Home。")])
def test_one_template_in_en_us_and_zh_cn_lands_in_one_split(en, zh):
    others = [row(10 + i, None, f"other instruction {i}") for i in range(30)]
    for seed in range(16):
        ws = [row(0, None, en, "en-US"), row(1, None, zh, "zh-CN"), *others]
        assign_splits(ws, by="task", seed=seed, fractions={"train": 0.5, "val": 0.25, "test": 0.25})
        assert ws[0].split == ws[1].split, seed


def test_a_tasked_episode_and_an_untasked_translation_of_it_are_one_group():
    ws = [row(0, "SettingsWifiOn", "Turn on Wi-Fi and connect to Office."), row(1, None, "打开 WLAN 并连接到 Home。")]
    groups = split_groups(ws, "task")
    assert groups[0] == groups[1] == "t:settingswifion"


def _old_assign(ws, *, by, seed, fractions):
    """The rank rule as it was before issue 31 (main at 4f7cb65), with its grouping."""
    groups = split_groups(ws, by, rule="rank")
    keys = sorted(set(groups))
    order = seeded_order(keys, seed)
    total, acc, bounds = sum(fractions.values()), 0.0, []
    for name in fractions:
        acc += fractions[name] / total
        bounds.append(acc)
    split_of = {}
    for rank, k in enumerate(order):
        position = (rank + 0.5) / len(keys)
        split_of[keys[k]] = next(n for n, b in zip(fractions, bounds) if position <= b + 1e-12)
    return [split_of[g] for g in groups]


def test_the_rank_rule_still_splits_as_before_for_old_versions():
    ws = [row(i, f"t{i % 17}" if i % 3 else None, f"do {i % 23}") for i in range(120)]
    expected = _old_assign(ws, by="task", seed=5, fractions=FRACTIONS)
    assign_splits(ws, by="task", seed=5, fractions=FRACTIONS, rule="rank")
    assert [e.split for e in ws] == expected
    with pytest.raises(ValueError, match="split rule"):
        assign_splits(ws, by="task", seed=5, fractions=FRACTIONS, rule="newest")

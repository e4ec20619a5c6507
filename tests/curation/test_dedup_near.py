"""dedup_near on mock episodes: distinct instructions survive, true repeats go."""

from __future__ import annotations

import pytest

from collectors import OraclePolicy
from collectors.loop import run_all
from curation.dedup_eval import FrameStore, evaluate, labelled_pairs, rerun, to_row
from curation.ops.base import Context
from curation.ops.dedup import dedup_near
from mockphone.phone import MockPhone


@pytest.fixture(scope="module")
def alarms():
    """Twelve ClockAddAlarm seeds with twelve distinct times (plain mock phone)."""
    episodes, seen = [], set()
    found, _ = run_all(MockPhone(seed=0), OraclePolicy.factory, ["ClockAddAlarm"], seeds=range(24))
    for e in found:
        if e.instruction not in seen and len(episodes) < 12:
            seen.add(e.instruction)
            episodes.append(e)
    assert len(episodes) == 12
    return episodes


def test_twelve_distinct_alarm_times_all_survive(alarms):
    store = FrameStore()
    rows = [to_row(e, store) for e in alarms]
    ctx = Context(store)
    hashes = ctx.phashes([s.frame_sha for r in rows for s in r.steps])
    close = sum(bin(hashes[a.steps[-2].frame_sha] ^ hashes[b.steps[-2].frame_sha]).count("1") <= 8
                for a, b in zip(rows, rows[1:]))
    assert close  # the screens alone would call some of them duplicates
    kept = dedup_near(rows, ctx)
    assert [r.instruction for r in kept] == [e.instruction for e in alarms]


def test_true_repeats_on_perturbed_phones_are_removed(alarms):
    store = FrameStore()
    originals = [to_row(e, store) for e in alarms[:4]]
    twins = [rerun(e, tries=4, first_phone_seed=10 + 4 * k) for k, e in enumerate(alarms[:4])]
    twins = [to_row(t, store) for t in twins if t is not None]
    assert len(twins) >= 2
    assert any(t.steps[i].frame_sha != o.steps[i].frame_sha for t, o in zip(twins, originals)
               for i in range(len(t.steps)))  # other pixels, same trajectory
    kept = dedup_near(originals + twins, Context(store))
    assert [r.episode_id for r in kept] == [r.episode_id for r in originals]


def test_same_instruction_with_other_typed_text_is_kept(alarms):
    store = FrameStore()
    a = to_row(alarms[0], store)
    b = to_row(alarms[0], store)
    b.episode_id = "other"
    step = b.steps[2]
    b.steps = list(b.steps)
    b.steps[2] = type(step)(**{**step.__dict__, "action": step.action.__class__(
        **{**step.action.__dict__, "text": "9"})})
    assert len(dedup_near([a, b], Context(store))) == 2


def test_precision_and_recall_on_labelled_mock_pairs():
    pairs, store = labelled_pairs(seeds=3, tasks=("ClockAddAlarm", "ContactsAdd"))
    result = evaluate(dedup_near, pairs, store)
    assert result["true_pairs"] >= 2 and result["false_pairs"] >= 5
    assert result["precision"] == 1.0 and result["recall"] == 1.0, result


def test_dedup_near_rejects_bad_parameters(alarms):
    with pytest.raises(ValueError, match="min_frames"):
        dedup_near([], Context(FrameStore()), min_frames=2.0)

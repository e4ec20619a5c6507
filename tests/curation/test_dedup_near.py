"""dedup_near on mock episodes: distinct instructions survive, true repeats go."""

from __future__ import annotations

import pytest

from collectors.collect import run_all
from bench.dedup_eval import FrameStore, evaluate, labelled_pairs, rerun, to_row
from curation.ops.base import Context
from curation.ops.dedup import dedup_near
from mockphone.phone import MockPhone
from phones.episode import OraclePolicy


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


def _same_task_rows(n_original: int, n_twins: int, seed: int = 0):
    """One instruction and action sequence done ``n_original`` times on distinct screens
    (random frame hashes) and ``n_twins`` reruns of some of them (hashes 0-3 bits off)."""
    import numpy as np

    from curation.workset import EpisodeRow, StepRow
    from datalake.types import Action, Target

    rng = np.random.default_rng(seed)
    acts = [Action("tap", x=10, y=10, element=Target(resource_id="app:id/go")), Action("terminate", status="success")]
    hashes, rows = {}, []
    originals = [[int(h) for h in rng.integers(0, 2**63, size=len(acts))] for _ in range(n_original)]
    order = list(range(n_original)) + [int(rng.integers(n_original)) for _ in range(n_twins)]
    for i, source in enumerate(order):
        steps = []
        for k, a in enumerate(acts):
            h = originals[source][k]
            if i >= n_original:
                for b in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
                    h ^= 1 << int(b)
            hashes[f"{i}-{k}"] = h
            steps.append(StepRow(index=k, frame_sha=f"{i}-{k}", width=100, height=100, action_json=a.to_json(),
                                 action=a))
        rows.append(EpisodeRow(episode_id=f"e{i}", instruction="Turn on Wi-Fi", source="human", phone="real",
                               app="settings", category=None, task="settings.wifi_on", outcome="success",
                               verified_by="human", policy=None, round=None, width=100, height=100, steps=steps))
    return rows, hashes


@pytest.mark.parametrize("n_original, n_twins", [(40, 20), (300, 150)])  # below and above the old size switch (256)
def test_one_task_done_many_times_keeps_every_distinct_run(n_original, n_twins):
    rows, hashes = _same_task_rows(n_original, n_twins)
    ctx = Context(FrameStore())
    ctx._hashes.update(hashes)
    kept = dedup_near(rows, ctx)
    assert [r.episode_id for r in kept] == [f"e{i}" for i in range(n_original)]


def _chain_rows(n: int, seed: int = 1):
    """One instruction done ``n`` times, each run's screens one bit away from the previous
    run's at every step: a chain that drifts further than ``threshold`` bits."""
    import numpy as np

    rows, _ = _same_task_rows(n, 0, seed)
    rng = np.random.default_rng(seed)
    sig = [int(h) for h in rng.integers(0, 2**63, size=2)]
    hashes = {}
    for i, r in enumerate(rows):
        sig = [h ^ (1 << int(rng.integers(64))) for h in sig]
        for k, s in enumerate(r.steps):
            hashes[s.frame_sha] = sig[k]
    return rows, hashes


def _kept_ids(rows, hashes, **params):
    ctx = Context(FrameStore())
    ctx._hashes.update(hashes)
    return [r.episode_id for r in dedup_near(rows, ctx, **params)]


def test_a_chain_of_257_keeps_what_a_chain_of_256_keeps():
    rows, hashes = _chain_rows(257)
    short, long = _kept_ids(rows[:256], hashes), _kept_ids(rows, hashes)
    assert len(short) > 1  # the chain drifts: one kept run does not cover all of it
    assert long[:len(short)] == short and len(long) - len(short) <= 1


@pytest.mark.parametrize("extra", ["wait", "repeated_tap"])
def test_an_extra_wait_or_a_repeated_tap_does_not_hide_a_repeat(extra):
    from datalake.types import Action

    rows, hashes = _same_task_rows(1, 1)
    twin = rows[1]
    first = twin.steps[0]
    if extra == "wait":
        a = Action("wait")
        added = type(first)(index=0, frame_sha="loading", width=100, height=100, action_json=a.to_json(), action=a)
        hashes["loading"] = 12345
    else:
        added = type(first)(**{**first.__dict__, "frame_sha": "again"})
        hashes["again"] = hashes[first.frame_sha] ^ 1
    twin.steps = [added, *twin.steps] if extra == "wait" else [first, added, *twin.steps[1:]]
    twin.steps = [type(s)(**{**s.__dict__, "index": k}) for k, s in enumerate(twin.steps)]
    twin.trajectory = tuple(twin.steps)
    assert _kept_ids(rows, hashes) == ["e0"]


def test_precision_and_recall_on_a_labelled_group_of_one_instruction():
    from curation.neardup_cases import one_task, score

    cases = one_task(3000, seed=3)
    ctx = Context(FrameStore())
    ctx._hashes.update(cases.hashes)
    result = score(cases, dedup_near(cases.episodes, ctx))
    assert result["repeats"] > 800 and result["precision"] == 1.0 and result["recall"] >= 0.99, result

"""Flags downstream (issue 32): the default recipe drops the recorded steps whose screen the recorder
could not see at rest, and strips the UI trees that may be of another screen, on real demonstrations
recorded over adb from an animated virtual phone (so some frames are blends or the next screen)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from collectors.pairing import sha
from collectors.recorder import step_meta
from curation import workset
from curation.build import prepare
from curation.ops import OPS
from curation.ops.base import Context
from curation.recipe import load_recipe, parse_recipe
from datalake.lake import Lake
from tests.collectors.test_recorder_settled import record

pytestmark = pytest.mark.slow  # two real recordings at human pace: > 20 s on 2 cores

RECIPE = "examples/recipes/default.yaml"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two demonstrations at 0.2-0.3 s gaps on a phone whose transitions take 0.3 s (the recorder matrix's
    first rows: some frames are blends, flagged), written to a lake; with the true screen before each step."""
    lake = Lake.init(tmp_path_factory.mktemp("flags") / "lake")
    truths = {}
    for name, seed in [("ShopSearchPriceRange", 1), ("ContactsAdd", 0)]:
        episode, truth, _ = record(name, seed, (0.2, 0.3), {"transition": 0.3})
        assert lake.write_episodes([episode]).written == 1
        truths[episode.episode_id] = (episode, [sha(png) for png in truth])
    return lake, truths


def _facts(truths):
    """Per (episode, step index): (pairing, tree, frame right?) as recorded, judged against the true screens."""
    out = {}
    for eid, (episode, truth) in truths.items():
        for i, (step, meta) in enumerate(zip(episode.steps, step_meta(episode))):
            if i < len(truth):
                out[eid, i] = (meta["pairing"], meta["tree"], sha(step.observation.screenshot) == truth[i])
    return out


def test_the_recordings_hold_wrong_screens_that_only_the_flag_marks(recorded):
    facts = _facts(recorded[1])
    assert sum(p == "uncertain" for p, _, _ in facts.values()) >= 3, facts
    assert any(p == "uncertain" and not right for p, _, right in facts.values()), facts  # a wrong screen to drop
    assert all(right for p, _, right in facts.values() if p == "ok")  # the recorder's promise


def test_the_default_recipe_keeps_only_steps_seen_at_rest(recorded):
    lake, truths = recorded
    _, ws, _, _, _, details, _ = prepare(lake, load_recipe(RECIPE))
    facts = _facts(truths)
    kept = [(e.episode_id, s.index) for e in ws for s in e.steps if (e.episode_id, s.index) in facts]
    assert kept, "the recipe left no recorded step"
    assert all(facts[k][0] == "ok" and facts[k][2] for k in kept), [facts[k] for k in kept]
    uncertain = sum(p == "uncertain" for p, _, _ in facts.values())
    assert details["drop_flagged_steps"]["pairing_flags"]["frame_uncertain"] == uncertain
    assert any(facts[k][0] == "uncertain" for k in facts) and any(facts[k][0] == "ok" for k in facts), facts
    for e in ws:  # kept steps whose tree may be of another screen lose it (and the target read from it)
        for s in e.steps:
            if (e.episode_id, s.index) in facts:
                assert (s.ui_tree is None) == (facts[e.episode_id, s.index][1] == "uncertain")


def test_without_the_op_the_same_recipe_trains_on_wrong_screens(recorded):
    lake, truths = recorded
    text = open(RECIPE).read()
    start = text.index("  - op: drop_flagged_steps")
    end = text.index("  - op:", start + 1)
    recipe = parse_recipe(text[:start] + text[end:], source="default without drop_flagged_steps")
    _, ws, *_ = prepare(lake, recipe)
    facts = _facts(truths)
    kept = [(e.episode_id, s.index) for e in ws for s in e.steps if (e.episode_id, s.index) in facts]
    assert any(not facts[k][2] for k in kept)  # the op is what keeps them out


def test_keep_and_drop_choices(recorded):
    lake, truths = recorded
    ws = workset.load(lake, list(truths))
    facts = _facts(truths)
    n = sum(len(e.steps) for e in ws)
    kept = OPS["drop_flagged_steps"].fn(ws, Context(lake), frame_uncertain="keep", tree_uncertain="keep")
    assert sum(len(e.steps) for e in kept) == n
    stripped = OPS["drop_flagged_steps"].fn(ws, Context(lake), frame_uncertain="keep", tree_uncertain="strip")
    for e in stripped:
        for s in e.steps:
            if (e.episode_id, s.index) in facts:
                other = facts[e.episode_id, s.index][1] == "uncertain"
                assert (s.ui_tree is None) == other and (s.action.element is None or not other)
    ctx = Context(lake)
    trees = OPS["drop_flagged_steps"].fn(ws, ctx, frame_uncertain="keep", tree_uncertain="drop")
    assert all(facts[e.episode_id, s.index][1] == "same_screen" for e in trees for s in e.steps
               if (e.episode_id, s.index) in facts)
    assert ctx.details["pairing_flags"]["tree_uncertain"] == sum(t == "uncertain" for _, t, _ in facts.values())
    assert OPS["drop_flagged_steps"].fn(ws, Context(lake), max_flagged=0.0) == []  # each episode has a flagged step
    with pytest.raises(ValueError, match="frame_uncertain must be one of drop, keep"):
        OPS["drop_flagged_steps"].fn(ws, Context(lake), frame_uncertain="maybe")


def test_steps_without_pairing_facts_are_untouched(recorded):
    lake, truths = recorded
    ws = workset.load(lake, list(truths))
    bare = [e.with_steps([replace(s, meta={}) for s in e.steps]) for e in ws]  # as mock and rollout steps are
    out = OPS["drop_flagged_steps"].fn(bare, Context(lake))
    assert [len(e.steps) for e in out] == [len(e.steps) for e in bare]

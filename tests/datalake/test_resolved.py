"""The resolution rule of ``steps_resolved`` and ``episodes_resolved``:
reviewer > majority of annotators (each counted once, by their newest row; ties to the
most experienced annotator, then the newest) > latest."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from datalake import schema as S
from datalake.types import Action
from tests.factory import episode

_ids = itertools.count()
T0 = S.now()


def row(ep, who, *, step=None, action=None, outcome=None, minutes=0, review=False, verdict=None, correct=None):
    return {"annotation_id": f"a{next(_ids):04d}", "target": "episode" if step is None else "step",
            "episode_id": ep.episode_id, "step_index": step, "status": "accepted",
            "action_json": action.to_json() if action else None, "step_correct": correct, "outcome": outcome,
            "note": None, "annotator": who, "origin": "test", "created_at": T0 + timedelta(minutes=minutes),
            "annotator_id": who, "is_review": review, "review_verdict": verdict}


@pytest.fixture
def ep(lake):
    e = episode(0, n_steps=3, outcome="success", verified_by="verifier")
    lake.write_episodes([e])
    return e


def resolved_step(lake, ep, step=0):
    return lake.sql("SELECT * FROM steps_resolved WHERE episode_id = ? AND step_index = ?",
                    [ep.episode_id, step]).to_pylist()[0]


def resolved_episode(lake, ep):
    return lake.sql("SELECT * FROM episodes_resolved WHERE episode_id = ?", [ep.episode_id]).to_pylist()[0]


A, B = Action("tap", x=50, y=60), Action("tap", x=5, y=6)


def test_unjudged_step_keeps_the_recorded_action(lake, ep):
    r = resolved_step(lake, ep)
    assert r["action_json"] == ep.steps[0].action.to_json() and not r["corrected"] and r["resolved_by"] is None


def test_majority_of_annotators_wins_over_the_newest_row(lake, ep):
    lake.append("annotations", [row(ep, "u1", step=0, action=A, minutes=1), row(ep, "u2", step=0, action=A, minutes=2),
                                row(ep, "u3", step=0, action=B, minutes=3)])
    r = resolved_step(lake, ep)
    assert r["action_json"] == A.to_json() and r["resolved_by"] == "majority" and r["x"] == 50


def test_reviewer_fix_beats_the_majority(lake, ep):
    lake.append("annotations", [row(ep, "u1", step=0, action=A, minutes=1), row(ep, "u2", step=0, action=A, minutes=2),
                                row(ep, "rev", step=0, action=B, minutes=0, review=True, verdict="fix")])
    r = resolved_step(lake, ep)
    assert r["action_json"] == B.to_json() and r["resolved_by"] == "review"


def test_review_that_only_accepts_leaves_the_annotators_answer(lake, ep):
    lake.append("annotations", [row(ep, "u1", step=0, action=A, minutes=1),
                                row(ep, "rev", step=0, minutes=5, review=True, verdict="accept")])
    assert resolved_step(lake, ep)["action_json"] == A.to_json()


def test_an_edit_a_b_a_by_one_person_resolves_to_a(lake, ep):
    lake.append("annotations", [row(ep, "u1", step=0, action=A, minutes=1), row(ep, "u1", step=0, action=B, minutes=2),
                                row(ep, "u1", step=0, action=A, minutes=3)])
    r = resolved_step(lake, ep)
    assert r["action_json"] == A.to_json() and r["resolved_by"] == "latest"


def test_a_tie_goes_to_the_more_experienced_annotator(lake, ep):
    other = episode(1)
    lake.write_episodes([other])
    history = [row(other, "senior", outcome="success", minutes=i) for i in range(3)]
    lake.append("annotations", history + [row(ep, "senior", step=1, action=A, minutes=1),
                                          row(ep, "junior", step=1, action=B, minutes=9)])
    assert resolved_step(lake, ep, 1)["action_json"] == A.to_json()


def test_human_failure_verdict_overrides_the_verifier(lake, ep):
    lake.append("annotations", [row(ep, "u1", outcome="failure")])
    r = resolved_episode(lake, ep)
    assert (r["outcome"], r["verified_by"], r["human_rejected"]) == ("failure", "human", True)
    assert (r["recorded_outcome"], r["recorded_verified_by"]) == ("success", "verifier")
    raw = lake.sql("SELECT outcome, verified_by FROM episodes WHERE episode_id = ?", [ep.episode_id]).to_pylist()
    assert raw == [{"outcome": "success", "verified_by": "verifier"}]  # raw episodes never change


def test_episode_majority_and_review(lake, ep):
    lake.append("annotations", [row(ep, "u1", outcome="failure", minutes=1), row(ep, "u2", outcome="success", minutes=2),
                                row(ep, "u3", outcome="failure", minutes=3)])
    assert resolved_episode(lake, ep)["outcome"] == "failure"
    lake.append("annotations", [row(ep, "rev", outcome="success", minutes=4, review=True, verdict="fix")])
    r = resolved_episode(lake, ep)
    assert r["outcome"] == "success" and r["resolved_by"] == "review" and not r["human_rejected"]

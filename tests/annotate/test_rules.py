"""Queues, identity, edits and dropped fields without a Label Studio: rows in a real lake."""

import json
import uuid
from dataclasses import replace

import pytest

from annotate import push
from annotate.convert import to_row
from annotate.errors import InvalidSelection
from annotate.people import People, roles, set_role
from annotate.webhook import ingest
from datalake import schema as S
from datalake.types import Device
from tests.factory import H, W, episode

EP = episode(seed=41, n_steps=4)


def scored(ep, scores=None, pairing=None, **kwargs):
    steps = tuple(replace(s, meta={**({"score": scores[i]} if scores and scores[i] is not None else {}),
                                   **({"pairing": pairing[i]} if pairing else {})})
                  for i, s in enumerate(ep.steps))
    return replace(ep, steps=steps, episode_id="", **kwargs)


def payload(results, step_index=1, annotation_id=7, updated_at="2026-12-01T10:00:00.000001Z", completed_by=3,
            episode_id=None):
    return {"action": "ANNOTATION_UPDATED", "project": {"id": 2},
            "task": {"id": 11, "data": {"episode_id": episode_id or EP.episode_id, "step_index": step_index,
                                        "recorded_action": EP.steps[step_index].action.to_json()}},
            "annotation": {"id": annotation_id, "completed_by": completed_by, "result": results,
                           "created_at": "2026-12-01T09:59:00Z", "updated_at": updated_at, "lead_time": 4.5}}


def tap(x_px, y_px):
    return [{"type": "keypointlabels", "from_name": "point", "to_name": "image", "original_width": W,
             "original_height": H, "value": {"x": 100 * x_px / W, "y": 100 * y_px / H, "keypointlabels": ["tap"]}},
            {"type": "choices", "from_name": "action_type", "to_name": "image", "value": {"choices": ["tap"]}}]


def choice(name, value):
    return {"type": "choices", "from_name": name, "to_name": "image", "value": {"choices": [value]}}


def resolved(lake, step_index=1):
    return lake.sql("SELECT action_type, x, y, resolved_by FROM steps_resolved WHERE episode_id = ? "
                    "AND step_index = ?", [EP.episode_id, step_index]).to_pylist()[0]


PEOPLE = People(users={3: {"id": 3, "email": "ann@example.com"}, 4: {"id": 4, "email": "bob@example.com"},
                       5: {"id": 5, "email": "carol@example.com"}})


def test_the_webhooks_bare_user_id_becomes_one_identity(lake):
    lake.write_episodes([EP])
    row = to_row(lake, payload([choice("step_correct", "yes")]), PEOPLE)
    assert (row["annotator"], row["annotator_id"], row["annotator_email"]) == ("ann@example.com", "3",
                                                                                "ann@example.com")
    assert (row["ls_project_id"], row["ls_task_id"], row["ls_annotation_id"], row["lead_time"]) == (2, 11, 7, 4.5)
    assert row["ls_updated_at"].isoformat() == "2026-12-01T10:00:00.000001+00:00" and row["is_review"] is False
    unknown = to_row(lake, payload([choice("step_correct", "yes")], completed_by=99), PEOPLE)
    assert (unknown["annotator"], unknown["annotator_email"]) == ("99", None)


def test_a_field_that_does_not_apply_is_dropped_with_a_note(lake):
    lake.write_episodes([EP])
    results = [*tap(30, 40), choice("direction", "up"), choice("key", "back")]
    row = ingest(lake, payload(results), PEOPLE)
    assert json.loads(row["action_json"]) == {"type": "tap", "x": 30.0, "y": 40.0}
    assert "does not apply to tap" in row["note"] and "direction 'up'" in row["note"] and "key 'back'" in row["note"]
    assert lake.sql("SELECT count(*) AS n FROM quarantine").to_pylist() == [{"n": 0}]


def test_an_edit_a_b_a_resolves_to_a_and_redeliveries_add_nothing(lake):
    lake.write_episodes([EP])
    a1 = payload(tap(30, 40), updated_at="2026-12-01T10:00:01Z")
    b = payload(tap(90, 200), updated_at="2026-12-01T10:00:02Z")
    a2 = payload(tap(30, 40), updated_at="2026-12-01T10:00:03Z")
    for body in (a2, b, a1, b, a2):  # out of order and repeated
        ingest(lake, body, PEOPLE)
    assert lake.sql("SELECT count(*) AS n FROM annotations").to_pylist() == [{"n": 3}]
    assert resolved(lake) == {"action_type": "tap", "x": 30.0, "y": 40.0, "resolved_by": "latest"}


def test_taps_a_few_pixels_apart_are_one_majority(lake):
    lake.write_episodes([EP])
    ingest(lake, payload(tap(30, 40), annotation_id=1, completed_by=3, updated_at="2026-12-01T10:00:01Z"), PEOPLE)
    ingest(lake, payload(tap(34, 37), annotation_id=2, completed_by=4, updated_at="2026-12-01T10:00:02Z"), PEOPLE)
    ingest(lake, payload(tap(90, 200), annotation_id=3, completed_by=5, updated_at="2026-12-01T10:00:03Z"), PEOPLE)
    got = resolved(lake)
    assert got["resolved_by"] == "majority" and got["x"] in (30.0, 34.0)  # not the newest, far-away tap


def test_a_reviewers_annotation_is_a_review_row_and_wins(lake, tmp_path, monkeypatch):
    monkeypatch.setenv("PHONELOOP_ANNOTATE_TEAM", str(tmp_path / "team.json"))
    set_role(lake.uri, "carol@example.com", "reviewer")
    assert roles(lake.uri) == {"carol@example.com": "reviewer"}
    people = People(users=PEOPLE.users, team=roles(lake.uri))
    lake.write_episodes([EP])
    ingest(lake, payload(tap(30, 40), annotation_id=1, completed_by=3), people)
    ingest(lake, payload(tap(31, 41), annotation_id=2, completed_by=4), people)
    accept = ingest(lake, payload([choice("review", "accept")], annotation_id=3, completed_by=5), people)
    assert (accept["is_review"], accept["review_verdict"], accept["action_json"]) == (True, "accept", None)
    assert resolved(lake)["resolved_by"] == "majority"  # an accept leaves the annotators' answer
    fix = ingest(lake, payload([*tap(90, 200), choice("review", "fix")], annotation_id=4, completed_by=5,
                               updated_at="2026-12-01T11:00:00Z"), people)
    assert (fix["is_review"], fix["review_verdict"]) == (True, "fix")
    assert resolved(lake) == {"action_type": "tap", "x": 90.0, "y": 200.0, "resolved_by": "review"}


def test_a_review_without_a_verdict_is_an_accept_and_keeps_the_correction(lake, tmp_path, monkeypatch):
    monkeypatch.setenv("PHONELOOP_ANNOTATE_TEAM", str(tmp_path / "team.json"))
    set_role(lake.uri, "carol@example.com", "reviewer")
    people = People(users=PEOPLE.users, team=roles(lake.uri))
    lake.write_episodes([EP])
    ingest(lake, payload(tap(90, 200), annotation_id=1, completed_by=3), people)  # the annotator moved the tap
    recorded = EP.steps[1].action
    untouched = ingest(lake, payload(tap(recorded.x, recorded.y), annotation_id=2, completed_by=5,
                                     updated_at="2026-12-01T11:00:00Z"), people)  # the pre-filled form, submitted
    assert (untouched["review_verdict"], untouched["action_json"]) == ("accept", None)
    assert "counted as accept" in untouched["note"]
    assert resolved(lake) == {"action_type": "tap", "x": 90.0, "y": 200.0, "resolved_by": "latest"}


def test_a_one_one_tie_is_labelled_tie_and_goes_to_the_more_experienced(lake):
    lake.write_episodes([EP])
    ingest(lake, payload(tap(30, 40), annotation_id=1, completed_by=3, updated_at="2026-12-01T10:00:01Z"), PEOPLE)
    ingest(lake, payload(tap(90, 200), annotation_id=2, completed_by=4, updated_at="2026-12-01T10:00:02Z"), PEOPLE)
    assert resolved(lake) == {"action_type": "tap", "x": 90.0, "y": 200.0, "resolved_by": "tie"}  # newest
    ingest(lake, payload(tap(50, 50), step_index=2, annotation_id=3, completed_by=3), PEOPLE)  # ann has more now
    assert resolved(lake) == {"action_type": "tap", "x": 30.0, "y": 40.0, "resolved_by": "tie"}
    ingest(lake, payload(tap(32, 41), annotation_id=4, completed_by=5), PEOPLE)  # a third annotator agrees
    assert resolved(lake)["resolved_by"] == "majority"


def _annotation(step_index, action=None, correct=None, who="a"):
    return {"annotation_id": str(uuid.uuid4()), "target": "step", "episode_id": EP.episode_id,
            "step_index": step_index, "status": "accepted", "action_json": action and json.dumps(action),
            "step_correct": correct, "outcome": None, "note": None, "annotator": who, "origin": "test",
            "created_at": S.now()}


def steps_of(lake, preset):
    return [(r["episode_id"], r["step_index"]) for r in push.select_steps(lake, preset=preset)]


def test_low_confidence_picks_the_lowest_scored_steps(lake):
    ep = scored(EP, scores=[0.9, 0.1, None, 0.4])
    lake.write_episodes([ep, EP])
    assert steps_of(lake, "low-confidence:2") == [(ep.episode_id, 1), (ep.episode_id, 3)]
    assert len(steps_of(lake, "low-confidence")) == 3  # only steps with a score


def test_uncertain_pairing_and_unjudged_real(lake):
    flagged = scored(EP, pairing=["ok", "uncertain", "ok", "uncertain"])
    unknown_real = episode(seed=42, n_steps=2, outcome="unknown", verified_by="none")
    unknown_mock = episode(seed=43, n_steps=2, outcome="unknown", verified_by="none", device=Device(W, H, "mock"))
    lake.write_episodes([flagged, unknown_real, unknown_mock])
    assert steps_of(lake, "uncertain-pairing") == [(flagged.episode_id, 1), (flagged.episode_id, 3)]
    assert {e for e, _ in steps_of(lake, "unjudged-real")} == {unknown_real.episode_id}
    lake.append("annotations", [{**_annotation(None), "target": "episode", "episode_id": unknown_real.episode_id,
                                 "step_index": None, "outcome": "success"}])
    assert steps_of(lake, "unjudged-real") == []  # judged now (episodes_resolved): the queue is empty


def test_disagreement_finds_annotators_and_model_at_odds(lake):
    lake.write_episodes([EP])
    recorded = EP.steps[0].action.to_dict()
    lake.append("annotations", [
        _annotation(0, recorded, who="a"), _annotation(0, recorded, who="b"),  # agree with the model
        _annotation(1, {"type": "tap", "x": 5, "y": 5}, who="a"),
        _annotation(1, {"type": "long_press", "x": 5, "y": 5}, who="b"),  # annotators differ
        _annotation(2, correct=False, who="a"),  # annotator says the model was wrong
    ])
    assert steps_of(lake, "disagreement") == [(EP.episode_id, 1), (EP.episode_id, 2)]


def test_unknown_preset_names_the_presets():
    with pytest.raises(InvalidSelection, match="low-confidence"):
        push.condition(preset="hard")


def test_step_meta_score_survives_the_writer(lake):
    lake.write_episodes([scored(EP, scores=[0.5, 0.25, 0.125, None])])
    metas = lake.sql("SELECT meta_json FROM steps ORDER BY step_index").column(0).to_pylist()
    assert json.loads(metas[1])["score"] == 0.25


def test_episode_tasks_draw_each_steps_action_on_its_frame(lake):
    lake.write_episodes([EP])
    (task,) = push.episode_tasks(push.select_steps(lake, where="true"), "http://f")
    overlay = [r for r in task["predictions"][0]["result"] if r["from_name"] == "point"]
    assert [r["item_index"] for r in overlay] == [0, 1, 2]  # the three taps; the terminate has no point
    assert all(r["to_name"] == "frames" for r in overlay) and len(task["data"]["images"]) == 4
    assert task["data"]["steps_text"].splitlines()[0] == "1. tap at 20,30"


def test_a_later_listing_heals_rows_stored_under_a_bare_id(lake, tmp_path, monkeypatch):
    from annotate.reconcile import heal

    monkeypatch.setenv("PHONELOOP_ANNOTATE_TEAM", str(tmp_path / "team.json"))
    set_role(lake.uri, "carol@example.com", "reviewer")
    lake.write_episodes([EP])
    unlisted = People(warning="cannot list Label Studio users (HTTP 401)")
    ingest(lake, payload(tap(30, 40), annotation_id=1, completed_by=3), unlisted)
    ingest(lake, payload([*tap(90, 200), choice("review", "fix")], annotation_id=2, completed_by=5), unlisted)
    assert resolved(lake)["resolved_by"] == "tie"  # the reviewer's fix counted as a second annotator's vote
    assert heal(lake, unlisted) == 0  # still no listing: nothing to heal with
    listed = People(users=PEOPLE.users, team=roles(lake.uri))
    assert heal(lake, listed) == 2 and heal(lake, listed) == 0
    current = lake.sql("SELECT annotator, is_review, review_verdict FROM annotations_current "
                       "ORDER BY annotator").to_pylist()
    assert current == [{"annotator": "ann@example.com", "is_review": False, "review_verdict": None},
                       {"annotator": "carol@example.com", "is_review": True, "review_verdict": "fix"}]
    assert resolved(lake) == {"action_type": "tap", "x": 90.0, "y": 200.0, "resolved_by": "review"}

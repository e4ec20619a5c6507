"""What the annotator sees is what happened: invalid steps, no anchoring, disagreement by distance, gold."""

import json
import uuid
from dataclasses import replace

import pytest

from annotate import push
from annotate.agreement import agreement
from annotate.convert import to_row
from annotate.errors import InvalidPayload
from annotate.people import People
from datalake import schema as S
from datalake.types import Action
from tests.factory import episode

RAW = "invalid: no action found\nI think I should press the blue thing somewhere"


def unparsed(ep, index=1, score=0.123):
    steps = list(ep.steps)
    steps[index] = replace(steps[index], action=Action("wait"), raw_output=RAW, meta={"score": score})
    return replace(ep, steps=tuple(steps), episode_id="")


def test_an_unparsed_step_is_shown_invalid_with_its_raw_output_and_nothing_preselected(lake):
    ep = unparsed(episode(seed=51, n_steps=3))
    lake.write_episodes([ep])
    tasks = {t["data"]["step_index"]: t for t in push.step_tasks(push.select_steps(lake, where="true"), "http://f")}
    bad = tasks[1]
    assert "predictions" not in bad and bad["data"]["invalid"] is True
    assert "INVALID" in bad["data"]["action_text"] and "wait" not in bad["data"]["action_text"].split("INVALID")[0]
    assert "press the blue thing" in bad["data"]["model_text"] and "0.123" in bad["data"]["model_text"]
    assert tasks[0]["predictions"] and tasks[0]["data"]["invalid"] is False


def test_an_invalid_step_cannot_be_certified_correct(lake):
    ep = unparsed(episode(seed=52, n_steps=3))
    lake.write_episodes([ep])
    (task,) = [t for t in push.step_tasks(push.select_steps(lake, where="true"), "http://f")
               if t["data"]["step_index"] == 1]
    event = {"action": "ANNOTATION_CREATED", "project": {"id": 1}, "task": {"id": 5, "data": task["data"]},
             "annotation": {"id": 9, "completed_by": 1,
                            "result": [{"type": "choices", "from_name": "step_correct", "to_name": "image",
                                        "value": {"choices": ["yes"]}}]}}
    with pytest.raises(InvalidPayload, match="invalid"):
        to_row(lake, event, People())
    event["annotation"]["result"][0]["value"]["choices"] = ["no"]
    assert to_row(lake, event, People())["step_correct"] is False


def test_the_episode_review_has_no_default_verdict(lake):
    lake.write_episodes([episode(seed=53, n_steps=3)])
    (task,) = push.episode_tasks(push.select_steps(lake, where="true"), "http://f")
    assert [r for r in task["predictions"][0]["result"] if r["from_name"] == "outcome"] == []


def _row(ep, step_index, who, action=None, correct=None):
    return {"annotation_id": str(uuid.uuid4()), "target": "step", "episode_id": ep.episode_id,
            "step_index": step_index, "status": "accepted", "action_json": action and json.dumps(action),
            "step_correct": correct, "outcome": None, "note": None, "annotator": who, "annotator_id": who,
            "origin": f"label-studio:1/{ep.episode_id[:8]}{step_index}/{who}", "created_at": S.now()}


def test_disagreement_finds_taps_moved_20_px_or_more_with_the_same_type(lake):
    ep = episode(seed=54, n_steps=6)  # taps at (20 + i, 30)
    lake.write_episodes([ep])
    moved = {0: 10, 1: 20, 2: 50, 3: 111}  # px straight down, same type
    lake.append("annotations", [_row(ep, i, "a", {"type": "tap", "x": 20 + i, "y": 30 + d}) for i, d in moved.items()]
                + [_row(ep, 4, "a", {"type": "tap", "x": 24, "y": 30}),  # two annotators 25 px apart
                   _row(ep, 4, "b", {"type": "tap", "x": 24, "y": 55}, correct=None)])
    found = [i for e, i in ((r["episode_id"], r["step_index"]) for r in push.select_steps(lake, preset="disagreement"))]
    assert found == [1, 2, 3, 4]


def test_gold_steps_matrix_and_agreement_with_reviewers(lake):
    passed = episode(seed=55, n_steps=3, verified_by="verifier")
    other = episode(seed=56, n_steps=3, verified_by="human", outcome="failure")
    lake.write_episodes([passed, other])
    gold = push.gold_steps(lake, 5)
    assert {(r["episode_id"], r["gold"]) for r in gold} == {(passed.episode_id, True)} and len(gold) == 3
    good = {"type": "tap", "x": 20, "y": 30}
    review = {**_row(other, 0, "r", {"type": "tap", "x": 80, "y": 200}), "is_review": True, "review_verdict": "fix"}
    lake.append("annotations", [
        _row(passed, 0, "a", good), _row(passed, 0, "b", {"type": "tap", "x": 70, "y": 150}),
        _row(passed, 1, "a", correct=True), _row(passed, 1, "b", correct=True),
        _row(other, 0, "a", {"type": "tap", "x": 81, "y": 201}), _row(other, 0, "b", correct=True), review])
    report = agreement(lake)
    assert {g["annotator"]: (g["items"], g["agreement"]) for g in report["gold"]} == {"a": (2, 1.0), "b": (2, 0.5)}
    assert {g["annotator"]: g["agreement"] for g in report["with_reviewers"]} == {"a": 1.0, "b": 0.0}
    grid = report["matrix"]
    assert grid["annotators"] == ["a", "b"] and grid["cells"][0][0] is None
    assert grid["cells"][0][1] == grid["cells"][1][0] == {"items": 3, "agreement": pytest.approx(1 / 3, abs=1e-4)}

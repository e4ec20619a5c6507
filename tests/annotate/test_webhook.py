import json

import pytest

from annotate.webhook import InvalidPayload, ingest
from datalake import interchange
from datalake.lake import Lake
from tests.factory import H, W, episode

EPISODE = episode(seed=5, n_steps=3)


def payload(results, step_index=1, action="ANNOTATION_CREATED", episode_id=None, annotation_id=41):
    data = {"episode_id": episode_id or EPISODE.episode_id, "image": "http://127.0.0.1/frames/x.png"}
    if step_index is not None:
        data["step_index"] = step_index
    return {"action": action, "project": {"id": 3}, "task": {"id": 17, "data": data},
            "annotation": {"id": annotation_id, "completed_by": {"id": 1, "email": "ann@example.com"},
                           "result": results}}


def keypoint(x_pct, y_pct):
    return {"type": "keypointlabels", "from_name": "point", "to_name": "image", "original_width": W,
            "original_height": H, "value": {"x": x_pct, "y": y_pct, "width": 1, "keypointlabels": ["tap"]}}


def choice(name, value):
    return {"type": "choices", "from_name": name, "to_name": "image", "value": {"choices": [value]}}


def text(name, value):
    return {"type": "textarea", "from_name": name, "to_name": "image", "value": {"text": [value]}}


@pytest.fixture
def lake(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    lake.write_episodes([EPISODE])
    return lake


def rows(lake):
    return lake.sql("SELECT * FROM annotations").to_pylist()


def test_keypoint_becomes_a_tap_in_device_pixels(lake):
    row = ingest(lake, payload([keypoint(50, 25), choice("step_correct", "no")]))
    assert json.loads(row["action_json"]) == {"type": "tap", "x": W * 0.5, "y": H * 0.25}
    assert row["step_correct"] is False and row["status"] == "accepted" and row["target"] == "step"
    assert row["annotator"] == "ann@example.com" and row["origin"] == "label-studio:3/17/41"
    assert [r["annotation_id"] for r in rows(lake)] == [row["annotation_id"]]


def test_correction_is_what_steps_resolved_shows(lake):
    ingest(lake, payload([keypoint(50, 25), choice("action_type", "long_press")]))
    resolved = lake.sql("SELECT action_type, x, y, corrected FROM steps_resolved WHERE step_index = 1").to_pylist()
    assert resolved == [{"action_type": "long_press", "x": W * 0.5, "y": H * 0.25, "corrected": True}]


def test_typed_text_and_key_corrections(lake):
    typed = ingest(lake, payload([text("text", "hello"), choice("action_type", "input_text")]))
    assert json.loads(typed["action_json"]) == {"type": "input_text", "text": "hello"}
    key = ingest(lake, payload([choice("action_type", "key"), choice("key", "back"), keypoint(1, 1)],
                               annotation_id=42))
    assert json.loads(key["action_json"]) == {"type": "key", "key": "back"}


def test_step_marked_correct_without_a_new_action(lake):
    row = ingest(lake, payload([choice("step_correct", "yes")]))
    assert row["step_correct"] is True and row["action_json"] is None


def test_episode_review_records_the_outcome(lake):
    row = ingest(lake, payload([choice("outcome", "failure"), text("note", "wrong contact")], step_index=None))
    assert row["target"] == "episode" and row["outcome"] == "failure" and row["note"] == "wrong contact"
    assert row["step_index"] is None


def test_project_may_be_missing(lake):
    body = payload([choice("step_correct", "yes")])
    body["project"] = "odd"
    assert ingest(lake, body)["origin"] == "label-studio:None/17/41"


def test_redelivered_payload_writes_once(lake):
    body = payload([choice("step_correct", "yes")])
    ingest(lake, body)
    ingest(lake, body)
    assert len(rows(lake)) == 1


def test_updated_annotation_is_a_new_row(lake):
    ingest(lake, payload([choice("step_correct", "yes")]))
    ingest(lake, payload([choice("step_correct", "no")], action="ANNOTATION_UPDATED"))
    assert len(rows(lake)) == 2


@pytest.mark.parametrize("body", [
    None, [], {"action": "PROJECT_CREATED"},
    {"action": "ANNOTATION_CREATED", "task": {"id": 1}, "annotation": {"result": []}},
    payload([choice("step_correct", "yes")], episode_id="not-in-lake"),
    payload([choice("step_correct", "yes")], step_index=99),
    payload([choice("step_correct", "maybe")]),
    payload([keypoint(150, 10)]),
    payload([{"type": "keypointlabels", "value": {"x": 5, "y": 5}}]),
    payload([choice("action_type", "teleport")]),
    payload([choice("action_type", "swipe"), keypoint(5, 5)]),
    payload([]),
    payload([choice("outcome", "great")], step_index=None),
    payload(["not an object"]),
    payload([choice("step_correct", "yes")], step_index="1"),
])
def test_malformed_payloads_raise_and_write_nothing(lake, body):
    with pytest.raises(InvalidPayload):
        ingest(lake, body)
    assert rows(lake) == []


def test_works_on_an_imported_sample_lake(tmp_path):
    from importlib import resources

    lake = Lake.init(tmp_path / "lake")
    with resources.as_file(resources.files("phoneloop") / "sample" / "episodes.jsonl") as path:
        interchange.import_jsonl(lake, path)
    first = lake.sql("SELECT episode_id FROM episodes ORDER BY episode_id LIMIT 1").column(0)[0].as_py()
    row = ingest(lake, payload([choice("outcome", "success")], step_index=None, episode_id=first))
    assert row["episode_id"] == first and len(rows(lake)) == 1
